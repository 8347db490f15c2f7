#include "model/conv_dispatch.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <ATen/ops/max_pool2d_with_indices_backward.h>
#include <ATen/ops/thnn_conv2d.h>
#include <torch/autograd.h>
#include <torch/nn/modules/pooling.h>

#include <array>
#include <cmath>

#include "base/cpu_features.h"

namespace foveal::core {

namespace {

// The window's four values as strided views of x (cropped to even sizes).
std::array<torch::Tensor, 4> quarters(const torch::Tensor& x) {
  const int64_t h = x.size(2) / 2 * 2, w = x.size(3) / 2 * 2;
  auto a = x.narrow(2, 0, h).narrow(3, 0, w);
  auto top = a.slice(2, 0, h, 2), bottom = a.slice(2, 1, h, 2);
  return {top.slice(3, 0, w, 2), top.slice(3, 1, w, 2), bottom.slice(3, 0, w, 2),
          bottom.slice(3, 1, w, 2)};
}

class MaxPool2x2Function : public torch::autograd::Function<MaxPool2x2Function> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    // One pass per plane: the window's maximum and max_pool2d's index of it (the first maximum
    // in row-major window order: a later value replaces the running one only when greater).
    auto in = x.contiguous();
    const int64_t planes = in.size(0) * in.size(1), h = in.size(2), w = in.size(3);
    const int64_t oh = h / 2, ow = w / 2;
    auto value = torch::empty({in.size(0), in.size(1), oh, ow}, in.options());
    auto index = torch::empty(value.sizes(), in.options().dtype(torch::kLong));
    const float* src = in.data_ptr<float>();
    float* dst = value.data_ptr<float>();
    int64_t* idx = index.data_ptr<int64_t>();
    at::parallel_for(0, planes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const float* plane = src + p * h * w;
        float* out = dst + p * oh * ow;
        int64_t* at = idx + p * oh * ow;
        for (int64_t i = 0; i < oh; ++i) {
          const float* top = plane + 2 * i * w;
          const float* bottom = top + w;
          for (int64_t j = 0; j < ow; ++j) {
            const int64_t c = 2 * i * w + 2 * j;
            float best = top[2 * j];
            int64_t where = c;
            // NaN wins, as in max_pool2d.
            auto take = [&](float v, int64_t k) {
              if (v > best || std::isnan(v)) best = v, where = k;
            };
            take(top[2 * j + 1], c + 1);
            take(bottom[2 * j], c + w);
            take(bottom[2 * j + 1], c + w + 1);
            out[i * ow + j] = best;
            at[i * ow + j] = where;
          }
        }
      }
    });
    ctx->save_for_backward({x, index});
    return value;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad) {
    const auto saved = ctx->get_saved_variables();
    return {at::max_pool2d_with_indices_backward(grad[0].contiguous(), saved[0], {2, 2}, {2, 2},
                                                 {0, 0}, {1, 1}, false, saved[1])};
  }
};

bool poolsAsQuarters(const torch::Tensor& x) {
  return x.is_cpu() && x.dim() == 4 && x.scalar_type() == torch::kFloat && x.size(2) >= 2 &&
         x.size(3) >= 2 && fastConvolutions();
}

}  // namespace

torch::Tensor maxPool2x2(const torch::Tensor& x) {
  if (!poolsAsQuarters(x)) return torch::max_pool2d(x, {2, 2}, {2, 2});
  if (torch::GradMode::is_enabled() && x.requires_grad()) return MaxPool2x2Function::apply(x);
  const auto q = quarters(x);
  return torch::maximum(torch::maximum(q[0], q[1]), torch::maximum(q[2], q[3]));
}

torch::Tensor maxPool2d(const torch::Tensor& x, torch::IntArrayRef kernel,
                        torch::IntArrayRef stride, torch::IntArrayRef padding) {
  auto is = [](torch::IntArrayRef a, int64_t v) { return a.size() == 2 && a[0] == v && a[1] == v; };
  if (is(kernel, 2) && is(stride, 2) && is(padding, 0)) return maxPool2x2(x);
  return torch::max_pool2d(x, kernel, stride, padding);
}

torch::Tensor convForward(torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  const auto& o = conv.options;
  const auto* padding = c10::get_if<torch::ExpandingArray<2>>(&o.padding());
  if (o.in_channels() != 1 || !padding || o.groups() != 1 || (*o.dilation())[0] != 1 ||
      (*o.dilation())[1] != 1 ||
      !c10::holds_alternative<torch::enumtype::kZeros>(o.padding_mode()) || !x.is_cpu() ||
      x.scalar_type() != torch::kFloat || x.dim() != 4 ||
      conv.weight.scalar_type() != torch::kFloat || at::autocast::is_cpu_enabled() ||
      !fastConvolutions())
    return conv.forward(x);
  return at::thnn_conv2d(x, conv.weight, {o.kernel_size()->at(0), o.kernel_size()->at(1)},
                         o.bias() ? conv.bias : torch::Tensor(),
                         {o.stride()->at(0), o.stride()->at(1)},
                         {(*padding)->at(0), (*padding)->at(1)});
}

torch::Tensor sequentialForward(torch::nn::SequentialImpl& seq, const torch::Tensor& x) {
  auto y = x;
  for (auto& m : seq) {
    if (auto* c = m.ptr()->as<torch::nn::Conv2dImpl>()) {
      y = convForward(*c, y);
    } else if (auto* p = m.ptr()->as<torch::nn::MaxPool2dImpl>();
               p && !p->options.ceil_mode() &&
               *p->options.dilation() == std::array<int64_t, 2>{1, 1}) {
      y = maxPool2d(y, p->options.kernel_size(), p->options.stride(), p->options.padding());
    } else {
      y = m.forward(y);
    }
  }
  return y;
}

}  // namespace foveal::core
