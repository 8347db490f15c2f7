#include "trace/finite_outputs.h"

#include <torch/torch.h>

#include <limits>

#include "base/error.h"

namespace foveal::core {

int64_t firstNonFiniteRow(const at::Tensor& logProbs) {
  if (!logProbs.defined() || logProbs.numel() == 0) return -1;
  const auto lp = logProbs.detach();
  const auto bad = lp.isnan().logical_or(lp == std::numeric_limits<float>::infinity());
  const auto rows = bad.reshape({lp.size(0), -1}).any(1);  // [B]
  if (!rows.any().item<bool>()) return -1;
  return rows.to(torch::kCPU).nonzero()[0][0].item<int64_t>();
}

std::string nonFiniteOutputsMessage(const std::string& model, const std::string& image) {
  return (model.empty() ? std::string("the model") : model) +
         ": its outputs are not finite (NaN or infinite log-probabilities) reading " + image +
         "; its weights overflow float32 or are damaged: no reading to report";
}

void checkFiniteOutputs(const at::Tensor& logProbs, const std::string& model,
                        const std::string& image) {
  if (firstNonFiniteRow(logProbs) >= 0) throw Error(nonFiniteOutputsMessage(model, image));
}

}  // namespace foveal::core
