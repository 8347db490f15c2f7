#pragma once
// Winograd's minimal filtering F(4x4, 3x3) (Lavin and Gray, 2016) for 3x3 stride-1 convolutions
// with one pixel of zero padding: each 6x6 input tile and each filter are transformed, the 36
// transform positions multiply as 36 matrix products (channels in, channels out) and one inverse
// transform gives a 4x4 output tile: 36 multiplications per tile instead of 144, for
// transforms whose cost grows with the channels rather than with their product. The CPU's
// oneDNN (Debian's libdnnl) offers Winograd only with AVX-512; on AVX2 it runs direct
// convolutions, which this beats for wide layers (conv_dispatch.cpp decides where).
#include <torch/types.h>

namespace foveal::core {

/// conv2d(x, weight, bias, stride 1, padding 1) for x [N, C, H, W] float CPU and weight
/// [O, C, 3, 3]; bias [O] or undefined. With `inputGradient`, x is an output gradient
/// [N, O, H, W] and the result the input gradient [N, C, H, W] of that convolution (the
/// convolution with the weight's channels swapped and its taps rotated by 180 degrees). No
/// autograd (see conv_dispatch.h). Error about 1e-5 relative to the output's scale, as
/// Winograd's F(4x4, 3x3) in fp32 gives.
torch::Tensor winogradConv3x3(const torch::Tensor& x, const torch::Tensor& weight,
                              const torch::Tensor& bias, bool inputGradient = false);

/// The weight gradient [O, C, 3, 3] of conv2d(x, weight, stride 1, padding 1) for x [N, C, H, W]
/// and its output gradient [N, O, H, W], both float CPU: the correlation of x with the output
/// gradient, by Winograd's F(3x3, 4x4) (each 4x4 tile of the output gradient against the 6x6
/// input tile under it; the 36 positions' products summed over every tile as 36 matrix
/// products). No autograd. Error about 1e-5 relative to the gradient's scale.
torch::Tensor winogradWeightGradient3x3(const torch::Tensor& x, const torch::Tensor& gradOut);

/// Filters transformed once for winogradBlocked3x3: U [36, Cp, Op] of weight [O, C, 3, 3] (Cp, Op:
/// C and O rounded up to 8, zero beyond).
struct WinogradFilters {
  torch::Tensor u;
  int64_t in = 0, out = 0;
};
WinogradFilters winogradFilters(const torch::Tensor& weight);

/// Inference on activations in blocks of eight channels, oneDNN's aBcd8b ([N, ceil(C/8), H, W,
/// 8], the channels beyond C zero), as the inference plans (conv_plan.h) keep them on AVX2:
/// out [N, ceil(O/8), H, W, 8] = conv2d(x, weight, stride 1, padding 1) + bias ([Op] or null,
/// zero beyond O), plus out's own values where `accumulate` (a residual sum), then max(0, .)
/// where `relu`. The channels beyond O are written zero. The tiles are read and written as
/// whole 8-channel vectors, with none of winogradConv3x3's gathering.
void winogradBlocked3x3(const float* x, int64_t n, int64_t h, int64_t w,
                        const WinogradFilters& filters, const float* bias, float* out,
                        bool accumulate, bool relu);

}  // namespace foveal::core
