#pragma once
// The status line's account of the document: the image being read and with how many models
// (with a progress bar), the model a request loaded, a truth with characters the inspected
// model cannot read, a fifth tick refused. The window adds its own messages beside these.
#include <QObject>

class QProgressBar;
class QStatusBar;

namespace foveal::ui {

class ReadingDocument;

class ReadingStatus : public QObject {
  Q_OBJECT
 public:
  ReadingStatus(ReadingDocument* document, QStatusBar* bar);

 private:
  ReadingDocument* m_document;
  QStatusBar* m_bar;
  QProgressBar* m_progress;
};

}  // namespace foveal::ui
