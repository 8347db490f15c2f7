#pragma once
// The image and geometry operations behind kraken_line.h's extraction, each made bit-exact to
// the library function kraken calls (named in each comment). Internal to core/image; exposed
// for kraken_line.cpp and its test.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "image/kraken_line.h"

namespace foveal::core::kraken {

/// An 8-bit image with 1 (PIL 'L') or 3 (PIL 'RGB') interleaved bands.
struct Raster {
  int w = 0, h = 0, c = 1;
  std::vector<uint8_t> px;
  Raster() = default;
  Raster(int width, int height, int bands)
      : w(width),
        h(height),
        c(bands),
        px(static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(bands),
           0) {}
  uint8_t* row(int y) { return px.data() + static_cast<size_t>(y) * w * c; }
  const uint8_t* row(int y) const { return px.data() + static_cast<size_t>(y) * w * c; }
};

/// What kraken turns into an empty record (its ValueError and the failures rpred catches).
struct EmptyRecord {
  std::string reason;
};
[[noreturn]] void emptyRecord(std::string reason);

/// numpy.sum of a float64 vector: the identity 0 plus NumPy's pairwise summation.
double numpySum(const double* v, size_t n);

/// PIL Image.crop: pixels outside the image are 0.
Raster crop(const Raster& im, int x0, int y0, int x1, int y1);
/// PIL Image.transpose(ROTATE_90) (what rotate(90, expand=True) does): counter-clockwise.
Raster rotate90(const Raster& im);
/// PIL Image.getbbox: the box of the non-zero pixels; false when there are none.
bool getBBox(const Raster& im, int box[4]);
/// PIL ImageDraw.polygon(xy, fill=ink) on an 8-bit image (w x h): Pillow 9.4's scan-line fill.
/// `xy` holds the vertices' integer coordinates (x0, y0, x1, y1, ...).
void fillPolygon(uint8_t* im, int w, int h, const std::vector<int>& xy, uint8_t ink);

/// skimage.measure.subdivide_polygon(coords, degree=2, preserve_ends=True).
std::vector<Point2> subdividePolygon(const std::vector<Point2>& coords);
/// skimage.measure.approximate_polygon(coords, tolerance).
std::vector<Point2> approximatePolygon(const std::vector<Point2>& coords, double tolerance);

/// extract_polygons for one baseline line (new or legacy extractor), up to and including the
/// final crop to the non-zero pixels. `bilevel`: the page is PIL mode '1'.
Raster extractBaselineLine(const Raster& page, const KrakenLineSpec& line, bool legacy,
                           bool bilevel);

/// precompute_polygon_sections for one cut (d1, d2): the boundary section between the
/// perpendiculars to the baseline at distances d1 and d2 along it.
std::vector<Point2> polygonSection(const std::vector<Point2>& baseline,
                                   const std::vector<Point2>& boundary, double d1, double d2);

}  // namespace foveal::core::kraken
