#include "stages/resnet_features.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/pooling.h>

#include "stages/stage_factories.h"

namespace foveal::core {

namespace nn = torch::nn;

namespace {
nn::Conv2d conv(int64_t in, int64_t out, int64_t k, std::vector<int64_t> stride,
                std::vector<int64_t> padding) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, k).stride(stride).padding(padding).bias(false));
}
}  // namespace

BasicBlockImpl::BasicBlockImpl(int64_t in, int64_t out) : m_in(in), m_out(out) { reset(); }

void BasicBlockImpl::reset() {
  m_conv1 = register_module("conv1", conv(m_in, m_out, 3, {1, 1}, {1, 1}));
  m_bn1 = register_module("bn1", nn::BatchNorm2d(m_out));
  m_conv2 = register_module("conv2", conv(m_out, m_out, 3, {1, 1}, {1, 1}));
  m_bn2 = register_module("bn2", nn::BatchNorm2d(m_out));
  if (m_in != m_out) {
    m_downsample = register_module(
        "downsample", nn::Sequential(conv(m_in, m_out, 1, {1, 1}, {0, 0}), nn::BatchNorm2d(m_out)));
  }
}

torch::Tensor BasicBlockImpl::forward(const torch::Tensor& x) {
  auto y = torch::relu(m_bn1(m_conv1(x)));
  y = m_bn2(m_conv2(y));
  return torch::relu(y + (m_downsample ? m_downsample->forward(x) : x));
}

ResNetFeaturesImpl::ResNetFeaturesImpl(const ResNetFeaturesOptions& options_) : options(options_) {
  reset();
}

void ResNetFeaturesImpl::reset() {
  const double w = options.width();
  const int64_t out = scaledChannels(512, w);
  const int64_t c0 = scaledChannels(32, w), c1 = scaledChannels(64, w);
  const int64_t b1 = scaledChannels(128, w), b2 = scaledChannels(256, w);
  auto pool = [&](std::vector<int64_t> k, std::vector<int64_t> s,
                  std::vector<int64_t> p) -> nn::AnyModule {
    if (options.average_pools())
      return nn::AnyModule(nn::AvgPool2d(nn::AvgPool2dOptions(k).stride(s).padding(p)));
    return nn::AnyModule(nn::MaxPool2d(nn::MaxPool2dOptions(k).stride(s).padding(p)));
  };
  auto layer = [&](int64_t in, int64_t planes, int blocks) {
    nn::Sequential s;
    for (int i = 0; i < blocks; ++i) s->push_back(BasicBlock(i == 0 ? in : planes, planes));
    return s;
  };
  m_net = nn::Sequential();
  // The names are DTRB's (FeatureExtraction.ConvNet.<name>).
  m_net->push_back("conv0_1", conv(options.input_channels(), c0, 3, {1, 1}, {1, 1}));
  m_net->push_back("bn0_1", nn::BatchNorm2d(c0));
  m_net->push_back("relu0_1", nn::ReLU(nn::ReLUOptions(true)));
  m_net->push_back("conv0_2", conv(c0, c1, 3, {1, 1}, {1, 1}));
  m_net->push_back("bn0_2", nn::BatchNorm2d(c1));
  m_net->push_back("relu0_2", nn::ReLU(nn::ReLUOptions(true)));
  m_net->push_back("maxpool1", pool({2, 2}, {2, 2}, {0, 0}));
  m_net->push_back("layer1", layer(c1, b1, 1));
  m_net->push_back("conv1", conv(b1, b1, 3, {1, 1}, {1, 1}));
  m_net->push_back("bn1", nn::BatchNorm2d(b1));
  m_net->push_back("relu1", nn::ReLU(nn::ReLUOptions(true)));
  m_net->push_back("maxpool2", pool({2, 2}, {2, 2}, {0, 0}));
  m_net->push_back("layer2", layer(b1, b2, 2));
  m_net->push_back("conv2", conv(b2, b2, 3, {1, 1}, {1, 1}));
  m_net->push_back("bn2", nn::BatchNorm2d(b2));
  m_net->push_back("relu2", nn::ReLU(nn::ReLUOptions(true)));
  m_net->push_back("maxpool3", pool({2, 2}, {2, 1}, {0, 1}));
  m_net->push_back("layer3", layer(b2, out, 5));
  m_net->push_back("conv3", conv(out, out, 3, {1, 1}, {1, 1}));
  m_net->push_back("bn3", nn::BatchNorm2d(out));
  m_net->push_back("relu3", nn::ReLU(nn::ReLUOptions(true)));
  m_net->push_back("layer4", layer(out, out, 3));
  m_net->push_back("conv4_1", conv(out, out, 2, {2, 1}, {0, 1}));
  m_net->push_back("bn4_1", nn::BatchNorm2d(out));
  m_net->push_back("relu4_1", nn::ReLU(nn::ReLUOptions(true)));
  m_net->push_back("conv4_2", conv(out, out, 2, {1, 1}, {0, 0}));
  m_net->push_back("bn4_2", nn::BatchNorm2d(out));
  m_net->push_back("relu4_2", nn::ReLU(nn::ReLUOptions(true)));
  m_net = register_module("net", m_net);
}

torch::Tensor ResNetFeaturesImpl::featureMap(const torch::Tensor& image) {
  return m_net->forward(image);
}

torch::Tensor ResNetFeaturesImpl::columns(const torch::Tensor& image) {
  auto f = featureMap(image);                        // [B, C, H', W']
  return f.mean(2).transpose(1, 2).contiguous();     // [B, W', C] (DTRB: average over H')
}

ReceptiveField ResNetFeaturesImpl::geometry(int inputW, int inputH) const {
  return receptiveField(resnetLayers(options.width()), inputW, inputH);
}

std::shared_ptr<torch::nn::Module> makeResNet(const StageContext& c) {
  return std::make_shared<ResNetFeaturesImpl>(ResNetFeaturesOptions(c.config.width));
}

}  // namespace foveal::core
