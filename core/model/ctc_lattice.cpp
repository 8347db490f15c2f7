#include "ctc_lattice.h"

#include <limits>

namespace foveal::core {

std::vector<int> ctcExtendedLabel(const std::vector<int>& labels, int blank) {
  std::vector<int> ext{blank};
  for (int c : labels) {
    ext.push_back(c);
    ext.push_back(blank);
  }
  return ext;
}

CtcLatticePath ctcBestLatticePath(const std::vector<double>& logProbs, int frames, int classes,
                                  const std::vector<int>& labels, int blank) {
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  CtcLatticePath out;
  if (frames <= 0) return out;
  const std::vector<int> ext = ctcExtendedLabel(labels, blank);
  const int s = static_cast<int>(ext.size());
  std::vector<double> score(static_cast<size_t>(frames) * s, kNegInf);
  std::vector<int> from(static_cast<size_t>(frames) * s, -1);
  auto at = [&](int t, int j) -> double& { return score[static_cast<size_t>(t) * s + j]; };
  auto lp = [&](int t, int c) { return logProbs[static_cast<size_t>(t) * classes + c]; };
  at(0, 0) = lp(0, ext[0]);
  if (s > 1) at(0, 1) = lp(0, ext[1]);
  for (int t = 1; t < frames; ++t)
    for (int j = 0; j < s; ++j) {
      // From the same state, the one before, or (a class unlike the one two back) over a blank.
      int best = j;
      double v = at(t - 1, j);
      if (j >= 1 && at(t - 1, j - 1) > v) v = at(t - 1, best = j - 1);
      if (j >= 2 && ext[j] != blank && ext[j] != ext[j - 2] && at(t - 1, j - 2) > v)
        v = at(t - 1, best = j - 2);
      if (v == kNegInf) continue;
      at(t, j) = v + lp(t, ext[j]);
      from[static_cast<size_t>(t) * s + j] = best;
    }
  int j = s - 1;
  if (s > 1 && at(frames - 1, s - 2) > at(frames - 1, s - 1)) j = s - 2;
  if (at(frames - 1, j) == kNegInf) return out;
  out.logProb = at(frames - 1, j);
  out.states.resize(static_cast<size_t>(frames));
  for (int t = frames - 1; t >= 0; --t) {
    out.states[static_cast<size_t>(t)] = j;
    if (t > 0) j = from[static_cast<size_t>(t) * s + j];
  }
  return out;
}

}  // namespace foveal::core
