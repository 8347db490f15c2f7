#include "model/stages/tps.h"

#include <torch/nn/functional/upsampling.h>
#include <torch/nn/functional/vision.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>

#include <atomic>
#include <memory>

#include "model/conv_dispatch.h"
#include "model/conv_plan.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

namespace nn = torch::nn;
namespace F = torch::nn::functional;

torch::Tensor tpsBaseFiducials(int64_t f) {
  auto x = torch::linspace(-1.0, 1.0, f / 2, torch::kDouble);
  auto top = torch::stack({x, -torch::ones_like(x)}, 1);
  auto bottom = torch::stack({x, torch::ones_like(x)}, 1);
  return torch::cat({top, bottom}, 0);  // [F, 2]
}

torch::Tensor tpsInitialFiducials(int64_t f) {
  auto x = torch::linspace(-1.0, 1.0, f / 2, torch::kDouble);
  auto top = torch::stack({x, torch::linspace(0.0, -1.0, f / 2, torch::kDouble)}, 1);
  auto bottom = torch::stack({x, torch::linspace(1.0, 0.0, f / 2, torch::kDouble)}, 1);
  return torch::cat({top, bottom}, 0);
}

namespace {
// U(r) = r^2 log r, the thin-plate kernel.
torch::Tensor kernel(const torch::Tensor& r, double eps) { return r.pow(2) * torch::log(r + eps); }
}  // namespace

TpsImpl::TpsImpl(const TpsOptions& options_) : options(options_) { reset(); }

void TpsImpl::reset() {
  const double w = options.channel_width();
  const int64_t c1 = scaledChannels(64, w), c2 = scaledChannels(128, w),
                c3 = scaledChannels(256, w), c4 = scaledChannels(512, w),
                fc = scaledChannels(256, w);
  auto block = [](nn::Sequential& s, int64_t in, int64_t out) {
    s->push_back(nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1).bias(false)));
    s->push_back(nn::BatchNorm2d(out));
    s->push_back(nn::ReLU(nn::ReLUOptions(true)));
  };
  nn::Sequential conv;
  block(conv, options.channels(), c1);
  conv->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
  block(conv, c1, c2);
  conv->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
  block(conv, c2, c3);
  conv->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
  block(conv, c3, c4);
  conv->push_back(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(1)));
  m_conv = register_module("conv", conv);
  m_fc1 =
      register_module("fc1", nn::Sequential(nn::Linear(c4, fc), nn::ReLU(nn::ReLUOptions(true))));
  const int64_t f = options.fiducials();
  m_fc2 = register_module("fc2", nn::Linear(fc, 2 * f));
  {
    torch::NoGradGuard guard;
    m_fc2->weight.zero_();
    m_fc2->bias.copy_(tpsInitialFiducials(f).to(torch::kFloat).view({-1}));
  }

  // inv(Delta_C): the TPS system over the base fiducials C, solved once (float64, then float).
  const auto c = tpsBaseFiducials(f);                                   // [F, 2]
  auto dist = torch::cdist(c.unsqueeze(0), c.unsqueeze(0)).squeeze(0);  // [F, F]
  dist.fill_diagonal_(1.0);
  auto hatC = dist.pow(2) * torch::log(dist);
  auto delta = torch::zeros({f + 3, f + 3}, torch::kDouble);
  delta.narrow(0, 0, f).narrow(1, 0, 1).fill_(1.0);
  delta.narrow(0, 0, f).narrow(1, 1, 2).copy_(c);
  delta.narrow(0, 0, f).narrow(1, 3, f).copy_(hatC);
  delta.narrow(0, f, 2).narrow(1, 3, f).copy_(c.t());
  delta.narrow(0, f + 2, 1).narrow(1, 3, f).fill_(1.0);
  // The rectified image's pixel centres P (row by row) and their kernel row P_hat.
  const int64_t wr = options.width(), hr = options.height();
  auto gx = (torch::arange(-wr, wr, 2, torch::kDouble) + 1.0) / static_cast<double>(wr);
  auto gy = (torch::arange(-hr, hr, 2, torch::kDouble) + 1.0) / static_cast<double>(hr);
  auto mesh = torch::meshgrid({gy, gx}, "ij");
  auto p = torch::stack({mesh[1].reshape({-1}), mesh[0].reshape({-1})}, 1);  // [n, 2] (x, y)
  auto r = (p.unsqueeze(1) - c.unsqueeze(0)).norm(2, 2);                     // [n, F]
  auto pHat = torch::cat({torch::ones({p.size(0), 1}, torch::kDouble), p, kernel(r, 1e-6)}, 1);
  m_invDeltaC = register_buffer("inv_delta_C", torch::inverse(delta).to(torch::kFloat));
  m_pHat = register_buffer("P_hat", pHat.to(torch::kFloat));
}

struct TpsImpl::LocaliserPlan {
  ConvPlan net;
  std::vector<std::pair<const void*, uint32_t>> source;  // planSignature of the localiser
};

std::shared_ptr<TpsImpl::LocaliserPlan> TpsImpl::localiserPlan(const torch::Tensor& image) {
  if (!ConvPlan::available() || is_training() || torch::GradMode::is_enabled() || !image.is_cpu() ||
      image.scalar_type() != torch::kFloat || image.dim() != 4)
    return nullptr;
  auto sig = planSignature(*m_conv);
  auto current = std::atomic_load(&m_plan);
  if (current && current->source == sig) return current;
  auto p = std::make_shared<LocaliserPlan>();
  p->source = std::move(sig);
  // Blocks of conv (3x3, padding 1), batch norm and ReLU, 2x2 max pools between them; the last
  // layer, the global average pool, is left to the caller.
  const auto& mods = m_conv->children();
  if (mods.empty() || !mods.back()->as<nn::AdaptiveAvgPool2dImpl>()) return nullptr;
  int x = 0;
  for (size_t i = 0; i + 1 < mods.size();) {
    if (auto* c = mods[i]->as<nn::Conv2dImpl>()) {
      auto* bn = i + 2 < mods.size() ? mods[i + 1]->as<nn::BatchNorm2dImpl>() : nullptr;
      if (!bn || !mods[i + 2]->as<nn::ReLUImpl>()) return nullptr;
      x = p->net.conv(x, *c, bn, {1, 1}, true);
      i += 3;
    } else if (mods[i]->as<nn::MaxPool2dImpl>()) {
      x = p->net.maxPool(x, {2, 2}, {2, 2}, {0, 0});
      i += 1;
    } else {
      return nullptr;
    }
  }
  std::atomic_store(&m_plan, p);
  return p;
}

torch::Tensor TpsImpl::localise(const torch::Tensor& image) {
  const auto b = image.size(0);
  torch::Tensor features;
  if (auto p = localiserPlan(image))
    if (auto y = p->net.run(image)) features = y->mean({2, 3});  // the global average pool
  if (!features.defined()) features = sequentialForward(*m_conv, image);
  features = features.view({b, -1});
  return m_fc2(m_fc1->forward(features)).view({b, options.fiducials(), 2});
}

torch::Tensor TpsImpl::grid(const torch::Tensor& fiducials) const {
  const auto b = fiducials.size(0);
  auto padded = torch::cat({fiducials, torch::zeros({b, 3, 2}, fiducials.options())}, 1);
  auto t = torch::matmul(m_invDeltaC, padded);  // [B, F + 3, 2]
  auto pPrime = torch::matmul(m_pHat, t);       // [B, n, 2]
  return pPrime.view({b, options.height(), options.width(), 2});
}

TransformOutput TpsImpl::transform(const torch::Tensor& image) {
  TransformOutput out;
  out.fiducials = localise(image);  // [B, F, 2]
  out.image = F::grid_sample(image, grid(out.fiducials),
                             F::GridSampleFuncOptions()
                                 .mode(torch::kBilinear)
                                 .padding_mode(torch::kBorder)
                                 .align_corners(true));
  return out;
}

torch::Tensor TpsImpl::resample(const torch::Tensor& image, const torch::Tensor& fiducials) {
  auto g = grid(fiducials);  // [B, H, W, 2]
  if (image.size(2) != options.height() || image.size(3) != options.width()) {
    // The spline is smooth: the grid at another resolution is the grid interpolated.
    g = F::interpolate(g.permute({0, 3, 1, 2}),
                       F::InterpolateFuncOptions()
                           .size(std::vector<int64_t>{image.size(2), image.size(3)})
                           .mode(torch::kBilinear)
                           .align_corners(true))
            .permute({0, 2, 3, 1});
  }
  return F::grid_sample(image, g,
                        F::GridSampleFuncOptions()
                            .mode(torch::kBilinear)
                            .padding_mode(torch::kBorder)
                            .align_corners(true));
}

std::shared_ptr<torch::nn::Module> makeTps(const StageContext& c) {
  const auto& pp = c.config.preprocessing;
  return std::make_shared<TpsImpl>(TpsOptions(c.config.fiducials, pp.inputW, pp.inputH)
                                       .channel_width(c.config.width)
                                       .channels(pp.channels()));
}

}  // namespace foveal::core
