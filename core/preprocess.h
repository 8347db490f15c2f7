#pragma once
// Source images -> network input as the checkpoint's Preprocessing says: grey, resized (bilinear
// with antialiasing) to inputW x inputH and, for the sharpener, to upsampledW x inputH, scaled to
// [-1, 1].
#include <torch/types.h>
#include <vector>

#include "grey_image.h"
#include "model_config.h"

namespace foveal::core {

struct ModelInput {
  torch::Tensor image;      ///< [B, 1, inputH, inputW]
  torch::Tensor upsampled;  ///< [B, 1, inputH, upsampledW] (undefined unless requested)
};

ModelInput preprocess(const std::vector<GreyImage>& images, const Preprocessing& pp,
                      bool withUpsampled);

/// [H, W] or [1, H, W] tensor in [-1, 1] -> 8-bit image (clamped).
GreyImage toGreyImage(const torch::Tensor& normalised);

}  // namespace foveal::core
