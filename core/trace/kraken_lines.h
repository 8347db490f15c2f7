#pragma once
// Lines of a page read as kraken reads them: a layout's text line (formats/page_layout.h) as
// kraken's segmentation line (image/kraken_line.h), and what reading one gives (the trace of the
// extracted line, and each step's cut on the page). ModelSession::traceLine does the reading.
// Torch-free.
#include <string>
#include <vector>

#include "formats/page_layout.h"
#include "image/kraken_line.h"
#include "trace/trace.h"

namespace foveal::core {

/// kraken's BBoxLine: the box x0, y0, x1, y1 (a PIL crop box).
KrakenLineSpec krakenBoxLine(int x0, int y0, int x1, int y1,
                             const std::string& textDirection = "horizontal-lr");
/// kraken's BaselineLine: a baseline and the boundary polygon around it.
KrakenLineSpec krakenBaselineLine(const std::vector<Point2>& baseline,
                                  const std::vector<Point2>& boundary,
                                  const std::string& textDirection = "horizontal-lr");
/// A layout's line as kraken's recogniser takes it: with a baseline (and a boundary) through the
/// baseline path, else through the box of its coordinates. Throws Error naming the line when it
/// has neither.
KrakenLineSpec krakenLineOf(const LayoutLine& line, const std::string& textDirection);

/// One line read: the trace of the extracted line image (its steps' boxes in the line's pixels),
/// each step's cut on the page (kraken's record polygon: 4 points), or an empty reading with the
/// reason kraken gives none.
struct LineReading {
  bool empty = false;
  std::string why;
  Trace trace;
  std::vector<std::vector<PointF>> cuts;
  GreyImage line;  ///< the extracted line image
};

}  // namespace foveal::core
