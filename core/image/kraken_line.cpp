#include "image/kraken_line.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "base/error.h"
#include "image/kraken_line_ops.h"
#include "image/pil_resize.h"

// The numerics follow kraken's Python libraries operation for operation (the same order of
// additions, the same roundings and truncations), so that the result is bit-identical: Pillow
// 9.4 (Geometry.c, Draw.c, Resample.c, Convert.c), SciPy 1.10 (ndimage's correlate1d,
// uniform_filter1d, zoom_shift, geometric_transform), NumPy 1.24 (pairwise summation), skimage
// 0.19 (AffineTransform, subdivide_polygon, approximate_polygon). Where NumPy uses a vector math
// library (exp, sin, atan2 through SVML on AVX-512 machines) the C library's function is used;
// kernel weights and angles can then differ in their last bit, which has not changed a pixel in
// the cases checked (test_kraken_line.cpp).

namespace foveal::core {

using kraken::Raster;

namespace {

using kraken::emptyRecord;

Raster pageRaster(const GreyImage& page) {
  const size_t n = static_cast<size_t>(page.width) * page.height;
  if (!page.rgb.empty() && page.rgb.size() == n * 3) {
    Raster r(page.width, page.height, 3);
    r.px = page.rgb;
    return r;
  }
  if (page.pixels.size() != n) throw Error("kraken line: the page image has no pixels");
  Raster r(page.width, page.height, 1);
  r.px = page.pixels;
  return r;
}

// ---------------------------------------------------------------------------------------------
// kraken.lib.lineest.CenterNormalizer + dewarp (bounding-box lines of one-channel models)

// SciPy's mode 'reflect' (d c b a | a b c d | d c b a) for any distance from the line.
inline long reflectIndex(long i, long n) {
  const long period = 2 * n;
  long m = i % period;
  if (m < 0) m += period;
  return m < n ? m : period - 1 - m;
}

// scipy.ndimage.gaussian_filter1d's weights: exp(-0.5 / sigma^2 * x^2) / sum, x = -r..r.
std::vector<double> gaussianKernel(double sigma, long radius) {
  const double sigma2 = sigma * sigma;
  const double c = -0.5 / sigma2;
  std::vector<double> phi(static_cast<size_t>(2 * radius + 1));
  for (long x = -radius; x <= radius; ++x)
    phi[static_cast<size_t>(x + radius)] = std::exp(c * static_cast<double>(x * x));
  const double sum = kraken::numpySum(phi.data(), phi.size());
  for (double& v : phi) v = v / sum;
  return phi;
}

// NI_Correlate1D with a symmetric kernel of 2r+1 taps over one line (already extended).
// `line` points at the line's first element; ext(i) gives the extended value at index i.
template <typename Get>
void correlateSymmetric(const std::vector<double>& w, long n, Get get, double* out) {
  const long r = static_cast<long>(w.size() / 2);
  const double* fw = w.data() + r;
  for (long l = 0; l < n; ++l) {
    double v = get(l) * fw[0];
    for (long j = -r; j < 0; ++j) v += (get(l + j) + get(l - j)) * fw[j];
    out[l] = v;
  }
}

// gaussian_filter(img, (sigma0, sigma1), mode='constant') of an h x w float64 image.
std::vector<double> gaussianConstant2d(const std::vector<double>& img, long h, long w,
                                       double sigma0, double sigma1) {
  std::vector<double> cur = img, out(img.size());
  const double sigmas[2] = {sigma0, sigma1};
  for (int axis = 0; axis < 2; ++axis) {
    if (!(sigmas[axis] > 1e-15)) continue;
    const long radius = static_cast<long>(4.0 * sigmas[axis] + 0.5);
    const std::vector<double> k = gaussianKernel(sigmas[axis], radius);
    if (axis == 0) {
      std::vector<double> col(static_cast<size_t>(h)), res(static_cast<size_t>(h));
      for (long x = 0; x < w; ++x) {
        for (long y = 0; y < h; ++y)
          col[static_cast<size_t>(y)] = cur[static_cast<size_t>(y * w + x)];
        correlateSymmetric(
            k, h, [&](long i) { return i < 0 || i >= h ? 0.0 : col[static_cast<size_t>(i)]; },
            res.data());
        for (long y = 0; y < h; ++y)
          out[static_cast<size_t>(y * w + x)] = res[static_cast<size_t>(y)];
      }
    } else {
      for (long y = 0; y < h; ++y) {
        const double* row = cur.data() + y * w;
        correlateSymmetric(
            k, w, [&](long i) { return i < 0 || i >= w ? 0.0 : row[i]; }, out.data() + y * w);
      }
    }
    cur.swap(out);
  }
  return cur;
}

// NI_UniformFilter1D (mode constant, cval 0) of size `size` over lines of length n.
template <typename Get>
void uniformLine(long size, long n, Get get, double* out) {
  const long size1 = size / 2;
  // the extended line starts size1 before the first element
  auto ext = [&](long i) { return get(i - size1); };
  double tmp = 0.0;
  for (long l = 0; l < size; ++l) tmp += ext(l);
  out[0] = tmp / static_cast<double>(size);
  for (long l = 1; l < n; ++l) {
    tmp += ext(l - 1 + size) - ext(l - 1);
    out[l] = tmp / static_cast<double>(size);
  }
}

std::vector<double> uniformConstant2d(const std::vector<double>& img, long h, long w, double size0,
                                      double size1) {
  std::vector<double> cur = img, out(img.size());
  const double sizes[2] = {size0, size1};
  for (int axis = 0; axis < 2; ++axis) {
    if (!(sizes[axis] > 1)) continue;
    const long size = static_cast<long>(sizes[axis]);
    if (axis == 0) {
      std::vector<double> col(static_cast<size_t>(h)), res(static_cast<size_t>(h));
      for (long x = 0; x < w; ++x) {
        for (long y = 0; y < h; ++y)
          col[static_cast<size_t>(y)] = cur[static_cast<size_t>(y * w + x)];
        uniformLine(
            size, h, [&](long i) { return i < 0 || i >= h ? 0.0 : col[static_cast<size_t>(i)]; },
            res.data());
        for (long y = 0; y < h; ++y)
          out[static_cast<size_t>(y * w + x)] = res[static_cast<size_t>(y)];
      }
    } else {
      for (long y = 0; y < h; ++y) {
        const double* row = cur.data() + y * w;
        uniformLine(
            size, w, [&](long i) { return i < 0 || i >= w ? 0.0 : row[i]; }, out.data() + y * w);
      }
    }
    cur.swap(out);
  }
  return cur;
}

// scale_to_h: affine_transform(1.0 * img, ones(2) / scale, order=1, mode='constant', cval),
// which SciPy runs as zoom_shift (no grid mode), then float32.
std::vector<float> zoomLinear(const std::vector<double>& img, long h, long w, long outH, long outW,
                              double zoom0, double zoom1, double cval) {
  struct Axis {
    bool constant = false;
    long start = 0, i0 = 0, i1 = 0;  // the two indices (mirror-mapped at the edge)
    double w0 = 0, w1 = 0;
  };
  auto axis = [&](long outN, long inN, double zoom) {
    std::vector<Axis> a(static_cast<size_t>(outN));
    for (long k = 0; k < outN; ++k) {
      Axis& ax = a[static_cast<size_t>(k)];
      double cc = static_cast<double>(k);
      cc *= zoom;
      if (cc < 0 || cc > static_cast<double>(inN - 1)) {  // map_coordinate, mode constant
        ax.constant = true;
        continue;
      }
      ax.start = static_cast<long>(std::floor(cc));
      auto mirror = [&](long i) -> long {  // map_coordinate(i, inN, MIRROR) for i in [0, inN]
        if (i > inN - 1) {
          if (inN <= 1) return 0;
          const long sz2 = 2 * inN - 2;
          i -= sz2 * (i / sz2);
          if (i >= inN) i = sz2 - i;
        }
        return i;
      };
      ax.i0 = ax.start;
      ax.i1 = ax.start + 1 >= inN ? mirror(ax.start + 1) : ax.start + 1;
      const double x = cc - std::floor(cc);
      ax.w0 = 1.0 - x;
      ax.w1 = 1.0 - ax.w0;
    }
    return a;
  };
  const std::vector<Axis> ay = axis(outH, h, zoom0), ax = axis(outW, w, zoom1);
  std::vector<float> out(static_cast<size_t>(outH * outW));
  for (long y = 0; y < outH; ++y) {
    const Axis& a = ay[static_cast<size_t>(y)];
    for (long x = 0; x < outW; ++x) {
      const Axis& b = ax[static_cast<size_t>(x)];
      double t;
      if (a.constant || b.constant) {
        t = cval;
      } else {
        const long rows[2] = {a.i0, a.i1}, cols[2] = {b.i0, b.i1};
        const double wr[2] = {a.w0, a.w1}, wc[2] = {b.w0, b.w1};
        t = 0.0;
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j) {
            double coeff = img[static_cast<size_t>(rows[i] * w + cols[j])];
            coeff *= wr[i];
            coeff *= wc[j];
            t += coeff;
          }
      }
      out[static_cast<size_t>(y * outW + x)] = static_cast<float>(t);
    }
  }
  return out;
}

// measure()'s center row of each column of the inverted, normalised line `temp` (h x w): the
// argmax of the smoothed line, smoothed in turn.
std::vector<int> lineCenters(const std::vector<double>& temp, long h, long w) {
  const size_t n = temp.size();
  std::vector<int> center(static_cast<size_t>(w), 0);
  std::vector<double> smoothed =
      gaussianConstant2d(temp, h, w, static_cast<double>(h) * 0.5, static_cast<double>(h) * 1.0);
  const std::vector<double> uni =
      uniformConstant2d(smoothed, h, w, static_cast<double>(h) * 0.5, static_cast<double>(w));
  for (size_t i = 0; i < n; ++i) smoothed[i] += 0.001 * uni[i];
  std::vector<double> a(static_cast<size_t>(w));
  for (long x = 0; x < w; ++x) {
    long best = 0;
    for (long y = 1; y < h; ++y)
      if (smoothed[static_cast<size_t>(y * w + x)] > smoothed[static_cast<size_t>(best * w + x)])
        best = y;
    a[static_cast<size_t>(x)] = static_cast<double>(best);
  }
  // gaussian_filter(a, h * 0.3) on the int64 argmax: mode reflect, truncated back to int64
  const double sigma = static_cast<double>(h) * 0.3;
  if (sigma > 1e-15) {
    const long radius = static_cast<long>(4.0 * sigma + 0.5);
    const std::vector<double> k = gaussianKernel(sigma, radius);
    std::vector<double> res(static_cast<size_t>(w));
    correlateSymmetric(
        k, w, [&](long i) { return a[static_cast<size_t>(reflectIndex(i, w))]; }, res.data());
    for (long x = 0; x < w; ++x)
      center[static_cast<size_t>(x)] =
          static_cast<int>(static_cast<int64_t>(res[static_cast<size_t>(x)]));
  } else {
    for (long x = 0; x < w; ++x)
      center[static_cast<size_t>(x)] = static_cast<int>(a[static_cast<size_t>(x)]);
  }
  return center;
}

// CenterNormalizer.measure(): each column's center row and the mean absolute distance of the
// ink from it.
std::vector<int> measureLine(const Raster& im, uint8_t lineMax, double& mad) {
  const long h = im.h, w = im.w;
  const size_t n = im.px.size();
  std::vector<double> temp(n);
  uint8_t tempMax = 0;
  for (size_t i = 0; i < n; ++i) tempMax = std::max<uint8_t>(tempMax, lineMax - im.px[i]);
  if (tempMax == 0) {
    // A constant line: NumPy divides 0 by 0, every pixel is NaN, argmax gives row 0 and every
    // pixel counts as ink.
    double sum = 0;
    for (long y = 0; y < h; ++y) sum += static_cast<double>(y) * static_cast<double>(w);
    mad = sum / static_cast<double>(n);
    return std::vector<int>(static_cast<size_t>(w), 0);
  }
  for (size_t i = 0; i < n; ++i)
    temp[i] = static_cast<double>(static_cast<uint8_t>(lineMax - im.px[i])) * 1.0 /
              static_cast<double>(tempMax);
  const std::vector<int> center = lineCenters(temp, h, w);
  double sum = 0;
  size_t count = 0;
  for (long y = 0; y < h; ++y)
    for (long x = 0; x < w; ++x)
      if (temp[static_cast<size_t>(y * w + x)] != 0) {
        sum += static_cast<double>(std::abs(y - static_cast<long>(center[static_cast<size_t>(x)])));
        ++count;
      }
  mad = sum / static_cast<double>(count);  // count > 0: tempMax > 0
  return center;
}

// dewarp(): the columns padded[center + h - r : center + h + r] of [cval; img; cval], dh rows
// (the line itself where they are empty).
std::vector<double> dewarpLine(const Raster& im, const std::vector<int>& center, long r,
                               double cval, long& dh) {
  const long h = im.h, w = im.w;
  const size_t n = im.px.size();
  const long L = 3 * h;
  auto pyIndex = [&](long i) {
    if (i < 0) {
      i += L;
      if (i < 0) i = 0;
    } else if (i > L) {
      i = L;
    }
    return i;
  };
  long rows = -1;
  std::vector<long> starts(static_cast<size_t>(w));
  for (long x = 0; x < w; ++x) {
    const long c = center[static_cast<size_t>(x)] + h;
    const long start = pyIndex(c - r), stop = pyIndex(c + r);
    const long len = std::max(0L, stop - start);
    if (rows >= 0 && len != rows)
      emptyRecord("the line normaliser's columns differ in length (NumPy refuses them)");
    rows = len;
    starts[static_cast<size_t>(x)] = start;
  }
  std::vector<double> dewarped;
  if (rows <= 0) {
    dh = h;
    dewarped.resize(n);
    for (size_t i = 0; i < n; ++i) dewarped[i] = im.px[i];
  } else {
    dh = rows;
    dewarped.resize(static_cast<size_t>(dh * w));
    for (long x = 0; x < w; ++x)
      for (long y = 0; y < dh; ++y) {
        const long p = starts[static_cast<size_t>(x)] + y;  // row of `padded`
        const double v = p < h || p >= 2 * h ? cval : im.px[static_cast<size_t>((p - h) * w + x)];
        dewarped[static_cast<size_t>(y * w + x)] = static_cast<float>(v);
      }
  }
  return dewarped;
}

// kraken.lib.lineest.dewarp(CenterNormalizer(targetHeight), im) and the convert('L') after it.
Raster centerNormalize(const Raster& im, int targetHeight) {
  const long w = im.w;
  uint8_t lineMax = 0;
  for (uint8_t v : im.px) lineMax = std::max(lineMax, v);
  double mad;
  const std::vector<int> center = measureLine(im, lineMax, mad);
  const double rf = 1 + 4.0 * mad;
  if (!std::isfinite(rf)) emptyRecord("the line normaliser found no ink");
  const long r = static_cast<long>(rf);

  const double cval = lineMax;
  long dh;
  const std::vector<double> dewarped = dewarpLine(im, center, r, cval, dh);
  // scale_to_h
  const double scale = targetHeight * 1.0 / static_cast<double>(dh);
  const long outW = static_cast<long>(scale * static_cast<double>(w));
  if (outW <= 0) emptyRecord("the normalised line has no width");
  const double zoom = 1.0 / scale;
  const std::vector<float> scaled =
      zoomLinear(dewarped, dh, w, targetHeight, outW, zoom, zoom, cval);
  // array2pil ('F') then convert('L'): Pillow's f2l clips and truncates
  Raster out(static_cast<int>(outW), targetHeight, 1);
  for (size_t i = 0; i < scaled.size(); ++i) {
    const float v = scaled[i];
    out.px[i] = v <= 0.0f ? 0 : v >= 255.0f ? 255 : static_cast<uint8_t>(v);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// ImageInputTransforms

Raster toGrey(const Raster& im) {
  if (im.c == 1) return im;
  Raster out(im.w, im.h, 1);
  out.px = pilLuma(im.px.data(), static_cast<size_t>(im.w) * im.h);
  return out;
}

Raster toRgb(const Raster& im) {
  if (im.c == 3) return im;
  Raster out(im.w, im.h, 3);
  for (size_t i = 0; i < im.px.size(); ++i)
    out.px[3 * i] = out.px[3 * i + 1] = out.px[3 * i + 2] = im.px[i];
  return out;
}

Raster lanczos(const Raster& im, int outW, int outH) {
  if (outW <= 0 || outH <= 0)
    emptyRecord("PIL refuses to resize to " + std::to_string(outW) + " x " + std::to_string(outH) +
                " pixels");
  if (outW == im.w && outH == im.h) return im;
  Raster out(outW, outH, im.c);
  out.px = pilResizeLanczos(im.px.data(), im.w, im.h, im.c, outW, outH);
  return out;
}

struct InputPlan {
  int height = 0, width = 0, channels = 1, pad = 0;
  bool centerNorm = false;
};

InputPlan planInput(const KrakenInputSpec& in, bool validNorm) {
  InputPlan p;
  p.height = in.height;
  p.width = in.width;
  p.channels = in.channels;
  p.pad = in.padding;
  const int h = in.height, w = in.width, c = in.channels;
  if (h == 1 && w == 0 && c > 3) {
    p.height = c;  // [1, 1, 0, C]: C is the line height, one grey channel, permuted (1, 0, 2)
    p.channels = 1;
    p.centerNorm = validNorm;
  } else if (h > 1 && w == 0 && (c == 1 || c == 3)) {
    p.centerNorm = validNorm && c == 1;
  } else if (h == 0 && w > 1 && (c == 1 || c == 3)) {
  } else if (h > 0 && w > 0 && (c == 1 || c == 3)) {
    p.pad = 0;
  } else if (h == 0 && w == 0 && (c == 1 || c == 3)) {
    p.pad = 0;
  } else {
    throw Error("kraken line: invalid input spec " + std::to_string(h) + ", " + std::to_string(w) +
                ", " + std::to_string(c) +
                " (kraken accepts [1, H, 0, 1|3], [1, 0, W, 1|3], "
                "[1, H, W, 1|3], [1, 0, 0, 1|3] and [1, 1, 0, C])");
  }
  return p;
}

void applyTransforms(const Raster& line, const InputPlan& plan, KrakenLine& out) {
  Raster im = plan.channels == 3 ? toRgb(line) : toGrey(line);
  if (plan.height != 0 || plan.width != 0) {
    if (plan.centerNorm) {
      im = centerNormalize(im, plan.height);
    } else if (plan.height > 0 && plan.width > 0) {
      im = lanczos(im, plan.width, plan.height);
    } else {
      // _fixed_resize: the other side is int(w * oh / h) (true division, then truncation)
      int oh = plan.height, ow = plan.width;
      if (oh == 0)
        oh = static_cast<int>(static_cast<double>(static_cast<int64_t>(im.h) * ow) / im.w);
      else if (ow == 0)
        ow = static_cast<int>(static_cast<double>(static_cast<int64_t>(im.w) * oh) / im.h);
      im = lanczos(im, ow, oh);
    }
  }
  const int W = im.w + 2 * plan.pad, H = im.h, C = im.c;
  out.inputC = C;
  out.inputH = H;
  out.inputW = W;
  out.input.assign(static_cast<size_t>(C) * H * W, 0.0f);
  const float scale = static_cast<float>(1.0 / 255);  // ToDtype(scale=True): x * (1 / 255)
  float vmax = -std::numeric_limits<float>::infinity();
  for (int c = 0; c < C; ++c)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        const int sx = x - plan.pad;
        const uint8_t v =
            sx < 0 || sx >= im.w ? 255 : im.px[(static_cast<size_t>(y) * im.w + sx) * C + c];
        const float f = static_cast<float>(v) * scale;
        out.input[(static_cast<size_t>(c) * H + y) * W + x] = f;
        vmax = std::max(vmax, f);
      }
  float vmin = std::numeric_limits<float>::infinity(), mx = -vmin;
  for (float& f : out.input) {
    f = vmax - f;  // tensor_invert: im.max() - im
    vmin = std::min(vmin, f);
    mx = std::max(mx, f);
  }
  if (out.input.empty() || mx == vmin) {
    out.empty = true;
    out.emptyReason = "the line is blank (its input tensor is constant)";
  }
}

// ---------------------------------------------------------------------------------------------
// extract_polygons, bounding boxes

Raster extractBox(const Raster& page, const KrakenLineSpec& line) {
  const int* b = line.bbox;
  const int W = page.w, H = page.h;
  // kraken compares Python lists: lexicographically
  auto lexLess = [](std::initializer_list<int> a, std::initializer_list<int> c) {
    return std::lexicographical_compare(a.begin(), a.end(), c.begin(), c.end());
  };
  // box < [0, 0, 0, 0] or box[::2] >= [W, W] or box[1::2] >= [H, H]
  if (lexLess({b[0], b[1], b[2], b[3]}, {0, 0, 0, 0}) || !lexLess({b[0], b[2]}, {W, W}) ||
      !lexLess({b[1], b[3]}, {H, H}))
    emptyRecord("bbox [" + std::to_string(b[0]) + ", " + std::to_string(b[1]) + ", " +
                std::to_string(b[2]) + ", " + std::to_string(b[3]) +
                "] is outside of image bounds (" + std::to_string(W) + ", " + std::to_string(H) +
                ")");
  if (b[2] < b[0]) emptyRecord("Coordinate 'right' is less than 'left'");
  if (b[3] < b[1]) emptyRecord("Coordinate 'lower' is less than 'upper'");
  Raster crop = kraken::crop(page, b[0], b[1], b[2], b[3]);
  if (line.textDirection.rfind("vertical", 0) == 0) crop = kraken::rotate90(crop);
  return crop;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

KrakenLine extractKrakenLine(const GreyImage& page, const KrakenLineSpec& line,
                             const KrakenInputSpec& input) {
  KrakenLine out;
  out.padding = input.padding;
  const InputPlan plan = planInput(input, !line.baseline);
  out.vertical = !line.baseline && line.textDirection.rfind("vertical", 0) == 0;
  try {
    const Raster pageR = pageRaster(page);
    Raster ex = line.baseline ? kraken::extractBaselineLine(pageR, line, input.legacyPolygons,
                                                            input.bilevelPage)
                              : extractBox(pageR, line);
    out.extracted.width = ex.w;
    out.extracted.height = ex.h;
    if (ex.c == 3) {
      out.extracted.rgb = ex.px;
      out.extracted.pixels = pilLuma(ex.px.data(), static_cast<size_t>(ex.w) * ex.h);
    } else {
      out.extracted.pixels = ex.px;
    }
    if (ex.w == 0 || ex.h == 0) emptyRecord("the line image has a zero dimension");
    applyTransforms(ex, plan, out);
  } catch (const kraken::EmptyRecord& e) {
    out.empty = true;
    out.emptyReason = e.reason;
    out.input.clear();
    out.inputW = out.inputH = 0;
  }
  return out;
}

int krakenFrameToLine(const KrakenLine& line, int frame, int outputLength) {
  if (line.empty || outputLength <= 0 || line.inputW <= 0) return 0;
  const double netScale = static_cast<double>(line.inputW) / outputLength;
  const double inScale =
      static_cast<double>(line.extracted.width) / (line.inputW - 2 * line.padding);
  const int maxVal = line.vertical ? line.extracted.height : line.extracted.width;
  const double v = std::min(std::max((frame * netScale - line.padding) * inScale, 0.0),
                            static_cast<double>(maxVal - 1));
  return static_cast<int>(std::nearbyint(v));  // Python's round(): half to even
}

std::vector<Point2> krakenColumnSpanToPolygon(const KrakenLine& line, const KrakenLineSpec& spec,
                                              int x0, int x1) {
  if (!spec.baseline) {
    const int* b = spec.bbox;
    if (spec.textDirection.rfind("horizontal", 0) == 0) {
      const double xmin = b[0] + x0, xmax = b[0] + x1;
      return {
          {xmin, double(b[1])}, {xmin, double(b[3])}, {xmax, double(b[3])}, {xmax, double(b[1])}};
    }
    const double ymin = b[1] + x0, ymax = b[1] + x1;
    return {{double(b[0]), ymin}, {double(b[2]), ymin}, {double(b[2]), ymax}, {double(b[0]), ymax}};
  }
  (void)line;
  return kraken::polygonSection(spec.baselinePoints, spec.boundary, x0, x1);
}

}  // namespace foveal::core
