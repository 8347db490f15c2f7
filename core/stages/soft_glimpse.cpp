// The glimpse "soft": c_t = sum_i alpha_ti x_i (Bahdanau; the paper's soft attention).
#include <torch/nn/cloneable.h>

#include "stages/stage_factories.h"

namespace foveal::core {

namespace {

class SoftGlimpseImpl : public torch::nn::Cloneable<SoftGlimpseImpl>, public Glimpse {
 public:
  explicit SoftGlimpseImpl(int64_t dim) : m_dim(dim) {}
  void reset() override {}
  GlimpseOutput glimpse(const GlimpseInput& in) override {
    return {mixColumns(in.x, in.alpha, in.selected)};
  }
  int64_t contextDim() const override { return m_dim; }
  bool mixesColumns() const override { return true; }
  torch::Tensor mixColumns(const torch::Tensor& values, const torch::Tensor& alpha,
                           const torch::Tensor&) const override {
    return torch::bmm(alpha.unsqueeze(1), values).squeeze(1);  // [N, E]
  }

 private:
  int64_t m_dim;
};

}  // namespace

std::shared_ptr<torch::nn::Module> makeSoftGlimpse(const StageContext& c) {
  return std::make_shared<SoftGlimpseImpl>(c.inputDim);
}

}  // namespace foveal::core
