#pragma once
// A page opened for the Page view: its layout (PAGE-XML or ALTO, core/formats/page_layout.h) and
// its image, read together on a pool thread. Pure functions, safe on any thread.
#include <QImage>
#include <QString>
#include <memory>

#include "formats/page_layout.h"
#include "image/grey_image.h"

namespace foveal::ui {

struct PageFile {
  QString imagePath;   ///< the image read (the one named, else the one the layout names)
  QString layoutPath;  ///< the XML file
  std::shared_ptr<const core::PageLayout> layout;
  std::shared_ptr<const core::GreyImage> grey;  ///< what the models read (with its colours)
  QImage display;                               ///< what the view shows
  QString error;    ///< non-empty when the page cannot be opened (names the file and the problem)
  QString warning;  ///< opened, but something is off (a damaged image, a size the layout
                    ///< does not state): names the file
};

/// Reads `layoutPath` and the page image: `imagePath`, or (empty) the file the layout names,
/// resolved against the XML file's folder.
PageFile readPageFile(const QString& imagePath, const QString& layoutPath);

/// The image file a layout names (resolved against its folder), without reading the image;
/// empty with `error` set when the XML cannot be read.
QString layoutImagePath(const QString& layoutPath, QString* error);

}  // namespace foveal::ui
