#pragma once
// Where LibTorch's default convolution is the slow choice on the CPU. A convolution of one input
// channel (the first layer of every image network here: the VGG, the ResNet, the STN and TPS
// localisers; a sharp model runs two of them at every decoding step), or of few channels (in x
// out at most 32: a sharp model's STN localiser, 4 -> 4 and 4 -> 8), is tiny arithmetic that
// oneDNN and thnn_conv2d (im2col + GEMM) spend mostly rearranging memory on. With stride 1 it is
// computed directly here (eight output columns per vector, forward, input and weight gradients,
// the input gradient as a convolution of the output gradient with the weight turned; 1.5-2x
// faster than thnn_conv2d, 2-3x than oneDNN at a sharp training step's shapes), and where
// a ReLU and a 2x2 max pool follow it in a Sequential the three run as one pass that never
// stores the full-size activation or its gradient; one-channel layers of other strides go
// through thnn_conv2d. Wide 3x3 stride-1 layers (256 channels and more in and out; on one
// thread from 64 in and 128 out) run Winograd's F(4x4, 3x3) forward and for the input gradient
// where gradients are recorded, and its F(3x3, 4x4) for their weight gradient; layers of 128
// channels and more take that weight gradient with oneDNN's forward (winograd.h; oneDNN offers
// Winograd only with AVX-512). Unpadded 2x2 stride-1 layers of 256 channels and more (the VGGs'
// last) train as matrix products over their columns (im2col), faster than oneDNN's AVX2 kernels for
// them. The modules and their parameters are unchanged; only the kernels differ, and each is held
// equal to LibTorch's in values and gradients (tests/core/test_stages.cpp).
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>

namespace foveal::core {

/// conv(x), through the direct kernel (stride 1, one input channel or few) or thnn_conv2d (one
/// input channel, other strides) where the convolution is plain (CPU, float, no groups or
/// dilation, zero padding, no autocast) and fastConvolutions() (FOVEAL_PLAIN_CONV unset;
/// cpu_features.h); the module's forward otherwise.
torch::Tensor convForward(torch::nn::Conv2dImpl& conv, const torch::Tensor& x);

/// bn(conv(x)), the batch norm folded into the convolution's weight and bias in evaluation mode
/// (running statistics): one pass instead of two forward and two backward, as the inference
/// plans do, for the paths that need gradients (explanations). Training mode: the two modules.
torch::Tensor convBatchNorm(torch::nn::Conv2dImpl& conv, torch::nn::BatchNorm2dImpl& bn,
                            const torch::Tensor& x);

/// max_pool2d(x, 2) (2x2 windows, stride 2, no padding, floor), the values taken as the maximum
/// of the four strided quarters (5-8x faster than LibTorch's pooling kernel here) and, when a
/// gradient is recorded, the same indices that kernel gives (the first maximum in the window's
/// row-major order) for its backward: values and gradients equal max_pool2d's.
torch::Tensor maxPool2x2(const torch::Tensor& x);

/// max_pool2d(x, kernel, stride, padding) (no dilation, floor), through maxPool2x2 where that is
/// the window and, for the VGGs' height-only pools ((2, 1) windows and strides, no padding), a
/// kernel of this file's (each value the greater of a pair of rows; max_pool2d's values, tie and
/// NaN rules and gradient, its positions kept as bytes).
torch::Tensor maxPool2d(const torch::Tensor& x, torch::IntArrayRef kernel,
                        torch::IntArrayRef stride, torch::IntArrayRef padding);

/// seq(x), with convForward for its convolutions (convBatchNorm where a batch norm follows) and
/// maxPool2d for its max pools; a direct convolution followed by a ReLU and a 2x2 stride-2 max
/// pool runs fused, and a ReLU followed by an unpadded max pool runs after it (on the pooled
/// values). Where gradients are recorded, the input of oneDNN's narrow convolutions (64 channels
/// out or fewer) is made channels last and the layers after keep that layout (the pools too);
/// FOVEAL_CHANNELS_LAST=0 keeps channels first. The result is contiguous either way.
torch::Tensor sequentialForward(torch::nn::SequentialImpl& seq, const torch::Tensor& x);

}  // namespace foveal::core
