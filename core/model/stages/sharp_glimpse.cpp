#include "model/stages/sharp_glimpse.h"

#include <ATen/ops/_unique.h>

#include "model/stages/stage_factories.h"

namespace foveal::core {

SharpGlimpseImpl::SharpGlimpseImpl(const ModelConfig& config_, int64_t featureDim, int64_t hidden)
    : config(config_), m_featureDim(featureDim), m_hidden(hidden) {
  reset();
}

void SharpGlimpseImpl::reset() {
  m_sharpener = register_module("sharpener", Sharpener(config));
  if (config.context == ContextKind::Weighting) {
    // Z columns (C) and x_s (D) are scored together: the model config checks C == D.
    m_weighting = register_module("weighting", AdditiveAttention(AdditiveAttentionOptions(
                                                   m_featureDim, m_hidden, config.depth())));
  }
}

int64_t SharpGlimpseImpl::contextDim() const {
  const int64_t c = config.cnnChannels();
  switch (config.context) {
    case ContextKind::Pooling:
      return c;
    case ContextKind::Chain:
      return c + m_featureDim;
    case ContextKind::Weighting:
      return m_featureDim;
  }
  return c;
}

GlimpseOutput SharpGlimpseImpl::glimpse(const GlimpseInput& in) {
  GlimpseOutput out;
  const auto rows = torch::arange(in.x.size(0), in.selected.options());
  torch::Tensor z;  // Z_t [N, Mz, C]
  // Z_t depends only on the image and the region: rows that look at the same region of the
  // same image (beam hypotheses, typically most of them) share one run of the sharpener.
  const int64_t regions = in.x.size(1);
  std::tuple<torch::Tensor, torch::Tensor> unique;
  if (in.imageOfRow.defined())
    unique = at::_unique(in.imageOfRow * regions + in.selected, /*sorted=*/true,
                         /*return_inverse=*/true);
  if (in.imageOfRow.defined() && std::get<0>(unique).size(0) < in.x.size(0)) {
    const auto& pairs = std::get<0>(unique);
    auto sh =
        m_sharpener->forward(in.upsampled, pairs.remainder(regions), pairs.div(regions, "floor"));
    z = sh.features.index_select(0, std::get<1>(unique));
  } else {
    // (Every row its own pair, as the rows of a training batch whose ended rows are skipped.)
    auto sh = m_sharpener->forward(in.upsampled, in.selected, in.imageOfRow);
    out.patches = std::move(sh.patches);
    out.thetas = std::move(sh.thetas);
    z = sh.features;
  }
  auto xs = in.x.index({rows, in.selected});  // x_s [N, D]
  auto pooled = z.mean(1);
  switch (config.context) {
    case ContextKind::Pooling:
      out.context = pooled;
      break;
    case ContextKind::Chain:
      out.context = torch::cat({pooled, xs}, 1);
      break;
    case ContextKind::Weighting: {
      auto items = torch::cat({z, xs.unsqueeze(1)}, 1);  // [N, Mz + 1, D]
      out.weights = torch::softmax(m_weighting->scores(m_weighting->project(items), in.hPrev), -1);
      out.context = weightedSum(out.weights, items);
      break;
    }
  }
  return out;
}

std::shared_ptr<torch::nn::Module> makeSharpGlimpse(const StageContext& c) {
  return std::make_shared<SharpGlimpseImpl>(c.config, c.inputDim, c.hidden);
}

}  // namespace foveal::core
