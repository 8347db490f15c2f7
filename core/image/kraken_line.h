#pragma once
// A handwritten or printed line read exactly as kraken's recogniser reads it (kraken's
// rpred: kraken.lib.segmentation.extract_polygons, then ImageInputTransforms), without Torch:
// the line image kraken cuts out of the page, the network input tensor it makes of it, and the
// mapping kraken uses to turn the network's output positions back into page polygons.
//
// What kraken does (kraken 7, with Pillow, SciPy, scikit-image and NumPy; checked pixel for
// pixel against kraken itself, see tests/core/test_kraken_line.cpp):
//  - a bounding box (BBoxLine) is PIL-cropped from the page (outside pixels 0) and, for vertical
//    text, turned 90 degrees counter-clockwise; a box outside the page gives an empty record;
//  - a baseline with its boundary polygon (BaselineLine) is cut out with the polygon as mask
//    and straightened: two-point baselines are rotated (new extractor: PIL's affine transform,
//    bilinear, or nearest for 1-bit pages; legacy extractor: SciPy's affine_transform, nearest,
//    which on grey pages drops the translation), longer ones are unbent (new: a bevelled
//    PIL mesh transform; legacy: scikit-image's piecewise-affine warp), then cropped to the
//    bounding box of the non-zero pixels;
//  - the transforms: PIL convert('L') (or 'RGB' for 3-channel models); for bounding-box lines of
//    one-channel models of variable width, kraken's CenterNormalizer (a Gaussian-smoothed centre
//    line, a band of 2r rows around it, linear zoom to the line height, truncated to 8 bits);
//    for baseline lines a PIL LANCZOS resize to the line height keeping the aspect
//    (width = int(w * H / h)); 16 px of white (255) left and right; /255 in float32; inverted
//    as max - x. A tensor whose max equals its min is an empty record.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "image/grey_image.h"

namespace foveal::core {

struct Point2 {
  double x = 0, y = 0;
};

/// One line of a kraken segmentation.
struct KrakenLineSpec {
  bool baseline = false;       ///< BaselineLine (baseline + boundary) rather than BBoxLine
  int bbox[4] = {0, 0, 0, 0};  ///< x0, y0, x1, y1 as kraken's BBoxLine.bbox (PIL crop box)
  std::vector<Point2> baselinePoints;
  std::vector<Point2> boundary;  ///< the line's boundary polygon (kraken needs one)
  /// The segmentation's text direction: horizontal-lr, horizontal-rl, vertical-lr, vertical-rl.
  std::string textDirection = "horizontal-lr";
};

/// What kraken reads from the model for its input.
struct KrakenInputSpec {
  int height = 48;  ///< VGSL input [batch, height, width, channels]
  int width = 0;
  int channels = 1;
  int padding = 16;  ///< rpred's pad (left and right)
  /// The model's `legacy_polygons` metadata (kraken assumes true when a model lacks it) selects
  /// the legacy polygon extractor for baseline lines.
  bool legacyPolygons = false;
  /// The page is a 1-bit image (PIL mode '1', e.g. a bilevel PNG or TIFF): kraken then samples
  /// baseline lines with nearest neighbour instead of bilinear. (Grey pages that happen to hold
  /// only 0 and 255 are mode 'L' and sample bilinearly.)
  bool bilevelPage = false;
};

struct KrakenLine {
  bool empty = false;       ///< kraken yields an empty record (out of the page, blank line...)
  std::string emptyReason;  ///< why, in words (kraken's own exception text where it has one)
  /// The line image extract_polygons yields (before the transforms); `rgb` set for colour pages.
  GreyImage extracted;
  int inputC = 1, inputH = 0, inputW = 0;  ///< the network input size
  std::vector<float> input;  ///< [inputC * inputH * inputW] row-major, kraken's tensor values
  /// The padding rpred's position mapping subtracts (its configured pad, even where the input
  /// transforms drop it for fixed-width models).
  int padding = 16;
  bool vertical = false;  ///< the line was read as vertical text (bbox turned by 90 degrees)
};

/// Reads one line of `page` as kraken's rpred does. Throws Error for an input spec kraken
/// refuses (KrakenInputException); everything kraken turns into an empty record is `empty`.
KrakenLine extractKrakenLine(const GreyImage& page, const KrakenLineSpec& line,
                             const KrakenInputSpec& input);

/// rpred's _scale_val: an output frame index of the network (one of `outputLength` frames over
/// the input width) to a column of `extracted` (a row for vertical lines), clamped to the line
/// and rounded half to even, as kraken computes character cut positions.
int krakenFrameToLine(const KrakenLine& line, int frame, int outputLength);

/// The polygon kraken's record gives for the span [x0, x1] of line positions (what
/// krakenFrameToLine returns): for a bounding box the box's slice (4 points, x0/x1 offset by the
/// box origin); for a baseline kraken's polygon section (BaselineOCRRecord.cuts: the boundary
/// cut by the perpendiculars at distances x0 and x1 along the baseline, in integer page
/// pixels; 4 points, or kraken's 2-point fallback for a malformed boundary).
std::vector<Point2> krakenColumnSpanToPolygon(const KrakenLine& line, const KrakenLineSpec& spec,
                                              int x0, int x1);

}  // namespace foveal::core
