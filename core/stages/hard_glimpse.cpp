// The glimpse "hard": c_t = x_s, the selected column (s ~ Categorical(alpha_t) in training,
// argmax at evaluation unless sampling is asked for; Xu et al.'s hard attention).
#include <torch/nn/cloneable.h>

#include "stages/stage_factories.h"

namespace foveal::core {

namespace {

class HardGlimpseImpl : public torch::nn::Cloneable<HardGlimpseImpl>, public Glimpse {
 public:
  explicit HardGlimpseImpl(int64_t dim) : m_dim(dim) {}
  void reset() override {}
  GlimpseOutput glimpse(const GlimpseInput& in) override {
    return {mixColumns(in.x, in.alpha, in.selected)};
  }
  int64_t contextDim() const override { return m_dim; }
  bool mixesColumns() const override { return true; }
  torch::Tensor mixColumns(const torch::Tensor& values, const torch::Tensor&,
                           const torch::Tensor& selected) const override {
    auto rows = torch::arange(values.size(0), selected.options());
    return values.index({rows, selected});  // [N, E]
  }

 private:
  int64_t m_dim;
};

}  // namespace

std::shared_ptr<torch::nn::Module> makeHardGlimpse(const StageContext& c) {
  return std::make_shared<HardGlimpseImpl>(c.inputDim);
}

}  // namespace foveal::core
