// OpenCV-backed decoding: every format imgcodecs reads, converted to grey.
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>

#include "base/error.h"
#include "image/grey_image.h"

namespace foveal::core::imaging {

GreyImage decodeWithOpenCv(const std::vector<uint8_t>& bytes, const std::string& origin,
                           bool keepColour) {
  // OpenCV logs every failed decode to stderr; Foveal reports the failure itself, naming the file.
  static const bool quiet = [] {
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    return true;
  }();
  (void)quiet;
  cv::Mat mat;
  try {
    mat = cv::imdecode(bytes, cv::IMREAD_GRAYSCALE);
  } catch (const cv::Exception& e) {
    throw Error(origin + ": cannot decode image (" + e.what() + ")");
  }
  if (mat.empty())
    throw Error(origin + ": cannot decode image (corrupt, truncated or unsupported format)");
  GreyImage img{mat.cols, mat.rows, {}};
  img.pixels.resize(static_cast<size_t>(mat.cols) * mat.rows);
  for (int y = 0; y < mat.rows; ++y) {
    const auto* row = mat.ptr<uint8_t>(y);
    std::copy(row, row + mat.cols, img.pixels.begin() + static_cast<long>(y) * mat.cols);
  }
  if (keepColour) {
    // The colours as 8-bit RGB (palette and grey files expanded, alpha dropped: what PIL's
    // convert('RGB') gives), decoded a second time so that `pixels` stays the decoder's grey.
    cv::Mat colour;
    try {
      colour = cv::imdecode(bytes, cv::IMREAD_COLOR);
    } catch (const cv::Exception&) {
    }
    if (!colour.empty() && colour.cols == mat.cols && colour.rows == mat.rows &&
        colour.type() == CV_8UC3) {
      img.rgb.resize(static_cast<size_t>(mat.cols) * mat.rows * 3);
      for (int y = 0; y < colour.rows; ++y) {
        const auto* row = colour.ptr<uint8_t>(y);
        uint8_t* out = img.rgb.data() + static_cast<size_t>(y) * mat.cols * 3;
        for (int x = 0; x < colour.cols; ++x) {  // BGR -> RGB
          out[3 * x] = row[3 * x + 2];
          out[3 * x + 1] = row[3 * x + 1];
          out[3 * x + 2] = row[3 * x];
        }
      }
    }
  }
  return img;
}

}  // namespace foveal::core::imaging
