#include "inspector_exports.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QKeySequence>

#include "alignment_view.h"
#include "exporter.h"
#include "formats/ocr_formats.h"
#include "inspector_page.h"
#include "model_list_model.h"
#include "patch_strip.h"
#include "reading_document.h"
#include "settings.h"
#include "trace_view.h"

namespace foveal::ui {

namespace {
QString nothingToExport() {
  return QObject::tr("Nothing to export: open an image and a model first.");
}
}  // namespace

InspectorExports::InspectorExports(InspectorPage* inspector, ReadingDocument* document,
                                   QObject* parent)
    : QObject(parent), m_inspector(inspector), m_document(document) {
  auto* image = new QAction(tr("&Image with Overlays..."), this);
  connect(image, &QAction::triggered, this,
          [this] { figureDialog(m_inspector->traceView(), tr("image")); });
  auto* alignment = new QAction(tr("&Alignment Matrix..."), this);
  connect(alignment, &QAction::triggered, this,
          [this] { figureDialog(m_inspector->alignmentView(), tr("alignment")); });
  auto* strip = new QAction(tr("Patch &Strip..."), this);
  connect(strip, &QAction::triggered, this, &InspectorExports::exportStrip);
  m_figures = {image, alignment, strip};
  m_trace = new QAction(tr("Export &Trace (JSON, CSV, hOCR, ALTO, PAGE)..."), this);
  m_trace->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
  connect(m_trace, &QAction::triggered, this, &InspectorExports::exportTrace);
}

void InspectorExports::report(const QString& error, const QString& path) {
  if (!error.isEmpty()) {
    Q_EMIT failed(error);
    return;
  }
  kLastFolder.set(QFileInfo(path).absolutePath());  // the next export suggests the same folder
  Q_EMIT message(tr("Exported %1").arg(path));
}

QString InspectorExports::exportImageFigure(const QString& path, double scale) {
  if (!m_inspector->trace()) return nothingToExport();
  TraceView* view = m_inspector->traceView();
  view->setFocusFrame(false);
  // The image and what is drawn around it, not the blank space the view leaves beside it.
  const QString error = exportFigure(view, path, scale, view->figureRect());
  view->setFocusFrame(true);
  return error;
}

QString InspectorExports::exportAlignmentFigure(const QString& path, double scale) {
  if (!m_inspector->trace()) return nothingToExport();
  return exportFigure(m_inspector->alignmentView(), path, scale);
}

QString InspectorExports::defaultFileName(const QString& what, const QString& extension) const {
  QStringList parts;
  const QString source = QFileInfo(m_document->source()).completeBaseName();
  if (!source.isEmpty()) parts << source;
  const ModelListModel* models = m_document->models();
  const int row = models->rowOf(m_document->inspectedModel());
  if (row >= 0) parts << models->displayName(row);
  if (m_inspector->trace() && what != QLatin1String("trace"))
    parts << QStringLiteral("step%1").arg(m_inspector->traceView()->step() + 1);
  parts << what;
  QString name = parts.join(QLatin1Char('_'));
  // Nothing a file system refuses, nothing that starts an option.
  for (QChar& c : name)
    if (!(c.isLetterOrNumber() || c == QLatin1Char('-') || c == QLatin1Char('_') ||
          c == QLatin1Char('.')))
      c = QLatin1Char('_');
  const QString folder = kLastFolder.value().isEmpty() ? QDir::homePath() : kLastFolder.value();
  return QDir(folder).filePath(name + QLatin1Char('.') + extension);
}

void InspectorExports::figureDialog(QWidget* what, const QString& title) {
  if (!m_inspector->trace()) {
    Q_EMIT failed(nothingToExport());
    return;
  }
  QString filter;
  QString path = QFileDialog::getSaveFileName(m_inspector, tr("Export %1 figure").arg(title),
                                              defaultFileName(title, QStringLiteral("png")),
                                              tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"), &filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty())
    path += filter.startsWith(QLatin1String("SVG"))   ? QStringLiteral(".svg")
            : filter.startsWith(QLatin1String("PDF")) ? QStringLiteral(".pdf")
                                                      : QStringLiteral(".png");
  double scale = 3.0;
  if (path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive)) {
    bool ok = false;
    scale = QInputDialog::getDouble(
        m_inspector, tr("Export %1 figure").arg(title),
        tr("Pixels per screen pixel (%1 x %2 on screen):").arg(what->width()).arg(what->height()),
        3.0, 1.0, 16.0, 1, &ok);
    if (!ok) return;
  }
  report(what == m_inspector->traceView() ? exportImageFigure(path, scale)
                                          : exportAlignmentFigure(path, scale),
         path);
}

void InspectorExports::exportStrip() {
  if (!m_inspector->trace()) {
    Q_EMIT failed(nothingToExport());
    return;
  }
  const QString path =
      QFileDialog::getSaveFileName(m_inspector, tr("Export patch strip"),
                                   defaultFileName(QStringLiteral("strip"), QStringLiteral("png")),
                                   tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
  if (path.isEmpty()) return;
  report(exportImage(m_inspector->patchStrip()->render(3.0), path), path);
}

void InspectorExports::exportTrace() {
  if (!m_inspector->trace()) {
    Q_EMIT failed(nothingToExport());
    return;
  }
  QString filter;
  QString path = QFileDialog::getSaveFileName(
      m_inspector, tr("Export trace"),
      defaultFileName(QStringLiteral("trace"), QStringLiteral("json")),
      tr("JSON (*.json);;CSV (*.csv);;hOCR (*.hocr);;ALTO v4 (*.alto.xml);;PAGE-XML 2019 "
         "(*.page.xml)"),
      &filter);
  if (path.isEmpty()) return;
  path = withFilterSuffix(path, filter);
  core::Trace withTruth = *m_inspector->trace();  // the true character boxes, when known
  withTruth.truthBoxes = m_document->truthBoxes();
  const QString error = ui::exportTrace(withTruth, path);
  report(error, path);
  // The XML formats write each control character of the reading as U+FFFD: said (issue 65).
  if (!error.isEmpty()) return;
  for (const auto f : {core::OcrFormat::Hocr, core::OcrFormat::Alto, core::OcrFormat::Page})
    if (path.endsWith(QString::fromStdString(core::ocrFileSuffix(f)), Qt::CaseInsensitive)) {
      core::XmlReplacements replaced;
      replaced.add(withTruth);
      if (!replaced.warning().empty())
        Q_EMIT message(
            tr("Exported %1, but: %2").arg(path, QString::fromStdString(replaced.warning())));
    }
}

}  // namespace foveal::ui
