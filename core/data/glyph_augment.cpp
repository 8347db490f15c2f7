#include "data/glyph_augment.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/error.h"
#include "data/random.h"

namespace foveal::core::data {

namespace {

struct Param {
  const char* key;
  double GlyphAugmentSpec::*field;
  double lo, hi;
  const char* meaning;
};

// Every parameter with its key and the range a value must lie in.
const std::array<Param, 7> kParams = {{
    {"aug-scale", &GlyphAugmentSpec::scale, 0.0, 0.5, "relative scale range"},
    {"aug-shear", &GlyphAugmentSpec::shear, 0.0, 1.0, "shear (tan) range"},
    {"aug-rot", &GlyphAugmentSpec::rotation, 0.0, 45.0, "rotation range in degrees"},
    {"aug-shift", &GlyphAugmentSpec::shift, 0.0, 8.0, "shift range in pixels"},
    {"aug-elastic", &GlyphAugmentSpec::elastic, 0.0, 100.0, "elastic alpha in pixels"},
    {"aug-sigma", &GlyphAugmentSpec::sigma, 1.0, 16.0, "elastic sigma in pixels"},
    {"aug-thick", &GlyphAugmentSpec::thickness, 0.0, 1.0, "thickness-change probability"},
}};

std::string shortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// One pass of a separable blur along the rows of an n x n image: each row is padded by `radius`
// copies of its edge pixels, and the tap loop runs outside the pixel loop, so the compiler
// vectorises it while each pixel still sums its taps in order, as a straightforward clamped loop
// does (the result is bit for bit the same).
void blurRows(const float* in, float* out, int n, const std::vector<float>& kernel, int radius) {
  const size_t un = static_cast<size_t>(n);
  std::vector<float> padRow(un + 2 * static_cast<size_t>(radius));
  for (int y = 0; y < n; ++y) {
    const float* row = in + static_cast<size_t>(y) * un;
    for (int j = 0; j < n + 2 * radius; ++j)
      padRow[static_cast<size_t>(j)] = row[std::clamp(j - radius, 0, n - 1)];
    float* __restrict acc = out + static_cast<size_t>(y) * un;
    std::fill(acc, acc + un, 0.0f);
    for (size_t t = 0; t < kernel.size(); ++t) {
      const float k = kernel[t];
      const float* __restrict src = padRow.data() + t;
      for (size_t x = 0; x < un; ++x) acc[x] += k * src[x];
    }
  }
}

void transpose(const float* in, float* out, int n) {
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) out[x * n + y] = in[y * n + x];
}

// A smoothed displacement field (Simard et al. 2003): uniform [-1, 1] per pixel, a separable
// Gaussian of `sigma` (edges clamped), scaled by `alpha`. The data loader makes two per glyph,
// so both passes are row passes (the vertical one on the transposed image).
std::vector<float> displacementField(int n, uint64_t key, double alpha, double sigma) {
  SampleRng rng(key);
  std::vector<float> raw(static_cast<size_t>(n) * n);
  for (float& v : raw) v = static_cast<float>(rng.uniform(-1.0, 1.0));
  const int radius = static_cast<int>(std::ceil(3.0 * sigma));
  std::vector<float> kernel(static_cast<size_t>(2 * radius + 1));
  for (int i = -radius; i <= radius; ++i)
    kernel[static_cast<size_t>(i + radius)] =
        static_cast<float>(std::exp(-0.5 * i * i / (sigma * sigma)));
  float sum = 0.0f;
  for (float k : kernel) sum += k;
  for (float& k : kernel) k /= sum;
  std::vector<float> a(raw.size()), b(raw.size());
  blurRows(raw.data(), a.data(), n, kernel, radius);  // horizontal
  transpose(a.data(), b.data(), n);
  blurRows(b.data(), a.data(), n, kernel, radius);  // vertical, transposed
  const float scale = static_cast<float>(alpha);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x)
      raw[static_cast<size_t>(y * n + x)] = scale * a[static_cast<size_t>(x * n + y)];
  return raw;
}

// Greyscale erosion (min) or dilation (max) with a 3x3 cross; outside the cell is background.
void morph(std::vector<uint8_t>& img, int n, bool dilate) {
  const std::vector<uint8_t> src = img;
  const auto at = [&](int x, int y) -> int {
    return x < 0 || y < 0 || x >= n || y >= n ? 0 : src[y * n + x];
  };
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const int c = at(x, y), l = at(x - 1, y), r = at(x + 1, y), u = at(x, y - 1),
                d = at(x, y + 1);
      img[y * n + x] =
          static_cast<uint8_t>(dilate ? std::max({c, l, r, u, d}) : std::min({c, l, r, u, d}));
    }
}

}  // namespace

GlyphAugmentSpec GlyphAugmentSpec::defaults() {
  GlyphAugmentSpec s;
  s.scale = 0.12;
  s.shear = 0.25;
  s.rotation = 10.0;
  s.shift = 2.0;
  s.elastic = 10.0;
  s.sigma = 4.0;
  s.thickness = 0.3;
  return s;
}

std::string GlyphAugmentSpec::toSpecItems() const {
  if (!enabled()) return {};
  std::string s;
  for (const Param& p : kParams) s += std::string(",") + p.key + "=" + shortNumber(this->*p.field);
  return s;
}

bool GlyphAugmentSpec::set(const std::string& key, const std::string& value) {
  if (key == "augment") {
    if (!value.empty() && value != "1" && value != "true" && value != "default")
      throw Error("augment takes no value (the defaults) or \"default\", not \"" + value +
                  "\"; set single parameters with aug-scale, aug-shear, aug-rot, aug-shift, "
                  "aug-elastic, aug-sigma, aug-thick");
    *this = defaults();
    return true;
  }
  for (const Param& p : kParams) {
    if (key != p.key) continue;
    size_t used = 0;
    double v = 0.0;
    try {
      v = std::stod(value, &used);
    } catch (...) {
      used = 0;
    }
    if (value.empty() || used != value.size() || !std::isfinite(v) || v < p.lo || v > p.hi)
      throw Error(key + " (" + p.meaning + ") must be a number in [" + shortNumber(p.lo) + ", " +
                  shortNumber(p.hi) + "], not \"" + value + "\"");
    this->*p.field = v;
    return true;
  }
  return false;
}

GlyphWarp GlyphWarp::draw(const GlyphAugmentSpec& spec, SampleRng& rng) {
  GlyphWarp w;
  // Always draw every value, so changing one range leaves the others' draws unchanged.
  const double u[7] = {rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1),
                       rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(),
                       rng.uniform()};
  w.scale = 1.0 + spec.scale * u[0];
  w.shear = spec.shear * u[1];
  w.rotationDeg = spec.rotation * u[2];
  w.dx = spec.shift * u[3];
  w.dy = spec.shift * u[4];
  w.thickness = u[5] < spec.thickness ? (u[6] < 0.5 ? -1 : 1) : 0;
  w.elasticKey = rng.next();
  w.elastic = spec.elastic;
  w.sigma = spec.sigma;
  return w;
}

// The affine part: about the cell's centre c, p' = R(rot) * Shear * scale * (p - c) + c + t.
void GlyphWarp::forward(double n, double x, double y, double& ox, double& oy) const {
  const double c = n / 2.0, th = rotationDeg * M_PI / 180.0;
  const double sx = (x - c) * scale, sy = (y - c) * scale;
  const double hx = sx + shear * sy, hy = sy;
  ox = std::cos(th) * hx - std::sin(th) * hy + c + dx;
  oy = std::sin(th) * hx + std::cos(th) * hy + c + dy;
}

void warpGlyph(const uint8_t* cell, int n, const GlyphWarp& w, uint8_t* out) {
  std::vector<uint8_t> img(static_cast<size_t>(n) * n);
  // The inverse affine map: undo the shift and rotation, then the shear, then the scale.
  const double c = n / 2.0, th = w.rotationDeg * M_PI / 180.0;
  const double cs = std::cos(th), sn = std::sin(th);
  // The cell with a one-pixel border of zeros, so every bilinear tap is a plain load.
  const size_t pn = static_cast<size_t>(n) + 2;
  std::vector<uint8_t> padded(pn * pn, 0);
  for (int y = 0; y < n; ++y)
    std::copy(cell + y * n, cell + (y + 1) * n,
              padded.begin() + static_cast<std::ptrdiff_t>((y + 1) * pn + 1));
  std::vector<float> fieldX, fieldY;
  if (w.elastic > 0) {
    fieldX = displacementField(n, w.elasticKey, w.elastic, w.sigma);
    fieldY = displacementField(n, mix64(w.elasticKey ^ 0x5851F42D4C957F2Dull), w.elastic, w.sigma);
  }
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      double px = x + 0.5, py = y + 0.5;
      if (!fieldX.empty()) {  // the elastic field displaces where each output pixel samples
        px += fieldX[static_cast<size_t>(y * n + x)];
        py += fieldY[static_cast<size_t>(y * n + x)];
      }
      const double rx = px - c - w.dx, ry = py - c - w.dy;
      const double hx = cs * rx + sn * ry, hy = -sn * rx + cs * ry;
      const double ux = hx - w.shear * hy, uy = hy;
      const double sx = ux / w.scale + c - 0.5, sy = uy / w.scale + c - 0.5;
      // Bilinear, zero outside the cell: the four taps read the zero-bordered copy, and a
      // sample whose taps all lie outside it is background.
      const int x0 = static_cast<int>(std::floor(sx)), y0 = static_cast<int>(std::floor(sy));
      uint8_t value = 0;
      if (x0 >= -1 && y0 >= -1 && x0 < n && y0 < n) {
        const double fx = sx - x0, fy = sy - y0;
        const uint8_t* p = padded.data() + static_cast<size_t>(y0 + 1) * pn + (x0 + 1);
        const double a = p[0], b = p[1], c2 = p[pn], d = p[pn + 1];
        const double top = a + (b - a) * fx;
        const double bottom = c2 + (d - c2) * fx;
        value = static_cast<uint8_t>(std::clamp(top + (bottom - top) * fy + 0.5, 0.0, 255.0));
      }
      img[static_cast<size_t>(y * n + x)] = value;
    }
  if (w.thickness != 0) morph(img, n, w.thickness > 0);
  std::copy(img.begin(), img.end(), out);
}

Box warpedSlotBox(int n, const GlyphWarp& w) {
  double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
  for (const auto& [cx, cy] :
       {std::pair{0.0, 0.0}, {double(n), 0.0}, {0.0, double(n)}, {double(n), double(n)}}) {
    double ox = 0, oy = 0;
    w.forward(n, cx, cy, ox, oy);
    x0 = std::min(x0, ox);
    y0 = std::min(y0, oy);
    x1 = std::max(x1, ox);
    y1 = std::max(y1, oy);
  }
  x0 = std::clamp(x0, 0.0, double(n));
  x1 = std::clamp(x1, 0.0, double(n));
  y0 = std::clamp(y0, 0.0, double(n));
  y1 = std::clamp(y1, 0.0, double(n));
  return {x0, y0, x1 - x0, y1 - y0};
}

}  // namespace foveal::core::data
