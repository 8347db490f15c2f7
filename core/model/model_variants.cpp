#include "model/model_variants.h"

#include "base/error.h"

namespace foveal::core {

std::vector<ModelVariant> glimpseVariants(double width) {
  std::vector<ModelVariant> out;
  auto make = [&](const std::string& glimpse, ContextKind c, int stns) {
    ModelConfig cfg;
    cfg.attention = glimpse;
    cfg.context = c;
    cfg.numStns = stns;
    cfg.width = width;
    cfg.preprocessing.regionScale = stns == 2 ? 2.0 : 1.8;
    return cfg;
  };
  out.push_back({"soft", "the paper's soft attention", make("soft", ContextKind::Pooling, 1)});
  out.push_back({"hard", "the paper's hard attention", make("hard", ContextKind::Pooling, 1)});
  for (int stns : {1, 2})
    for (auto c : {ContextKind::Pooling, ContextKind::Chain, ContextKind::Weighting})
      out.push_back({"sharp-" + toString(c) + (stns == 2 ? "-2stn" : ""),
                     "sharp attention, " + toString(c) + " context, " + std::to_string(stns) +
                         " STN" + (stns == 2 ? "s" : ""),
                     make("sharp", c, stns)});
  return out;
}

std::vector<ModelVariant> fieldVariants(double width) {
  auto make = [&](const std::string& transformation, const std::string& features,
                  const std::string& prediction) {
    ModelConfig cfg;
    cfg.transformation = transformation;
    cfg.features = features;
    cfg.sequence = "bilstm";
    cfg.sequenceProjection = true;
    cfg.prediction = prediction;
    cfg.cell = "dtrb";
    cfg.attention = "soft";
    cfg.width = width;
    return cfg;
  };
  return {
      {"crnn", "CRNN: none-vgg-bilstm-ctc", make("none", "vgg", "ctc")},
      {"rare", "RARE: tps-vgg-bilstm-attention (soft)", make("tps", "vgg", "attention")},
      {"trba", "TRBA: tps-resnet-bilstm-attention (soft)", make("tps", "resnet", "attention")},
  };
}

std::vector<ModelVariant> modelVariants(double width) {
  auto out = glimpseVariants(width);
  for (auto& v : fieldVariants(width)) out.push_back(std::move(v));
  return out;
}

ModelVariant modelVariant(const std::string& name, double width) {
  std::string known;
  for (auto& v : modelVariants(width)) {
    if (v.name == name) return v;
    known += (known.empty() ? "" : ", ") + v.name;
  }
  throw Error("unknown model '" + name + "' (known: " + known + ")");
}

}  // namespace foveal::core
