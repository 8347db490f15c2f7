#include "model/sharpener.h"

#include <ATen/Parallel.h>
#include <torch/nn/functional/vision.h>
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/stages/stage_registry.h"

namespace foveal::core {

namespace F = torch::nn::functional;

torch::Tensor affineGrid(const torch::Tensor& theta, int64_t w, int64_t h) {
  // affine_grid's (align_corners=false) sampling points, written out: LibTorch's builds an
  // [N, h w, 3] base grid and multiplies it by theta with one tiny bmm per image, forward and
  // backward, which cost more than the sampling itself on the sharpener's batches.
  const auto o = theta.options();
  auto xs = (torch::arange(w, o) * 2 + 1) / static_cast<double>(w) - 1;  // pixel centres
  auto ys = (torch::arange(h, o) * 2 + 1) / static_cast<double>(h) - 1;
  xs = xs.view({1, 1, w});
  ys = ys.view({1, h, 1});
  const int64_t n = theta.size(0);
  auto row = [&](int64_t r) {
    auto t = theta.select(1, r);  // [N, 3]
    return t.select(1, 0).view({n, 1, 1}) * xs + t.select(1, 1).view({n, 1, 1}) * ys +
           t.select(1, 2).view({n, 1, 1});  // [N, h, w]
  };
  return torch::stack({row(0), row(1)}, 3);  // [N, h, w, 2]
}

torch::Tensor sampleAffine(const torch::Tensor& source, const torch::Tensor& theta, int64_t w,
                           int64_t h) {
  auto grid = affineGrid(theta, w, h);
  return F::grid_sample(source, grid,
                        F::GridSampleFuncOptions()
                            .mode(torch::kBilinear)
                            .padding_mode(torch::kBorder)
                            .align_corners(false));
}

torch::Tensor sampleAxisAligned(const torch::Tensor& source, const torch::Tensor& theta, int64_t w,
                                int64_t h) {
  const bool gradient =
      torch::GradMode::is_enabled() && (source.requires_grad() || theta.requires_grad());
  if (gradient || !source.is_cpu() || source.scalar_type() != torch::kFloat ||
      theta.scalar_type() != torch::kFloat || source.dim() != 4)
    return sampleAffine(source, theta, w, h);
  // grid_sample's arithmetic per axis: the grid coordinate as affineGrid makes it (float), then
  // unnormalised ((g + 1) size - 1) / 2, clamped into [0, size - 1] (border padding), and the
  // two neighbours with weights 1 - f and f.
  struct Tap {
    int64_t i0, i1;
    float w0, w1;
  };
  auto taps = [](float scale, float shift, int64_t n, int64_t size) {
    std::vector<Tap> t(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      const float base = static_cast<float>(k * 2 + 1) / static_cast<float>(n) - 1.0f;
      const float g = scale * base + shift;
      float c = ((g + 1.0f) * static_cast<float>(size) - 1.0f) / 2.0f;
      c = std::min(static_cast<float>(size - 1), std::max(c, 0.0f));
      const int64_t i0 = static_cast<int64_t>(std::floor(c));
      const float f = c - static_cast<float>(i0);
      t[static_cast<size_t>(k)] = {i0, std::min(i0 + 1, size - 1), 1.0f - f, f};
    }
    return t;
  };
  auto src = source.contiguous();
  auto th = theta.contiguous();
  const int64_t n = src.size(0), channels = src.size(1), sh = src.size(2), sw = src.size(3);
  auto out = torch::empty({n, channels, h, w}, src.options());
  const float* in = src.data_ptr<float>();
  const float* tp = th.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const float* t = tp + b * 6;
      const auto xs = taps(t[0], t[2], w, sw);
      const auto ys = taps(t[4], t[5], h, sh);
      for (int64_t c = 0; c < channels; ++c) {
        const float* plane = in + (b * channels + c) * sh * sw;
        float* o = dst + (b * channels + c) * h * w;
        for (int64_t i = 0; i < h; ++i) {
          const Tap& y = ys[static_cast<size_t>(i)];
          const float* r0 = plane + y.i0 * sw;
          const float* r1 = plane + y.i1 * sw;
          for (int64_t j = 0; j < w; ++j) {
            const Tap& x = xs[static_cast<size_t>(j)];
            o[i * w + j] = y.w0 * (x.w0 * r0[x.i0] + x.w1 * r0[x.i1]) +
                           y.w1 * (x.w0 * r1[x.i0] + x.w1 * r1[x.i1]);
          }
        }
      }
    }
  });
  return out;
}

torch::Tensor composeAffine(const torch::Tensor& a, const torch::Tensor& b) {
  // [A_lin | A_t] ∘ [B_lin | B_t] = [A_lin B_lin | A_lin B_t + A_t]
  auto alin = a.narrow(2, 0, 2);
  auto lin = torch::matmul(alin, b.narrow(2, 0, 2));
  auto t = torch::matmul(alin, b.narrow(2, 2, 1)) + a.narrow(2, 2, 1);
  return torch::cat({lin, t}, 2);
}

SharpenerImpl::SharpenerImpl(const ModelConfig& config_) : config(config_) { reset(); }

void SharpenerImpl::reset() {
  const auto& pp = config.preprocessing;
  // The regions are the feature stage's columns or cells (their receptive fields, scaled to the
  // copy).
  const auto rf = featureGeometry(config.features, config.width, pp.inputW, pp.inputH);
  const double scale = static_cast<double>(pp.upsampledW()) / pp.inputW;
  const double wu = pp.upsampledW(), h = pp.inputH;

  std::vector<float> thetas;
  for (int i = 0; i < rf.regionCount(); ++i) {
    const Box b = rf.clippedRegionBox(i);
    const double x0 = b.x * scale, x1 = (b.x + b.w) * scale;
    const double y0 = b.y, y1 = b.y + b.h;
    thetas.insert(
        thetas.end(),
        {static_cast<float>((x1 - x0) / wu), 0.f, static_cast<float>((x0 + x1) / wu - 1.0), 0.f,
         static_cast<float>((y1 - y0) / h), static_cast<float>((y0 + y1) / h - 1.0)});
  }
  m_regionThetas = torch::tensor(thetas).view({rf.regionCount(), 2, 3});
  m_regionW = static_cast<int>(std::lround(rf.sizeX * scale));
  m_regionH = static_cast<int>(std::lround(rf.regionHeight()));

  m_stns = torch::nn::ModuleList();
  m_patchSizes.clear();
  int inW = m_regionW, inH = m_regionH;
  for (int k = 0; k < config.numStns; ++k) {
    const bool coarse = config.numStns == 2 && k == 0;
    const int outW = coarse ? config.coarsePatchW : config.patchW;
    const int outH = config.patchH;
    m_stns->push_back(Stn(StnOptions(inW, inH, outW, outH)
                              .translation_only(coarse && config.firstStnTranslationOnly)
                              .width(config.width)));
    m_patchSizes.emplace_back(outW, outH);
    inW = outW;
    inH = outH;
  }
  m_stns = register_module("stns", m_stns);
  m_encoder = register_module("encoder", VggBackbone(VggBackboneOptions(config.width)));
}

SharpenerOutput SharpenerImpl::forward(const torch::Tensor& upsampled, const torch::Tensor& index) {
  SharpenerOutput out;
  auto theta =
      m_regionThetas.to(upsampled.device(), upsampled.scalar_type()).index_select(0, index);
  // The regions' thetas are axis-aligned constants.
  out.region = sampleAxisAligned(upsampled, theta, m_regionW, m_regionH);  // [B, 1, rh, rw]
  auto input = out.region;
  for (size_t k = 0; k < m_stns->size(); ++k) {
    auto local = m_stns->ptr<StnImpl>(k)->forward(input);  // [B, 2, 3]
    theta = composeAffine(theta, local);
    auto patch = sampleAffine(upsampled, theta, m_patchSizes[k].first, m_patchSizes[k].second);
    out.patches.push_back(patch);
    out.thetas.push_back(theta);
    input = patch;
  }
  out.features = m_encoder->forward(input);  // [B, Mz, C]
  return out;
}

}  // namespace foveal::core
