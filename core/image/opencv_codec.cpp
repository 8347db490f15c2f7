// OpenCV-backed decoding: every format imgcodecs reads, converted to grey.
#include <cstdlib>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/imgcodecs.hpp>
#include <string>

#include "base/error.h"
#include "image/grey_image.h"
#include "image/image_checks.h"

namespace foveal::core::imaging {

namespace {
// False when the header says the image is grey (a PNG of colour type 0 or 4, a JPEG of one
// component): its colour decode would be the grey in three bands, three times its memory (a
// 20000 x 20000 grey PNG decoded 1.2 GB of colour for nothing).
bool mayHaveColour(const std::vector<uint8_t>& b) {
  if (b.size() >= 26 && b[0] == 0x89 && b[1] == 'P' && b[12] == 'I' && b[13] == 'H')
    return b[25] != 0 && b[25] != 4;
  if (b.size() >= 4 && b[0] == 0xFF && b[1] == 0xD8) {
    size_t pos = 2;
    while (pos + 4 <= b.size() && b[pos] == 0xFF) {
      const uint8_t m = b[pos + 1];
      const size_t length = (size_t(b[pos + 2]) << 8) | b[pos + 3];
      if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC)
        return pos + 9 < b.size() ? b[pos + 9] != 1 : true;
      if (m == 0xDA || length < 2) break;
      pos += 2 + length;
    }
  }
  return true;
}
}  // namespace

GreyImage decodeWithOpenCv(const std::vector<uint8_t>& bytes, const std::string& origin,
                           bool keepColour) {
  // OpenCV logs every failed decode to stderr; Foveal reports the failure itself, naming the file.
  static const bool quiet = [] {
    cv::utils::logging::setLogLevel(cv::utils::logging::LOG_LEVEL_SILENT);
    // OpenCV's own bound for the formats whose header Foveal does not read (TIFF), read by
    // OpenCV once, at its first decode.
    ::setenv("OPENCV_IO_MAX_IMAGE_PIXELS", std::to_string(maxImagePixels()).c_str(), 0);
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
  if (keepColour && mayHaveColour(bytes)) {
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
