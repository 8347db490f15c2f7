#pragma once
// The VGG feature extractor (DESIGN.md "Backbone"), built from vggLayers() so that its
// receptive-field geometry and its layers cannot disagree. Also the sharpener's encoder CNN.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>

#include "geometry.h"

namespace foveal::core {

struct VggBackboneOptions {
  explicit VggBackboneOptions(double width = 1.0) : width_(width) {}
  /// Channel multiplier (1.0 = 64..512 channels).
  TORCH_ARG(double, width);
  /// Replace max pools by average pools (same kernel/stride): used to check geometry by autograd.
  TORCH_ARG(bool, average_pools) = false;
};

class VggBackboneImpl : public torch::nn::Cloneable<VggBackboneImpl> {
 public:
  explicit VggBackboneImpl(const VggBackboneOptions& options = VggBackboneOptions());
  void reset() override;

  /// image: [B, 1, H, W] -> features [B, M, C] (one vector per output column).
  torch::Tensor forward(const torch::Tensor& image);
  /// image: [B, 1, H, W] -> feature map [B, C, H', W'] (any input height).
  torch::Tensor featureMap(const torch::Tensor& image);
  /// Output channels C.
  int outChannels() const;
  ReceptiveField geometry(int inputW, int inputH) const;

  VggBackboneOptions options;

 private:
  torch::nn::Sequential m_layers{nullptr};
};
TORCH_MODULE(VggBackbone);

}  // namespace foveal::core
