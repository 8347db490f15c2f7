#pragma once
// Small model configurations shared by the core suites: every mechanism and setting, at a width
// that keeps a forward pass in milliseconds.
#include <string>
#include <vector>

#include "model_config.h"

namespace foveal::test {

struct NamedConfig {
  std::string name;
  core::ModelConfig config;
};

inline core::ModelConfig tinyConfig(const std::string& kind,
                                    core::ContextKind context = core::ContextKind::Pooling,
                                    int stns = 1, bool reference = false) {
  core::ModelConfig c;
  c.attention = kind;
  c.context = context;
  c.numStns = stns;
  c.reference = reference;
  c.width = 0.125;
  c.maxLength = 6;
  c.preprocessing.regionScale = stns == 2 ? 2.0 : 1.8;
  return c;
}

inline std::vector<NamedConfig> allConfigs() {
  using C = core::ContextKind;
  std::vector<NamedConfig> out = {
      {"soft", tinyConfig("soft")},
      {"hard", tinyConfig("hard")},
  };
  for (int stns : {1, 2})
    for (auto ctx : {C::Pooling, C::Chain, C::Weighting})
      out.push_back({"sharp-" + core::toString(ctx) + "-" + std::to_string(stns) + "stn",
                     tinyConfig("sharp", ctx, stns)});
  auto affine = tinyConfig("sharp", C::Chain, 2);
  affine.firstStnTranslationOnly = false;
  out.push_back({"sharp-chain-2stn-affine-first", affine});
  out.push_back({"sharp-pooling-reference", tinyConfig("sharp", C::Pooling, 1, true)});
  return out;
}

}  // namespace foveal::test
