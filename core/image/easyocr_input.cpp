#include "image/easyocr_input.h"

#include <algorithm>
#include <cmath>

namespace foveal::core {

namespace {

constexpr int kCoefBits = 11;  // OpenCV's INTER_RESIZE_COEF_BITS
constexpr int kCoefScale = 1 << kCoefBits;

// saturate_cast<short>(float): cvRound, which rounds half to even (lrintf).
int roundHalfEven(float v) { return static_cast<int>(std::nearbyint(v)); }

}  // namespace

std::vector<uint8_t> opencvGrey(const uint8_t* rgb, size_t pixels) {
  std::vector<uint8_t> out(pixels);
  for (size_t i = 0; i < pixels; ++i) {
    const uint32_t v = rgb[3 * i] * 9798u + rgb[3 * i + 1] * 19235u + rgb[3 * i + 2] * 3735u;
    out[i] = static_cast<uint8_t>((v + 16384u) >> 15);
  }
  return out;
}

std::vector<OpenCvLinearTap> opencvLinearTaps(int from, int to, bool columns) {
  // cv::hal::resize's coefficient tables for INTER_LINEAR: the scale as 1 / (to / from) in
  // double, each sample's source position in double rounded to float, its fraction in float.
  const double invScale = static_cast<double>(to) / from;
  const double scale = 1.0 / invScale;
  std::vector<OpenCvLinearTap> taps(static_cast<size_t>(to));
  for (int d = 0; d < to; ++d) {
    float f = static_cast<float>((d + 0.5) * scale - 0.5);
    int s = static_cast<int>(std::floor(f));
    f -= static_cast<float>(s);
    if (columns) {  // a column left of the first or right of the last is that column's
      if (s < 0) f = 0, s = 0;
      if (s >= from - 1) f = 0, s = from - 1;
    }
    OpenCvLinearTap& t = taps[static_cast<size_t>(d)];
    t.w0 = roundHalfEven((1.f - f) * kCoefScale);
    t.w1 = roundHalfEven(f * kCoefScale);
    t.first = std::clamp(s, 0, from - 1);  // rows above the first or below the last: clipped
    t.second = std::clamp(s + 1, 0, from - 1);
  }
  return taps;
}

std::vector<uint8_t> opencvResizeLinear(const uint8_t* src, int w, int h, int outW, int outH) {
  if (outW == w && outH == h) return std::vector<uint8_t>(src, src + static_cast<size_t>(w) * h);
  const auto xs = opencvLinearTaps(w, outW, true);
  const auto ys = opencvLinearTaps(h, outH, false);
  // The horizontal pass of every source row, exact in integers (value * 2048).
  std::vector<int32_t> rows(static_cast<size_t>(h) * outW);
  for (int y = 0; y < h; ++y) {
    const uint8_t* s = src + static_cast<size_t>(y) * w;
    int32_t* r = rows.data() + static_cast<size_t>(y) * outW;
    for (int x = 0; x < outW; ++x) {
      const auto& t = xs[static_cast<size_t>(x)];
      r[x] = s[t.first] * t.w0 + s[t.second] * t.w1;
    }
  }
  // The vertical pass as VResizeLinearVec_32s8u computes it (every column of Debian's
  // OpenCV 4.6 on x86-64 goes through it): each row's value >> 4 times its 16-bit weight, the
  // high halves added, rounded by 2 bits and saturated.
  std::vector<uint8_t> out(static_cast<size_t>(outW) * outH);
  for (int y = 0; y < outH; ++y) {
    const auto& t = ys[static_cast<size_t>(y)];
    const int32_t* r0 = rows.data() + static_cast<size_t>(t.first) * outW;
    const int32_t* r1 = rows.data() + static_cast<size_t>(t.second) * outW;
    uint8_t* o = out.data() + static_cast<size_t>(y) * outW;
    for (int x = 0; x < outW; ++x) {
      const int32_t v = (((r0[x] >> 4) * t.w0) >> 16) + (((r1[x] >> 4) * t.w1) >> 16);
      o[x] = static_cast<uint8_t>(std::clamp((v + 2) >> 2, 0, 255));
    }
  }
  return out;
}

EasyOcrSize easyocrResizedSize(int w, int h, int imgH) {
  // compute_ratio_and_resize: ratio = width / height; a ratio under 1 becomes 1 / ratio
  // (calculate_ratio) and sizes the height; Python's int() truncates.
  double ratio = static_cast<double>(w) / static_cast<double>(h);
  if (ratio < 1.0) {
    ratio = 1.0 / ratio;
    return {imgH, static_cast<int>(imgH * ratio)};
  }
  return {static_cast<int>(imgH * ratio), imgH};
}

double ContrastAdjustment::apply(double v) const {
  if (!adjusted) return v;
  return std::clamp((v - low + 25.0) * ratio, 0.0, 255.0);
}

double numpyPercentile(const uint8_t* values, size_t n, double q) {
  // np.percentile(a, q): q / 100, the virtual index (n - 1) * q, the neighbours by floor (the
  // last value past the end), and _lerp: a + (b - a) * g, or b - (b - a) * (1 - g) for g >= 0.5.
  const double quantile = q / 100.0;
  const double virtualIndex = static_cast<double>(n - 1) * quantile;
  std::vector<uint8_t> sorted(values, values + n);
  std::sort(sorted.begin(), sorted.end());
  if (virtualIndex >= static_cast<double>(n - 1)) return sorted.back();
  const double previous = std::floor(virtualIndex);
  const auto i = static_cast<size_t>(previous);
  const double a = sorted[i], b = sorted[i + 1];
  const double gamma = virtualIndex - previous;
  const double diff = b - a;
  return gamma >= 0.5 ? b - diff * (1.0 - gamma) : a + diff * gamma;
}

ContrastAdjustment easyocrContrast(const uint8_t* grey, size_t n, double target) {
  // contrast_grey and adjust_contrast_grey (easyocr/recognition.py).
  ContrastAdjustment c;
  if (n == 0) return c;
  c.high = numpyPercentile(grey, n, 90);
  c.low = numpyPercentile(grey, n, 10);
  const double contrast = (c.high - c.low) / std::max(10.0, c.high + c.low);
  if (!(contrast < target)) return c;
  c.adjusted = true;
  c.ratio = 200.0 / std::max(10.0, c.high - c.low);
  return c;
}

std::vector<uint8_t> applyContrast(const uint8_t* grey, size_t n, const ContrastAdjustment& c) {
  std::vector<uint8_t> out(grey, grey + n);
  if (!c.adjusted) return out;
  for (size_t i = 0; i < n; ++i)  // astype(np.uint8) of values in [0, 255]: truncation
    out[i] = static_cast<uint8_t>(c.apply(grey[i]));
  return out;
}

}  // namespace foveal::core
