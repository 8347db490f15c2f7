#pragma once
// A model's tensors by name: its parameters, then its buffers, in the order LibTorch registers
// them. The order and the names a model file stores (formats/checkpoint.cpp), what averaging
// (train/model_average.cpp), warm starts and imports match by.
#include <torch/nn/module.h>
#include <string>
#include <utility>
#include <vector>

namespace foveal::core {

inline std::vector<std::pair<std::string, torch::Tensor>> namedTensors(
    const torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : module.named_parameters(/*recurse=*/true))
    out.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers(/*recurse=*/true)) out.emplace_back(b.key(), b.value());
  return out;
}

}  // namespace foveal::core
