#pragma once
// How the Page view shows a line's confidence: the mean of its characters' probabilities, and a
// colour scale on which every line under the threshold is red to orange and every line at or
// over it amber to green, so the doubtful lines stand out at a glance. Header-only, Torch-free.
#include <QColor>
#include <algorithm>
#include <cmath>
#include <limits>

#include "model/charset.h"
#include "trace/trace.h"

namespace foveal::ui {

/// The mean probability of the characters read (the end token's step is not a character), as
/// kraken's serialiser and the PAGE/ALTO export give a word's confidence; NaN when nothing was
/// read.
inline double meanConfidence(const core::Trace& trace) {
  double sum = 0;
  int n = 0;
  for (const auto& s : trace.steps)
    if (s.token != core::Charset::kEndName && std::isfinite(s.prob)) {
      sum += s.prob;
      ++n;
    }
  return n ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

/// The colour of confidence `c` with lines under `threshold` flagged: red (0) to orange just
/// under the threshold, amber at it to green at 1; grey for none (NaN).
inline QColor confidenceColour(double c, double threshold) {
  if (!std::isfinite(c)) return QColor(130, 130, 130);
  c = std::clamp(c, 0.0, 1.0);
  const double t = std::clamp(threshold, 0.01, 0.99);
  if (c < t) return QColor::fromHsv(static_cast<int>(std::lround(28 * c / t)), 235, 225);
  return QColor::fromHsv(static_cast<int>(std::lround(50 + 70 * (c - t) / (1 - t))), 210, 185);
}

}  // namespace foveal::ui
