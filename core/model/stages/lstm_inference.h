#pragma once
// LSTM inference at small batches without BLAS: at batch 1 LibTorch's LSTM spends most of its
// time packing the recurrent weights for a [1, H] x [H, 4H] product and waking OpenMP threads
// at each of the T steps (measured: ~80 us a step for H = 256 on 2 threads). Here the input
// projection of every step is one matrix product, and the recurrence is a plain loop over the
// transposed recurrent weights (compiled for AVX-512, AVX2 and baseline x86-64), with a
// polynomial exp for the gates (relative error ~1e-7).
#include <torch/ordered_dict.h>
#include <torch/types.h>

#include <optional>
#include <string>

namespace torch::nn {
class LSTMImpl;
}

namespace foveal::core {

/// LSTM module (batch_first, any layers, one or two directions, no projection) on x [B, T, I]:
/// the module's output [B, T, D*H]. nullopt where this path does not apply (autograd on, not a
/// float CPU tensor, batch over 4, FOVEAL_PLAIN_LSTM set): the caller then runs the module.
std::optional<torch::Tensor> lstmInference(const torch::nn::LSTMImpl& lstm, const torch::Tensor& x);

/// One direction of one layer of an LSTM module: its weights [4H, I] and [4H, H] and the sum of
/// its two biases [4H]. nullopt when the module has no such parameters (no biases).
struct LstmDirectionWeights {
  torch::Tensor wih, whh, bias;
};
std::optional<LstmDirectionWeights> lstmDirectionWeights(
    const torch::OrderedDict<std::string, torch::Tensor>& parameters, int64_t layer, bool reverse);

/// FOVEAL_PLAIN_LSTM is set (not 0): the LSTM modules run LibTorch's own code, in inference
/// and with gradients.
bool plainLstm();

/// The gate nonlinearities as the recurrence computes them (for the tests).
float lstmSigmoid(float x);
float lstmTanh(float x);

}  // namespace foveal::core
