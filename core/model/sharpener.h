#pragma once
// The sharp-attention sharpener: cuts the selected receptive field out of the upsampled image,
// localises the target with one or two STNs and encodes the patch with its own VGG CNN.
// All transforms are composed and the source image is sampled once per STN output, so a patch
// is a single bilinear interpolation of the upsampled image, never a resample of a resample.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/pimpl.h>
#include <vector>

#include "model/backbone.h"
#include "model/model_config.h"
#include "model/stn.h"

namespace foveal::core {

struct SharpenerOutput {
  torch::Tensor features;              ///< Z_t [B, Mz, C]
  std::vector<torch::Tensor> patches;  ///< per STN [B, 1, ph, pw]
  std::vector<torch::Tensor> thetas;   ///< per STN [B, 2, 3]: patch -> upsampled image (normalised)
  torch::Tensor region;                ///< the cut region [B, 1, rh, rw]
};

class SharpenerImpl : public torch::nn::Cloneable<SharpenerImpl> {
 public:
  explicit SharpenerImpl(const ModelConfig& config);
  void reset() override;

  /// upsampled [B, 1, H, Wu], index [N] (int64 region per row) -> Z_t and the STN outputs; row
  /// i reads image imageOfRow[i] of upsampled (undefined: N = B and row i reads image i), in
  /// place where nothing needs the image's gradient.
  SharpenerOutput forward(const torch::Tensor& upsampled, const torch::Tensor& index,
                          const torch::Tensor& imageOfRow = {});

  /// Affine maps (normalised, align_corners=false) from each region to the upsampled image:
  /// [M, 2, 3]. Derived from the backbone geometry scaled to the upsampled width.
  torch::Tensor regionThetas() const { return m_regionThetas; }
  int regionW() const { return m_regionW; }
  int regionH() const { return m_regionH; }
  int numStns() const { return static_cast<int>(m_stns->size()); }
  Stn stn(int k) const { return m_stns->ptr<StnImpl>(k); }
  VggBackbone encoder() const { return m_encoder; }

  ModelConfig config;

 private:
  torch::nn::ModuleList m_stns{nullptr};
  VggBackbone m_encoder{nullptr};
  torch::Tensor m_regionThetas;
  int m_regionW = 0, m_regionH = 0;
  std::vector<std::pair<int, int>> m_patchSizes;  // (w, h) per STN
};
TORCH_MODULE(Sharpener);

/// F::affine_grid(theta, {N, C, h, w}, align_corners=false) for theta [N, 2, 3]: [N, h, w, 2].
torch::Tensor affineGrid(const torch::Tensor& theta, int64_t w, int64_t h);
/// Samples `source` [B, 1, H, W] through theta [B, 2, 3] into [B, 1, h, w] (bilinear, border).
/// rows ([N] int64, theta [N, 2, 3]): output row i samples image rows[i], as from
/// source.index_select(0, rows) but without the copy where the source needs no gradient (CPU
/// float).
torch::Tensor sampleAffine(const torch::Tensor& source, const torch::Tensor& theta, int64_t w,
                           int64_t h, const torch::Tensor& rows = {});
/// sampleAffine for an axis-aligned theta ([[sx, 0, tx], [0, sy, ty]] per image, as the
/// regions' are): separable, two source columns and two rows per output pixel with weights
/// computed once per image, forward and, for the source (an explanation's image), backward.
/// Where theta needs a gradient, or not CPU float or double, it is sampleAffine. rows as
/// sampleAffine's (read in place only where nothing records a gradient).
torch::Tensor sampleAxisAligned(const torch::Tensor& source, const torch::Tensor& theta, int64_t w,
                                int64_t h, const torch::Tensor& rows = {});
/// Composes affine maps as 3x3 products: returns a ∘ b ([B, 2, 3] each).
torch::Tensor composeAffine(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace foveal::core
