#pragma once
// Source images -> network input as the checkpoint's Preprocessing says: grey (or PIL's luma,
// OpenCV's grey of the colours, or RGB), for EasyOCR's readtext first resized to inputH by
// OpenCV's bilinear (and, in get_text's second pass, its contrast raised), resized (bilinear
// with antialiasing, or PIL's bicubic) to inputW x inputH (or to inputH keeping the ratio, padded
// with the last column) and, for the sharpener, to upsampledW x inputH, scaled to [-1, 1].
#include <torch/types.h>
#include <vector>

#include "image/easyocr_input.h"
#include "image/grey_image.h"
#include "model/model_config.h"

namespace foveal::core {

struct ModelInput {
  torch::Tensor image;      ///< [B, C, inputH, inputW] (C = 1, or 3 for an RGB model)
  torch::Tensor upsampled;  ///< [B, 1, inputH, upsampledW] (undefined unless requested)
  /// Per image, the input columns the image fills (inputW, or less with keep-ratio padding).
  std::vector<int> contentW;
};

/// The input width of a batch with Preprocessing::variableWidth (EasyOCR's max_width).
int variableInputWidth(const std::vector<GreyImage>& images, const Preprocessing& pp);

/// `contrastPass`: EasyOCR's get_text second pass (Preprocessing::contrastThreshold): each image
/// as contrastAdjustmentOf() adjusts it, after the pre-resize, before AlignCollate's resize.
ModelInput preprocess(const std::vector<GreyImage>& images, const Preprocessing& pp,
                      bool withUpsampled, bool contrastPass = false);

/// EasyOCR's contrast adjustment of `image` as get_text's second pass makes it (from the grey
/// plane after Preprocessing::preResize, to the target adjustContrast).
ContrastAdjustment contrastAdjustmentOf(const GreyImage& image, const Preprocessing& pp);

/// The source image as the network sees its values before resizing: [1, C, H, W] float in
/// [-1, 1], the planes preprocess() reads (grey, PIL's luma or RGB). Attribution differentiates
/// with respect to this tensor, so its maps are in source-image pixels.
torch::Tensor sourceTensor(const GreyImage& image, const Preprocessing& pp);

/// The network input made from sourceTensor()'s values [B, C, H, W] by differentiable operations:
/// EasyOCR's pre-resize (OpenCV's bilinear weights), `contrast` when given (the second pass's
/// affine map, clipped, with the constants of the image the reading came from), the same resize
/// (antialiased bilinear, or an antialiased bicubic for PIL's; OpenCV and PIL round to 8 bits,
/// this does not), the keep-ratio width (a variable-width model's batch as wide as the source
/// needs) and the padding that repeats the last column. Mid-grey (0) maps to 0 everywhere
/// without `contrast`. Gradients flow back to `source`.
ModelInput inputFromSource(const torch::Tensor& source, const Preprocessing& pp, bool withUpsampled,
                           const ContrastAdjustment* contrast = nullptr);

/// [H, W] or [1, H, W] tensor in [-1, 1] -> 8-bit image (clamped).
GreyImage toGreyImage(const torch::Tensor& normalised);

}  // namespace foveal::core
