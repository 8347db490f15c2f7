#pragma once
// The image operations EasyOCR's readtext applies to a crop before its recogniser, made
// bit-exact to OpenCV 4.6 and NumPy 1.24 in plain C++ (so that a build without OpenCV reads the
// same): reformat_input's cvtColor(BGR2GRAY) for a BGR array (a file path is read with
// cv2.imread(IMREAD_GRAYSCALE), which is what Foveal's decoder gives as the grey), get_image_list's
// compute_ratio_and_resize (cv2.resize with interpolation 1 = INTER_LINEAR to the model height;
// a crop narrower than tall to the model height *wide*), and get_text's contrast retry
// (adjust_contrast_grey, its percentiles as np.percentile's). Checked against Debian's OpenCV
// 4.6 and EasyOCR's own code in tests/core/test_easyocr_readtext.cpp. Torch-free.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace foveal::core {

/// cv2.cvtColor(BGR2GRAY) of 8-bit colours (given here as interleaved R G B):
/// (R*9798 + G*19235 + B*3735 + 16384) >> 15. `pixels` = width * height.
std::vector<uint8_t> opencvGrey(const uint8_t* rgb, size_t pixels);

/// One output sample of OpenCV's INTER_LINEAR along an axis: the two source samples it reads
/// (clipped to the image: equal at the edges) and their weights in 11-bit fixed point
/// (INTER_RESIZE_COEF_SCALE = 2048), as cv::resize computes them for 8-bit images.
struct OpenCvLinearTap {
  int first = 0, second = 0;
  int w0 = 2048, w1 = 0;
};
/// The taps of resizing `from` samples to `to`: x (columns) and y (rows) differ at the edges as
/// in OpenCV (a column past an edge is that edge's, with weight 1; a row keeps its fraction).
std::vector<OpenCvLinearTap> opencvLinearTaps(int from, int to, bool columns);

/// cv2.resize(grey, (outW, outH), interpolation=INTER_LINEAR) of an 8-bit grey image (`src` is
/// w * h): the horizontal pass in integers, the vertical pass as OpenCV's SSE2 kernel rounds it
/// (((a >> 4) * b0 >> 16) + ((c >> 4) * b1 >> 16) + 2) >> 2; a copy at the same size.
std::vector<uint8_t> opencvResizeLinear(const uint8_t* src, int w, int h, int outW, int outH);

/// get_image_list's size for a w x h crop at model height `imgH` (compute_ratio_and_resize):
/// (int(imgH * w / h), imgH), or for a crop narrower than tall (imgH, int(imgH * (1 / (w / h)))).
struct EasyOcrSize {
  int width = 0, height = 0;
};
EasyOcrSize easyocrResizedSize(int w, int h, int imgH);

/// adjust_contrast_grey(img, target) of get_text's second pass: with low and high the 10th and
/// 90th percentiles (np.percentile, linear), a crop whose contrast (high - low) / max(10, high +
/// low) is under `target` becomes clip((v - low + 25) * 200 / max(10, high - low), 0, 255),
/// truncated to 8 bits; other crops are kept.
struct ContrastAdjustment {
  bool adjusted = false;  ///< false: the crop's contrast was not under the target
  double low = 0, high = 0;
  double ratio = 1;  ///< 200 / max(10, high - low)
  /// The adjusted value of a grey level `v` (0..255, not rounded): (v - low + 25) * ratio,
  /// clipped to [0, 255]; `v` itself when not adjusted.
  double apply(double v) const;
};
/// The percentile np.percentile(values, q) gives (linear, NumPy 1.24's rounding) of `n` 8-bit
/// values (n >= 1).
double numpyPercentile(const uint8_t* values, size_t n, double q);
ContrastAdjustment easyocrContrast(const uint8_t* grey, size_t n, double target);
/// The adjusted 8-bit crop (adjust_contrast_grey's astype(np.uint8) of the clipped values).
std::vector<uint8_t> applyContrast(const uint8_t* grey, size_t n, const ContrastAdjustment& c);

}  // namespace foveal::core
