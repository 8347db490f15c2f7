// The glimpse "soft": c_t = sum_i alpha_ti x_i (Bahdanau; the paper's soft attention).
#include <torch/nn/cloneable.h>

#include "model/stages/column_glimpse.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

namespace {

class SoftGlimpseImpl : public torch::nn::Cloneable<SoftGlimpseImpl>, public ColumnGlimpse {
 public:
  using ColumnGlimpse::ColumnGlimpse;
  void reset() override {}
  torch::Tensor mixColumns(const torch::Tensor& values, const torch::Tensor& alpha,
                           const torch::Tensor&) const override {
    return weightedSum(alpha, values);  // [N, E]
  }
};

}  // namespace

std::shared_ptr<torch::nn::Module> makeSoftGlimpse(const StageContext& c) {
  return std::make_shared<SoftGlimpseImpl>(c.inputDim);
}

}  // namespace foveal::core
