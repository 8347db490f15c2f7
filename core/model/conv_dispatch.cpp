#include "model/conv_dispatch.h"

#include <ATen/autocast_mode.h>
#include <ATen/ops/thnn_conv2d.h>

#include <cstdlib>
#include <string>

namespace foveal::core {

namespace {

bool unfoldingAllowed() {
  static const bool on = [] {
    const char* plain = std::getenv("FOVEAL_PLAIN_CONV");
    return !(plain && *plain && std::string(plain) != "0");
  }();
  return on;
}

}  // namespace

torch::Tensor convForward(torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  const auto& o = conv.options;
  const auto* padding = c10::get_if<torch::ExpandingArray<2>>(&o.padding());
  if (o.in_channels() != 1 || !padding || o.groups() != 1 || (*o.dilation())[0] != 1 ||
      (*o.dilation())[1] != 1 ||
      !c10::holds_alternative<torch::enumtype::kZeros>(o.padding_mode()) || !x.is_cpu() ||
      x.scalar_type() != torch::kFloat || x.dim() != 4 ||
      conv.weight.scalar_type() != torch::kFloat || at::autocast::is_cpu_enabled() ||
      !unfoldingAllowed())
    return conv.forward(x);
  return at::thnn_conv2d(x, conv.weight, {o.kernel_size()->at(0), o.kernel_size()->at(1)},
                         o.bias() ? conv.bias : torch::Tensor(),
                         {o.stride()->at(0), o.stride()->at(1)},
                         {(*padding)->at(0), (*padding)->at(1)});
}

torch::Tensor sequentialForward(torch::nn::SequentialImpl& seq, const torch::Tensor& x) {
  auto y = x;
  for (auto& m : seq) {
    if (auto* c = m.ptr()->as<torch::nn::Conv2dImpl>())
      y = convForward(*c, y);
    else
      y = m.forward(y);
  }
  return y;
}

}  // namespace foveal::core
