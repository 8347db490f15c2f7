#include "trace/pixel_maps.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace foveal::core {

namespace {

// Where x falls between sorted centres: the two neighbours and the weight of the second.
struct Lerp {
  size_t i0 = 0, i1 = 0;
  double f = 0;
};

Lerp locate(const std::vector<double>& c, double x) {
  if (c.size() <= 1 || x <= c.front()) return {0, 0, 0};
  if (x >= c.back()) return {c.size() - 1, c.size() - 1, 0};
  const size_t i1 = static_cast<size_t>(std::upper_bound(c.begin(), c.end(), x) - c.begin());
  const size_t i0 = i1 - 1;
  const double span = c[i1] - c[i0];
  return {i0, i1, span > 0 ? (x - c[i0]) / span : 0.0};
}

}  // namespace

std::vector<double> regionMapToPixels(const Trace& trace, const std::vector<double>& values) {
  const int rows = trace.isGrid() ? trace.gridRows : 1;
  const size_t count = trace.regions.size();
  const size_t columns = rows > 0 ? count / static_cast<size_t>(rows) : 0;
  if (count == 0 || values.size() < count)
    throw Error("a region map needs one value per region (" + std::to_string(count) + "), not " +
                std::to_string(values.size()));
  std::vector<double> xs(columns), ys(static_cast<size_t>(rows));
  const bool centres = trace.regionCentres.size() == count;
  for (size_t c = 0; c < columns; ++c)
    xs[c] = centres ? trace.regionCentres[c].x : trace.regions[c].x + trace.regions[c].w / 2;
  for (int r = 0; r < rows; ++r)
    ys[static_cast<size_t>(r)] = centres ? trace.regionCentres[static_cast<size_t>(r) * columns].y
                                         : (r + 0.5) * trace.imageH / rows;
  const int w = trace.imageW, h = trace.imageH;
  std::vector<double> out(static_cast<size_t>(w) * static_cast<size_t>(h));
  std::vector<Lerp> across(static_cast<size_t>(w));
  for (int x = 0; x < w; ++x) across[static_cast<size_t>(x)] = locate(xs, x + 0.5);
  auto at = [&](size_t r, size_t c) { return values[r * columns + c]; };
  for (int y = 0; y < h; ++y) {
    const Lerp d = locate(ys, y + 0.5);
    for (int x = 0; x < w; ++x) {
      const Lerp& a = across[static_cast<size_t>(x)];
      const double upper = at(d.i0, a.i0) * (1 - a.f) + at(d.i0, a.i1) * a.f;
      const double lower = at(d.i1, a.i0) * (1 - a.f) + at(d.i1, a.i1) * a.f;
      out[static_cast<size_t>(y) * w + x] = upper * (1 - d.f) + lower * d.f;
    }
  }
  return out;
}

std::vector<double> stepPixelMap(const Trace& trace, const std::string& name, size_t step) {
  const StepMap* m = trace.map(name);
  if (!m || step >= m->steps.size() || m->steps[step].empty()) return {};
  if (m->layout == MapLayout::Pixels) return m->steps[step];
  return regionMapToPixels(trace, m->steps[step]);
}

GreyImage overlayImage(const GreyImage& image, const std::vector<double>& map) {
  const size_t n = static_cast<size_t>(image.width) * static_cast<size_t>(image.height);
  if (map.size() != n)
    throw Error("the map has " + std::to_string(map.size()) + " values for a " +
                std::to_string(image.width) + "x" + std::to_string(image.height) + " image");
  double top = 0, bottom = 0;
  for (double v : map) {
    top = std::max(top, v);
    bottom = std::min(bottom, v);
  }
  const bool signedMap = bottom < 0;
  const double scale = std::max({top, -bottom, 1e-30});
  GreyImage out = image;
  out.rgb.resize(n * 3);
  for (size_t i = 0; i < n; ++i) {
    const double grey = image.pixels[i] * 0.6;  // dimmed so the colours read
    const double v = std::clamp(map[i] / scale, -1.0, 1.0);
    double r = grey, g = grey, b = grey;
    if (signedMap) {
      const double a = std::abs(v);
      if (v > 0) {
        r = grey + (255 - grey) * a;
        g = b = grey * (1 - a);
      } else {
        b = grey + (255 - grey) * a;
        r = g = grey * (1 - a);
      }
    } else {
      // A heat ramp: dark red to yellow to white as the value rises, over the grey.
      const double a = std::max(0.0, v);
      const double hr = std::min(1.0, 3 * a), hg = std::clamp(3 * a - 1, 0.0, 1.0),
                   hb = std::clamp(3 * a - 2, 0.0, 1.0);
      const double mix = std::min(1.0, 0.15 + 0.85 * a);
      r = grey * (1 - mix) + 255 * hr * mix;
      g = grey * (1 - mix) + 255 * hg * mix;
      b = grey * (1 - mix) + 255 * hb * mix;
    }
    out.rgb[3 * i] = static_cast<uint8_t>(std::lround(std::clamp(r, 0.0, 255.0)));
    out.rgb[3 * i + 1] = static_cast<uint8_t>(std::lround(std::clamp(g, 0.0, 255.0)));
    out.rgb[3 * i + 2] = static_cast<uint8_t>(std::lround(std::clamp(b, 0.0, 255.0)));
  }
  return out;
}

}  // namespace foveal::core
