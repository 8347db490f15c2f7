#pragma once
// LSTM layers at any batch, fused: where gradients are recorded (training, explanations) and in
// batched inference (evaluation, faithfulness curves; lstm_inference takes batches of up to four).
// LibTorch's CPU LSTM
// builds an autograd graph of about fifteen small operators per cell (a matrix product, the
// gate split, three sigmoids, two tanh, the products and sums), and its backward pass runs about
// thirty: for the BiLSTM encoders of the digit models ([32, 32] tensors, 25 columns, two layers,
// two directions) that is thousands of operators a pass, each costing more in dispatch than in
// arithmetic. Here a direction of a layer is one autograd node: the input projection of every
// step in one matrix product, then per step one product with the recurrent weights and one loop
// over the gates; its backward pass likewise one product and one loop per step, and the weight
// gradients in two products at the end (skipped where not asked for, as in explanations).
// Without gradients the same forward loops run and keep nothing (a [64, 24, 32] two-layer BiLSTM:
// LibTorch's module about 6.5 ms, per cell a dozen operators at a few microseconds each).
#include <torch/types.h>

#include <optional>

namespace torch::nn {
class LSTMImpl;
}

namespace foveal::core {

/// LSTM module (batch_first, any layers, one or two directions, biases, no projection, no
/// dropout between layers in training) on x [B, T, I]: the module's output [B, T, D*H], where
/// gradients are recorded differentiable with respect to x and every weight and bias. nullopt
/// where this path does not apply (not a float or double CPU tensor, FOVEAL_PLAIN_LSTM set):
/// the caller then runs the module.
std::optional<torch::Tensor> lstmFused(const torch::nn::LSTMImpl& lstm, const torch::Tensor& x);

}  // namespace foveal::core
