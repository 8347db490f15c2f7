#pragma once
// Small model configurations shared by the core suites: every mechanism and setting, at a width
// that keeps a forward pass in milliseconds.
#include <string>
#include <vector>

#include "model/model_config.h"

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

/// The same on the grid stage (2-D attention: 4 x 25 cells at 100x32), with the cells' sine
/// positions.
inline core::ModelConfig tinyGridConfig(const std::string& kind,
                                        core::ContextKind context = core::ContextKind::Pooling) {
  core::ModelConfig c = tinyConfig(kind, context);
  c.features = "vgg2d";
  c.positions = "sine2d";
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
  out.push_back({"soft-2d", tinyGridConfig("soft")});
  out.push_back({"hard-2d", tinyGridConfig("hard")});
  out.push_back({"sharp-chain-2d", tinyGridConfig("sharp", C::Chain)});
  return out;
}

}  // namespace foveal::test
