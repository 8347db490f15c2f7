#include "image_file.h"

#include <QFileInfo>
#include <QRegularExpression>
#include <exception>

#include "image/image_checks.h"
#include "qt_convert.h"

namespace foveal::ui {

ImageFile readImageFile(const QString& path) {
  ImageFile r;
  QImage colour;
  try {
    std::string warning;  // a truncated JPEG is shown, and said
    r.grey = core::readImageWarning(path.toStdString(), /*keepColour=*/true, warning);  // DTRB luma
    r.warning = QString::fromStdString(warning);
    colour = QImage(path);  // shown in colour when the file has colour
  } catch (const std::exception& e) {
    r.error = QString::fromStdString(e.what());
    return r;
  }
  r.display =
      !colour.isNull() && colour.size() == QSize(r.grey.width, r.grey.height) && !colour.allGray()
          ? colour.convertToFormat(QImage::Format_RGB32)
          : toQImage(r.grey);
  return r;
}

ImageFile imageFromQImage(const QImage& image) {
  ImageFile r;
  r.display = image.allGray() ? image.convertToFormat(QImage::Format_Grayscale8)
                              : image.convertToFormat(QImage::Format_RGB32);
  r.grey = fromQImage(r.display);
  return r;
}

QString truthFromFileName(const QString& path) {
  const QString base = QFileInfo(path).completeBaseName();
  static const QRegularExpression stated(QStringLiteral("(?:^|[._ -])(?:truth|gt|label)=(.+)$"));
  if (const auto m = stated.match(base); m.hasMatch()) return m.captured(1);
  static const QRegularExpression digits(QStringLiteral("^digits[-_]([0-9]+)$"));
  if (const auto m = digits.match(base); m.hasMatch()) return m.captured(1);
  return {};
}

}  // namespace foveal::ui
