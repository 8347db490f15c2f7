#pragma once
// Doubt signals (issue 67): per step of a trace, the decoder's own evidence that the step may be
// wrong: the chosen token's probability and its margin to the runner-up, the output entropy, the
// attention map's entropy, peak, Gini and coverage (every head's too for multi-head models), beam
// disagreement across the N best, a CTC token's column posteriors along its emitting run and,
// where an attribution was computed, its concentration and the share read from the image.
// Torch-free: plain arithmetic on a Trace (and an Explanation). train/doubt_eval.h scores them
// against the truth.
#include <limits>
#include <string>
#include <vector>

#include "trace/attribution.h"
#include "trace/trace.h"

namespace foveal::core {

/// The range a signal's values lie in, which says how the combined score takes them.
enum class DoubtScale {
  Linear,    ///< any value: taken as it is
  Unit,      ///< a probability or share in [0, 1]: taken as its logit
  Positive,  ///< a non-negative amount (an entropy): taken as its logarithm
};

/// A signal's name and which way it reads.
struct DoubtSignalInfo {
  std::string name;              ///< "probability", "attention_entropy", "head3_attention_gini"
  bool higherIsDoubtful = true;  ///< false: a low value is the doubtful one (probability)
  DoubtScale scale = DoubtScale::Linear;
};

/// Every signal of one trace, one value per trace step; NaN where the signal does not apply at
/// a step (an attention map the step has not, an unexplained step).
struct DoubtSignals {
  std::vector<DoubtSignalInfo> signals;
  std::vector<std::vector<double>> values;  ///< [signal][step]
  /// The signal's position, or -1.
  int indexOf(const std::string& name) const;
};

/// The signals the trace supports, in a fixed order: probability, margin, output_entropy; with an
/// attention map attention_entropy, attention_peak, attention_gini, attention_coverage; the same
/// per head ("head1_attention_entropy", ...) when the trace has heads; beam_disagreement with
/// beam hypotheses; ctc_run_entropy and ctc_run_min_probability for CTC. With `attribution`
/// (an explanation of this trace's reading): attribution_gini, and image_share where the
/// explanation measured it (integrated gradients with token attributions).
DoubtSignals doubtSignals(const Trace& trace, const Explanation* attribution = nullptr);

/// The mass below which coverage stops: attention_coverage is the smallest share of the map's
/// cells (regions, grid cells) whose largest values hold this much of the mass.
inline constexpr double kCoverageMass = 0.9;

/// The Gini coefficient of non-negative values (negative ones count by their magnitude): 0 when
/// all are equal, (n - 1) / n when one holds all the mass. NaN for no values or no mass.
double giniCoefficient(const std::vector<double>& values);
/// The smallest share of the values (count / n) whose largest members sum to `mass` of the total
/// (magnitudes). NaN for no values or no mass.
double coverageShare(const std::vector<double>& values, double mass = kCoverageMass);
/// The largest value over the sum (magnitudes): 1 for a one-hot map, 1/n for a flat one.
double peakShare(const std::vector<double>& values);
/// The entropy (natural log) of the map normalised to sum 1 (magnitudes).
double normalisedEntropy(const std::vector<double>& values);
/// The entropy of an output distribution known by its top-k: the mass the top-k leave out is
/// counted as one more outcome (exact when the top-k cover every class).
double topkEntropy(const std::vector<TokenProb>& topk);
/// The step's probability minus that of the most probable other token in its top-k (negative
/// when the step did not take the most probable token: a sampled or beam step). NaN without
/// top-k.
double stepMargin(const TraceStep& step);
/// Per step of the shown hypothesis: the posterior mass (softmax of the N best's log
/// probabilities) of the other hypotheses in whose minimal-edit alignment with the shown tokens
/// the step is not matched. Empty without hypotheses.
std::vector<double> beamDisagreement(const Trace& trace);

}  // namespace foveal::core
