#include "exporter.h"

#include <QFile>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>

#include "qt_convert.h"

namespace foveal::ui {

namespace {
QString suffix(const QString& path) { return path.section(QLatin1Char('.'), -1).toLower(); }

QString writeText(const QString& path, const QByteArray& bytes) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly))
    return QObject::tr("%1: cannot write (%2)").arg(path, f.errorString());
  f.write(bytes);
  if (!f.commit()) return QObject::tr("%1: write failed (%2)").arg(path, f.errorString());
  return {};
}

template <typename Paint>
QString paintVector(const QString& path, const QSize& size, Paint paint) {
  const QString ext = suffix(path);
  if (ext == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(QStringLiteral("Foveal"));
    QPainter p;
    if (!p.begin(&svg)) return QObject::tr("%1: cannot write SVG").arg(path);
    paint(p);
    p.end();
    return QFile::exists(path) ? QString() : QObject::tr("%1: cannot write SVG").arg(path);
  }
  if (ext == QLatin1String("pdf")) {
    QPdfWriter pdf(path);
    pdf.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
    pdf.setPageMargins({});
    pdf.setResolution(72);
    QPainter p;
    if (!p.begin(&pdf)) return QObject::tr("%1: cannot write PDF").arg(path);
    paint(p);
    p.end();
    return {};
  }
  return QObject::tr("%1: unknown format '.%2' (use .png, .svg or .pdf)").arg(path, ext);
}
}  // namespace

QString exportWidget(QWidget* widget, const QString& path) {
  if (suffix(path) == QLatin1String("png")) {
    if (!widget->grab().save(path, "PNG")) return QObject::tr("%1: cannot write PNG").arg(path);
    return {};
  }
  return paintVector(path, widget->size(), [widget](QPainter& p) { widget->render(&p); });
}

QString exportFigure(QWidget* widget, const QString& path, double scale, const QRect& region) {
  const QRect area = region.isEmpty() ? widget->rect() : region.intersected(widget->rect());
  if (suffix(path) != QLatin1String("png"))
    return paintVector(path, area.size(), [widget, area](QPainter& p) {
      widget->render(&p, {}, QRegion(area), QWidget::DrawChildren);
    });
  if (!(scale > 0 && scale <= 16))
    return QObject::tr("%1: scale %2 is out of range (0 to 16)").arg(path).arg(scale);
  QImage image(area.size() * scale, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  {
    QPainter p(&image);
    p.setRenderHint(QPainter::Antialiasing);
    p.scale(scale, scale);
    widget->render(&p, {}, QRegion(area), QWidget::DrawChildren);
  }
  if (!image.save(path, "PNG")) return QObject::tr("%1: cannot write PNG").arg(path);
  return {};
}

QString exportImage(const QImage& image, const QString& path) {
  if (suffix(path) == QLatin1String("png")) {
    if (!image.save(path, "PNG")) return QObject::tr("%1: cannot write PNG").arg(path);
    return {};
  }
  return paintVector(path, image.size(), [&image](QPainter& p) { p.drawImage(0, 0, image); });
}

QString traceToCsv(const core::Trace& trace) {
  // One CSV for the CLI and the GUI: core's (its columns are documented there).
  return QString::fromStdString(trace.toCsv());
}

QString exportTrace(const core::Trace& trace, const QString& path) {
  const QString ext = suffix(path);
  if (ext == QLatin1String("json"))
    return writeText(path, QByteArray::fromStdString(trace.toJson()));
  if (ext == QLatin1String("csv")) return writeText(path, traceToCsv(trace).toUtf8());
  // The OCR formats (core/formats/ocr_formats.h), by their file endings.
  for (const auto f : {core::OcrFormat::Hocr, core::OcrFormat::Alto, core::OcrFormat::Page})
    if (path.endsWith(QString::fromStdString(core::ocrFileSuffix(f)), Qt::CaseInsensitive))
      return writeText(path, QByteArray::fromStdString(core::toOcrDocument(trace, f)));
  return QObject::tr("%1: unknown format '.%2' (use .json, .csv, .hocr, .alto.xml or .page.xml)")
      .arg(path, ext);
}

}  // namespace foveal::ui
