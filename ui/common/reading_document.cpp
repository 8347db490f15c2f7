#include "reading_document.h"

#include <algorithm>

#include "model/charset.h"

namespace foveal::ui {

QString charactersOutside(const std::string& charset, const QString& truth) {
  const auto known = core::splitUtf8(charset);
  QString outside;
  for (const auto& ch : core::splitUtf8(truth.toStdString()))
    if (std::find(known.begin(), known.end(), ch) == known.end() &&
        !outside.contains(QString::fromStdString(ch)))
      outside += QString::fromStdString(ch);
  return outside;
}

void ReadingDocument::setImage(core::GreyImage grey, QImage display, const QString& source,
                               std::vector<core::Box> truthBoxes) {
  m_truthBoxes = std::move(truthBoxes);
  m_grey = std::move(grey);
  m_display = std::move(display);
  m_source = source;
  Q_EMIT imageChanged();
}

void ReadingDocument::setTruth(const QString& truth) {
  const QString t = truth.trimmed();
  if (t == m_truth) return;
  m_truth = t;
  Q_EMIT truthChanged(m_truth);
}

}  // namespace foveal::ui
