#pragma once
// The prediction stage "ctc" (CRNN, seed 002): a Linear per feature column over the classes
// <blank> + charset; greedy decoding takes each column's argmax, collapses repeats and drops
// blanks. Trained with the CTC loss (summed over an image, averaged over the batch, infinite
// losses zeroed as DTRB does).
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "model/charset.h"
#include "model/stages/stage.h"

namespace foveal::core {

class CtcPredictionImpl : public torch::nn::Cloneable<CtcPredictionImpl>, public Prediction {
 public:
  CtcPredictionImpl(const ModelConfig& config, int64_t inputDim);
  void reset() override;

  RecognizerOutput predict(const torch::Tensor& x, const torch::Tensor& upsampled,
                           const DecodeOptions& options) override;
  BeamResult beamSearch(const torch::Tensor& x, const torch::Tensor& upsampled, int width) override;
  LossTerms loss(const RecognizerOutput& out, const LossInputs& in) const override;
  BatchStats stats(const RecognizerOutput& out, const torch::Tensor& targets,
                   const torch::Tensor& lengths) const override;
  std::vector<std::vector<int>> readings(const RecognizerOutput& out) const override;

  ModelConfig config;

 private:
  int64_t m_inputDim;
  Charset m_charset;
  torch::nn::Linear m_fc{nullptr};
};
TORCH_MODULE(CtcPrediction);

/// Greedy CTC decoding of one argmax path: repeats collapsed, blanks (class 0) dropped. For each
/// emitted token, the columns that emitted it (the run of that class in the path).
struct CtcPath {
  std::vector<int> tokens;
  std::vector<std::vector<int>> columns;
};
CtcPath collapseCtcPath(const std::vector<int>& argmaxPerColumn, int blank = 0);

}  // namespace foveal::core
