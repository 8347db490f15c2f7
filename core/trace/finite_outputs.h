#pragma once
// After the forward pass: a model whose outputs are NaN or infinite (finite weights of 3e38
// overflow float32) read, evaluated and explained in silence, printing -nan with exit 0 (issue
// 65). Every reading checks its log-probabilities here and refuses to report one it cannot trust.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace foveal::core {

/// The first image (row of the batch) whose log-probabilities [B, T, K] hold a NaN or +inf, or
/// -1 when every row is usable. -inf (probability 0) is a log-probability, not a fault.
int64_t firstNonFiniteRow(const at::Tensor& logProbs);

/// Throws Error "MODEL: its outputs are not finite (NaN or infinite log-probabilities) reading
/// IMAGE; ..." when firstNonFiniteRow(logProbs) >= 0. `model` names the model (its file),
/// `image` the image the row came from.
void checkFiniteOutputs(const at::Tensor& logProbs, const std::string& model,
                        const std::string& image);

/// The message of that Error, for callers that name the image only once they know the row.
std::string nonFiniteOutputsMessage(const std::string& model, const std::string& image);

}  // namespace foveal::core
