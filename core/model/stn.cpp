#include "model/stn.h"
#include "model/conv_dispatch.h"

#include <torch/nn/init.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>
#include <algorithm>
#include <cmath>

namespace foveal::core {

namespace nn = torch::nn;

namespace {
int channels(int base, double width) {
  return std::max(4, static_cast<int>(std::lround(base * width)));
}
constexpr int kPoolH = 2, kPoolW = 4;  // spatial grid kept for the regressor
}  // namespace

StnImpl::StnImpl(const StnOptions& options_) : options(options_) { reset(); }

void StnImpl::reset() {
  const int c1 = channels(16, options.width()), c2 = channels(32, options.width()),
            c3 = channels(64, options.width());
  m_features = register_module(
      "features",
      nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, c1, 3).padding(1)), nn::ReLU(true),
                     nn::MaxPool2d(2), nn::Conv2d(nn::Conv2dOptions(c1, c2, 3).padding(1)),
                     nn::ReLU(true), nn::MaxPool2d(2),
                     nn::Conv2d(nn::Conv2dOptions(c2, c3, 3).padding(1)), nn::ReLU(true),
                     nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({kPoolH, kPoolW}))));
  const int hidden = channels(64, options.width());
  m_fc1 = register_module("fc1", nn::Linear(c3 * kPoolH * kPoolW, hidden));
  m_fc2 = register_module("fc2", nn::Linear(hidden, options.translation_only() ? 1 : 6));
  // Identity at initialisation: zero weights, bias = identity parameters.
  torch::NoGradGuard guard;
  m_fc2->weight.zero_();
  if (options.translation_only()) {
    m_fc2->bias.zero_();
  } else {
    m_fc2->bias.copy_(torch::tensor({1.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f}));
  }
}

torch::Tensor StnImpl::forward(const torch::Tensor& input) {
  auto f = sequentialForward(*m_features, input).flatten(1);
  auto p = m_fc2(torch::relu(m_fc1(f)));  // [N, 1] or [N, 6]
  if (!options.translation_only()) return p.view({-1, 2, 3});
  const double sx =
      std::min(1.0, static_cast<double>(options.out_w()) / static_cast<double>(options.in_w()));
  auto zeros = torch::zeros_like(p);
  auto ones = torch::ones_like(p);
  // [[sx, 0, tx], [0, 1, 0]]; tx is bounded so the crop stays inside the input.
  auto tx = torch::tanh(p) * (1.0 - sx);
  auto row0 = torch::cat({ones * sx, zeros, tx}, 1);
  auto row1 = torch::cat({zeros, ones, zeros}, 1);
  return torch::stack({row0, row1}, 1);  // [N, 2, 3]
}

}  // namespace foveal::core
