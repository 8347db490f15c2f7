#include "model/stages/ctc_prediction.h"
#include "model/ctc_lattice.h"

#include <ATen/ops/ctc_loss.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

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

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double logAdd(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double hi = std::max(a, b);
  return hi + std::log1p(std::exp(std::min(a, b) - hi));
}

// A prefix's two shares: paths so far ending in a blank, and ending in its last class.
struct PrefixScore {
  double blank = kNegInf, label = kNegInf;
  double total() const { return logAdd(blank, label); }
};

}  // namespace

std::vector<CtcHypothesis> ctcPrefixBeamSearch(const std::vector<double>& logProbs, int m, int k,
                                               int width, int blank) {
  if (width < 1) throw Error("beam width must be at least 1, not " + std::to_string(width));
  if (m < 0 || k < 1 || logProbs.size() != static_cast<size_t>(m) * static_cast<size_t>(k))
    throw Error("CTC beam search: expected " + std::to_string(m) + " x " + std::to_string(k) +
                " log probabilities, got " + std::to_string(logProbs.size()));
  using Prefix = std::vector<int>;
  std::vector<std::pair<Prefix, PrefixScore>> beam;
  beam.push_back({{}, PrefixScore{0.0, kNegInf}});
  for (int t = 0; t < m; ++t) {
    const double* p = logProbs.data() + static_cast<size_t>(t) * static_cast<size_t>(k);
    std::map<Prefix, PrefixScore> next;
    for (const auto& [prefix, score] : beam) {
      const double all = score.total();
      // A blank keeps the prefix.
      auto& same = next[prefix];
      same.blank = logAdd(same.blank, p[blank] + all);
      for (int c = 0; c < k; ++c) {
        if (c == blank) continue;
        if (!prefix.empty() && prefix.back() == c) {
          // The same class again: it merges into the prefix unless a blank came between.
          same.label = logAdd(same.label, p[c] + score.label);
          Prefix longer = prefix;
          longer.push_back(c);
          auto& l = next[longer];
          l.label = logAdd(l.label, p[c] + score.blank);
        } else {
          Prefix longer = prefix;
          longer.push_back(c);
          auto& l = next[longer];
          l.label = logAdd(l.label, p[c] + all);
        }
      }
    }
    beam.assign(next.begin(), next.end());
    // Most probable first; ties by the prefix itself, so the order does not depend on the map's.
    std::sort(beam.begin(), beam.end(), [](const auto& a, const auto& b) {
      const double ta = a.second.total(), tb = b.second.total();
      return ta != tb ? ta > tb : a.first < b.first;
    });
    while (!beam.empty() && beam.back().second.total() == kNegInf) beam.pop_back();
    if (beam.size() > static_cast<size_t>(width)) beam.resize(static_cast<size_t>(width));
  }
  std::vector<CtcHypothesis> out;
  for (const auto& [prefix, score] : beam) out.push_back({prefix, score.total()});
  return out;
}

std::vector<int> ctcBestPath(const std::vector<double>& logProbs, int m, int k,
                             const std::vector<int>& tokens, int blank) {
  const auto best = ctcBestLatticePath(logProbs, m, k, tokens, blank);
  const std::vector<int> ext = ctcExtendedLabel(tokens, blank);
  std::vector<int> path;
  path.reserve(best.states.size());
  for (int j : best.states) path.push_back(ext[static_cast<size_t>(j)]);
  return path;
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
  RecognizerOutput out;
  out.logProbs = torch::log_softmax(m_fc(x), -1);  // [B, M, K]
  out.tokens = out.logProbs.detach().argmax(-1);   // [B, M]
  if (options.forcedSelection.defined()) {
    // The recognizer decodes a beam search's reading again with its "regions" forced: for CTC
    // each column is its own (beamSearch() says so), and the targets are the reading's path,
    // one class per column, which replaces the argmax path; the posteriors stay the model's.
    const auto columns = torch::arange(out.tokens.size(1), torch::kLong).expand_as(out.tokens);
    if (!options.targets.defined() || options.targets.sizes() != out.tokens.sizes() ||
        options.forcedSelection.sizes() != out.tokens.sizes() ||
        !torch::equal(options.forcedSelection.to(torch::kCPU, torch::kLong), columns))
      throw Error("a CTC model has no regions to force: it reads every column at once");
    out.tokens = options.targets.to(out.tokens.device(), torch::kLong);
  }
  return out;
}

BeamResult CtcPredictionImpl::beamSearch(const torch::Tensor& x, const torch::Tensor&, int width) {
  if (width < 1) throw Error("beam width must be at least 1, not " + std::to_string(width));
  torch::NoGradGuard noGrad;
  const auto logProbs =
      torch::log_softmax(m_fc(x), -1).to(torch::kCPU, torch::kDouble).contiguous();  // [B, M, K]
  const int64_t b = logProbs.size(0), m = logProbs.size(1), k = logProbs.size(2);
  const int blank = m_charset.blankIndex();
  // Per hypothesis its path (one class per column, the reading's most probable alignment): the
  // trace shows the reading along it. No regions are chosen: each column is its own "region",
  // which is what predict() accepts as forced when the recognizer decodes the reading again.
  auto tokens = torch::full({b, width, m}, blank, torch::kLong);
  auto logProb = torch::full({b, width}, -std::numeric_limits<double>::infinity(), torch::kDouble);
  auto tok = tokens.accessor<int64_t, 3>();
  auto score = logProb.accessor<double, 2>();
  for (int64_t i = 0; i < b; ++i) {
    const double* p = logProbs.data_ptr<double>() + i * m * k;
    const std::vector<double> lp(p, p + m * k);
    const auto hyps =
        ctcPrefixBeamSearch(lp, static_cast<int>(m), static_cast<int>(k), width, blank);
    for (size_t h = 0; h < hyps.size(); ++h) {
      const auto path =
          ctcBestPath(lp, static_cast<int>(m), static_cast<int>(k), hyps[h].tokens, blank);
      if (path.empty() && m > 0) continue;  // cannot happen for a prefix the search built
      for (int64_t c = 0; c < m; ++c)
        tok[i][static_cast<int64_t>(h)][c] = path[static_cast<size_t>(c)];
      score[i][static_cast<int64_t>(h)] = hyps[h].logProb;
    }
  }
  BeamResult r;
  r.allTokens = tokens.to(x.device());
  r.allSelected = torch::arange(m, torch::kLong)
                      .view({1, 1, m})
                      .expand({b, width, m})
                      .contiguous()
                      .to(x.device());
  r.allLogProb = logProb.to(x.device(), torch::kFloat);
  r.tokens = r.allTokens.select(1, 0);
  r.selected = r.allSelected.select(1, 0);
  r.logProb = r.allLogProb.select(1, 0);
  return r;
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
