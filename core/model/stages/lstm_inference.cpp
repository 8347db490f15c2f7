#include "model/stages/lstm_inference.h"

#include <torch/nn/modules/rnn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/env_switch.h"
#include "model/stages/lstm_math.h"

namespace foveal::core {

using lstm_math::sigmoid;
using lstm_math::tanhApprox;

namespace {

// One direction of one layer for one sequence. gates [T, 4H]: the input projections with both
// biases (PyTorch's gate order i, f, g, o); wt [H, 4H]: the recurrent weights transposed; out:
// h_t written at out + t * outStride. scratch: 6H floats.
// Compiled for AVX-512, AVX2 and plain x86-64 (FOVEAL_CPU_CLONES).
FOVEAL_CPU_CLONES("avx512f", "avx2", "default")
void runDirection(const float* gates, const float* wt, int64_t T, int64_t H, bool reverse,
                  float* out, int64_t outStride, float* scratch) {
  const int64_t G = 4 * H;
  float* g = scratch;
  float* h = g + G;
  float* c = h + H;
  std::fill(h, h + 2 * H, 0.0f);
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    std::memcpy(g, gates + t * G, static_cast<size_t>(G) * sizeof(float));
    for (int64_t k = 0; k < H; ++k) {
      const float hk = h[k];
      const float* w = wt + k * G;
      for (int64_t j = 0; j < G; ++j) g[j] += hk * w[j];
    }
    for (int64_t j = 0; j < H; ++j) {
      const float i = sigmoid(g[j]);
      const float f = sigmoid(g[H + j]);
      const float u = tanhApprox(g[2 * H + j]);
      const float o = sigmoid(g[3 * H + j]);
      c[j] = f * c[j] + i * u;
      h[j] = o * tanhApprox(c[j]);
    }
    std::memcpy(out + t * outStride, h, static_cast<size_t>(H) * sizeof(float));
  }
}

}  // namespace

bool plainLstm() {
  static const bool plain = envSwitchSet("FOVEAL_PLAIN_LSTM");
  return plain;
}

std::optional<LstmDirectionWeights> lstmDirectionWeights(
    const torch::OrderedDict<std::string, torch::Tensor>& parameters, int64_t layer, bool reverse) {
  const std::string suffix = "_l" + std::to_string(layer) + (reverse ? "_reverse" : "");
  const auto* wih = parameters.find("weight_ih" + suffix);
  const auto* whh = parameters.find("weight_hh" + suffix);
  const auto* bih = parameters.find("bias_ih" + suffix);
  const auto* bhh = parameters.find("bias_hh" + suffix);
  if (!wih || !whh || !bih || !bhh) return std::nullopt;
  return LstmDirectionWeights{*wih, *whh, *bih + *bhh};
}

float lstmSigmoid(float x) { return sigmoid(x); }
float lstmTanh(float x) { return tanhApprox(x); }

std::optional<torch::Tensor> lstmInference(const torch::nn::LSTMImpl& lstm,
                                           const torch::Tensor& x) {
  const auto& o = lstm.options;
  if (plainLstm() || torch::GradMode::is_enabled() || !x.is_cpu() ||
      x.scalar_type() != torch::kFloat || x.dim() != 3 || x.size(0) > 4 || !o.batch_first() ||
      o.proj_size() != 0 || !o.bias())
    return std::nullopt;
  const int64_t B = x.size(0), T = x.size(1), H = o.hidden_size();
  const int dirs = o.bidirectional() ? 2 : 1;
  const auto params = lstm.named_parameters();
  torch::Tensor input = x.contiguous();
  std::vector<float> scratch(static_cast<size_t>(6 * H));
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    auto out = torch::empty({B, T, dirs * H}, input.options());
    for (int d = 0; d < dirs; ++d) {
      const auto w = lstmDirectionWeights(params, layer, d == 1);
      if (!w) return std::nullopt;
      // [B, T, 4H]: every step's input projection and both biases, one product.
      const auto gates = torch::addmm(w->bias, input.reshape({B * T, input.size(2)}), w->wih.t())
                             .reshape({B, T, 4 * H})
                             .contiguous();
      const auto wt = w->whh.t().contiguous();  // [H, 4H]
      for (int64_t b = 0; b < B; ++b)
        runDirection(gates[b].data_ptr<float>(), wt.data_ptr<float>(), T, H, d == 1,
                     out.data_ptr<float>() + b * T * dirs * H + d * H, dirs * H, scratch.data());
    }
    input = out;
  }
  return input;
}

}  // namespace foveal::core
