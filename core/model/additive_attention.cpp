#include "model/additive_attention.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/env_switch.h"
#include "base/kernel_routes.h"
#include "model/autocast.h"
#include "model/stages/lstm_math.h"

namespace foveal::core {

namespace nn = torch::nn;

namespace {

// The scores e[b, m] = sum_d w[d] tanh(P[b, m, d] + q[b, d]) in one pass over P, forward and
// backward, where LibTorch writes the sum P + q, then its tanh (ATen's accurate one, about 3 ns
// a value here), then a product with a one-column matrix, and keeps both [B, M, depth] tensors
// for the backward pass. Each (b, m) is summed in one fixed order (eight running sums), so the
// result does not depend on the thread count. float: the LSTM loops' tanh (lstm_math.h, absolute
// error ~1e-7); double: std::tanh.
constexpr int64_t kLanes = 8;

inline float tanhOf(float x) { return lstm_math::tanhApprox(x); }
inline double tanhOf(double x) { return std::tanh(x); }

// t[d] = tanh(p[d] + q[d]) for d < D (dp: D rounded up to the lanes; t's tail is zero).
template <typename S>
inline void tanhRow(const S* p, const S* q, S* t, int64_t D) {
  for (int64_t d = 0; d < D; ++d) t[d] = tanhOf(p[d] + q[d]);
}

template <typename S>
inline S dotLanes(const S* w, const S* t, int64_t dp) {
  S acc[kLanes] = {};
  for (int64_t d = 0; d < dp; d += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) acc[l] += w[d + l] * t[d + l];
  S s = 0;
  for (int64_t l = 0; l < kLanes; ++l) s += acc[l];
  return s;
}

template <typename S>
void scoresForward(const S* P, const S* q, const S* w, S* out, int64_t B, int64_t M, int64_t D,
                   int64_t dp) {
  at::parallel_for(0, B * M, 16, [&](int64_t begin, int64_t end) {
    std::vector<S> t(static_cast<size_t>(dp), S(0));
    for (int64_t r = begin; r < end; ++r) {
      tanhRow(P + r * D, q + (r / M) * D, t.data(), D);
      out[r] = dotLanes(w, t.data(), dp);
    }
  });
}

FOVEAL_CPU_CLONES("avx2", "default")
void scoresForwardFloat(const float* P, const float* q, const float* w, float* out, int64_t B,
                        int64_t M, int64_t D, int64_t dp) {
  scoresForward(P, q, w, out, B, M, D, dp);
}

// g [B, M] -> dP [B, M, D] (if wanted), dq [B, D] (if wanted), dwRows [B, dp] (if wanted: each
// image's share of dw, summed over the images afterwards in one order).
template <typename S>
void scoresBackward(const S* P, const S* q, const S* w, const S* g, S* dP, S* dq, S* dwRows,
                    int64_t B, int64_t M, int64_t D, int64_t dp) {
  at::parallel_for(0, B, 1, [&](int64_t begin, int64_t end) {
    std::vector<S> t(static_cast<size_t>(dp), S(0));
    for (int64_t b = begin; b < end; ++b) {
      S* dqb = dq ? dq + b * D : nullptr;
      S* dwb = dwRows ? dwRows + b * dp : nullptr;
      if (dqb)
        for (int64_t d = 0; d < D; ++d) dqb[d] = 0;
      if (dwb)
        for (int64_t d = 0; d < dp; ++d) dwb[d] = 0;
      for (int64_t m = 0; m < M; ++m) {
        const int64_t r = b * M + m;
        const S gr = g[r];
        tanhRow(P + r * D, q + b * D, t.data(), D);
        if (dwb)
          for (int64_t d = 0; d < D; ++d) dwb[d] += gr * t[d];
        if (dP || dqb) {
          S* dPr = dP ? dP + r * D : nullptr;
          for (int64_t d = 0; d < D; ++d) {
            const S v = gr * w[d] * (S(1) - t[d] * t[d]);
            if (dPr) dPr[d] = v;
            if (dqb) dqb[d] += v;
          }
        }
      }
    }
  });
}

FOVEAL_CPU_CLONES("avx2", "default")
void scoresBackwardFloat(const float* P, const float* q, const float* w, const float* g, float* dP,
                         float* dq, float* dwRows, int64_t B, int64_t M, int64_t D, int64_t dp) {
  scoresBackward(P, q, w, g, dP, dq, dwRows, B, M, D, dp);
}

int64_t padded(int64_t d) { return (d + kLanes - 1) / kLanes * kLanes; }

// w [1, D] (the score layer's weight) as dp values, zero beyond D.
torch::Tensor paddedWeight(const torch::Tensor& w, int64_t dp) {
  auto out = torch::zeros({dp}, w.options());
  out.narrow(0, 0, w.size(1)).copy_(w.view({-1}));
  return out;
}

torch::Tensor forwardScores(const torch::Tensor& P, const torch::Tensor& q,
                            const torch::Tensor& w) {
  const int64_t B = P.size(0), M = P.size(1), D = P.size(2), dp = padded(D);
  const auto wp = paddedWeight(w, dp);
  auto out = torch::empty({B, M}, P.options());
  if (P.scalar_type() == torch::kFloat)
    scoresForwardFloat(P.data_ptr<float>(), q.data_ptr<float>(), wp.data_ptr<float>(),
                       out.data_ptr<float>(), B, M, D, dp);
  else
    scoresForward(P.data_ptr<double>(), q.data_ptr<double>(), wp.data_ptr<double>(),
                  out.data_ptr<double>(), B, M, D, dp);
  return out;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

class ScoresFunction : public torch::autograd::Function<ScoresFunction> {
 public:
  // projected [B, M, D], q [B, D] (the query's projection), w [1, D] -> e [B, M]
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& projected,
                               const torch::Tensor& query, const torch::Tensor& weight) {
    const auto P = projected.contiguous(), q = query.contiguous(), w = weight.contiguous();
    ctx->save_for_backward({P, q, w});
    return forwardScores(P, q, w);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &P = saved[0], &q = saved[1], &w = saved[2];
    const int64_t B = P.size(0), M = P.size(1), D = P.size(2), dp = padded(D);
    const auto g = grads[0].contiguous();
    torch::Tensor dP, dq, dwRows;
    if (ctx->needs_input_grad(0)) dP = torch::empty_like(P);
    if (ctx->needs_input_grad(1)) dq = torch::empty_like(q);
    if (ctx->needs_input_grad(2)) dwRows = torch::empty({B, dp}, P.options());
    const auto wp = paddedWeight(w, dp);
    if (P.scalar_type() == torch::kFloat) {
      auto ptr = [](torch::Tensor& t) { return t.defined() ? t.data_ptr<float>() : nullptr; };
      scoresBackwardFloat(P.data_ptr<float>(), q.data_ptr<float>(), wp.data_ptr<float>(),
                          g.data_ptr<float>(), ptr(dP), ptr(dq), ptr(dwRows), B, M, D, dp);
    } else {
      auto ptr = [](torch::Tensor& t) { return t.defined() ? t.data_ptr<double>() : nullptr; };
      scoresBackward(P.data_ptr<double>(), q.data_ptr<double>(), wp.data_ptr<double>(),
                     g.data_ptr<double>(), ptr(dP), ptr(dq), ptr(dwRows), B, M, D, dp);
    }
    torch::Tensor dw;
    if (dwRows.defined()) dw = dwRows.sum(0).narrow(0, 0, D).view({1, D});
    return {dP, dq, dw};
  }
};

}  // namespace

namespace {
// "attention scores over 25 keys of depth 256, batch 32, with gradients" (base/kernel_routes.h).
std::string scoresLayerName(const torch::Tensor& projected, bool gradients) {
  if (projected.dim() != 3) return "attention scores";
  return "attention scores over " + std::to_string(projected.size(1)) + " keys of depth " +
         std::to_string(projected.size(2)) + ", batch " + std::to_string(projected.size(0)) +
         (gradients ? ", with gradients" : ", inference");
}
}  // namespace

bool plainAttentionScores() {
  static const bool plain = envSwitchSet("FOVEAL_PLAIN_ATTENTION");
  return plain;
}

AdditiveAttentionImpl::AdditiveAttentionImpl(const AdditiveAttentionOptions& options_)
    : options(options_) {
  reset();
}

void AdditiveAttentionImpl::reset() {
  m_key = register_module(
      "key", nn::Linear(nn::LinearOptions(options.key_dim(), options.depth()).bias(false)));
  m_query = register_module("query", nn::Linear(options.query_dim(), options.depth()));
  m_score = register_module("score", nn::Linear(nn::LinearOptions(options.depth(), 1).bias(false)));
}

torch::Tensor AdditiveAttentionImpl::project(const torch::Tensor& keys) { return m_key(keys); }

torch::Tensor AdditiveAttentionImpl::scores(const torch::Tensor& projected,
                                            const torch::Tensor& query) {
  auto q = m_query(query);  // [B, depth]
  const auto& w = m_score->weight;
  const auto type = projected.scalar_type();
  if (!plainAttentionScores() && projected.is_cpu() && projected.dim() == 3 && q.dim() == 2 &&
      q.size(0) == projected.size(0) && q.size(1) == projected.size(2) &&
      (type == torch::kFloat || type == torch::kDouble) && q.scalar_type() == type &&
      w.scalar_type() == type && w.is_cpu() && !cpuAutocastEnabled()) {
    const bool record = torch::GradMode::is_enabled() &&
                        (projected.requires_grad() || q.requires_grad() || w.requires_grad());
    if (routeRecording())
      noteRoute(scoresLayerName(projected, record),
                "Foveal's fused tanh scores (one pass, no [B, M, depth] tensor)");
    if (record) return ScoresFunction::apply(projected, q, w);
    return forwardScores(projected.contiguous(), q.contiguous(), w.contiguous());
  }
  if (routeRecording())
    noteRoute(
        scoresLayerName(projected, torch::GradMode::is_enabled()),
        cpuAutocastEnabled() ? "LibTorch's operators under bf16 autocast" : "LibTorch's operators");
  return m_score(torch::tanh(projected + q.unsqueeze(1))).squeeze(-1);  // [B, M]
}

}  // namespace foveal::core
