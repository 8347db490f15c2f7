#pragma once
// Which steps are wrong, and how well each doubt signal finds them (issue 67): the labelling of
// a reading's steps against the truth, AUROC, balanced accuracy at the best threshold, the
// precision of the most doubtful steps, and a combined score (logistic regression over the
// signals) fitted on one half of the images and reported on the other. Torch-free arithmetic;
// train/doubt_eval.h runs it over a dataset.
#include <cstdint>
#include <string>
#include <vector>

#include "trace/doubt_signals.h"

namespace foveal::core::train {

/// A step's fate against the truth.
enum class StepLabel {
  Unscored,  ///< text scoring drops its token (punctuation, a space): neither right nor wrong
  Right,
  Wrong,
};

struct StepLabelling {
  std::vector<StepLabel> labels;  ///< one per step
  int substitutions = 0, insertions = 0, deletions = 0;
  /// Deleted truth characters with no step to carry them (an empty reading with no end step).
  int unattached = 0;
};

/// Labels each step of a reading against `truth` by a minimal-edit alignment of the steps'
/// tokens (one unit each) with the truth's code points: a substituted or inserted step is
/// wrong, a matched one right. A deleted truth character makes wrong the scored step after it
/// (the step that read on instead, which is the end step when the reading stops early) or,
/// with none after it, the scored step before it. `endStep`: the last step is the end token
/// (attention decoders), aligned with the end of the truth and labelled like the others.
/// `textScoring`: tokens and truth lower-cased with everything but letters and digits dropped
/// (train/evaluation.h normaliseForScoring); a step whose token normalises to nothing is
/// Unscored.
StepLabelling labelSteps(const std::vector<std::string>& tokens, bool endStep,
                         const std::string& truth, bool textScoring);

/// The area under the ROC curve of `doubt` (larger: more doubtful) for finding the steps with
/// `wrong` set: the Mann-Whitney probability that a wrong step is more doubtful than a right
/// one, ties counted half. NaN when either class is empty.
double auroc(const std::vector<double>& doubt, const std::vector<bool>& wrong);

struct ThresholdChoice {
  double balancedAccuracy = 0;  ///< (TPR + TNR) / 2
  double threshold = 0;         ///< steps with doubt >= threshold are flagged
};
/// The best balanced accuracy of flagging the steps whose doubt reaches a threshold, over every
/// threshold (each distinct value, and above them all: flag none, 0.5). NaN with a class empty.
ThresholdChoice bestBalancedAccuracy(const std::vector<double>& doubt,
                                     const std::vector<bool>& wrong);

/// The share of wrong steps among the ceil(share * n) most doubtful; steps tied with the last
/// one taken count by the fraction of their group taken (the expectation over tie orders).
/// NaN for no steps.
double precisionAtTop(const std::vector<double>& doubt, const std::vector<bool>& wrong,
                      double share = 0.05);

struct RocPoint {
  double falsePositiveRate = 0, truePositiveRate = 0;
};
/// The ROC curve from (0, 0) to (1, 1), one point per distinct doubt value.
std::vector<RocPoint> rocCurve(const std::vector<double>& doubt, const std::vector<bool>& wrong);

/// Which half an image belongs to, from its id alone (the dataset's entry name): 0, the half the
/// combined score is fitted on, or 1, the half it is reported on. A hash, so an image keeps its
/// half whatever else is evaluated.
int doubtSplit(const std::string& imageId);

/// Logistic regression on standardised features: P(wrong) = sigmoid(bias + w . z), z = (x -
/// mean) / scale, a missing (NaN) feature counted at its mean.
struct LogisticModel {
  std::vector<double> mean, scale, weights;
  double bias = 0;
  int iterations = 0;  ///< Newton (IRLS) iterations taken
  double predict(const std::vector<double>& x) const;
};
/// Fits by Newton's method (IRLS) with an L2 penalty `ridge` on the weights (not the bias).
/// Throws Error without rows, with rows of different lengths or with labels of one class.
LogisticModel fitLogistic(const std::vector<std::vector<double>>& x, const std::vector<bool>& y,
                          double ridge = 1.0);

/// How the combined score takes a signal's value (DoubtSignalInfo::scale): a [0, 1] signal as
/// its logit (clamped to [1e-6, 1 - 1e-6]: probabilities of 1.0 are common), a non-negative one
/// as log(x + 1e-6), any other as it is; NaN stays NaN. The logistic model is linear in these:
/// on the soft model's 7-digit steps the logits and logarithms lifted the combined AUROC of the
/// reported half from 0.924 (the raw values) to 0.95.
double combinedFeature(const DoubtSignalInfo& signal, double value);

/// One labelled step and its signals' values (DoubtSignals' order of the report's signals).
struct DoubtStep {
  size_t image = 0;   ///< the dataset index
  std::string entry;  ///< the dataset's name for the image: its id for doubtSplit
  int step = 0;       ///< in the trace
  std::string token;
  bool wrong = false;
  std::vector<double> values;  ///< per signal; NaN where it does not apply
};

/// How one signal (or the combined score) finds the wrong steps of the reported half.
struct SignalScore {
  std::string signal;
  bool higherIsDoubtful = true;
  int64_t steps = 0, wrong = 0;  ///< reported steps where the signal has a value, wrong ones
  double auroc = 0, balancedAccuracy = 0, threshold = 0, precisionTop5 = 0;
  std::vector<RocPoint> roc;
};

inline constexpr const char* kCombinedSignal = "combined";

struct DoubtScores {
  /// Every signal's score, then the combined one's (named kCombinedSignal; NaN figures when it
  /// could not be fitted, `combinedNote` says why).
  std::vector<SignalScore> scores;
  std::vector<std::string> combinedSignals;  ///< the features of the combined score
  LogisticModel combined;
  std::string combinedNote;
  int64_t fitImages = 0, fitSteps = 0, fitWrong = 0;
  int64_t reportImages = 0, reportSteps = 0, reportWrong = 0;
  /// Positions in the scored steps of those reported, in order, and their combined score.
  std::vector<size_t> reported;
  std::vector<double> combinedScore;
};

/// Scores every signal on the steps of the reported half (doubtSplit of each step's entry), and
/// fits the combined score on the other half's steps (the signals with a value at some fitting
/// step and a spread there, each through combinedFeature) and reports it on the reported half.
DoubtScores scoreDoubt(const std::vector<DoubtSignalInfo>& signals,
                       const std::vector<DoubtStep>& steps);

}  // namespace foveal::core::train
