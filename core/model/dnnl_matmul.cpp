#include "model/dnnl_matmul.h"

#include <torch/autograd.h>

#include <cstdlib>
#include <string>
#include <unordered_map>

#include "base/env_switch.h"
#include "base/kernel_routes.h"

#ifdef FOVEAL_HAVE_DNNL
#include "model/dnnl_compat.h"
#endif

namespace foveal::core::dnnl_ops {

#ifdef FOVEAL_HAVE_DNNL

namespace {

using dnnl::memory;

bool enabled() {  // FOVEAL_PLAIN_MATMUL=1: LibTorch's products only
  static const bool on = !envSwitchSet("FOVEAL_PLAIN_MATMUL");
  return on;
}

bool applies(const torch::Tensor& t) {
  return t.defined() && t.device().is_cpu() && t.scalar_type() == torch::kFloat;
}

bool recording(std::initializer_list<const torch::Tensor*> ts) {
  if (!torch::GradMode::is_enabled()) return false;
  for (const auto* t : ts)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

memory::desc describe(const torch::Tensor& t) {
  return memory::desc(memory::dims(t.sizes().begin(), t.sizes().end()), memory::data_type::f32,
                      memory::dims(t.strides().begin(), t.strides().end()));
}

// oneDNN's primitive cache makes the second construction of a primitive for the same shapes cheap
// (a lookup), so the primitives are built at each call.
// layer() names the product for the route notes (base/kernel_routes.h), called only while they
// are recorded.
// layer() returning "" notes nothing.
template <typename LayerName>
void run(const dnnl::matmul::primitive_desc& pd, const std::unordered_map<int, memory>& args,
         LayerName&& layer) {
  if (routeRecording())
    if (const std::string name = layer(); !name.empty())
      noteRoute(name, std::string("oneDNN matmul (") + pd.impl_info_str() + ")");
  dnnl::stream stream(engine());
  dnnl::matmul(pd).execute(stream, args);
  stream.wait();
}

// An expanded view (a zero stride over more than one element), which oneDNN cannot read.
bool expanded(const torch::Tensor& t) {
  for (int64_t i = 0; i < t.dim(); ++i)
    if (t.stride(i) == 0 && t.size(i) > 1) return true;
  return false;
}

// out = x y times `scale`, batched over the leading dimensions, read and written in place with
// their strides; layer() names it for the route notes.
template <typename LayerName>
void product(const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& out, double scale,
             LayerName&& layer) {
  const auto src = describe(x), wt = describe(y), dst = describe(out);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src, engine(), x.data_ptr())},
                                       {DNNL_ARG_WEIGHTS, memory(wt, engine(), y.data_ptr())},
                                       {DNNL_ARG_DST, memory(dst, engine(), out.data_ptr())}};
  dnnl::primitive_attr attr;
  const float factor = static_cast<float>(scale);
  if (scale != 1.0) dnnl_compat::scaleResult(attr, args, engine(), &factor);
  run(dnnl_compat::matmul(engine(), src, wt, memory::desc(), dst, attr), args, layer);
}

}  // namespace

std::optional<torch::Tensor> linear(const torch::Tensor& x, const torch::Tensor& weight,
                                    const torch::Tensor& bias, bool gelu) {
  if (!enabled() || !applies(x) || !applies(weight) || (bias.defined() && !applies(bias)) ||
      recording({&x, &weight, &bias}) || x.dim() < 2 || weight.dim() != 2)
    return std::nullopt;
  const int64_t k = weight.size(1), n = weight.size(0);
  if (x.size(-1) != k) return std::nullopt;
  const auto in = x.contiguous().view({-1, k});
  const auto w = weight.contiguous();
  const int64_t m = in.size(0);
  auto sizes = x.sizes().vec();
  sizes.back() = n;
  auto out = torch::empty(sizes, x.options());
  const memory::desc src({m, k}, memory::data_type::f32, memory::dims{k, 1});
  const memory::desc wt({k, n}, memory::data_type::f32, memory::dims{1, k});  // W^T, no copy
  const memory::desc dst({m, n}, memory::data_type::f32, memory::dims{n, 1});
  dnnl::primitive_attr attr;
  if (gelu) {
    dnnl::post_ops ops;
    dnnl_compat::appendEltwise(ops, dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f);
    attr.set_post_ops(ops);
  }
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(src, engine(), in.data_ptr())},
                                       {DNNL_ARG_WEIGHTS, memory(wt, engine(), w.data_ptr())},
                                       {DNNL_ARG_DST, memory(dst, engine(), out.data_ptr())}};
  memory::desc bd;  // none
  torch::Tensor b;
  if (bias.defined()) {
    b = bias.contiguous();
    bd = memory::desc({1, n}, memory::data_type::f32, memory::dims{n, 1});
    args.emplace(DNNL_ARG_BIAS, memory(bd, engine(), b.data_ptr()));
  }
  run(dnnl_compat::matmul(engine(), src, wt, bd, dst, attr), args, [&] {
    return "linear " + std::to_string(k) + "->" + std::to_string(n) + ", " + std::to_string(m) +
           " rows" + (gelu ? ", GELU fused" : "") + ", inference";
  });
  return out;
}

std::optional<torch::Tensor> matmul(const torch::Tensor& a, const torch::Tensor& b, double scale) {
  if (!enabled() || !applies(a) || !applies(b) || recording({&a, &b}) || a.dim() < 3 ||
      a.dim() != b.dim() || a.dim() > 6)
    return std::nullopt;
  const int64_t d = a.dim();
  for (int64_t i = 0; i + 2 < d; ++i)
    if (a.size(i) != b.size(i)) return std::nullopt;
  if (a.size(d - 1) != b.size(d - 2)) return std::nullopt;
  // oneDNN reads any strides but a zero one (an expanded view): those are made real.
  auto real = [](const torch::Tensor& t) { return expanded(t) ? t.contiguous() : t; };
  const auto x = real(a), y = real(b);
  auto sizes = a.sizes().vec();
  sizes.back() = b.size(d - 1);
  auto out = torch::empty(sizes, a.options());
  product(x, y, out, scale, [&] {
    const int64_t rows = a.size(d - 2), inner = a.size(d - 1);
    return "batched matmul " + std::to_string(rows) + "x" + std::to_string(inner) + " by " +
           std::to_string(inner) + "x" + std::to_string(b.size(d - 1)) + ", " +
           std::to_string(a.numel() / (rows * inner)) + " of them, inference";
  });
  return out;
}

bool matmulInto(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor& out) {
  if (!enabled() || !applies(a) || !applies(b) || !applies(out) || recording({&a, &b}) ||
      a.dim() != 3 || b.dim() != 3 || out.dim() != 3 || a.size(0) != b.size(0) ||
      out.size(0) != a.size(0) || a.size(2) != b.size(1) || out.size(1) != a.size(1) ||
      out.size(2) != b.size(2))
    return false;
  if (expanded(a) || expanded(b) || expanded(out)) return false;
  // No route note: the convolution that runs these products names its route.
  product(a, b, out, 1.0, [] { return std::string(); });
  return true;
}

bool matmulAvailable() { return enabled(); }

#else

bool matmulInto(const torch::Tensor&, const torch::Tensor&, torch::Tensor&) { return false; }
bool matmulAvailable() { return false; }

std::optional<torch::Tensor> linear(const torch::Tensor&, const torch::Tensor&,
                                    const torch::Tensor&, bool) {
  return std::nullopt;
}
std::optional<torch::Tensor> matmul(const torch::Tensor&, const torch::Tensor&, double) {
  return std::nullopt;
}

#endif

}  // namespace foveal::core::dnnl_ops
