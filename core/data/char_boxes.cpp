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
