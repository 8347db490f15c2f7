#pragma once
// The sequence stage "bilstm": two bidirectional LSTM layers over the feature columns. The
// paper's form is one 2-layer nn::LSTM (x_i of size 2h); DTRB's follows each layer with a
// Linear(2h -> h) (x_i of size h): `sequence_projection` in the model config.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>

#include "model/stages/stage.h"

namespace foveal::core {

struct BiLstmOptions {
  BiLstmOptions(int64_t input, int64_t hidden) : input_(input), hidden_(hidden) {}
  TORCH_ARG(int64_t, input);
  TORCH_ARG(int64_t, hidden);  ///< units per direction
  TORCH_ARG(bool, projection) = false;
};

class BiLstmImpl : public torch::nn::Cloneable<BiLstmImpl>, public SequenceModel {
 public:
  explicit BiLstmImpl(const BiLstmOptions& options);
  void reset() override;
  torch::Tensor encode(const torch::Tensor& columns) override;  // [B, M, C] -> [B, M, D]

  BiLstmOptions options;

 private:
  torch::nn::LSTM m_lstm{nullptr};           // paper: both layers in one module
  std::vector<torch::nn::LSTM> m_rnns;       // DTRB: one per layer ...
  std::vector<torch::nn::Linear> m_linears;  // ... each followed by a Linear
};
TORCH_MODULE(BiLstm);

}  // namespace foveal::core
