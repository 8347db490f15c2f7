// OpenCV-backed decoding: every format imgcodecs reads, converted to grey.
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>

#include "../error.h"
#include "../grey_image.h"

namespace foveal::core::imaging {

GreyImage decodeWithOpenCv(const std::vector<uint8_t>& bytes, const std::string& origin) {
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
  return img;
}

}  // namespace foveal::core::imaging
