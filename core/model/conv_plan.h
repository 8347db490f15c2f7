#pragma once
// ConvPlan: a feed-forward stack of convolutions (batch norms folded in, ReLU and residual sums
// fused) and max pools run for inference directly on oneDNN, in its blocked layouts from the first
// convolution to the last, with the primitives built once per input shape. LibTorch's own path
// reorders every activation to and from NCHW around each convolution and runs batch norm, ReLU
// and the residual add as separate passes; this path does none of that, and uses Winograd
// F(4x4, 3x3) (F(2x2, 3x3) for small maps) for every 3x3 stride-1 convolution oneDNN offers it
// for (about half the multiplications; error ~1e-6 relative per layer). Measured on TRBA, 2
// threads: always Winograd beat both a tile-count threshold and timing each layer in isolation.
// Where oneDNN has no Winograd (AVX2 CPUs), the 3x3 stride-1 padding-1 layers of 128 channels
// and more, at 64 output tiles and more, run Foveal's F(4x4, 3x3) on the plan's 8-channel blocks
// (model/winograd.h, winogradBlocked3x3; error ~1e-5 relative to the output's scale).
//
// Available when Foveal is built with oneDNN (FOVEAL_WITH_DNNL, the default where libdnnl-dev is
// installed) and FOVEAL_PLAIN_CONV is not set. FOVEAL_WINOGRAD=0: direct convolutions only.
#include <torch/types.h>

#include <array>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace torch::nn {
class BatchNorm2dImpl;
class Conv2dImpl;
class Module;
}  // namespace torch::nn

namespace foveal::core {

/// (storage, version) of every parameter and buffer of `module`: a plan built from it is stale
/// when this changes (an optimiser step, a loaded or copied model).
std::vector<std::pair<const void*, uint32_t>> planSignature(const torch::nn::Module& module);

class ConvPlan {
 public:
  ConvPlan();
  ~ConvPlan();
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;

  /// Built with oneDNN and not switched off by FOVEAL_PLAIN_CONV.
  static bool available();

  /// Values are numbered: 0 is the input, each added layer returns its output's number.
  /// `residual`: a value added to the convolution's output before the ReLU; its buffer is reused
  /// for the output, so it must not be read by any later layer.
  /// `padding`: the convolution's (symmetric) padding, as built.
  int conv(int src, const torch::nn::Conv2dImpl& conv, const torch::nn::BatchNorm2dImpl* bn,
           std::array<int64_t, 2> padding, bool relu, int residual = -1);
  int maxPool(int src, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
              std::array<int64_t, 2> padding);

  /// image [B, C, H, W] float CPU -> the last value, NCHW. nullopt when oneDNN cannot run this
  /// shape (the caller then uses its modules).
  std::optional<torch::Tensor> run(const torch::Tensor& image);

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

}  // namespace foveal::core
