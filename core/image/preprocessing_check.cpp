#include "image/preprocessing_check.h"

#include <cstdio>
#include <string>

#include "base/error.h"

namespace foveal::core {

void checkPreprocessing(const Preprocessing& p) {
  auto fail = [](const std::string& m) { throw Error("invalid preprocessing: " + m); };
  auto side = [&](const char* name, int v) {
    if (v < kMinInputSide || v > kMaxInputSide)
      fail(std::string(name) + " must be in [" + std::to_string(kMinInputSide) + ", " +
           std::to_string(kMaxInputSide) + "], not " + std::to_string(v));
  };
  side("input width", p.inputW);
  side("input height", p.inputH);
  if (!(p.regionScale >= kMinRegionScale && p.regionScale <= kMaxRegionScale)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "region scale must be in [%g, %g], not %g", kMinRegionScale,
                  kMaxRegionScale, p.regionScale);
    fail(buf);
  }
  if (p.normalisation != "minus_one_one") fail("unknown normalisation '" + p.normalisation + "'");
}

}  // namespace foveal::core
