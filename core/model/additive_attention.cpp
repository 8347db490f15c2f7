#include "model/additive_attention.h"

namespace foveal::core {

namespace nn = torch::nn;

AdditiveAttentionImpl::AdditiveAttentionImpl(const AdditiveAttentionOptions& options_)
    : options(options_) {
  reset();
}

void AdditiveAttentionImpl::reset() {
  m_key = register_module(
      "key", nn::Linear(nn::LinearOptions(options.key_dim(), options.depth()).bias(false)));
  m_query = register_module("query", nn::Linear(options.query_dim(), options.depth()));
  m_score = register_module("score", nn::Linear(nn::LinearOptions(options.depth(), 1).bias(false)));
}

torch::Tensor AdditiveAttentionImpl::project(const torch::Tensor& keys) { return m_key(keys); }

torch::Tensor AdditiveAttentionImpl::scores(const torch::Tensor& projected,
                                            const torch::Tensor& query) {
  auto q = m_query(query).unsqueeze(1);                    // [B, 1, depth]
  return m_score(torch::tanh(projected + q)).squeeze(-1);  // [B, M]
}

}  // namespace foveal::core
