#include "model/stages/vgsl_features.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/dropout.h>
#include <torch/nn/modules/container/moduledict.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/rnn.h>

#include "base/error.h"
#include "model/conv_dispatch.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

namespace {

namespace F = torch::nn::functional;

// kraken's Reshape.forward: split dimension src into (a, b), move one part next to the target
// dimension, merge the pair there.
torch::Tensor reshapeLike(const torch::Tensor& x, const VgslLayer& l) {
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  std::vector<int64_t> split(shape.begin(), shape.begin() + l.srcDim);
  split.push_back(l.partA);
  split.push_back(l.partB);
  split.insert(split.end(), shape.begin() + l.srcDim + 1, shape.end());
  auto y = x.reshape(split);
  int dest = l.low, src = l.srcDim;
  if (l.high != src)
    dest = l.high;
  else
    src += 1;
  std::vector<int64_t> perm(static_cast<size_t>(y.dim()));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  const int step = dest > src ? 1 : -1;
  for (int i = src; i != dest; i += step) std::swap(perm[i], perm[i + step]);
  y = y.permute(perm);
  std::vector<int64_t> merged(y.sizes().begin(), y.sizes().begin() + dest);
  merged.push_back(y.size(dest) * y.size(dest + 1));
  merged.insert(merged.end(), y.sizes().begin() + dest + 2, y.sizes().end());
  return y.reshape(merged);
}

// kraken's layers keep their torch module under a name ("co", "layer", "lin"): a dict of one.
std::shared_ptr<torch::nn::Module> holder(const std::string& key,
                                          std::shared_ptr<torch::nn::Module> module) {
  std::vector<std::pair<std::string, std::shared_ptr<torch::nn::Module>>> one{{key, module}};
  return torch::nn::ModuleDict(one).ptr();
}

torch::Tensor activate(const torch::Tensor& x, const std::string& a) {
  if (a == "t") return torch::tanh(x);
  if (a == "r") return torch::relu(x);
  if (a == "lr") return torch::leaky_relu(x, 0.01);
  if (a == "m") return torch::softmax(x, 1);
  return x;  // "l"; and "s": kraken's ActConv2D.forward leaves the sigmoid to its loss
}

}  // namespace

VgslFeaturesImpl::VgslFeaturesImpl(const std::string& spec)
    : m_text(spec), m_spec(parseVgsl(spec, "VGSL spec")) {
  reset();
}

void VgslFeaturesImpl::reset() {
  m_layers.clear();
  const auto layers = m_spec.featureLayers();
  for (const auto& l : layers) {
    std::shared_ptr<torch::nn::Module> m;
    const int64_t in = l.inChannels();
    switch (l.kind) {
      case VgslLayer::Kind::Conv: {
        const int64_t ph = l.dilation[0] * (l.kernel[0] - 1) / 2,
                      pw = l.dilation[1] * (l.kernel[1] - 1) / 2;
        torch::nn::Conv2d conv(
            torch::nn::Conv2dOptions(in, l.outChannels, {l.kernel[0], l.kernel[1]})
                .stride({l.stride[0], l.stride[1]})
                .padding({ph, pw})
                .dilation({l.dilation[0], l.dilation[1]}));
        m = holder("co", conv.ptr());
        break;
      }
      case VgslLayer::Kind::Lstm: {
        torch::nn::LSTM lstm(
            torch::nn::LSTMOptions(in, l.hidden).batch_first(true).bidirectional(l.bidirectional));
        m = holder("layer", lstm.ptr());
        break;
      }
      case VgslLayer::Kind::GroupNorm: {
        torch::nn::GroupNorm gn(torch::nn::GroupNormOptions(l.groups, in));
        m = holder("layer", gn.ptr());
        break;
      }
      case VgslLayer::Kind::Output: {
        torch::nn::Linear lin(in + (l.augmented ? 1 : 0), l.outChannels);
        m = holder("lin", lin.ptr());
        break;
      }
      default:
        break;
    }
    if (m) register_module(l.name, m);
    m_layers.push_back(m);
  }
}

torch::Tensor VgslFeaturesImpl::runLayer(size_t i, const torch::Tensor& x) {
  const auto& l = m_spec.layers[i];
  auto child = [&](const char* key) {
    return std::dynamic_pointer_cast<torch::nn::ModuleDictImpl>(m_layers[i])->operator[](key);
  };
  switch (l.kind) {
    case VgslLayer::Kind::Conv: {
      auto conv = std::dynamic_pointer_cast<torch::nn::Conv2dImpl>(child("co"));
      return activate(convForward(*conv, x), l.activation);
    }
    case VgslLayer::Kind::MaxPool:
      return maxPool2d(x, {l.kernel[0], l.kernel[1]}, {l.stride[0], l.stride[1]}, {0, 0});
    case VgslLayer::Kind::Reshape:
      return reshapeLike(x, l);
    case VgslLayer::Kind::Lstm: {
      // kraken's TransposedSummarizingRNN: [N, C, H, W] -> [H, N, W, C] (y: [W, N, H, C]), one
      // sequence per row (column), the last step only when summarising, back to [N, C', H, W].
      auto lstm = std::dynamic_pointer_cast<torch::nn::LSTMImpl>(child("layer"));
      auto in = x.permute({2, 0, 3, 1});
      if (l.alongY) in = in.transpose(0, 2);
      const auto siz = in.sizes().vec();
      auto seq = in.contiguous().view({-1, siz[2], siz[3]});
      auto o = std::get<0>(lstm->forward(seq));
      const int64_t outSize = l.hidden * (l.bidirectional ? 2 : 1);
      o = o.contiguous().view({siz[0], siz[1], siz[2], outSize});
      if (l.summarize) o = o.select(2, siz[2] - 1).unsqueeze(2);
      if (l.alongY) o = o.transpose(0, 2);
      return o.permute({1, 3, 0, 2});
    }
    case VgslLayer::Kind::Dropout:
      if (!is_training() || l.p <= 0) return x;
      return l.dims == 2 ? F::dropout2d(x, F::Dropout2dFuncOptions().p(l.p).training(true))
                         : F::dropout(x, F::DropoutFuncOptions().p(l.p).training(true));
    case VgslLayer::Kind::GroupNorm: {
      auto gn = std::dynamic_pointer_cast<torch::nn::GroupNormImpl>(child("layer"));
      return gn->forward(x.to(torch::kFloat)).to(x.scalar_type());
    }
    case VgslLayer::Kind::Output: {
      auto lin = std::dynamic_pointer_cast<torch::nn::LinearImpl>(child("lin"));
      auto t = x.transpose(1, 3);  // [N, W, H, C]
      if (l.augmented) {
        auto sz = t.sizes().vec();
        sz.back() = 1;
        t = torch::cat({torch::ones(sz, t.options()), t}, 3);
      }
      return lin->forward(t).transpose(1, 3);
    }
  }
  return x;
}

torch::Tensor VgslFeaturesImpl::featureMap(const torch::Tensor& image) {
  if (image.dim() != 4 || image.size(1) != m_spec.inputChannels())
    throw Error("the kraken network reads [B, " + std::to_string(m_spec.inputChannels()) +
                ", H, W] images, not " + std::to_string(image.dim()) + "-D input of " +
                std::to_string(image.dim() == 4 ? image.size(1) : 0) + " channels");
  auto x = image;
  for (size_t i = 0; i < m_layers.size(); ++i) x = runLayer(i, x);
  return x;
}

torch::Tensor VgslFeaturesImpl::grid(const torch::Tensor& image) {
  auto f = featureMap(image);                                  // [B, C', H', W']
  return f.mean(2).transpose(1, 2).unsqueeze(1).contiguous();  // [B, 1, W', C']
}

ReceptiveField VgslFeaturesImpl::geometry(int inputW, int inputH) const {
  return receptiveField(m_spec.geometryLayers(), inputW, inputH);
}

std::shared_ptr<torch::nn::Module> makeVgsl(const StageContext& c) {
  return std::make_shared<VgslFeaturesImpl>(c.config.kraken.vgsl);
}

}  // namespace foveal::core
