#include "train/warm_start.h"

#include <torch/torch.h>

#include "base/error.h"
#include "formats/checkpoint.h"
#include "model/named_tensors.h"

namespace foveal::core::train {

std::string WarmStartReport::summary() const {
  std::string s = std::to_string(copied) + " tensor(s) copied";
  if (fromBackbone > 0)
    s += " (" + std::to_string(fromBackbone) +
         " of them into the sharpener's encoder from the backbone)";
  s += ", " + std::to_string(kept) + " kept as initialised";
  return s;
}

WarmStartReport warmStart(Recognizer& model, const std::string& path) {
  const LoadedModel source = loadCheckpoint(path);
  std::unordered_map<std::string, torch::Tensor> src;
  for (const auto& [name, tensor] : namedTensors(*source.model)) src.emplace(name, tensor);

  static const std::string kEncoder = "prediction.glimpse.sharpener.encoder.";
  WarmStartReport r;
  int copiedWithData = 0;  // batch-norm step counters (0-dim) say nothing about the model
  torch::NoGradGuard ng;
  auto take = [&](const std::string& name, torch::Tensor& dst) {
    auto it = src.find(name);
    bool viaBackbone = false;
    if ((it == src.end() || it->second.sizes() != dst.sizes()) && name.rfind(kEncoder, 0) == 0) {
      it = src.find("features." + name.substr(kEncoder.size()));
      viaBackbone = true;
    }
    if (it == src.end() || it->second.sizes() != dst.sizes() ||
        it->second.scalar_type() != dst.scalar_type()) {
      ++r.kept;
      return;
    }
    dst.copy_(it->second);
    ++r.copied;
    if (dst.dim() > 0) ++copiedWithData;
    if (viaBackbone) ++r.fromBackbone;
  };
  for (auto& kv : model->named_parameters()) take(kv.key(), kv.value());
  for (auto& kv : model->named_buffers()) take(kv.key(), kv.value());
  if (copiedWithData == 0)
    throw Error(path +
                ": no tensor of this model matches the model being trained, so it cannot "
                "warm-start it");
  return r;
}

}  // namespace foveal::core::train
