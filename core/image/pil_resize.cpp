#include "image/pil_resize.h"

#include <algorithm>
#include <cmath>

namespace foveal::core {

std::vector<uint8_t> pilLuma(const uint8_t* rgb, size_t pixels) {
  std::vector<uint8_t> out(pixels);
  for (size_t i = 0; i < pixels; ++i) {
    const uint32_t v = rgb[3 * i] * 19595u + rgb[3 * i + 1] * 38470u + rgb[3 * i + 2] * 7471u;
    out[i] = static_cast<uint8_t>((v + 0x8000u) >> 16);
  }
  return out;
}

namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

double bicubic(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

constexpr double kPi = 3.14159265358979323846;  // M_PI, as Pillow's Resample.c uses

double sinc(double x) {
  if (x == 0.0) return 1.0;
  x = x * kPi;
  return std::sin(x) / x;
}

// Pillow's LANCZOS: a sinc windowed by a sinc three times wider, support 3.
double lanczos(double x) {
  if (-3.0 <= x && x < 3.0) return sinc(x) * sinc(x / 3);
  return 0.0;
}

struct Filter {
  double (*f)(double);
  double support;
};
constexpr Filter kBicubic{bicubic, 2.0};
constexpr Filter kLanczos{lanczos, 3.0};

// For each output pixel: the first input pixel, how many, and their fixed-point weights.
struct Coefficients {
  int ksize = 0;
  std::vector<int> bounds;  // xmin, count per output pixel
  std::vector<int32_t> k;   // ksize per output pixel
};

Coefficients coefficients(int inSize, int outSize, const Filter& filter) {
  const double scale = static_cast<double>(inSize) / outSize;
  const double filterscale = std::max(scale, 1.0);
  const double support = filter.support * filterscale;
  Coefficients c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.bounds.resize(static_cast<size_t>(outSize) * 2);
  c.k.assign(static_cast<size_t>(outSize) * c.ksize, 0);
  std::vector<double> w(static_cast<size_t>(c.ksize));
  for (int xx = 0; xx < outSize; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      w[static_cast<size_t>(x)] = filter.f((x + xmin - center + 0.5) * ss);
      ww += w[static_cast<size_t>(x)];
    }
    for (int x = 0; x < xmax; ++x) {
      double v = ww != 0.0 ? w[static_cast<size_t>(x)] / ww : w[static_cast<size_t>(x)];
      c.k[static_cast<size_t>(xx) * c.ksize + x] = static_cast<int32_t>(
          v < 0 ? -0.5 + v * (1 << kPrecisionBits) : 0.5 + v * (1 << kPrecisionBits));
    }
    c.bounds[2 * static_cast<size_t>(xx)] = xmin;
    c.bounds[2 * static_cast<size_t>(xx) + 1] = xmax;
  }
  return c;
}

uint8_t clip8(int32_t v) {
  const int32_t x = v >> kPrecisionBits;  // arithmetic shift: floor, as Pillow's lookup
  return static_cast<uint8_t>(std::clamp(x, 0, 255));
}

// ImagingResample for 8-bit bands: a horizontal pass (only over the rows the vertical pass
// reads) to an 8-bit image, then a vertical pass; a pass whose size does not change is skipped.
std::vector<uint8_t> resample(const uint8_t* src, int w, int h, int channels, int outW, int outH,
                              const Filter& filter) {
  const bool horizontal = outW != w, vertical = outH != h;
  const Coefficients cv = coefficients(h, outH, filter);
  // The rows the vertical pass reads: the horizontal pass makes only those.
  const int yFirst = vertical ? cv.bounds[0] : 0;
  const int yLast = vertical ? cv.bounds[2 * (outH - 1)] + cv.bounds[2 * (outH - 1) + 1] : h;
  std::vector<uint8_t> tmp;
  const uint8_t* in = src;
  int inW = w, rowOffset = 0;
  if (horizontal) {
    const Coefficients ch = coefficients(w, outW, filter);
    const int rows = yLast - yFirst;
    tmp.resize(static_cast<size_t>(outW) * rows * channels);
    for (int y = 0; y < rows; ++y) {
      const uint8_t* row = src + static_cast<size_t>(y + yFirst) * w * channels;
      for (int xx = 0; xx < outW; ++xx) {
        const int xmin = ch.bounds[2 * static_cast<size_t>(xx)];
        const int n = ch.bounds[2 * static_cast<size_t>(xx) + 1];
        const int32_t* k = &ch.k[static_cast<size_t>(xx) * ch.ksize];
        for (int b = 0; b < channels; ++b) {
          int32_t ss = 1 << (kPrecisionBits - 1);
          for (int x = 0; x < n; ++x) ss += row[(x + xmin) * channels + b] * k[x];
          tmp[(static_cast<size_t>(y) * outW + xx) * channels + b] = clip8(ss);
        }
      }
    }
    in = tmp.data();
    inW = outW;
    rowOffset = yFirst;
  }
  if (!vertical) {
    if (horizontal) return tmp;
    return std::vector<uint8_t>(src, src + static_cast<size_t>(w) * h * channels);
  }
  std::vector<uint8_t> out(static_cast<size_t>(inW) * outH * channels);
  for (int yy = 0; yy < outH; ++yy) {
    const int ymin = cv.bounds[2 * static_cast<size_t>(yy)] - rowOffset;
    const int n = cv.bounds[2 * static_cast<size_t>(yy) + 1];
    const int32_t* k = &cv.k[static_cast<size_t>(yy) * cv.ksize];
    for (int xx = 0; xx < inW; ++xx) {
      for (int b = 0; b < channels; ++b) {
        int32_t ss = 1 << (kPrecisionBits - 1);
        for (int y = 0; y < n; ++y)
          ss += in[(static_cast<size_t>(y + ymin) * inW + xx) * channels + b] * k[y];
        out[(static_cast<size_t>(yy) * inW + xx) * channels + b] = clip8(ss);
      }
    }
  }
  return out;
}

}  // namespace

std::vector<uint8_t> pilResizeBicubic(const uint8_t* src, int w, int h, int channels, int outW,
                                      int outH) {
  return resample(src, w, h, channels, outW, outH, kBicubic);
}

std::vector<uint8_t> pilResizeLanczos(const uint8_t* src, int w, int h, int channels, int outW,
                                      int outH) {
  return resample(src, w, h, channels, outW, outH, kLanczos);
}

}  // namespace foveal::core
