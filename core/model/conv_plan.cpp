#include "model/conv_plan.h"

#include "base/cpu_features.h"
#include "base/env_switch.h"
#include "base/kernel_routes.h"
#include "model/dnnl_matmul.h"
#include "model/winograd.h"

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/conv.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#ifdef FOVEAL_HAVE_DNNL
#include "model/dnnl_compat.h"
#endif

namespace foveal::core {

std::vector<std::pair<const void*, uint32_t>> planSignature(const torch::nn::Module& module) {
  std::vector<std::pair<const void*, uint32_t>> s;
  for (const auto& t : module.parameters()) s.emplace_back(t.data_ptr(), t._version());
  for (const auto& t : module.buffers()) s.emplace_back(t.data_ptr(), t._version());
  return s;
}

namespace {

struct LayerOp {
  bool conv = false;
  int src = 0, residual = -1;
  torch::Tensor weight, bias;  // batch norm folded in; OIHW, contiguous
  std::array<int64_t, 2> kernel{}, stride{}, padding{};
  bool relu = false;
  // Foveal's Winograd filters (transformed once, at the first plan that runs the layer on them).
  mutable std::shared_ptr<WinogradFilters> winograd;
};

}  // namespace

#ifdef FOVEAL_HAVE_DNNL

namespace {

using dnnl::memory;

using Dims = memory::dims;

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// Output size as PyTorch computes it (floor mode); oneDNN takes the right/bottom padding that
// gives the same size, which may be smaller than the left one.
int64_t outSize(int64_t in, int64_t k, int64_t s, int64_t p) { return (in + 2 * p - k) / s + 1; }
int64_t rightPad(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p) {
  return (out - 1) * s + k - in - p;
}

// Max pooling without padding of a blocked activation, [N, C / L, H, W, L] (aBcd8b, aBcd16b:
// the layouts the plan's convolutions write), rows [begin, end) of the N * C / L * oh output
// rows: each output vector of L channels the maximum of its window's. oneDNN's own (2.6, AVX2)
// took 2.1-2.8 ms for the VGG's first 2x2 pool at batch 64 ([64, 8, 32, 100]), two-thirds of the
// convolution before it; the traffic is 6.5 MB.
struct BlockedPool {
  const float* src;
  float* dst;
  int64_t h, w, oh, ow, kh, kw, sh, sw;
};
// Eight lanes as one value (GCC's vector extension: one AVX register, two SSE ones).
typedef float Lanes8 __attribute__((vector_size(32)));
template <int L>
inline __attribute__((always_inline)) void poolRows(const BlockedPool& p, int64_t begin,
                                                    int64_t end) {
  constexpr int V = L / 8;  // Lanes8 per vector of L channels
  for (int64_t r = begin; r < end; ++r) {
    const int64_t plane = r / p.oh, y = r % p.oh;
    const float* in = p.src + (plane * p.h + y * p.sh) * p.w * L;
    float* out = p.dst + r * p.ow * L;
    for (int64_t x = 0; x < p.ow; ++x) {
      const float* first = in + x * p.sw * L;
      Lanes8 m[V];
      for (int k = 0; k < V; ++k) std::memcpy(&m[k], first + 8 * k, sizeof(Lanes8));
      for (int64_t i = 0; i < p.kh; ++i)
        for (int64_t j = 0; j < p.kw; ++j)
          for (int k = 0; k < V; ++k) {
            Lanes8 v;
            std::memcpy(&v, first + (i * p.w + j) * L + 8 * k, sizeof(Lanes8));
            m[k] = v > m[k] ? v : m[k];
          }
      for (int k = 0; k < V; ++k) std::memcpy(out + x * L + 8 * k, &m[k], sizeof(Lanes8));
    }
  }
}
FOVEAL_CPU_CLONES("avx2", "default")
void poolRows8(const BlockedPool& p, int64_t begin, int64_t end) { poolRows<8>(p, begin, end); }
FOVEAL_CPU_CLONES("avx512f", "avx2", "default")
void poolRows16(const BlockedPool& p, int64_t begin, int64_t end) { poolRows<16>(p, begin, end); }

// Every primitive runs with a scratchpad the plan owns (scratchpad_mode::user). With oneDNN's
// default library scratchpad, a primitive must run on the thread that created it: the scratchpad
// is global per thread and sized by the primitives that thread created. The GUI compiles a plan on
// one pooled thread and runs it on whichever pooled thread reads the next image, beside other
// models' plans; with the library scratchpad that wrote past a smaller thread's buffer and
// crashed the window on the second read of a TRBA model (issue 37). The steps of one plan run one
// after another under its mutex, so they share one buffer, as large as the largest step needs.
struct Compiled {
  struct Step {
    dnnl::primitive prim;
    std::unordered_map<int, memory> args;
    memory::desc scratchpad;      // this step's own need (size 0: none)
    std::function<void()> plain;  // a step of Foveal's own instead of `prim` (the pools)
  };
  std::vector<Step> steps;
  memory scratchpad;  // the shared buffer, as large as the largest step's
  memory input;       // the caller's NCHW image (handle set per run)
  memory output;      // the last value, in the primitive's layout
  Dims outDims;
  // (layer, route) of each convolution and pool, noted at every run while routes are recorded
  // (base/kernel_routes.h).
  std::vector<std::pair<std::string, std::string>> routes;
};

// "conv 3x3 256->256 s1 on 8x25, batch 32, inference plan" from the source dims.
std::string planLayerName(const std::string& what, const Dims& sd) {
  return what + " on " + std::to_string(sd[2]) + "x" + std::to_string(sd[3]) + ", batch " +
         std::to_string(sd[0]) + ", inference plan";
}

}  // namespace

struct ConvPlan::Impl {
  std::vector<LayerOp> ops;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mutex;
  std::map<std::vector<int64_t>, std::shared_ptr<Compiled>> compiled;  // by input dims
  std::map<std::vector<int64_t>, bool> failed;

  // An op's windows over its input of dims sd: kernel, output size, padding, strides.
  struct Window {
    int64_t kh, kw, oh, ow;
    Dims padL, padR, strides;
  };
  static Window windowOf(const LayerOp& op, const Dims& sd) {
    Window win;
    win.kh = op.conv ? op.weight.size(2) : op.kernel[0];
    win.kw = op.conv ? op.weight.size(3) : op.kernel[1];
    win.oh = outSize(sd[2], win.kh, op.stride[0], op.padding[0]);
    win.ow = outSize(sd[3], win.kw, op.stride[1], op.padding[1]);
    win.padL = {op.padding[0], op.padding[1]};
    win.padR = {rightPad(sd[2], win.oh, win.kh, op.stride[0], op.padding[0]),
                rightPad(sd[3], win.ow, win.kw, op.stride[1], op.padding[1])};
    win.strides = {op.stride[0], op.stride[1]};
    return win;
  }

  static std::string poolName(const Window& win) {
    return "max pool " + std::to_string(win.kh) + "x" + std::to_string(win.kw) + " s" +
           std::to_string(win.strides[0]) + "x" + std::to_string(win.strides[1]);
  }
  static std::string convName(const LayerOp& op, const Window& win) {
    return "conv " + std::to_string(win.kh) + "x" + std::to_string(win.kw) + " " +
           std::to_string(op.weight.size(1)) + "->" + std::to_string(op.weight.size(0)) + " s" +
           std::to_string(op.stride[0]);
  }

  // Unpadded windows of a blocked activation: Foveal's loop (BlockedPool); none otherwise.
  std::optional<memory> addBlockedPool(Compiled& c, const LayerOp& op, const memory& src,
                                       const Dims& sd, const Dims& od, const Window& win) {
    const bool unpadded =
        win.padL[0] == 0 && win.padL[1] == 0 && win.padR[0] <= 0 && win.padR[1] <= 0;
    for (const int lanes : {8, 16}) {
      const auto tag = lanes == 8 ? memory::format_tag::aBcd8b : memory::format_tag::aBcd16b;
      if (!unpadded || src.get_desc() != memory::desc(sd, memory::data_type::f32, tag)) continue;
      memory dst(memory::desc(od, memory::data_type::f32, tag), engine);
      const int64_t planes = sd[0] * ((sd[1] + lanes - 1) / lanes);
      const BlockedPool shape{nullptr, nullptr, sd[2],  sd[3],        win.oh,
                              win.ow,  win.kh,  win.kw, op.stride[0], op.stride[1]};
      Compiled::Step step;
      step.plain = [src, dst, shape, planes, lanes] {
        BlockedPool p = shape;
        p.src = static_cast<const float*>(src.get_data_handle());
        p.dst = static_cast<float*>(dst.get_data_handle());
        at::parallel_for(0, planes * p.oh, 8, [&](int64_t begin, int64_t end) {
          if (lanes == 8)
            poolRows8(p, begin, end);
          else
            poolRows16(p, begin, end);
        });
      };
      c.steps.push_back(std::move(step));
      c.routes.emplace_back(planLayerName(poolName(win), sd), "Foveal's blocked max pool");
      return dst;
    }
    return std::nullopt;
  }

  // A max pool: Foveal's loop where it serves, else oneDNN's.
  memory addPool(Compiled& c, const LayerOp& op, const memory& src, const Dims& sd, const Dims& od,
                 const Window& win) {
    if (auto dst = addBlockedPool(c, op, src, sd, od, win)) return *dst;
    const auto pd = dnnl_compat::maxPoolInference(
        engine, src.get_desc(), memory::desc(od, memory::data_type::f32, memory::format_tag::any),
        win.strides, {win.kh, win.kw}, win.padL, win.padR, userScratchpad());
    memory dst(pd.dst_desc(), engine);
    c.routes.emplace_back(planLayerName(poolName(win), sd),
                          std::string("oneDNN max pool (") + pd.impl_info_str() + ")");
    c.steps.push_back({dnnl::pooling_forward(pd),
                       {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}},
                       pd.scratchpad_desc(),
                       {}});
    return dst;
  }

  // Foveal's Winograd F(4x4, 3x3) on the plan's 8-channel blocks (winogradBlocked3x3), where
  // oneDNN offers no Winograd (it has it only with AVX-512): 3x3 stride-1 padding-1 layers of
  // kPlanWinogradChannels channels and more in and out whose input (and residual) are in aBcd8b.
  // One forward pass at batch 32, two threads, on the 2-core AVX2 EPYC (2026-12-03): 128 -> 256
  // on 8x25 18 ms against oneDNN's direct 27, 256 -> 256 31 against 47, 512 -> 512 on 4x25 58
  // against 78; 64 -> 128 on 16x50 23 against 22 (left to oneDNN). Error about 1e-5 relative
  // to the output's scale (oneDNN's direct: 1e-7). FOVEAL_WINOGRAD=0: oneDNN's direct ones.
  // At batch 1 the products are too small to pay for the transforms (TRBA batch 1: 71-72 ms
  // direct against 76-84 with Winograd): kPlanWinogradTiles 4x4 output tiles at least.
  static constexpr int64_t kPlanWinogradChannels = 128;
  static constexpr int64_t kPlanWinogradTiles = 64;

  std::optional<memory> addFovealWinograd(Compiled& c, const LayerOp& op,
                                          const std::vector<memory>& values, const Dims& sd,
                                          const Dims& od, const Window& win) {
    if (!winogradAllowed() || op.src == 0 || win.kh != 3 || win.kw != 3 || op.stride[0] != 1 ||
        op.stride[1] != 1 || win.padL != Dims{1, 1} || win.padR != Dims{1, 1} ||
        op.weight.size(0) < kPlanWinogradChannels || op.weight.size(1) < kPlanWinogradChannels ||
        sd[0] * ((sd[2] + 3) / 4) * ((sd[3] + 3) / 4) < kPlanWinogradTiles)
      return std::nullopt;
    const auto blocked = [](const Dims& d) {
      return memory::desc(d, memory::data_type::f32, memory::format_tag::aBcd8b);
    };
    const memory& src = values[op.src];
    if (src.get_desc() != blocked(sd)) return std::nullopt;
    if (op.residual >= 0 && values[op.residual].get_desc() != blocked(od)) return std::nullopt;
    if (!op.winograd) op.winograd = std::make_shared<WinogradFilters>(winogradFilters(op.weight));
    const auto filters = op.winograd;
    const int64_t outp = filters->u.size(2);
    auto bias = torch::zeros({outp}, op.bias.options());
    bias.narrow(0, 0, op.bias.size(0)).copy_(op.bias);
    memory dst = op.residual >= 0 ? values[op.residual] : memory(blocked(od), engine);
    const bool accumulate = op.residual >= 0, relu = op.relu;
    const int64_t n = sd[0], h = sd[2], w = sd[3];
    Compiled::Step step;
    step.plain = [src, dst, filters, bias, n, h, w, accumulate, relu] {
      winogradBlocked3x3(static_cast<const float*>(src.get_data_handle()), n, h, w, *filters,
                         bias.data_ptr<float>(), static_cast<float*>(dst.get_data_handle()),
                         accumulate, relu);
    };
    c.steps.push_back(std::move(step));
    c.routes.emplace_back(planLayerName(convName(op, win), sd),
                          std::string("Foveal's Winograd F(4x4,3x3) on 8-channel blocks, ") +
                              (dnnl_ops::matmulAvailable() ? "products on oneDNN's matmul"
                                                           : "products on LibTorch's bmm") +
                              (op.relu ? ", ReLU fused" : "") +
                              (op.residual >= 0 ? ", residual sum fused" : ""));
    return dst;
  }

  // A convolution (its input reordered first where its primitive wants another layout), with
  // the residual sum and the ReLU as post-ops; none where it cannot write into the residual.
  std::optional<memory> addConv(Compiled& c, dnnl::stream& stream, const LayerOp& op,
                                const std::vector<memory>& values, const Dims& sd, const Dims& od,
                                const Window& win) {
    const memory& src = values[op.src];
    const Dims wd{op.weight.size(0), op.weight.size(1), win.kh, win.kw};
    dnnl::post_ops po;
    if (op.residual >= 0) po.append_sum(1.0f);
    if (op.relu) dnnl_compat::appendEltwise(po, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr = userScratchpad();
    attr.set_post_ops(po);
    auto any = [](const Dims& d) {
      return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
    };
    const memory::desc srcMd = op.src == 0 ? any(sd) : src.get_desc();
    const memory::desc dstMd = op.residual >= 0 ? values[op.residual].get_desc() : any(od);
    const memory::desc biasMd({od[1]}, memory::data_type::f32, memory::format_tag::x);
    auto make = [&](dnnl::algorithm alg) {
      return dnnl_compat::convolutionInference(engine, alg, srcMd, any(wd), biasMd, dstMd,
                                               win.strides, win.padL, win.padR, attr);
    };
    dnnl::convolution_forward::primitive_desc pd = make(dnnl::algorithm::convolution_direct);
    const bool winogradShape = win.kh == 3 && win.kw == 3 && op.stride[0] == 1 && op.stride[1] == 1;
    bool winograd = false;
    if (winogradShape && winogradAllowed()) {
      try {
        pd = make(dnnl::algorithm::convolution_winograd);
        winograd = true;
      } catch (const dnnl::error&) {  // not for this shape or CPU: keep the direct one
      }
    }
    if (!winograd)
      if (auto dst = addFovealWinograd(c, op, values, sd, od, win)) return dst;
    c.routes.emplace_back(planLayerName(convName(op, win), sd),
                          std::string(winograd ? "oneDNN Winograd (" : "oneDNN direct (") +
                              pd.impl_info_str() + ")" + (op.relu ? ", ReLU fused" : "") +
                              (op.residual >= 0 ? ", residual sum fused" : ""));
    memory in = src;
    if (pd.src_desc() != src.get_desc()) {
      in = memory(pd.src_desc(), engine);
      dnnl::reorder::primitive_desc rpd(src, in, userScratchpad());
      c.steps.push_back({dnnl::reorder(rpd),
                         {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, in}},
                         rpd.scratchpad_desc(),
                         {}});
    }
    // Weights: reordered once, now. The memory keeps its own buffer.
    memory wUser({wd, memory::data_type::f32, memory::format_tag::oihw}, engine,
                 op.weight.data_ptr<float>());
    memory w(pd.weights_desc(), engine);
    dnnl::reorder(wUser, w).execute(stream, wUser, w);
    memory b(biasMd, engine);
    std::memcpy(b.get_data_handle(), op.bias.data_ptr<float>(),
                static_cast<size_t>(od[1]) * sizeof(float));
    memory dst = op.residual >= 0 ? values[op.residual] : memory(pd.dst_desc(), engine);
    if (dst.get_desc() != pd.dst_desc()) return std::nullopt;
    c.steps.push_back(
        {dnnl::convolution_forward(pd),
         {{DNNL_ARG_SRC, in}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, dst}},
         pd.scratchpad_desc(),
         {}});
    return dst;
  }

  // One buffer for every step's scratchpad, as large as the largest step's.
  void shareScratchpad(Compiled& c) {
    size_t scratch = 0;
    for (const auto& step : c.steps) scratch = std::max(scratch, step.scratchpad.get_size());
    if (scratch > 0) {
      c.scratchpad = memory(memory::desc({static_cast<memory::dim>(scratch)}, memory::data_type::u8,
                                         memory::format_tag::x),
                            engine);
      for (auto& step : c.steps)
        if (step.scratchpad.get_size() > 0)
          step.args[DNNL_ARG_SCRATCHPAD] =
              memory(step.scratchpad, engine, c.scratchpad.get_data_handle());
    }
  }

  std::shared_ptr<Compiled> compile(const Dims& inDims) {
    auto c = std::make_shared<Compiled>();
    dnnl::stream stream(engine);
    std::vector<memory> values;
    std::vector<Dims> dims;
    c->input = memory({inDims, memory::data_type::f32, memory::format_tag::nchw}, engine,
                      DNNL_MEMORY_NONE);
    values.push_back(c->input);
    dims.push_back(inDims);
    for (const auto& op : ops) {
      const Dims sd = dims[op.src];
      const Window win = windowOf(op, sd);
      if (win.oh < 1 || win.ow < 1) return nullptr;
      if (!op.conv) {
        const Dims od{sd[0], sd[1], win.oh, win.ow};
        values.push_back(addPool(*c, op, values[op.src], sd, od, win));
        dims.push_back(od);
        continue;
      }
      const Dims od{sd[0], op.weight.size(0), win.oh, win.ow};
      const auto dst = addConv(*c, stream, op, values, sd, od, win);
      if (!dst) return nullptr;
      values.push_back(*dst);
      dims.push_back(od);
    }
    stream.wait();
    shareScratchpad(*c);
    c->output = values.back();
    c->outDims = dims.back();
    return c;
  }
};

ConvPlan::ConvPlan() : m(std::make_unique<Impl>()) {}
ConvPlan::~ConvPlan() = default;

bool ConvPlan::available() {
  static const bool on = !envSwitchSet("FOVEAL_PLAIN_CONV");
  return on;
}

std::optional<torch::Tensor> ConvPlan::run(const torch::Tensor& image) {
  if (image.dim() != 4 || !image.is_cpu() || image.scalar_type() != torch::kFloat)
    return std::nullopt;
  const auto x = image.contiguous();
  const std::vector<int64_t> key(x.sizes().begin(), x.sizes().end());
  std::lock_guard<std::mutex> lock(m->mutex);
  if (m->failed.count(key)) return std::nullopt;
  auto& slot = m->compiled[key];
  if (!slot) {
    try {
      slot = m->compile(Dims(key.begin(), key.end()));
    } catch (const dnnl::error&) {
      slot = nullptr;
    }
    if (!slot) {
      m->compiled.erase(key);
      m->failed[key] = true;
      return std::nullopt;
    }
  }
  Compiled& c = *slot;
  dnnl::stream stream(m->engine);
  c.input.set_data_handle(x.data_ptr());
  if (routeRecording())
    for (const auto& [layer, route] : c.routes) noteRoute(layer, route);
  for (auto& s : c.steps) {
    if (s.plain) {
      stream.wait();  // the primitives before it have written its input
      s.plain();
    } else {
      s.prim.execute(stream, s.args);
    }
  }
  auto out = torch::empty(c.outDims, x.options());
  memory user({c.outDims, memory::data_type::f32, memory::format_tag::nchw}, m->engine,
              out.data_ptr());
  // Made and run here, on this thread, so the library scratchpad (if it needs one) is this
  // thread's.
  dnnl::reorder(c.output, user).execute(stream, c.output, user);
  stream.wait();
  return out;
}

#else  // no oneDNN: the plan never runs

struct ConvPlan::Impl {
  std::vector<LayerOp> ops;
};
ConvPlan::ConvPlan() : m(std::make_unique<Impl>()) {}
ConvPlan::~ConvPlan() = default;
bool ConvPlan::available() { return false; }
std::optional<torch::Tensor> ConvPlan::run(const torch::Tensor&) { return std::nullopt; }

#endif

int ConvPlan::conv(int src, const torch::nn::Conv2dImpl& conv, const torch::nn::BatchNorm2dImpl* bn,
                   std::array<int64_t, 2> padding, bool relu, int residual) {
  LayerOp op;
  op.conv = true;
  op.src = src;
  op.residual = residual;
  op.relu = relu;
  auto w = conv.weight.detach().to(torch::kFloat).clone();
  auto b = conv.options.bias() ? conv.bias.detach().to(torch::kFloat).clone()
                               : torch::zeros({w.size(0)}, w.options());
  if (bn) {
    const auto scale =
        bn->weight.detach() / torch::sqrt(bn->running_var.detach() + bn->options.eps());
    w = w * scale.view({-1, 1, 1, 1});
    b = (b - bn->running_mean.detach()) * scale + bn->bias.detach();
  }
  op.weight = w.contiguous();
  op.bias = b.contiguous();
  const auto& o = conv.options;
  op.stride = {(*o.stride())[0], (*o.stride())[1]};
  op.padding = padding;
  m->ops.push_back(std::move(op));
  return static_cast<int>(m->ops.size());
}

int ConvPlan::maxPool(int src, std::array<int64_t, 2> kernel, std::array<int64_t, 2> stride,
                      std::array<int64_t, 2> padding) {
  LayerOp op;
  op.src = src;
  op.kernel = kernel;
  op.stride = stride;
  op.padding = padding;
  m->ops.push_back(std::move(op));
  return static_cast<int>(m->ops.size());
}

}  // namespace foveal::core
