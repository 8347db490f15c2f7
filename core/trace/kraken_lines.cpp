#include "trace/kraken_lines.h"

#include <cmath>

#include "base/error.h"

namespace foveal::core {

KrakenLineSpec krakenBoxLine(int x0, int y0, int x1, int y1, const std::string& textDirection) {
  KrakenLineSpec s;
  s.baseline = false;
  s.bbox[0] = x0;
  s.bbox[1] = y0;
  s.bbox[2] = x1;
  s.bbox[3] = y1;
  s.textDirection = textDirection;
  return s;
}

KrakenLineSpec krakenBaselineLine(const std::vector<Point2>& baseline,
                                  const std::vector<Point2>& boundary,
                                  const std::string& textDirection) {
  KrakenLineSpec s;
  s.baseline = true;
  s.baselinePoints = baseline;
  s.boundary = boundary;
  s.textDirection = textDirection;
  return s;
}

KrakenLineSpec krakenLineOf(const LayoutLine& line, const std::string& textDirection) {
  auto points = [](const std::vector<LayoutPoint>& v) {
    std::vector<Point2> out;
    for (const auto& p : v) out.push_back({p.x, p.y});
    return out;
  };
  if (!line.baseline.empty() && !line.boundary.empty())
    return krakenBaselineLine(points(line.baseline), points(line.boundary), textDirection);
  if (line.hasBox)
    // kraken's BBoxLine holds the box as the layout gives it; PIL's crop takes whole pixels.
    return krakenBoxLine(static_cast<int>(std::floor(line.bbox[0])),
                         static_cast<int>(std::floor(line.bbox[1])),
                         static_cast<int>(std::ceil(line.bbox[2])),
                         static_cast<int>(std::ceil(line.bbox[3])), textDirection);
  throw Error("line " + (line.id.empty() ? std::string("(no id)") : line.id) +
              ": neither a baseline with a boundary nor a box to read it by");
}

}  // namespace foveal::core
