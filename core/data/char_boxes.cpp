#include "data/char_boxes.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "base/error.h"

namespace foveal::core::data {

std::string formatCharBoxes(const std::vector<Box>& boxes) {
  std::string out;
  char buf[128];
  for (const auto& b : boxes) {
    std::snprintf(buf, sizeof buf, "%s%g,%g,%g,%g", out.empty() ? "" : " ", b.x, b.y, b.x + b.w,
                  b.y + b.h);
    out += buf;
  }
  return out;
}

void checkCharBoxesInImage(const std::vector<Box>& boxes, int width, int height) {
  const double mx = 0.5 * width, my = 0.5 * height;
  for (size_t k = 0; k < boxes.size(); ++k) {
    const Box& b = boxes[k];
    if (b.x >= -mx && b.y >= -my && b.x + b.w <= width + mx && b.y + b.h <= height + my) continue;
    char text[160];
    std::snprintf(text, sizeof text, "%g,%g,%g,%g", b.x, b.y, b.x + b.w, b.y + b.h);
    throw Error("character box " + std::to_string(k + 1) + " \"" + text + "\" lies outside the " +
                std::to_string(width) + "x" + std::to_string(height) +
                " image (more than half its size beyond an edge)");
  }
}

std::vector<Box> parseCharBoxes(const std::string& text) {
  std::vector<Box> out;
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    double v[4];
    const char* p = item.c_str();
    for (int k = 0; k < 4; ++k) {
      char* end = nullptr;
      v[k] = std::strtod(p, &end);
      if (end == p || !std::isfinite(v[k]) || *end != (k < 3 ? ',' : '\0'))
        throw Error("character box " + std::to_string(out.size() + 1) + " \"" + item +
                    "\" is not x0,y0,x1,y1");
      p = end + 1;
    }
    if (v[2] < v[0] || v[3] < v[1])
      throw Error("character box " + std::to_string(out.size() + 1) + " \"" + item +
                  "\" has its right or bottom edge before its left or top");
    out.push_back({v[0], v[1], v[2] - v[0], v[3] - v[1]});
  }
  return out;
}

}  // namespace foveal::core::data
