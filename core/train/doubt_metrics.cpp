#include "train/doubt_metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "base/error.h"
#include "train/evaluation.h"

namespace foveal::core::train {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<std::string> codePoints(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 1;
    len = std::min(len, s.size() - i);
    out.push_back(s.substr(i, len));
    i += len;
  }
  return out;
}

// Indices sorted by doubt, most doubtful first, and the groups of equal doubt as [begin, end).
std::vector<size_t> byDoubtDescending(const std::vector<double>& doubt) {
  std::vector<size_t> order(doubt.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return doubt[a] > doubt[b]; });
  return order;
}

template <typename F>
void forEachGroup(const std::vector<double>& doubt, const std::vector<size_t>& order, F f) {
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && doubt[order[j]] == doubt[order[i]]) ++j;
    f(i, j);
    i = j;
  }
}

void checkSizes(const std::vector<double>& doubt, const std::vector<bool>& wrong) {
  if (doubt.size() != wrong.size())
    throw Error("doubt scores and labels differ in number (" + std::to_string(doubt.size()) +
                " and " + std::to_string(wrong.size()) + ")");
}

uint64_t mix(uint64_t z) {  // splitmix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double sigmoid(double z) {
  return z >= 0 ? 1.0 / (1.0 + std::exp(-z)) : std::exp(z) / (1.0 + std::exp(z));
}

// Solves the symmetric positive definite system a x = b (Cholesky); false when a is not.
bool solveSpd(std::vector<std::vector<double>> a, std::vector<double>& b) {
  const size_t n = b.size();
  for (size_t j = 0; j < n; ++j) {
    double d = a[j][j];
    for (size_t k = 0; k < j; ++k) d -= a[j][k] * a[j][k];
    if (!(d > 0)) return false;
    a[j][j] = std::sqrt(d);
    for (size_t i = j + 1; i < n; ++i) {
      double s = a[i][j];
      for (size_t k = 0; k < j; ++k) s -= a[i][k] * a[j][k];
      a[i][j] = s / a[j][j];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < i; ++k) b[i] -= a[i][k] * b[k];
    b[i] /= a[i][i];
  }
  for (size_t i = n; i-- > 0;) {
    for (size_t k = i + 1; k < n; ++k) b[i] -= a[k][i] * b[k];
    b[i] /= a[i][i];
  }
  return true;
}

SignalScore scoreSignal(const std::string& name, bool higher, const std::vector<double>& values,
                        const std::vector<bool>& wrong) {
  SignalScore s;
  s.signal = name;
  s.higherIsDoubtful = higher;
  std::vector<double> doubt;
  std::vector<bool> labels;
  for (size_t i = 0; i < values.size(); ++i)
    if (std::isfinite(values[i])) {
      doubt.push_back(higher ? values[i] : -values[i]);
      labels.push_back(wrong[i]);
    }
  s.steps = static_cast<int64_t>(doubt.size());
  s.wrong = std::count(labels.begin(), labels.end(), true);
  s.auroc = auroc(doubt, labels);
  const auto t = bestBalancedAccuracy(doubt, labels);
  s.balancedAccuracy = t.balancedAccuracy;
  s.threshold = higher ? t.threshold : -t.threshold;  // in the signal's own units
  s.precisionTop5 = precisionAtTop(doubt, labels, 0.05);
  if (s.wrong > 0 && s.wrong < s.steps) s.roc = rocCurve(doubt, labels);
  return s;
}

}  // namespace

StepLabelling labelSteps(const std::vector<std::string>& tokens, bool endStep,
                         const std::string& truth, bool textScoring) {
  StepLabelling out;
  out.labels.assign(tokens.size(), StepLabel::Unscored);
  const size_t characters = endStep && !tokens.empty() ? tokens.size() - 1 : tokens.size();
  std::vector<size_t> scored;  // the character steps that take part
  std::vector<std::string> read;
  for (size_t s = 0; s < characters; ++s) {
    const std::string unit = textScoring ? normaliseForScoring(tokens[s]) : tokens[s];
    if (unit.empty()) continue;
    scored.push_back(s);
    read.push_back(unit);
  }
  const auto t = codePoints(textScoring ? normaliseForScoring(truth) : truth);
  const size_t n = read.size(), m = t.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j)
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (read[i - 1] == t[j - 1] ? 0 : 1)});
  // The backtrace in reverse (as alignCharacters breaks ties): per op the read unit (-1 for a
  // deletion) and whether it matched.
  struct Op {
    int unit;
    bool match;
  };
  std::vector<Op> ops;
  size_t i = n, j = m;
  while (i > 0 || j > 0) {
    if (i > 0 && j > 0 && d[i][j] == d[i - 1][j - 1] + (read[i - 1] == t[j - 1] ? 0 : 1)) {
      ops.push_back({static_cast<int>(i - 1), read[i - 1] == t[j - 1]});
      if (read[i - 1] != t[j - 1]) ++out.substitutions;
      --i;
      --j;
    } else if (i > 0 && d[i][j] == d[i - 1][j] + 1) {
      ops.push_back({static_cast<int>(i - 1), false});
      ++out.insertions;
      --i;
    } else {
      ops.push_back({-1, false});
      ++out.deletions;
      --j;
    }
  }
  std::reverse(ops.begin(), ops.end());
  int pending = 0;  // deletions waiting for the step after them
  for (const Op& op : ops) {
    if (op.unit < 0) {
      ++pending;
      continue;
    }
    const size_t s = scored[static_cast<size_t>(op.unit)];
    out.labels[s] = op.match && pending == 0 ? StepLabel::Right : StepLabel::Wrong;
    pending = 0;
  }
  if (endStep && !tokens.empty())
    out.labels.back() = pending > 0 ? StepLabel::Wrong : StepLabel::Right;
  else if (pending > 0 && !scored.empty())
    out.labels[scored.back()] = StepLabel::Wrong;
  else
    out.unattached += pending;
  return out;
}

double auroc(const std::vector<double>& doubt, const std::vector<bool>& wrong) {
  checkSizes(doubt, wrong);
  const int64_t positives = std::count(wrong.begin(), wrong.end(), true);
  const int64_t negatives = static_cast<int64_t>(wrong.size()) - positives;
  if (positives == 0 || negatives == 0) return kNaN;
  // Mann-Whitney U from mid-ranks (ascending, from 1), ties sharing their mean rank.
  std::vector<size_t> order(doubt.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return doubt[a] < doubt[b]; });
  double rankSum = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && doubt[order[j]] == doubt[order[i]]) ++j;
    const double mid = 0.5 * static_cast<double>(i + 1 + j);  // mean of ranks i+1 .. j
    for (size_t k = i; k < j; ++k)
      if (wrong[order[k]]) rankSum += mid;
    i = j;
  }
  const double p = static_cast<double>(positives), q = static_cast<double>(negatives);
  return (rankSum - p * (p + 1) / 2) / (p * q);
}

ThresholdChoice bestBalancedAccuracy(const std::vector<double>& doubt,
                                     const std::vector<bool>& wrong) {
  checkSizes(doubt, wrong);
  const int64_t positives = std::count(wrong.begin(), wrong.end(), true);
  const int64_t negatives = static_cast<int64_t>(wrong.size()) - positives;
  if (positives == 0 || negatives == 0) return {kNaN, kNaN};
  const auto order = byDoubtDescending(doubt);
  ThresholdChoice best{0.5, std::numeric_limits<double>::infinity()};  // flag none
  int64_t tp = 0, fp = 0;
  forEachGroup(doubt, order, [&](size_t b, size_t e) {
    for (size_t k = b; k < e; ++k) (wrong[order[k]] ? tp : fp) += 1;
    const double ba = 0.5 * (static_cast<double>(tp) / static_cast<double>(positives) +
                             static_cast<double>(negatives - fp) / static_cast<double>(negatives));
    if (ba > best.balancedAccuracy) best = {ba, doubt[order[b]]};
  });
  return best;
}

double precisionAtTop(const std::vector<double>& doubt, const std::vector<bool>& wrong,
                      double share) {
  checkSizes(doubt, wrong);
  if (doubt.empty()) return kNaN;
  const double want = std::max(1.0, std::ceil(share * static_cast<double>(doubt.size()) - 1e-9));
  const auto order = byDoubtDescending(doubt);
  double taken = 0, hits = 0;
  forEachGroup(doubt, order, [&](size_t b, size_t e) {
    if (taken >= want) return;
    const double size = static_cast<double>(e - b);
    double groupWrong = 0;
    for (size_t k = b; k < e; ++k) groupWrong += wrong[order[k]] ? 1 : 0;
    const double take = std::min(size, want - taken);
    hits += groupWrong * take / size;
    taken += take;
  });
  return hits / taken;
}

std::vector<RocPoint> rocCurve(const std::vector<double>& doubt, const std::vector<bool>& wrong) {
  checkSizes(doubt, wrong);
  const int64_t positives = std::count(wrong.begin(), wrong.end(), true);
  const int64_t negatives = static_cast<int64_t>(wrong.size()) - positives;
  std::vector<RocPoint> roc{{0, 0}};
  if (positives == 0 || negatives == 0) return roc;
  const auto order = byDoubtDescending(doubt);
  int64_t tp = 0, fp = 0;
  forEachGroup(doubt, order, [&](size_t b, size_t e) {
    for (size_t k = b; k < e; ++k) (wrong[order[k]] ? tp : fp) += 1;
    roc.push_back({static_cast<double>(fp) / static_cast<double>(negatives),
                   static_cast<double>(tp) / static_cast<double>(positives)});
  });
  return roc;
}

int doubtSplit(const std::string& imageId) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a
  for (unsigned char c : imageId) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return static_cast<int>(mix(h) & 1u);
}

double LogisticModel::predict(const std::vector<double>& x) const {
  double z = bias;
  for (size_t k = 0; k < weights.size() && k < x.size(); ++k)
    if (std::isfinite(x[k])) z += weights[k] * (x[k] - mean[k]) / scale[k];
  return sigmoid(z);
}

namespace {

using Matrix = std::vector<std::vector<double>>;

// Each column's mean and standard deviation over its finite values (a column without any, or
// without a spread, keeps mean 0 or scale 1).
void standardise(const Matrix& x, LogisticModel& m) {
  const size_t d = m.mean.size();
  for (size_t k = 0; k < d; ++k) {
    double sum = 0, sq = 0;
    int64_t count = 0;
    for (const auto& row : x)
      if (std::isfinite(row[k])) sum += row[k], ++count;
    if (count == 0) continue;
    m.mean[k] = sum / static_cast<double>(count);
    for (const auto& row : x)
      if (std::isfinite(row[k])) sq += (row[k] - m.mean[k]) * (row[k] - m.mean[k]);
    const double sd = std::sqrt(sq / static_cast<double>(count));
    m.scale[k] = sd > 0 ? sd : 1.0;
  }
}

// Standardised design with a leading 1 for the bias; a missing value sits at the mean (0).
Matrix standardisedDesign(const Matrix& x, const LogisticModel& m) {
  const size_t d = m.mean.size(), p = d + 1;
  Matrix z(x.size(), std::vector<double>(p, 0.0));
  for (size_t i = 0; i < x.size(); ++i) {
    z[i][0] = 1.0;
    for (size_t k = 0; k < d; ++k)
      if (std::isfinite(x[i][k])) z[i][k + 1] = (x[i][k] - m.mean[k]) / m.scale[k];
  }
  return z;
}

// The penalised log-likelihood of coefficients `b` (the bias, b[0], is not penalised).
double penalisedLikelihood(const Matrix& z, const std::vector<bool>& y,
                           const std::vector<double>& b, double ridge) {
  double ll = 0;
  for (size_t i = 0; i < z.size(); ++i) {
    const double e = std::inner_product(z[i].begin(), z[i].end(), b.begin(), 0.0);
    // log sigmoid(e) for y = 1, log sigmoid(-e) for y = 0, computed stably
    const double s = y[i] ? e : -e;
    ll += s >= 0 ? -std::log1p(std::exp(-s)) : s - std::log1p(std::exp(s));
  }
  for (size_t k = 1; k < b.size(); ++k) ll -= 0.5 * ridge * b[k] * b[k];
  return ll;
}

// The penalised likelihood's gradient and (negated) Hessian at `beta`.
void newtonSystem(const Matrix& z, const std::vector<bool>& y, const std::vector<double>& beta,
                  double ridge, std::vector<double>& grad, Matrix& hess) {
  const size_t p = beta.size();
  grad.assign(p, 0.0);
  hess.assign(p, std::vector<double>(p, 0.0));
  for (size_t i = 0; i < z.size(); ++i) {
    const double e = std::inner_product(z[i].begin(), z[i].end(), beta.begin(), 0.0);
    const double mu = sigmoid(e), w = std::max(mu * (1 - mu), 1e-12);
    const double r = (y[i] ? 1.0 : 0.0) - mu;
    for (size_t a = 0; a < p; ++a) {
      grad[a] += z[i][a] * r;
      for (size_t b = 0; b <= a; ++b) hess[a][b] += w * z[i][a] * z[i][b];
    }
  }
  for (size_t a = 0; a < p; ++a) {
    if (a > 0) {
      grad[a] -= ridge * beta[a];
      hess[a][a] += ridge;
    }
    hess[a][a] += 1e-9;  // keeps a constant feature's column solvable
    for (size_t b = 0; b < a; ++b) hess[b][a] = hess[a][b];
  }
}

}  // namespace

LogisticModel fitLogistic(const std::vector<std::vector<double>>& x, const std::vector<bool>& y,
                          double ridge) {
  if (x.empty() || x.size() != y.size())
    throw Error("logistic regression: " + std::to_string(x.size()) + " rows and " +
                std::to_string(y.size()) + " labels");
  const size_t d = x.front().size();
  for (const auto& row : x)
    if (row.size() != d) throw Error("logistic regression: rows of different lengths");
  const int64_t positives = std::count(y.begin(), y.end(), true);
  if (positives == 0 || positives == static_cast<int64_t>(y.size()))
    throw Error("logistic regression: every label is the same");
  LogisticModel m;
  m.mean.assign(d, 0.0);
  m.scale.assign(d, 1.0);
  m.weights.assign(d, 0.0);
  standardise(x, m);
  const size_t p = d + 1;
  const Matrix z = standardisedDesign(x, m);
  std::vector<double> beta(p, 0.0);
  beta[0] = std::log(static_cast<double>(positives) /
                     static_cast<double>(static_cast<int64_t>(y.size()) - positives));
  double current = penalisedLikelihood(z, y, beta, ridge);
  for (m.iterations = 0; m.iterations < 100;) {
    std::vector<double> grad;
    Matrix hess;
    newtonSystem(z, y, beta, ridge, grad, hess);
    std::vector<double> step = grad;
    if (!solveSpd(hess, step)) break;
    ++m.iterations;
    // Newton's step, halved while it lowers the objective (it rarely does: the penalised
    // likelihood is concave).
    double t = 1.0, next = current;
    std::vector<double> trial(p);
    for (int halvings = 0; halvings < 30; ++halvings, t *= 0.5) {
      for (size_t a = 0; a < p; ++a) trial[a] = beta[a] + t * step[a];
      next = penalisedLikelihood(z, y, trial, ridge);
      if (next >= current - 1e-12) break;
    }
    double change = 0;
    for (size_t a = 0; a < p; ++a) change = std::max(change, std::abs(trial[a] - beta[a]));
    beta = trial;
    current = next;
    if (change < 1e-9) break;
  }
  m.bias = beta[0];
  for (size_t k = 0; k < d; ++k) m.weights[k] = beta[k + 1];
  return m;
}

double combinedFeature(const DoubtSignalInfo& signal, double value) {
  if (!std::isfinite(value)) return kNaN;
  constexpr double kEps = 1e-6;
  switch (signal.scale) {
    case DoubtScale::Unit: {
      const double p = std::clamp(value, kEps, 1 - kEps);
      return std::log(p / (1 - p));
    }
    case DoubtScale::Positive:
      return std::log(std::max(value, 0.0) + kEps);
    case DoubtScale::Linear:
      break;
  }
  return value;
}

DoubtScores scoreDoubt(const std::vector<DoubtSignalInfo>& signals,
                       const std::vector<DoubtStep>& steps) {
  DoubtScores out;
  std::vector<size_t> fit;
  std::set<size_t> fitImages, reportImages;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].values.size() != signals.size())
      throw Error("doubt scores: step " + std::to_string(i) + " of " + steps[i].entry + " has " +
                  std::to_string(steps[i].values.size()) + " values for " +
                  std::to_string(signals.size()) + " signals");
    if (doubtSplit(steps[i].entry) == 0) {
      fit.push_back(i);
      fitImages.insert(steps[i].image);
      out.fitWrong += steps[i].wrong;
    } else {
      out.reported.push_back(i);
      reportImages.insert(steps[i].image);
      out.reportWrong += steps[i].wrong;
    }
  }
  out.fitSteps = static_cast<int64_t>(fit.size());
  out.reportSteps = static_cast<int64_t>(out.reported.size());
  out.fitImages = static_cast<int64_t>(fitImages.size());
  out.reportImages = static_cast<int64_t>(reportImages.size());
  std::vector<bool> wrong;
  for (size_t i : out.reported) wrong.push_back(steps[i].wrong);
  for (size_t k = 0; k < signals.size(); ++k) {
    std::vector<double> v;
    for (size_t i : out.reported) v.push_back(steps[i].values[k]);
    out.scores.push_back(scoreSignal(signals[k].name, signals[k].higherIsDoubtful, v, wrong));
  }
  // The combined score's features: signals with a value at some fitting step and a spread there.
  std::vector<size_t> features;
  for (size_t k = 0; k < signals.size(); ++k) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (size_t i : fit) {
      const double v = combinedFeature(signals[k], steps[i].values[k]);
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    }
    if (hi > lo) {
      features.push_back(k);
      out.combinedSignals.push_back(signals[k].name);
    }
  }
  out.combinedScore.assign(out.reported.size(), kNaN);
  if (fit.empty())
    out.combinedNote = "no step in the fitting half";
  else if (out.fitWrong == 0 || out.fitWrong == out.fitSteps)
    out.combinedNote = out.fitWrong == 0 ? "no wrong step in the fitting half"
                                         : "no right step in the fitting half";
  else if (features.empty())
    out.combinedNote = "no signal varies over the fitting half";
  if (out.combinedNote.empty()) {
    auto row = [&](size_t i) {
      std::vector<double> r;
      for (size_t k : features) r.push_back(combinedFeature(signals[k], steps[i].values[k]));
      return r;
    };
    std::vector<std::vector<double>> x;
    std::vector<bool> y;
    for (size_t i : fit) {
      x.push_back(row(i));
      y.push_back(steps[i].wrong);
    }
    out.combined = fitLogistic(x, y);
    for (size_t r = 0; r < out.reported.size(); ++r)
      out.combinedScore[r] = out.combined.predict(row(out.reported[r]));
  }
  out.scores.push_back(scoreSignal(kCombinedSignal, true, out.combinedScore, wrong));
  return out;
}

}  // namespace foveal::core::train
