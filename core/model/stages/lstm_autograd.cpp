#include "model/stages/lstm_autograd.h"

#include <torch/autograd.h>
#include <torch/nn/modules/rnn.h>

#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "model/stages/lstm_inference.h"
#include "model/stages/lstm_math.h"

namespace foveal::core {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Time-major throughout: x [T, B, I], the outputs [T, B, H]; PyTorch's gate order i, f, g, o.
// The forward pass keeps the gates' activations [T, B, 4H], the cells [T, B, H] and the outputs,
// which is all the backward pass reads. Absent inputs (the first step's cells, an unused
// output's gradient) are `zeros`, B x H of them, rather than branches in the gate loops. The
// loops vectorise (GCC needs -fno-trapping-math for the exp's clamp followed by arithmetic:
// core/model/CMakeLists.txt), in float for AVX2 too (gateForward, gateBackward).
template <typename S>
inline __attribute__((always_inline)) void forwardSteps(S* __restrict acts,
                                                        const S* __restrict cellsBefore,
                                                        S* __restrict cells, S* __restrict out,
                                                        int64_t B, int64_t H) {
  using lstm_math::sigmoid;
  using lstm_math::tanhApprox;
  const int64_t G = 4 * H;
  for (int64_t b = 0; b < B; ++b) {
    S* __restrict a = acts + b * G;
    const S* __restrict cPrev = cellsBefore + b * H;
    S* __restrict c = cells + b * H;
    S* __restrict h = out + b * H;
    for (int64_t j = 0; j < H; ++j) {
      const S i = sigmoid(a[j]), f = sigmoid(a[H + j]), g = tanhApprox(a[2 * H + j]),
              o = sigmoid(a[3 * H + j]);
      a[j] = i;
      a[H + j] = f;
      a[2 * H + j] = g;
      a[3 * H + j] = o;
      c[j] = f * cPrev[j] + i * g;
      h[j] = o * tanhApprox(c[j]);
    }
  }
}

// One step backwards (its rows of acts, cells, dOut and dGates): from dh (the output's gradient
// plus the next step's recurrent one) and dc (the next step's cell gradient, updated in place to
// this step's), the gradient of the gates' pre-activations.
template <typename S>
inline __attribute__((always_inline)) void backwardStep(
    const S* __restrict acts, const S* __restrict cells, const S* __restrict cellsBefore,
    const S* __restrict dOut, const S* __restrict dhNext, S* __restrict dc, S* __restrict dGates,
    int64_t B, int64_t H) {
  using lstm_math::tanhApprox;
  const int64_t G = 4 * H;
  for (int64_t b = 0; b < B; ++b) {
    const S* __restrict a = acts + b * G;
    const S* __restrict c = cells + b * H;
    const S* __restrict cPrev = cellsBefore + b * H;
    const S* __restrict dy = dOut + b * H;
    const S* __restrict dn = dhNext + b * H;
    S* __restrict dcb = dc + b * H;
    S* __restrict d = dGates + b * G;
    for (int64_t j = 0; j < H; ++j) {
      const S i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j];
      const S dh = dy[j] + dn[j];
      const S tc = tanhApprox(c[j]);
      const S dcell = dcb[j] + dh * o * (S(1) - tc * tc);
      d[j] = dcell * g * i * (S(1) - i);
      d[H + j] = dcell * cPrev[j] * f * (S(1) - f);
      d[2 * H + j] = dcell * i * (S(1) - g * g);
      d[3 * H + j] = dh * tc * o * (S(1) - o);
      dcb[j] = dcell * f;
    }
  }
}

FOVEAL_CPU_CLONES("avx2", "default")
void gateForward(float* acts, const float* cellsBefore, float* cells, float* out, int64_t B,
                 int64_t H) {
  forwardSteps<float>(acts, cellsBefore, cells, out, B, H);
}
void gateForward(double* acts, const double* cellsBefore, double* cells, double* out, int64_t B,
                 int64_t H) {
  forwardSteps<double>(acts, cellsBefore, cells, out, B, H);
}
FOVEAL_CPU_CLONES("avx2", "default")
void gateBackward(const float* acts, const float* cells, const float* cellsBefore,
                  const float* dOut, const float* dhNext, float* dc, float* dGates, int64_t B,
                  int64_t H) {
  backwardStep<float>(acts, cells, cellsBefore, dOut, dhNext, dc, dGates, B, H);
}
void gateBackward(const double* acts, const double* cells, const double* cellsBefore,
                  const double* dOut, const double* dhNext, double* dc, double* dGates, int64_t B,
                  int64_t H) {
  backwardStep<double>(acts, cells, cellsBefore, dOut, dhNext, dc, dGates, B, H);
}

// One direction's forward pass: x [T, B, I] (contiguous); wih [4H, I], whh [4H, H], bias [4H]
// (both biases summed). The gates' activations, the cells and the outputs, as the backward pass
// reads them.
struct DirectionPass {
  torch::Tensor acts, cells, out;
};
DirectionPass forwardDirection(const torch::Tensor& x, const torch::Tensor& wih,
                               const torch::Tensor& whh, const torch::Tensor& bias) {
  const int64_t T = x.size(0), B = x.size(1), I = x.size(2), H = whh.size(1);
  DirectionPass r;
  r.acts = torch::addmm(bias, x.view({T * B, I}), wih.t()).view({T, B, 4 * H});
  r.cells = torch::empty({T, B, H}, x.options());
  r.out = torch::empty({T, B, H}, x.options());
  const auto zeros = torch::zeros({B, H}, x.options());
  const auto whhT = whh.t();
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "lstm forward", [&] {
    for (int64_t t = 0; t < T; ++t) {
      if (t > 0) r.acts[t].addmm_(r.out[t - 1], whhT);  // the recurrent term
      gateForward(r.acts[t].data_ptr<scalar_t>(),
                  (t > 0 ? r.cells[t - 1] : zeros).data_ptr<scalar_t>(),
                  r.cells[t].data_ptr<scalar_t>(), r.out[t].data_ptr<scalar_t>(), B, H);
    }
  });
  return r;
}

class LstmDirectionFunction : public torch::autograd::Function<LstmDirectionFunction> {
 public:
  // x [T, B, I]; wih [4H, I], whh [4H, H], bias [4H] (both biases summed) -> h [T, B, H].
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x0,
                               const torch::Tensor& wih, const torch::Tensor& whh,
                               const torch::Tensor& bias) {
    const auto x = x0.contiguous();
    auto r = forwardDirection(x, wih, whh, bias);
    ctx->save_for_backward({x, wih, whh, r.acts, r.cells, r.out});
    return r.out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &wih = saved[1], &whh = saved[2], &acts = saved[3], &cells = saved[4],
               &out = saved[5];
    const int64_t T = x.size(0), B = x.size(1), I = x.size(2), H = whh.size(1);
    const torch::Tensor dOut =
        grads[0].defined() ? grads[0].contiguous() : torch::zeros({T, B, H}, x.options());
    auto dGates = torch::empty({T, B, 4 * H}, x.options());
    auto dc = torch::zeros({B, H}, x.options());
    auto dhNext = torch::zeros({B, H}, x.options());
    const auto zeros = torch::zeros({B, H}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "lstm backward", [&] {
      for (int64_t t = T - 1; t >= 0; --t) {
        gateBackward(acts[t].data_ptr<scalar_t>(), cells[t].data_ptr<scalar_t>(),
                     (t > 0 ? cells[t - 1] : zeros).data_ptr<scalar_t>(),
                     dOut[t].data_ptr<scalar_t>(), dhNext.data_ptr<scalar_t>(),
                     dc.data_ptr<scalar_t>(), dGates[t].data_ptr<scalar_t>(), B, H);
        if (t > 0) at::mm_out(dhNext, dGates[t], whh);
      }
    });
    const auto flat = dGates.view({T * B, 4 * H});
    torch::Tensor dx, dwih, dwhh, dbias;
    if (ctx->needs_input_grad(0)) dx = torch::mm(flat, wih).view({T, B, I});
    if (ctx->needs_input_grad(1)) dwih = torch::mm(flat.t(), x.view({T * B, I}));
    if (ctx->needs_input_grad(2))
      dwhh = T > 1 ? torch::mm(dGates.narrow(0, 1, T - 1).reshape({(T - 1) * B, 4 * H}).t(),
                               out.narrow(0, 0, T - 1).reshape({(T - 1) * B, H}))
                   : torch::zeros_like(whh);
    if (ctx->needs_input_grad(3)) dbias = flat.sum(0);
    return {dx, dwih, dwhh, dbias};
  }
};

}  // namespace

std::optional<torch::Tensor> lstmFused(const torch::nn::LSTMImpl& lstm, const torch::Tensor& x) {
  const auto& o = lstm.options;
  const auto type = x.scalar_type();
  if (plainLstm() || !x.is_cpu() || (type != torch::kFloat && type != torch::kDouble) ||
      x.dim() != 3 || !o.batch_first() || o.proj_size() != 0 || !o.bias() ||
      (lstm.is_training() && o.dropout() > 0 && o.num_layers() > 1))
    return std::nullopt;
  const int dirs = o.bidirectional() ? 2 : 1;
  const auto params = lstm.named_parameters();
  // Without gradients (batched inference) the same loops, nothing kept for a backward pass.
  const bool record = torch::GradMode::is_enabled();
  torch::Tensor input = x.transpose(0, 1);  // [T, B, I]
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    std::vector<torch::Tensor> outs;
    for (int d = 0; d < dirs; ++d) {
      const auto w = lstmDirectionWeights(params, layer, d == 1);
      if (!w || w->wih.scalar_type() != type) return std::nullopt;
      // The reverse direction reads the sequence backwards and writes its outputs in place.
      const auto seq = d == 1 ? input.flip(0) : input;
      auto h = record ? LstmDirectionFunction::apply(seq, w->wih, w->whh, w->bias)
                      : forwardDirection(seq.contiguous(), w->wih, w->whh, w->bias).out;
      outs.push_back(d == 1 ? h.flip(0) : h);
    }
    input = dirs == 1 ? outs.front() : torch::cat(outs, 2);
  }
  return input.transpose(0, 1);  // [B, T, D*H]
}

}  // namespace foveal::core
