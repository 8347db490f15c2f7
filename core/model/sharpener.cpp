#include "model/sharpener.h"

#include <torch/nn/functional/vision.h>
#include <cmath>

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
  out.region = sampleAffine(upsampled, theta, m_regionW, m_regionH);  // [B, 1, rh, rw]
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
