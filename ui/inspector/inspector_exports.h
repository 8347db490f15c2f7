#pragma once
// The inspector's exports, as the File menu offers them: the image with its overlays and the
// alignment matrix alone as figures (PNG at a chosen scale, SVG, PDF), the patch strip, and the
// trace as JSON, CSV (with the image's true character boxes), hOCR, ALTO or PAGE-XML.
#include <QList>
#include <QObject>
#include <QString>

class QAction;
class QWidget;

namespace foveal::ui {

class InspectorPage;
class ReadingDocument;

class InspectorExports : public QObject {
  Q_OBJECT
 public:
  InspectorExports(InspectorPage* inspector, ReadingDocument* document, QObject* parent);

  /// Export Figure's entries: the image, the alignment matrix, the patch strip.
  QList<QAction*> figureActions() const { return m_figures; }
  /// Export Trace (JSON, CSV, hOCR, ALTO, PAGE), Ctrl+Shift+E.
  QAction* traceAction() const { return m_trace; }

  /// Writes the image with its overlays, or the alignment matrix, alone as a figure (.png at
  /// `scale`, .svg, .pdf). Returns an error message, empty on success.
  QString exportImageFigure(const QString& path, double scale = 3.0);
  QString exportAlignmentFigure(const QString& path, double scale = 3.0);
  /// The file a save dialog proposes, in the last folder used: the image, the model, the step
  /// and what is exported ("digits-46214_soft_step3_image.png").
  QString defaultFileName(const QString& what, const QString& extension) const;

 Q_SIGNALS:
  void failed(const QString& message);
  void message(const QString& text);

 private:
  /// Asks for a file (and, for PNG, a scale) and writes `what` as a figure.
  void figureDialog(QWidget* what, const QString& title);
  void exportStrip();
  void exportTrace();
  /// Reports an export's outcome: the error, or which file was written.
  void report(const QString& error, const QString& path);

  InspectorPage* m_inspector;
  ReadingDocument* m_document;
  QList<QAction*> m_figures;
  QAction* m_trace;
};

}  // namespace foveal::ui
