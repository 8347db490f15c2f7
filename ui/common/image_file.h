#pragma once
// Reading an image file for the window: what the models read (grey, or DTRB's own luma from the
// colour file) and what the eye sees (the file's colours when it has colour, at the same size),
// and the truth its name states. Pure functions, safe on any thread (MainWindow runs
// readImageFile on a worker); kept out of the window, which only wires the result to the document.
#include <QImage>
#include <QString>

#include "image/grey_image.h"

namespace foveal::ui {

struct ImageFile {
  core::GreyImage grey;  ///< what the models read
  QImage display;        ///< what the pages show: the colour image, or the grey one
  QString error;         ///< non-empty when the file cannot be read (names the file)
  QString warning;       ///< read, but damaged (a truncated JPEG): names the file and the damage
};

/// Reads and decodes `path`. The display image is the file's colours only when they have the
/// grey image's size (a decoder that turns the image by its EXIF would move every overlay) and
/// are not all grey.
ImageFile readImageFile(const QString& path);

/// The display and model images of an image from elsewhere (the clipboard, a dataset entry).
ImageFile imageFromQImage(const QImage& image);

/// The truth a file name states: "<anything>.truth=TEXT.png" (or gt=, label=), and the sample
/// convention "digits-<digits>.png". Empty when the name says nothing.
QString truthFromFileName(const QString& path);

}  // namespace foveal::ui
