#include "reading_document.h"

namespace foveal::ui {

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
