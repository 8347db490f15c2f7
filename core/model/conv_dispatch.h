#pragma once
// Where LibTorch's default convolution is the slow choice on the CPU. A convolution of one input
// channel (the first layer of every image network here: the VGG, the ResNet, the STN and TPS
// localisers) runs on oneDNN at 1-2 GFLOP/s on this project's CPUs, in both directions; LibTorch's
// unfolding implementation (thnn_conv2d: im2col and one GEMM) runs the same layer 2-4x faster
// forward and backward, and its weight gradient up to 5x faster at 64 output channels
// (docs/DEVELOPING.md). The modules and their parameters are unchanged; only the kernel differs.
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>

namespace foveal::core {

/// conv(x), through thnn_conv2d where that is the faster kernel (one input channel, CPU,
/// float, no groups or dilation, zero padding, no autocast) and fastConvolutions()
/// (FOVEAL_PLAIN_CONV unset; cpu_features.h).
torch::Tensor convForward(torch::nn::Conv2dImpl& conv, const torch::Tensor& x);

/// max_pool2d(x, 2) (2x2 windows, stride 2, no padding, floor), the values taken as the maximum
/// of the four strided quarters (5-8x faster than LibTorch's pooling kernel here) and, when a
/// gradient is recorded, the same indices that kernel gives (the first maximum in the window's
/// row-major order) for its backward: values and gradients equal max_pool2d's.
torch::Tensor maxPool2x2(const torch::Tensor& x);

/// max_pool2d(x, kernel, stride, padding) (no dilation, floor), through maxPool2x2 where that is
/// the window.
torch::Tensor maxPool2d(const torch::Tensor& x, torch::IntArrayRef kernel,
                        torch::IntArrayRef stride, torch::IntArrayRef padding);

/// seq(x), with convForward for its convolutions and maxPool2d for its max pools.
torch::Tensor sequentialForward(torch::nn::SequentialImpl& seq, const torch::Tensor& x);

}  // namespace foveal::core
