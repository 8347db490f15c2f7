#pragma once
// The transformation stage "tps": RARE's rectification (Shi et al. 2016; seed 002) as
// deep-text-recognition-benchmark builds it. A localisation CNN regresses F fiducial points C'
// on the input (F/2 on the top edge, F/2 on the bottom); the thin-plate spline that maps the
// rectified image's fixed fiducials C onto C' gives, for every rectified pixel, where to sample
// the input (bilinear, border padding, align_corners = true as DTRB samples).
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "model/stages/stage.h"

namespace foveal::core {

struct TpsOptions {
  TpsOptions(int64_t fiducials, int64_t width, int64_t height)
      : fiducials_(fiducials), width_(width), height_(height) {}
  TORCH_ARG(int64_t, fiducials);  ///< F (even)
  TORCH_ARG(int64_t, width);      ///< input = rectified width
  TORCH_ARG(int64_t, height);     ///< input = rectified height
  TORCH_ARG(int64_t, channels) = 1;
  /// Channel multiplier of the localisation CNN (1.0: 64-128-256-512, fc 256).
  TORCH_ARG(double, channel_width) = 1.0;
};

/// The rectified image's fiducials C [F, 2]: x evenly from -1 to 1, y = -1 (top), 1 (bottom).
torch::Tensor tpsBaseFiducials(int64_t f);
/// The localiser's initial output (RARE Fig. 6a, as DTRB initialises fc2's bias) [F, 2].
torch::Tensor tpsInitialFiducials(int64_t f);

class TpsImpl : public torch::nn::Cloneable<TpsImpl>, public Transformation {
 public:
  explicit TpsImpl(const TpsOptions& options);
  void reset() override;

  TransformOutput transform(const torch::Tensor& image) override;
  torch::Tensor resample(const torch::Tensor& image, const torch::Tensor& fiducials) override;
  /// C' [B, F, 2] -> sampling grid [B, H, W, 2] of the rectified image in input coordinates.
  torch::Tensor grid(const torch::Tensor& fiducials) const;
  torch::Tensor localise(const torch::Tensor& image);  ///< [B, C, H, W] -> C' [B, F, 2]

  TpsOptions options;

 private:
  torch::nn::Sequential m_conv{nullptr}, m_fc1{nullptr};
  torch::nn::Linear m_fc2{nullptr};
  torch::Tensor m_invDeltaC;  ///< [F + 3, F + 3]
  torch::Tensor m_pHat;       ///< [H * W, F + 3]
  /// Inference: the localiser's convolutions, batch norms, ReLUs and pools on oneDNN directly
  /// (conv_plan.h), rebuilt when the weights change.
  struct LocaliserPlan;
  std::shared_ptr<LocaliserPlan> localiserPlan(const torch::Tensor& image);
  std::shared_ptr<LocaliserPlan> m_plan;
};
TORCH_MODULE(Tps);

}  // namespace foveal::core
