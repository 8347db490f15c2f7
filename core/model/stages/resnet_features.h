#pragma once
// The features stage "resnet": deep-text-recognition-benchmark's ResNet feature extractor (FAN:
// BasicBlock, layers 1-2-5-3, 26 columns at 100x32). Module names follow DTRB's so that its
// checkpoints map one to one; the receptive fields come from resnetLayers() (geometry.h), checked
// by autograd in test_geometry.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include "model/stages/stage.h"

namespace foveal::core {

struct ResNetFeaturesOptions {
  explicit ResNetFeaturesOptions(double width = 1.0) : width_(width) {}
  /// Channel multiplier (1.0: DTRB's output_channel 512).
  TORCH_ARG(double, width);
  TORCH_ARG(int64_t, input_channels) = 1;
  /// Explicit output channels (DTRB's output_channel; the layers take 1/16 .. 1/2 of it as
  /// DTRB's ResNet does); 0: 512 x width.
  TORCH_ARG(int64_t, out_channels) = 0;
  /// Replace max pools by average pools (same kernel/stride/padding): the geometry check.
  TORCH_ARG(bool, average_pools) = false;
};

/// conv3x3 - BN - ReLU - conv3x3 - BN, plus the input (through a 1x1 conv + BN when the channels
/// change), then ReLU.
class BasicBlockImpl : public torch::nn::Cloneable<BasicBlockImpl> {
 public:
  friend class ResNetFeaturesImpl;
  BasicBlockImpl(int64_t in, int64_t out);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int64_t m_in, m_out;
  torch::nn::Conv2d m_conv1{nullptr}, m_conv2{nullptr};
  torch::nn::BatchNorm2d m_bn1{nullptr}, m_bn2{nullptr};
  torch::nn::Sequential m_downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

class ResNetFeaturesImpl : public torch::nn::Cloneable<ResNetFeaturesImpl>,
                           public FeatureExtractor {
 public:
  explicit ResNetFeaturesImpl(const ResNetFeaturesOptions& options = ResNetFeaturesOptions());
  void reset() override;

  /// image [B, C, H, W] -> feature map [B, C', H', W']
  torch::Tensor featureMap(const torch::Tensor& image);
  torch::Tensor grid(const torch::Tensor& image) override;  // [B, 1, M, C']
  ReceptiveField geometry(int inputW, int inputH) const override;

  ResNetFeaturesOptions options;

 private:
  torch::Tensor pool(const torch::Tensor& x, std::vector<int64_t> stride,
                     std::vector<int64_t> padding) const;
  torch::nn::Conv2d m_conv0_1{nullptr}, m_conv0_2{nullptr}, m_conv1{nullptr}, m_conv2{nullptr},
      m_conv3{nullptr}, m_conv4_1{nullptr}, m_conv4_2{nullptr};
  torch::nn::BatchNorm2d m_bn0_1{nullptr}, m_bn0_2{nullptr}, m_bn1{nullptr}, m_bn2{nullptr},
      m_bn3{nullptr}, m_bn4_1{nullptr}, m_bn4_2{nullptr};
  torch::nn::ModuleList m_layer1{nullptr}, m_layer2{nullptr}, m_layer3{nullptr}, m_layer4{nullptr};
  /// Inference on oneDNN (conv_plan.h), built from the weights it was made from.
  struct Plan;
  std::shared_ptr<Plan> plan(const torch::Tensor& image);
  std::shared_ptr<Plan> m_plan;
};
TORCH_MODULE(ResNetFeatures);

}  // namespace foveal::core
