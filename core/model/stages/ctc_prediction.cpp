#include "model/stages/ctc_prediction.h"

#include <ATen/ops/ctc_loss.h>

#include "base/error.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

CtcPath collapseCtcPath(const std::vector<int>& path, int blank) {
  CtcPath out;
  int previous = -1;
  for (size_t i = 0; i < path.size(); ++i) {
    const int c = path[i];
    if (c != blank) {
      if (c == previous) {
        out.columns.back().push_back(static_cast<int>(i));
      } else {
        out.tokens.push_back(c);
        out.columns.push_back({static_cast<int>(i)});
      }
    }
    previous = c;
  }
  return out;
}

CtcPredictionImpl::CtcPredictionImpl(const ModelConfig& config_, int64_t inputDim)
    : config(config_), m_inputDim(inputDim) {
  reset();
}

void CtcPredictionImpl::reset() {
  m_charset = config.makeCharset();
  m_fc = register_module("fc", torch::nn::Linear(m_inputDim, m_charset.size()));
}

RecognizerOutput CtcPredictionImpl::predict(const torch::Tensor& x, const torch::Tensor&,
                                            const DecodeOptions& options) {
  if (options.forcedSelection.defined())
    throw Error("a CTC model has no regions to force: it reads every column at once");
  RecognizerOutput out;
  out.logProbs = torch::log_softmax(m_fc(x), -1);  // [B, M, K]
  out.tokens = out.logProbs.detach().argmax(-1);   // [B, M]
  return out;
}

BeamResult CtcPredictionImpl::beamSearch(const torch::Tensor&, const torch::Tensor&, int) {
  throw Error("beam search is for attention decoders; a CTC model reads greedily (use width 1)");
}

LossTerms CtcPredictionImpl::loss(const RecognizerOutput& out, const LossInputs& in) const {
  LossTerms terms;
  const int64_t b = out.logProbs.size(0), m = out.logProbs.size(1);
  auto inputLengths = torch::full({b}, m, torch::TensorOptions().dtype(torch::kLong));
  auto targetLengths = in.lengths.to(torch::kCPU, torch::kLong);
  auto perImage = at::ctc_loss(out.logProbs.transpose(0, 1).to(torch::kFloat),  // [M, B, K]
                               in.targets.to(torch::kLong), inputLengths.to(out.logProbs.device()),
                               targetLengths.to(out.logProbs.device()), /*blank=*/0,
                               at::Reduction::None, /*zero_infinity=*/true);  // [B]
  terms.nll = perImage.sum() / static_cast<double>(b);
  terms.reinforce = torch::zeros({}, terms.nll.options());
  terms.total = terms.nll;
  return terms;
}

BatchStats CtcPredictionImpl::stats(const RecognizerOutput& out, const torch::Tensor& targets,
                                    const torch::Tensor& lengths) const {
  torch::NoGradGuard ng;
  BatchStats s;
  LossInputs in;
  in.targets = targets;
  in.lengths = lengths;
  const auto b = static_cast<double>(targets.size(0));
  s.rewardSum = -loss(out, in).nll.item<double>() * b;
  s.rewardCount = b;
  const auto read = readings(out);
  auto t = targets.to(torch::kCPU).contiguous();
  auto l = lengths.to(torch::kCPU).contiguous();
  for (size_t i = 0; i < read.size(); ++i) {
    const auto n = l[static_cast<int64_t>(i)].item<int64_t>();
    bool same = static_cast<int64_t>(read[i].size()) == n;
    for (int64_t j = 0; same && j < n; ++j)
      same = read[i][static_cast<size_t>(j)] == t[static_cast<int64_t>(i)][j].item<int64_t>();
    s.correct += same ? 1 : 0;
  }
  return s;
}

std::vector<std::vector<int>> CtcPredictionImpl::readings(const RecognizerOutput& out) const {
  auto tokens = out.tokens.to(torch::kCPU).contiguous();
  auto a = tokens.accessor<int64_t, 2>();
  std::vector<std::vector<int>> r;
  for (int64_t b = 0; b < tokens.size(0); ++b) {
    std::vector<int> path;
    for (int64_t i = 0; i < tokens.size(1); ++i) path.push_back(static_cast<int>(a[b][i]));
    r.push_back(collapseCtcPath(path, m_charset.blankIndex()).tokens);
  }
  return r;
}

std::shared_ptr<torch::nn::Module> makeCtc(const StageContext& c) {
  return std::make_shared<CtcPredictionImpl>(c.config, c.inputDim);
}

}  // namespace foveal::core
