#include "trace/doubt_signals.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace foveal::core {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double magnitudeSum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::abs(x);
  return s;
}

// Which of `shown`'s positions a minimal-edit alignment with `other` matches (equal tokens on
// the diagonal). Ties go to the diagonal first, as alignCharacters breaks them.
std::vector<bool> matchedPositions(const std::vector<int>& shown, const std::vector<int>& other) {
  const size_t n = shown.size(), m = other.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j)
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (shown[i - 1] == other[j - 1] ? 0 : 1)});
  std::vector<bool> matched(n, false);
  size_t i = n, j = m;
  while (i > 0 || j > 0) {
    if (i > 0 && j > 0 && d[i][j] == d[i - 1][j - 1] + (shown[i - 1] == other[j - 1] ? 0 : 1)) {
      matched[i - 1] = shown[i - 1] == other[j - 1];
      --i;
      --j;
    } else if (i > 0 && d[i][j] == d[i - 1][j] + 1) {
      --i;
    } else {
      --j;
    }
  }
  return matched;
}

// p(token) in a column known by its top-k; below the k-th when absent (0: a lower bound).
double columnProbability(const std::vector<TokenProb>& topk, int token) {
  for (const auto& t : topk)
    if (t.index == token) return t.prob;
  return 0.0;
}

// The four attention signals of one map, over every step.
void addMapSignals(DoubtSignals& out, const Trace& trace, const std::string& map,
                   const std::string& prefix) {
  const size_t n = trace.steps.size();
  const DoubtSignalInfo kinds[] = {
      {"attention_entropy", true, DoubtScale::Positive},
      {"attention_peak", false, DoubtScale::Unit},
      {"attention_gini", false, DoubtScale::Unit},
      {"attention_coverage", true, DoubtScale::Unit},
  };
  const std::function<double(const std::vector<double>&)> fns[] = {
      normalisedEntropy, peakShare, giniCoefficient,
      [](const std::vector<double>& v) { return coverageShare(v); }};
  for (size_t k = 0; k < 4; ++k) {
    out.signals.push_back({prefix + kinds[k].name, kinds[k].higherIsDoubtful, kinds[k].scale});
    std::vector<double> values(n, kNaN);
    for (size_t s = 0; s < n; ++s) {
      const auto& v = trace.stepMap(map, s);
      if (!v.empty()) values[s] = fns[k](v);
    }
    out.values.push_back(std::move(values));
  }
}

}  // namespace

int DoubtSignals::indexOf(const std::string& name) const {
  for (size_t i = 0; i < signals.size(); ++i)
    if (signals[i].name == name) return static_cast<int>(i);
  return -1;
}

double giniCoefficient(const std::vector<double>& values) {
  if (values.empty()) return kNaN;
  std::vector<double> v;
  v.reserve(values.size());
  for (double x : values) v.push_back(std::abs(x));
  std::sort(v.begin(), v.end());
  const double total = std::accumulate(v.begin(), v.end(), 0.0);
  if (!(total > 0)) return kNaN;
  // G = 2 sum_i i x_(i) / (n sum x) - (n + 1) / n, ranks i from 1 over the ascending values.
  double ranked = 0;
  for (size_t i = 0; i < v.size(); ++i) ranked += static_cast<double>(i + 1) * v[i];
  const double n = static_cast<double>(v.size());
  return 2.0 * ranked / (n * total) - (n + 1.0) / n;
}

double coverageShare(const std::vector<double>& values, double mass) {
  if (values.empty()) return kNaN;
  std::vector<double> v;
  v.reserve(values.size());
  for (double x : values) v.push_back(std::abs(x));
  std::sort(v.begin(), v.end(), std::greater<double>());
  const double total = std::accumulate(v.begin(), v.end(), 0.0);
  if (!(total > 0)) return kNaN;
  double held = 0;
  size_t count = 0;
  // A relative tolerance so that a mass reached exactly (0.9 of a total of 1) is not missed by
  // rounding and counted one cell late.
  while (count < v.size() && held < mass * total * (1 - 1e-12)) held += v[count++];
  return static_cast<double>(count) / static_cast<double>(v.size());
}

double peakShare(const std::vector<double>& values) {
  const double total = magnitudeSum(values);
  if (values.empty() || !(total > 0)) return kNaN;
  double best = 0;
  for (double x : values) best = std::max(best, std::abs(x));
  return best / total;
}

double normalisedEntropy(const std::vector<double>& values) {
  const double total = magnitudeSum(values);
  if (values.empty() || !(total > 0)) return kNaN;
  double h = 0;
  for (double x : values) {
    const double p = std::abs(x) / total;
    if (p > 0) h -= p * std::log(p);
  }
  return h;
}

double topkEntropy(const std::vector<TokenProb>& topk) {
  if (topk.empty()) return kNaN;
  double h = 0, held = 0;
  for (const auto& t : topk) {
    if (t.prob > 0) h -= t.prob * std::log(t.prob);
    held += t.prob;
  }
  const double rest = 1.0 - held;
  if (rest > 1e-9) h -= rest * std::log(rest);
  return h;
}

double stepMargin(const TraceStep& step) {
  if (step.topk.empty()) return kNaN;
  for (const auto& t : step.topk)
    if (t.index != step.tokenIndex) return step.prob - t.prob;
  return step.prob;  // a single class
}

std::vector<double> beamDisagreement(const Trace& trace) {
  if (trace.hypotheses.empty()) return {};
  std::vector<int> shown;
  for (const auto& st : trace.steps) shown.push_back(st.tokenIndex);
  double top = -std::numeric_limits<double>::infinity();
  for (const auto& h : trace.hypotheses) top = std::max(top, h.logProb);
  std::vector<double> w;
  double total = 0;
  for (const auto& h : trace.hypotheses) {
    w.push_back(std::exp(h.logProb - top));
    total += w.back();
  }
  std::vector<double> out(shown.size(), 0.0);
  for (size_t k = 0; k < trace.hypotheses.size(); ++k) {
    if (static_cast<int>(k) == trace.hypothesis) continue;
    const auto matched = matchedPositions(shown, trace.hypotheses[k].tokens);
    for (size_t s = 0; s < shown.size(); ++s)
      if (!matched[s]) out[s] += w[k] / total;
  }
  return out;
}

DoubtSignals doubtSignals(const Trace& trace, const Explanation* attribution) {
  DoubtSignals out;
  const size_t n = trace.steps.size();
  auto add = [&](const std::string& name, bool higher, DoubtScale scale,
                 std::vector<double> values) {
    out.signals.push_back({name, higher, scale});
    out.values.push_back(std::move(values));
  };
  std::vector<double> prob(n), margin(n), outputEntropy(n);
  for (size_t s = 0; s < n; ++s) {
    const auto& st = trace.steps[s];
    prob[s] = st.prob;
    margin[s] = stepMargin(st);
    outputEntropy[s] = topkEntropy(st.topk);
  }
  add("probability", false, DoubtScale::Unit, std::move(prob));
  add("margin", false, DoubtScale::Unit, std::move(margin));
  add("output_entropy", true, DoubtScale::Positive, std::move(outputEntropy));
  if (trace.hasMap(kAttentionMap)) addMapSignals(out, trace, kAttentionMap, "");
  const int heads = trace.attentionHeads();
  for (int h = 1; h <= heads; ++h)
    addMapSignals(out, trace, kAttentionHeadPrefix + std::to_string(h),
                  "head" + std::to_string(h) + "_");
  if (!trace.hypotheses.empty())
    add("beam_disagreement", true, DoubtScale::Unit, beamDisagreement(trace));
  if (trace.isCtc() && !trace.columnTopk.empty()) {
    std::vector<double> runEntropy(n, kNaN), runMin(n, kNaN);
    for (size_t s = 0; s < n; ++s) {
      const auto& st = trace.steps[s];
      double h = 0, lowest = 1.0;
      int counted = 0;
      for (int c : st.columns) {
        if (c < 0 || static_cast<size_t>(c) >= trace.columnTopk.size()) continue;
        const auto& col = trace.columnTopk[static_cast<size_t>(c)];
        h += topkEntropy(col);
        lowest = std::min(lowest, columnProbability(col, st.tokenIndex));
        ++counted;
      }
      if (counted > 0) {
        runEntropy[s] = h / counted;
        runMin[s] = lowest;
      }
    }
    add("ctc_run_entropy", true, DoubtScale::Positive, std::move(runEntropy));
    add("ctc_run_min_probability", false, DoubtScale::Unit, std::move(runMin));
  }
  if (attribution) {
    std::vector<double> gini(n, kNaN), share(n, kNaN);
    bool anyShare = false;
    for (size_t s = 0; s < n && s < attribution->maps.size(); ++s)
      if (!attribution->maps[s].empty()) gini[s] = giniCoefficient(attribution->maps[s]);
    for (const auto& st : attribution->steps)
      if (st.step >= 0 && static_cast<size_t>(st.step) < n && std::isfinite(st.imageShare)) {
        share[static_cast<size_t>(st.step)] = st.imageShare;
        anyShare = true;
      }
    add("attribution_gini", false, DoubtScale::Unit, std::move(gini));
    if (anyShare) add("image_share", false, DoubtScale::Unit, std::move(share));
  }
  return out;
}

}  // namespace foveal::core
