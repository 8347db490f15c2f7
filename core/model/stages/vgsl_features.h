#pragma once
// The features stage "vgsl" (imported only): a kraken network built from its VGSL spec
// (model/vgsl_spec.h), every layer but the output layer, which is the CTC stage's Linear. Each
// layer computes what kraken's module of the same kind computes in eval mode
// (kraken/lib/vgsl/layers.py): ActConv2D (padding d (k - 1) / 2; kraken's forward does not apply
// the sigmoid of an "s" convolution, so neither does this), MaxPool, Reshape, the
// TransposedSummarizingRNN (an LSTM along x or, transposed, along y, optionally keeping only its
// last step), Dropout, GroupNorm and a LinSoftmax that is not the last layer (a Linear: kraken
// applies the softmax only to the network's output). Modules are named as kraken names them
// ("C_0.co", "L_4.layer", "O_5.lin"), so a kraken state dict maps one to one onto features.*.
// Convolutions and pools run through conv_dispatch.h's kernels (LibTorch's values, faster).
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include "model/stages/stage.h"
#include "model/vgsl_spec.h"

namespace foveal::core {

class VgslFeaturesImpl : public torch::nn::Cloneable<VgslFeaturesImpl>, public FeatureExtractor {
 public:
  /// `spec`: the whole VGSL spec (config.vgsl); the stage runs all its layers but the last.
  explicit VgslFeaturesImpl(const std::string& spec);
  void reset() override;

  /// image [B, C, H, W] -> the network's map before its output layer [B, C', H', W'].
  torch::Tensor featureMap(const torch::Tensor& image);
  /// [B, 1, W', C'] (H' averaged when it is not 1: kraken's own models have H' = 1).
  torch::Tensor grid(const torch::Tensor& image) override;
  ReceptiveField geometry(int inputW, int inputH) const override;

  const VgslSpec& spec() const { return m_spec; }

 private:
  torch::Tensor runLayer(size_t i, const torch::Tensor& x);

  std::string m_text;
  VgslSpec m_spec;
  /// Per feature layer, its module (null for layers without parameters).
  std::vector<std::shared_ptr<torch::nn::Module>> m_layers;
};
TORCH_MODULE(VgslFeatures);

}  // namespace foveal::core
