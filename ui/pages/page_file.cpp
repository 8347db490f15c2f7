#include "page_file.h"

#include <QFileInfo>
#include <exception>

#include "image_file.h"

namespace foveal::ui {

PageFile readPageFile(const QString& imagePath, const QString& layoutPath) {
  PageFile r;
  r.layoutPath = layoutPath;
  try {
    r.layout =
        std::make_shared<const core::PageLayout>(core::readPageLayout(layoutPath.toStdString()));
  } catch (const std::exception& e) {
    r.error = QString::fromStdString(e.what());
    return r;
  }
  r.imagePath = imagePath.isEmpty() ? QString::fromStdString(r.layout->imagePath) : imagePath;
  if (!QFileInfo(r.imagePath).isFile()) {
    r.error = imagePath.isEmpty()
                  ? QObject::tr(
                        "%1: the image it names, %2, is not there (open the page with "
                        "its image named)")
                        .arg(layoutPath, r.imagePath)
                  : QObject::tr("%1: cannot open the page image (no such file)").arg(r.imagePath);
    return r;
  }
  ImageFile image = readImageFile(r.imagePath);
  if (!image.error.isEmpty()) {
    r.error = image.error;
    return r;
  }
  r.warning = image.warning;
  // The layout's coordinates are the pixels of the image it was made on: another size (a
  // downscaled copy) would put every line in the wrong place.
  const auto& l = *r.layout;
  if (l.imageWidth != image.grey.width || l.imageHeight != image.grey.height) {
    const QString mismatch =
        QObject::tr(
            "%1 gives the page as %2x%3 pixels but %4 is %5x%6: the lines may be "
            "misplaced")
            .arg(layoutPath)
            .arg(l.imageWidth)
            .arg(l.imageHeight)
            .arg(QFileInfo(r.imagePath).fileName())
            .arg(image.grey.width)
            .arg(image.grey.height);
    r.warning = r.warning.isEmpty() ? mismatch : r.warning + QStringLiteral("; ") + mismatch;
  }
  r.grey = std::make_shared<const core::GreyImage>(std::move(image.grey));
  r.display = std::move(image.display);
  return r;
}

QString layoutImagePath(const QString& layoutPath, QString* error) {
  try {
    return QString::fromStdString(core::readPageLayout(layoutPath.toStdString()).imagePath);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return {};
  }
}

}  // namespace foveal::ui
