#pragma once
// The features stage "vgg" (docs/DESIGN.md "Backbone"), built from vggLayers() so that its
// receptive-field geometry and its layers cannot disagree. Also the sharpener's encoder CNN.
//
// Speed (CPU): for inference without autograd the layers run as oneDNN (MKL-DNN) primitives on
// weights reordered once into oneDNN's blocked layout, with each batch norm folded into its
// convolution; the reordered weights are rebuilt whenever a weight changes (training, loading).
// Plain NCHW convolutions reorder every weight at every call, which at batch 1 costs about as
// much as the arithmetic (measured: VGG at batch 1, 2 threads, 7.6 -> 4.6 ms). FOVEAL_PLAIN_CONV=1
// turns the oneDNN path off (the "before" of `foveal-cli bench`).
// Training on a CPU with native bf16 arithmetic (AVX512-BF16 / AMX) can run the convolutions in
// bf16 (autocast, fp32 weights and everything after the CNN in fp32): the trainer turns it on
// with its bf16 option (measured: VGG forward + backward at batch 32, 2 threads, 483 -> 170 ms).
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/pimpl.h>
#include <memory>

#include "base/cpu_features.h"
#include "model/geometry.h"
#include "model/stages/stage.h"

namespace foveal::core {

struct VggBackboneOptions {
  explicit VggBackboneOptions(double width = 1.0) : width_(width) {}
  /// Channel multiplier (1.0 = 64..512 channels).
  TORCH_ARG(double, width);
  /// Replace max pools by average pools (same kernel/stride): used to check geometry by autograd.
  TORCH_ARG(bool, average_pools) = false;
  /// Input channels (1 grey, 3 RGB).
  TORCH_ARG(int64_t, in_channels) = 1;
  /// Explicit output channels (DTRB's output_channel; the layers take 1/8, 1/4, 1/2 of it as
  /// DTRB's VGG does); 0: 512 x width.
  TORCH_ARG(int64_t, out_channels) = 0;
  /// The grid stage "vgg2d": the layers of vggGridLayers() (stopped before the last height
  /// collapse), the rows kept as a grid of cells instead of averaged.
  TORCH_ARG(bool, grid) = false;
};

class VggBackboneImpl : public torch::nn::Cloneable<VggBackboneImpl>, public FeatureExtractor {
 public:
  explicit VggBackboneImpl(const VggBackboneOptions& options = VggBackboneOptions());
  void reset() override;

  /// image: [B, 1, H, W] -> features [B, M, C] (one vector per output column; the rows are
  /// averaged when there are several). The sharpener's encoder reads its patches with it.
  torch::Tensor forward(const torch::Tensor& image);
  /// image -> [B, R, M, C]: the grid stage's cells, or forward()'s columns as one row.
  torch::Tensor grid(const torch::Tensor& image) override;
  /// image: [B, 1, H, W] -> feature map [B, C, H', W'] (any input height).
  torch::Tensor featureMap(const torch::Tensor& image);
  /// Output channels C.
  int outChannels() const;
  ReceptiveField geometry(int inputW, int inputH) const override;

  VggBackboneOptions options;

 private:
  struct Packed;
  /// The layer table this module is built from (vggLayers or vggGridLayers).
  std::vector<LayerSpec> layerTable() const;
  /// The last feature map [B, C, H', W'], through the fastest path this call allows.
  torch::Tensor lastMap(const torch::Tensor& image);
  /// The oneDNN form of the layers, or null when this call cannot use it.
  std::shared_ptr<const Packed> packed(const torch::Tensor& image);

  torch::nn::Sequential m_layers{nullptr};
  std::shared_ptr<const Packed> m_packed;  // atomic_load/atomic_store: models may be shared
};

// fastConvolutions(), cpuHasNativeBf16(), setCpuBf16Convolutions(): cpu_features.h
TORCH_MODULE(VggBackbone);

}  // namespace foveal::core
