#pragma once
// Spatial transformer localisation network: regresses an affine transform (or only an
// x-translation) for its input, initialised to the identity. Sampling is left to the caller
// (the Sharpener), which composes every transform and samples the source image once.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

namespace foveal::core {

struct StnOptions {
  StnOptions(int64_t in_w, int64_t in_h, int64_t out_w, int64_t out_h)
      : in_w_(in_w), in_h_(in_h), out_w_(out_w), out_h_(out_h) {}
  TORCH_ARG(int64_t, in_w);   ///< input image width (pixels)
  TORCH_ARG(int64_t, in_h);   ///< input image height
  TORCH_ARG(int64_t, out_w);  ///< output patch width
  TORCH_ARG(int64_t, out_h);  ///< output patch height
  /// Only an x-translation is learned; the patch keeps the input's pixel scale (crop width
  /// out_w of in_w), centred at initialisation.
  TORCH_ARG(bool, translation_only) = false;
  /// Channel multiplier of the localisation CNN.
  TORCH_ARG(double, width) = 1.0;
};

class StnImpl : public torch::nn::Cloneable<StnImpl> {
 public:
  explicit StnImpl(const StnOptions& options);
  void reset() override;

  /// input [N, 1, in_h, in_w] -> theta [N, 2, 3] mapping normalised output coordinates to
  /// normalised input coordinates (align_corners = false convention).
  torch::Tensor forward(const torch::Tensor& input);

  StnOptions options;

 private:
  torch::nn::Sequential m_features{nullptr};
  torch::nn::Linear m_fc1{nullptr}, m_fc2{nullptr};
};
TORCH_MODULE(Stn);

}  // namespace foveal::core
