#pragma once
// The glimpse "sharp" (the paper's section 2): the selected region r_s of the upsampled image goes
// through the sharpener (1-2 STNs, then an encoder CNN) to Z_t; c_t is its mean (pooling),
// [mean Z_t ; x_s] (chain) or soft attention over {columns of Z_t, x_s} driven by h_{t-1}
// (weighting).
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include "model/additive_attention.h"
#include "model/sharpener.h"
#include "model/stages/stage.h"

namespace foveal::core {

class SharpGlimpseImpl : public torch::nn::Cloneable<SharpGlimpseImpl>, public Glimpse {
 public:
  SharpGlimpseImpl(const ModelConfig& config, int64_t featureDim, int64_t hidden);
  void reset() override;
  GlimpseOutput glimpse(const GlimpseInput& in) override;
  int64_t contextDim() const override;
  Sharpener sharpener() const { return m_sharpener; }

  ModelConfig config;

 private:
  int64_t m_featureDim, m_hidden;
  Sharpener m_sharpener{nullptr};
  AdditiveAttention m_weighting{nullptr};
};
TORCH_MODULE(SharpGlimpse);

}  // namespace foveal::core
