#pragma once
// The prediction stage "ctc" (CRNN, seed 002): a Linear per feature column over the classes
// <blank> + charset; greedy decoding takes each column's argmax, collapses repeats and drops
// blanks; a beam search of width N is a CTC prefix beam search (each reading scored by the summed
// probability of every path that collapses to it), whose chosen reading is shown along its most
// probable path. Trained with the CTC loss (summed over an image, averaged over the batch, infinite
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

/// A reading found by the CTC prefix beam search: its classes (blanks and repeats gone) and log p,
/// the log of the summed probability of every path that collapses to it.
struct CtcHypothesis {
  std::vector<int> tokens;
  double logProb = 0;
};

/// CTC prefix beam search (Hannun et al. 2014, "First-pass large vocabulary continuous speech
/// recognition using bi-directional recurrent DNNs", without a language model) over log p
/// `logProbs` (m columns x k classes, row-major). Each kept prefix carries the probability of the
/// paths so far that end in a blank and of those that end in its last class; after each column
/// the `width` most probable prefixes stay. Returns up to `width` readings, most probable first.
/// With a width of at least the number of distinct prefixes it is exact.
std::vector<CtcHypothesis> ctcPrefixBeamSearch(const std::vector<double>& logProbs, int m, int k,
                                               int width, int blank = 0);

/// The most probable path over the m columns that collapses to `tokens` (Viterbi over the
/// label with blanks between and around its classes), one class per column; empty when no path
/// of m columns reads `tokens` (too long for the columns, counting a blank between repeats).
std::vector<int> ctcBestPath(const std::vector<double>& logProbs, int m, int k,
                             const std::vector<int>& tokens, int blank = 0);

}  // namespace foveal::core
