#pragma once
// The prediction stage "attention": an LSTM decoder that reads one token per step through a
// glimpse (stage_registry.h lists them). Its cell comes in the paper's flavour and DTRB's
// (docs/ARCHITECTURE.md "The model as stages"). Greedy, sampled, teacher-forced and beam decoding
// all run the one step() below; at small inference batches with a glimpse that mixes columns,
// step() takes the latency path (the decoder's input weights applied to every column once), the
// same function in another summation order.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>

#include "model/additive_attention.h"
#include "model/charset.h"
#include "model/stages/stage.h"

namespace foveal::core {

class AttentionPredictionImpl : public torch::nn::Cloneable<AttentionPredictionImpl>,
                                public Prediction {
 public:
  AttentionPredictionImpl(const ModelConfig& config, int64_t inputDim);
  void reset() override;

  RecognizerOutput predict(const torch::Tensor& x, const torch::Tensor& upsampled,
                           const DecodeOptions& options) override;
  BeamResult beamSearch(const torch::Tensor& x, const torch::Tensor& upsampled, int width) override;
  LossTerms loss(const RecognizerOutput& out, const LossInputs& in) const override;
  BatchStats stats(const RecognizerOutput& out, const torch::Tensor& targets,
                   const torch::Tensor& lengths) const override;
  std::vector<std::vector<int>> readings(const RecognizerOutput& out) const override;

  Glimpse* glimpse() const { return m_glimpse.impl; }
  std::shared_ptr<torch::nn::Module> glimpseModule() const { return m_glimpse.module; }

  ModelConfig config;

 private:
  /// Per-image values every step reads: the columns, their attention keys and, on the latency
  /// path, the columns' and tokens' contributions to the gates and the output.
  struct Keys {
    torch::Tensor x, wx;
    bool lean = false;
    torch::Tensor xGates, yGates, hhW, gBias, outY, outH;
  };
  struct State {
    torch::Tensor h, c;
    torch::Tensor prev;  ///< [N] int64 previous token; undefined before the first (paper: y_0 = 0)
    torch::Tensor prevScale;  ///< [N] factor of the input token (DecodeOptions::tokenScale)
  };
  struct StepOutput {
    torch::Tensor logProbs, logAlpha, alpha, selected;
    GlimpseOutput glimpse;
  };
  enum class Select { Argmax, Sample };

  Keys keys(const torch::Tensor& x, bool lean);
  State initialState(const torch::Tensor& x, int64_t rows);
  /// One decoder step: alpha_t from h_{t-1}, the region, the glimpse, the cell, p(y_t).
  /// glimpseRows (int64, defined): only these rows' glimpses are computed, the others' outputs
  /// are zero (rows whose label has ended, under teacher forcing).
  StepOutput step(const Keys& k, State& state, const torch::Tensor& upsampled,
                  const torch::Tensor& imageOfRow, const torch::Tensor& forced, Select select,
                  const DecodeOptions& options, const torch::Tensor& glimpseRows = {});

  Charset m_charset;
  int64_t m_inputDim;
  int m_numClasses = 0;
  bool m_paperCell = true;
  torch::nn::Linear m_init{nullptr};
  AdditiveAttention m_attention{nullptr};
  Stage<Glimpse> m_glimpse;
  torch::nn::LSTMCell m_cell{nullptr};
  torch::nn::Linear m_output{nullptr};
};
TORCH_MODULE(AttentionPrediction);

/// [B, T] mask of the steps that count: the label's characters and its end token.
torch::Tensor validSteps(const torch::Tensor& targets, const torch::Tensor& lengths);

}  // namespace foveal::core
