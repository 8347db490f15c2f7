// The glimpse "hard": c_t = x_s, the selected column (s ~ Categorical(alpha_t) in training,
// argmax at evaluation unless sampling is asked for; Xu et al.'s hard attention).
#include <torch/nn/cloneable.h>

#include "model/stages/column_glimpse.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

namespace {

class HardGlimpseImpl : public torch::nn::Cloneable<HardGlimpseImpl>, public ColumnGlimpse {
 public:
  using ColumnGlimpse::ColumnGlimpse;
  void reset() override {}
  torch::Tensor mixColumns(const torch::Tensor& values, const torch::Tensor&,
                           const torch::Tensor& selected) const override {
    auto rows = torch::arange(values.size(0), selected.options());
    return values.index({rows, selected});  // [N, E]
  }
};

}  // namespace

std::shared_ptr<torch::nn::Module> makeHardGlimpse(const StageContext& c) {
  return std::make_shared<HardGlimpseImpl>(c.inputDim);
}

}  // namespace foveal::core
