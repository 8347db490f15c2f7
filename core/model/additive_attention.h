#pragma once
// Bahdanau attention: e_i = w^T tanh(W k_i + U q). The key projection W k is computed once per
// image (project) and reused at every decoder step, instead of once per step. On the CPU (float
// and double, no autocast) the scores are one fused pass forward and backward
// (additive_attention.cpp); FOVEAL_PLAIN_ATTENTION=1 keeps LibTorch's operators.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace foveal::core {

struct AdditiveAttentionOptions {
  AdditiveAttentionOptions(int64_t key_dim, int64_t query_dim, int64_t depth)
      : key_dim_(key_dim), query_dim_(query_dim), depth_(depth) {}
  TORCH_ARG(int64_t, key_dim);
  TORCH_ARG(int64_t, query_dim);
  /// Size of the hidden layer of the scoring MLP.
  TORCH_ARG(int64_t, depth);
};

class AdditiveAttentionImpl : public torch::nn::Cloneable<AdditiveAttentionImpl> {
 public:
  explicit AdditiveAttentionImpl(const AdditiveAttentionOptions& options);
  void reset() override;

  /// keys [B, M, key_dim] -> W k [B, M, depth]
  torch::Tensor project(const torch::Tensor& keys);
  /// projected [B, M, depth], query [B, query_dim] -> scores e [B, M] (pre-softmax)
  torch::Tensor scores(const torch::Tensor& projected, const torch::Tensor& query);

  AdditiveAttentionOptions options;

 private:
  torch::nn::Linear m_key{nullptr}, m_query{nullptr}, m_score{nullptr};
};
TORCH_MODULE(AdditiveAttention);

/// Whether FOVEAL_PLAIN_ATTENTION is set (the scores through LibTorch's operators).
bool plainAttentionScores();

}  // namespace foveal::core
