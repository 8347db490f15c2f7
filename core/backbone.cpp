#include "backbone.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/pooling.h>

namespace foveal::core {

namespace nn = torch::nn;

VggBackboneImpl::VggBackboneImpl(const VggBackboneOptions& options_) : options(options_) {
  reset();
}

void VggBackboneImpl::reset() {
  m_layers = nn::Sequential();
  int in = 1;
  for (const auto& l : vggLayers(options.width())) {
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
  return m_layers->forward(image);
}

torch::Tensor VggBackboneImpl::forward(const torch::Tensor& image) {
  auto f = m_layers->forward(image);                 // [B, C, 1, M]
  return f.squeeze(2).transpose(1, 2).contiguous();  // [B, M, C]
}

int VggBackboneImpl::outChannels() const { return vggOutChannels(options.width()); }

ReceptiveField VggBackboneImpl::geometry(int inputW, int inputH) const {
  return receptiveField(vggLayers(options.width()), inputW, inputH);
}

}  // namespace foveal::core
