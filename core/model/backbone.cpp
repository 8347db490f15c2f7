#include "model/backbone.h"
#include "model/conv_dispatch.h"

#include <ATen/Context.h>
#include <ATen/ops/mkldnn_convolution.h>
#include <ATen/ops/mkldnn_reorder_conv2d_weight.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>
#include <torch/types.h>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/env_switch.h"
#include "model/autocast.h"
#include "model/conv_plan.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

namespace nn = torch::nn;

VggBackboneImpl::VggBackboneImpl(const VggBackboneOptions& options_) : options(options_) {
  reset();
}

bool fastConvolutions() {
  static const bool on = at::hasMKLDNN() && !envSwitchSet("FOVEAL_PLAIN_CONV");
  return on;
}

bool cpuHasNativeBf16() {
  static const bool has = [] {
    if (!at::hasMKLDNN()) return false;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("flags", 0) != 0) continue;
      std::istringstream words(line);
      std::string w;
      while (words >> w)
        if (w == "avx512_bf16" || w == "amx_bf16") return true;
      return false;
    }
    return false;
  }();
  return has;
}

namespace {
thread_local bool t_cpuBf16 = false;
thread_local bool t_cpuBf16Used = false;
}  // namespace

void setCpuBf16Convolutions(bool on) {
  t_cpuBf16 = on && cpuHasNativeBf16();
  t_cpuBf16Used = false;
}
bool cpuBf16Convolutions() { return t_cpuBf16; }
bool cpuBf16Pays(int64_t channels) { return channels >= kCpuBf16MinChannels; }
bool cpuBf16Used() { return t_cpuBf16Used; }

struct VggBackboneImpl::Packed {
  struct Op {
    bool conv = false;
    torch::Tensor weight, bias;  // oneDNN weight (batch norm folded in), dense bias
    std::vector<int64_t> kernel, stride, padding;
  };
  std::vector<Op> ops;
  std::shared_ptr<ConvPlan> plan;  // the same layers on oneDNN directly, where it is available
  int planValue = 0;
  std::vector<std::pair<const void*, uint32_t>> source;  // (storage, version) of every tensor
};

std::shared_ptr<const VggBackboneImpl::Packed> VggBackboneImpl::packed(const torch::Tensor& image) {
  if (!fastConvolutions() || is_training() || torch::GradMode::is_enabled() || !image.is_cpu() ||
      image.scalar_type() != torch::kFloat || options.average_pools() || image.dim() != 4)
    return nullptr;
  auto sig = planSignature(*m_layers);
  auto current = std::atomic_load(&m_packed);
  if (current && current->source == sig) return current;

  auto p = std::make_shared<Packed>();
  p->source = std::move(sig);
  const auto& mods = m_layers->children();
  // Padding comes from the layer table: the options hold it in a variant whose type differs
  // between LibTorch versions (c10::variant before 2.x, std::variant after).
  std::vector<LayerSpec> convSpecs;
  for (const auto& l : layerTable())
    if (l.kind == LayerSpec::Kind::Conv) convSpecs.push_back(l);
  size_t convIndex = 0;
  if (ConvPlan::available()) p->plan = std::make_shared<ConvPlan>();
  for (size_t i = 0; i < mods.size(); ++i) {
    if (auto* conv = mods[i]->as<nn::Conv2dImpl>()) {
      const nn::BatchNorm2dImpl* batchNorm =
          i + 1 < mods.size() ? mods[i + 1]->as<nn::BatchNorm2dImpl>() : nullptr;
      auto w = conv->weight.detach().clone();
      auto b = conv->options.bias() ? conv->bias.detach().clone()
                                    : torch::zeros({w.size(0)}, w.options());
      if (i + 1 < mods.size())
        if (auto* bn = mods[i + 1]->as<nn::BatchNorm2dImpl>()) {
          auto scale =
              bn->weight.detach() / torch::sqrt(bn->running_var.detach() + bn->options.eps());
          w = w * scale.view({-1, 1, 1, 1});
          b = (b - bn->running_mean.detach()) * scale + bn->bias.detach();
          ++i;
        }
      Packed::Op op;
      op.conv = true;
      const auto& o = conv->options;
      op.stride = {(*o.stride())[0], (*o.stride())[1]};
      if (convIndex >= convSpecs.size()) return nullptr;  // not the VGG table: use the modules
      const LayerSpec& spec = convSpecs[convIndex++];
      op.padding = {spec.ph, spec.pw};
      if (p->plan)
        p->planValue = p->plan->conv(p->planValue, *conv, batchNorm, {spec.ph, spec.pw}, true);
      op.weight = at::mkldnn_reorder_conv2d_weight(w.contiguous().to_mkldnn(), op.padding,
                                                   op.stride, {1, 1}, 1);
      op.bias = b.contiguous();
      p->ops.push_back(std::move(op));
    } else if (auto* pool = mods[i]->as<nn::MaxPool2dImpl>()) {
      Packed::Op op;
      const auto& o = pool->options;
      op.kernel = {(*o.kernel_size())[0], (*o.kernel_size())[1]};
      op.stride = {(*o.stride())[0], (*o.stride())[1]};
      op.padding = {(*o.padding())[0], (*o.padding())[1]};
      if (p->plan)
        p->planValue =
            p->plan->maxPool(p->planValue, {op.kernel[0], op.kernel[1]},
                             {op.stride[0], op.stride[1]}, {op.padding[0], op.padding[1]});
      p->ops.push_back(std::move(op));
    } else if (!mods[i]->as<nn::ReLUImpl>()) {
      return nullptr;  // a layer this path does not know: use the modules
    }
  }
  std::atomic_store(&m_packed, std::shared_ptr<const Packed>(p));
  return p;
}

void VggBackboneImpl::reset() {
  std::atomic_store(&m_packed, std::shared_ptr<const Packed>());
  m_layers = nn::Sequential();
  int64_t in = options.in_channels();
  const auto base = vggLayers(1.0);
  auto layers = layerTable();
  for (size_t i = 0; i < layers.size(); ++i)  // DTRB: int(output_channel / 8) etc.
    if (options.out_channels() > 0 && layers[i].kind == LayerSpec::Kind::Conv)
      layers[i].outChannels =
          static_cast<int>(options.out_channels() * base[i].outChannels / vggOutChannels(1.0));
  for (const auto& l : layers) {
    if (l.kind == LayerSpec::Kind::Conv) {
      m_layers->push_back(nn::Conv2d(nn::Conv2dOptions(in, l.outChannels, {l.kh, l.kw})
                                         .stride({l.sh, l.sw})
                                         .padding({l.ph, l.pw})
                                         .bias(!l.batchNorm)));
      if (l.batchNorm) m_layers->push_back(nn::BatchNorm2d(l.outChannels));
      m_layers->push_back(nn::ReLU(nn::ReLUOptions(true)));
      in = l.outChannels;
    } else if (options.average_pools()) {
      m_layers->push_back(nn::AvgPool2d(
          nn::AvgPool2dOptions({l.kh, l.kw}).stride({l.sh, l.sw}).padding({l.ph, l.pw})));
    } else {
      m_layers->push_back(nn::MaxPool2d(
          nn::MaxPool2dOptions({l.kh, l.kw}).stride({l.sh, l.sw}).padding({l.ph, l.pw})));
    }
  }
  m_layers = register_module("layers", m_layers);
}

torch::Tensor VggBackboneImpl::featureMap(const torch::Tensor& image) {
  return sequentialForward(*m_layers, image);
}

std::vector<LayerSpec> VggBackboneImpl::layerTable() const {
  return options.grid() ? vggGridLayers(options.width()) : vggLayers(options.width());
}

torch::Tensor VggBackboneImpl::forward(const torch::Tensor& image) {
  auto f = lastMap(image);  // [B, C, H', M]
  // [B, C, H', M] -> [B, M, C]; H' is 1 at input height 32, else averaged (as DTRB does).
  return (f.size(2) == 1 ? f.squeeze(2) : f.mean(2)).transpose(1, 2).contiguous();
}

torch::Tensor VggBackboneImpl::grid(const torch::Tensor& image) {
  if (!options.grid()) return forward(image).unsqueeze(1);
  return lastMap(image).permute({0, 2, 3, 1}).contiguous();  // [B, C, R, M] -> [B, R, M, C]
}

torch::Tensor VggBackboneImpl::lastMap(const torch::Tensor& image) {
  torch::Tensor f;  // [B, C, H', M]
  auto p = packed(image);
  std::optional<torch::Tensor> planned;
  if (p && p->plan) planned = p->plan->run(image);
  if (planned) {
    f = *planned;
  } else if (p) {
    auto x = image.contiguous().to_mkldnn();
    for (const auto& op : p->ops) {
      if (op.conv) {
        x = at::mkldnn_convolution(x, op.weight, op.bias, op.padding, op.stride, {1, 1}, 1);
        x = at::relu_(x);  // every convolution of the VGG is followed by a ReLU
      } else {
        // oneDNN's pool by name: max_pool2d's own dispatch of a oneDNN tensor goes through the
        // AutogradOther kernel, which LibTorch builds with Vulkan (Debian's 2.6) refuse.
        x = at::mkldnn_max_pool2d(x, op.kernel, op.stride, op.padding, {1, 1}, false);
      }
    }
    f = x.to_dense();
  } else if (t_cpuBf16 && is_training() && image.is_cpu() && !cpuAutocastEnabled() &&
             cpuBf16Pays(outChannels())) {
    // bf16 autocast for the convolutions only; the features leave in fp32.
    t_cpuBf16Used = true;
    {
      const CpuBf16AutocastScope bf16;
      f = sequentialForward(*m_layers, image);
    }
    f = f.to(torch::kFloat);
  } else {
    f = sequentialForward(*m_layers, image);
  }
  return f;
}

int VggBackboneImpl::outChannels() const {
  return options.out_channels() > 0 ? static_cast<int>(options.out_channels())
                                    : vggOutChannels(options.width());
}

ReceptiveField VggBackboneImpl::geometry(int inputW, int inputH) const {
  ReceptiveField rf = receptiveField(layerTable(), inputW, inputH);
  rf.grid = options.grid();
  return rf;
}

std::shared_ptr<torch::nn::Module> makeVgg(const StageContext& c) {
  return std::make_shared<VggBackboneImpl>(VggBackboneOptions(c.config.width)
                                               .in_channels(c.config.preprocessing.channels())
                                               .out_channels(c.config.featureChannels));
}

std::shared_ptr<torch::nn::Module> makeVgg2d(const StageContext& c) {
  return std::make_shared<VggBackboneImpl>(VggBackboneOptions(c.config.width)
                                               .in_channels(c.config.preprocessing.channels())
                                               .out_channels(c.config.featureChannels)
                                               .grid(true));
}

}  // namespace foveal::core
