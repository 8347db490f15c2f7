#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/cpu_features.h"

namespace foveal::core {

std::string cpuFeatureSummary() {
  // The instruction sets the kernel routes depend on (issue 68), in /proc/cpuinfo's names.
  static const std::vector<std::string> kWatched = {"avx2",        "fma",      "avx512f",
                                                    "avx512bw",    "avx512vl", "avx512_vnni",
                                                    "avx512_bf16", "amx_tile", "amx_bf16"};
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
    if (key == "model name" && model.empty()) model = value;
    if (key == "flags" && flags.empty()) flags = " " + value + " ";
  }
  if (model.empty()) model = "unknown CPU";
  if (flags.empty()) return model + " (no /proc/cpuinfo flags)";
  std::string has, lacks;
  for (const auto& f : kWatched)
    (flags.find(" " + f + " ") != std::string::npos ? has : lacks) += (" " + f);
  return model + " (has" + (has.empty() ? std::string(" none") : has) +
         (lacks.empty() ? std::string() : "; lacks" + lacks) + ")";
}

}  // namespace foveal::core
