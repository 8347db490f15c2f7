#pragma once
// The document of the main window: the image being read (the grey copy the models read and the
// copy shown, in colour when the file has colour), where it came from, and its truth. The pages
// observe it (Tiled's MapDocument); the window changes it and re-reads on imageChanged().
#include <QImage>
#include <QObject>
#include <QString>
#include <string>
#include <vector>

#include "image/grey_image.h"
#include "model/geometry.h"

namespace foveal::ui {

/// The characters of `truth` that `charset` (a model's, UTF-8) lacks, each once, in order of
/// appearance: a model cannot read such a truth right (the inspector warns).
QString charactersOutside(const std::string& charset, const QString& truth);

class ReadingDocument : public QObject {
  Q_OBJECT
 public:
  explicit ReadingDocument(QObject* parent = nullptr) : QObject(parent) {}

  /// The image, as read by the models (`grey`) and as shown (`display`, same size), and the true
  /// box of each character of its label in its pixels when the data knows them (a dataset entry).
  void setImage(core::GreyImage grey, QImage display, const QString& source,
                std::vector<core::Box> truthBoxes = {});
  /// The expected text, trimmed; empty: unknown.
  void setTruth(const QString& truth);

  bool hasImage() const { return !m_grey.empty(); }
  const core::GreyImage& image() const { return m_grey; }
  const QImage& displayImage() const { return m_display; }
  const QString& source() const { return m_source; }
  const QString& truth() const { return m_truth; }
  const std::vector<core::Box>& truthBoxes() const { return m_truthBoxes; }

 Q_SIGNALS:
  void imageChanged();
  void truthChanged(const QString& truth);

 private:
  core::GreyImage m_grey;
  QImage m_display;
  QString m_source;
  QString m_truth;
  std::vector<core::Box> m_truthBoxes;
};

}  // namespace foveal::ui
