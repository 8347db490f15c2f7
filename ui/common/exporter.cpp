#include "exporter.h"

#include <QFile>
#include <QFileInfo>
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

// Every export goes through QSaveFile: written beside the target and renamed over it on commit,
// so a full disk or a crash never leaves a half-written figure under the user's file name, and a
// failure names the file and the system's reason.
QString commitOrSay(QSaveFile& f, const QString& path, const QString& what) {
  if (!f.commit()) return QObject::tr("%1: cannot write %2 (%3)").arg(path, what, f.errorString());
  return {};
}

QString savePng(const QImage& image, const QString& path) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly))
    return QObject::tr("%1: cannot write PNG (%2)").arg(path, f.errorString());
  if (!image.save(&f, "PNG")) {
    f.cancelWriting();
    return QObject::tr("%1: cannot write PNG (encoding failed)").arg(path);
  }
  return commitOrSay(f, path, QStringLiteral("PNG"));
}

template <typename Paint>
QString paintVector(const QString& path, const QSize& size, Paint paint) {
  const QString ext = suffix(path);
  if (ext != QLatin1String("svg") && ext != QLatin1String("pdf"))
    return QObject::tr("%1: unknown format '.%2' (use .png, .svg or .pdf)").arg(path, ext);
  const QString what = ext.toUpper();
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly))
    return QObject::tr("%1: cannot write %2 (%3)").arg(path, what, f.errorString());
  bool painted = false;
  if (ext == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setOutputDevice(&f);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(QStringLiteral("Foveal"));
    QPainter p;
    if ((painted = p.begin(&svg))) {
      paint(p);
      painted = p.end();
    }
  } else {
    QPdfWriter pdf(&f);
    pdf.setPageSize(QPageSize(QSizeF(size), QPageSize::Point));
    pdf.setPageMargins({});
    pdf.setResolution(72);
    QPainter p;
    if ((painted = p.begin(&pdf))) {
      paint(p);
      painted = p.end();
    }
  }
  if (!painted) {
    f.cancelWriting();
    return QObject::tr("%1: cannot render the %2").arg(path, what);
  }
  return commitOrSay(f, path, what);
}
}  // namespace

QString exportWidget(QWidget* widget, const QString& path) {
  if (suffix(path) == QLatin1String("png")) return savePng(widget->grab().toImage(), path);
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
  return savePng(image, path);
}

QString exportImage(const QImage& image, const QString& path) {
  if (suffix(path) == QLatin1String("png")) return savePng(image, path);
  return paintVector(path, image.size(), [&image](QPainter& p) { p.drawImage(0, 0, image); });
}

QString traceToCsv(const core::Trace& trace) {
  // One CSV for the CLI and the GUI: core's (its columns are documented there).
  return QString::fromStdString(trace.toCsv());
}

QString withFilterSuffix(const QString& path, const QString& filter) {
  const int star = filter.indexOf(QLatin1String("(*"));
  if (star < 0) return path;
  const QString ending = filter.mid(star + 2, filter.indexOf(QLatin1Char(')'), star) - star - 2);
  if (ending.isEmpty() || path.endsWith(ending, Qt::CaseInsensitive)) return path;
  const QString name = QFileInfo(path).fileName();
  if (!name.contains(QLatin1Char('.'))) return path + ending;
  const QString xml = QStringLiteral(".xml");
  if (ending.endsWith(xml) && path.endsWith(xml, Qt::CaseInsensitive) &&
      !path.endsWith(QStringLiteral(".alto.xml"), Qt::CaseInsensitive) &&
      !path.endsWith(QStringLiteral(".page.xml"), Qt::CaseInsensitive))
    return path.left(path.size() - xml.size()) + ending;
  return path;
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
