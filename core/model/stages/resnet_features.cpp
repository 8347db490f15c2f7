#include "model/stages/resnet_features.h"
#include "model/conv_dispatch.h"

#include <torch/nn/functional/pooling.h>
#include <torch/nn/modules/activation.h>

#include <atomic>

#include "model/conv_plan.h"

#include "model/stages/stage_factories.h"
#include "model/stages/stage_registry.h"

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
  auto y = torch::relu(convBatchNorm(*m_conv1, *m_bn1, x));
  y = convBatchNorm(*m_conv2, *m_bn2, y);
  return torch::relu(y + (m_downsample ? sequentialForward(*m_downsample, x) : x));
}

ResNetFeaturesImpl::ResNetFeaturesImpl(const ResNetFeaturesOptions& options_) : options(options_) {
  reset();
}

void ResNetFeaturesImpl::reset() {
  const double w = options.width();
  const int64_t oc = options.out_channels();
  auto ch = [&](int base) { return oc > 0 ? oc * base / 512 : scaledChannels(base, w); };
  const int64_t out = ch(512);
  const int64_t c0 = ch(32), c1 = ch(64);
  const int64_t b1 = ch(128), b2 = ch(256);
  auto layer = [&](const std::string& name, int64_t in, int64_t planes, int blocks) {
    nn::ModuleList list;
    for (int i = 0; i < blocks; ++i) list->push_back(BasicBlock(i == 0 ? in : planes, planes));
    return register_module(name, list);
  };
  // Registered in DTRB's order and with its names (FeatureExtraction.ConvNet.<name>).
  m_conv0_1 = register_module("conv0_1", conv(options.input_channels(), c0, 3, {1, 1}, {1, 1}));
  m_bn0_1 = register_module("bn0_1", nn::BatchNorm2d(c0));
  m_conv0_2 = register_module("conv0_2", conv(c0, c1, 3, {1, 1}, {1, 1}));
  m_bn0_2 = register_module("bn0_2", nn::BatchNorm2d(c1));
  m_layer1 = layer("layer1", c1, b1, 1);
  m_conv1 = register_module("conv1", conv(b1, b1, 3, {1, 1}, {1, 1}));
  m_bn1 = register_module("bn1", nn::BatchNorm2d(b1));
  m_layer2 = layer("layer2", b1, b2, 2);
  m_conv2 = register_module("conv2", conv(b2, b2, 3, {1, 1}, {1, 1}));
  m_bn2 = register_module("bn2", nn::BatchNorm2d(b2));
  m_layer3 = layer("layer3", b2, out, 5);
  m_conv3 = register_module("conv3", conv(out, out, 3, {1, 1}, {1, 1}));
  m_bn3 = register_module("bn3", nn::BatchNorm2d(out));
  m_layer4 = layer("layer4", out, out, 3);
  m_conv4_1 = register_module("conv4_1", conv(out, out, 2, {2, 1}, {0, 1}));
  m_bn4_1 = register_module("bn4_1", nn::BatchNorm2d(out));
  m_conv4_2 = register_module("conv4_2", conv(out, out, 2, {1, 1}, {0, 0}));
  m_bn4_2 = register_module("bn4_2", nn::BatchNorm2d(out));
}

torch::Tensor ResNetFeaturesImpl::pool(const torch::Tensor& x, std::vector<int64_t> stride,
                                       std::vector<int64_t> padding) const {
  if (options.average_pools()) return torch::avg_pool2d(x, {2, 2}, stride, padding);
  return maxPool2d(x, {2, 2}, stride, padding);
}

struct ResNetFeaturesImpl::Plan {
  ConvPlan net;
  std::vector<std::pair<const void*, uint32_t>> source;  // (storage, version) of every tensor
};

std::shared_ptr<ResNetFeaturesImpl::Plan> ResNetFeaturesImpl::plan(const torch::Tensor& image) {
  if (!ConvPlan::available() || is_training() || torch::GradMode::is_enabled() || !image.is_cpu() ||
      image.scalar_type() != torch::kFloat || options.average_pools())
    return nullptr;
  auto sig = planSignature(*this);
  auto current = std::atomic_load(&m_plan);
  if (current && current->source == sig) return current;
  auto p = std::make_shared<Plan>();
  p->source = std::move(sig);
  ConvPlan& n = p->net;
  auto blocks = [&](const nn::ModuleList& list, int x) {
    for (const auto& m : *list) {
      const auto* b = m->as<BasicBlockImpl>();
      const int y = n.conv(x, *b->m_conv1, b->m_bn1.get(), {1, 1}, true);
      const int r = b->m_downsample
                        ? n.conv(x, *(*b->m_downsample)[0]->as<nn::Conv2dImpl>(),
                                 (*b->m_downsample)[1]->as<nn::BatchNorm2dImpl>(), {0, 0}, false)
                        : x;
      x = n.conv(y, *b->m_conv2, b->m_bn2.get(), {1, 1}, true, r);
    }
    return x;
  };
  int x = n.conv(0, *m_conv0_1, m_bn0_1.get(), {1, 1}, true);
  x = n.conv(x, *m_conv0_2, m_bn0_2.get(), {1, 1}, true);
  x = n.maxPool(x, {2, 2}, {2, 2}, {0, 0});
  x = blocks(m_layer1, x);
  x = n.conv(x, *m_conv1, m_bn1.get(), {1, 1}, true);
  x = n.maxPool(x, {2, 2}, {2, 2}, {0, 0});
  x = blocks(m_layer2, x);
  x = n.conv(x, *m_conv2, m_bn2.get(), {1, 1}, true);
  x = n.maxPool(x, {2, 2}, {2, 1}, {0, 1});
  x = blocks(m_layer3, x);
  x = n.conv(x, *m_conv3, m_bn3.get(), {1, 1}, true);
  x = blocks(m_layer4, x);
  x = n.conv(x, *m_conv4_1, m_bn4_1.get(), {0, 1}, true);
  n.conv(x, *m_conv4_2, m_bn4_2.get(), {0, 0}, true);
  std::atomic_store(&m_plan, p);
  return p;
}

torch::Tensor ResNetFeaturesImpl::featureMap(const torch::Tensor& image) {
  if (auto p = plan(image))
    if (auto f = p->net.run(image)) return *f;
  auto blocks = [](const nn::ModuleList& list, torch::Tensor x) {
    for (const auto& m : *list) x = m->as<BasicBlockImpl>()->forward(x);
    return x;
  };
  auto x = torch::relu(convBatchNorm(*m_conv0_1, *m_bn0_1, image));
  x = torch::relu(convBatchNorm(*m_conv0_2, *m_bn0_2, x));
  x = pool(x, {2, 2}, {0, 0});
  x = blocks(m_layer1, x);
  x = torch::relu(convBatchNorm(*m_conv1, *m_bn1, x));
  x = pool(x, {2, 2}, {0, 0});
  x = blocks(m_layer2, x);
  x = torch::relu(convBatchNorm(*m_conv2, *m_bn2, x));
  x = pool(x, {2, 1}, {0, 1});  // height halves, width keeps (+1)
  x = blocks(m_layer3, x);
  x = torch::relu(convBatchNorm(*m_conv3, *m_bn3, x));
  x = blocks(m_layer4, x);
  x = torch::relu(convBatchNorm(*m_conv4_1, *m_bn4_1, x));
  return torch::relu(convBatchNorm(*m_conv4_2, *m_bn4_2, x));
}

torch::Tensor ResNetFeaturesImpl::grid(const torch::Tensor& image) {
  auto f = featureMap(image);                                  // [B, C, H', W']
  return f.mean(2).transpose(1, 2).unsqueeze(1).contiguous();  // [B, 1, W', C] (DTRB: mean over H')
}

ReceptiveField ResNetFeaturesImpl::geometry(int inputW, int inputH) const {
  return featureGeometry("resnet", options.width(), inputW, inputH);
}

std::shared_ptr<torch::nn::Module> makeResNet(const StageContext& c) {
  return std::make_shared<ResNetFeaturesImpl>(ResNetFeaturesOptions(c.config.width)
                                                  .input_channels(c.config.preprocessing.channels())
                                                  .out_channels(c.config.featureChannels));
}

}  // namespace foveal::core
