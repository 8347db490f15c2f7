#pragma once
// `foveal-cli eval --doubt` (issue 67): every image of a dataset read by a model, every step's
// doubt signals (trace/doubt_signals.h), each step labelled right or wrong against the truth,
// and how well each signal and a combined score find the wrong steps (train/doubt_metrics.h).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "formats/model_format.h"
#include "train/doubt_metrics.h"

namespace foveal::core::train {

struct DoubtOptions {
  int64_t limit = 0;             ///< the first N images (0: all; an endless stream needs one)
  int beamWidth = 1;             ///< > 1: beam search, and the beam_disagreement signal
  std::string scoring = "auto";  ///< as evaluation's (train/evaluation.h wantsTextScoring)
  /// An attribution method (trace/attribution.h) for attribution_gini, and with "ig" on an
  /// attention decoder image_share too; empty: none (the fast signals only).
  std::string attribution;
  int igSteps = 16;
  /// Score attention decoders' end steps (a reading that stops early is wrong there); false:
  /// character steps only (a trailing deletion then marks the last character step), which keeps
  /// the end step's own attention (spread over the image's tail) out of the attention signals.
  bool endSteps = true;
  ImportOptions importOptions;
  /// Images read at once, each by its own copy of the model with one compute thread (0: as many
  /// as the compute threads). The report does not depend on the number.
  int workers = 0;
  /// Called after each image with (done, total); false stops early (the report covers the
  /// images done).
  std::function<bool(int64_t, int64_t)> progress;
};

struct DoubtReport {
  std::string model, dataset;
  bool textScoring = false;
  int beamWidth = 1;
  std::string attribution;
  bool endSteps = true;
  int64_t images = 0;       ///< read
  int64_t wrongImages = 0;  ///< read wrong (some step wrong, or an unattached deletion)
  int64_t unattached = 0;   ///< deleted characters with no step to carry them
  double seconds = 0;
  std::vector<DoubtSignalInfo> signals;
  std::vector<DoubtStep> steps;  ///< every scored step, in image then step order
  DoubtScores scores;

  /// Per signal: steps, wrong, AUROC, balanced accuracy and its threshold, precision of the top
  /// 5 %; then the combined score's weights.
  std::string toTable() const;
  /// {"model", "dataset", ..., "signals": [{"signal", "auroc", "balanced_accuracy",
  /// "precision_top5", ...}, ..., {"signal": "combined", ...}], "combined": {weights ...}}.
  std::string toJson() const;
  /// One row per signal (the table's figures), with the model and dataset; `header` first.
  std::string summaryCsv(bool header = true) const;
};

/// One row per scored step of every report: model, dataset, image (index), entry, split (0 the
/// fitting half, 1 the reported one), step, token, wrong, then every signal any report has (empty
/// where a report lacks it or the step has no value) and the combined score (empty for the
/// fitting half's steps).
std::string doubtStepsCsv(const std::vector<DoubtReport>& reports);

/// Reads the first `limit` images of `dataset` with the model, computes every step's signals and
/// scores them. Throws Error naming the model, the dataset or an unknown attribution method.
DoubtReport evaluateDoubt(const std::string& modelPath, const std::string& dataset,
                          const DoubtOptions& options);

/// ROC curves, one panel per report (its signals without the per-head ones, and the combined
/// score; each named in the legend with its AUROC), as an RGB PNG drawn on core's chart canvas
/// (image/chart_png.h). Throws Error when it cannot be written or the build has no OpenCV.
void writeDoubtRocPlot(const std::vector<DoubtReport>& reports, const std::string& path);

/// A combined score as `eval --doubt --json` printed it for one model and dataset: the signals it
/// weighs and the logistic model fitted on them (the window marks doubtful steps with it).
struct CombinedDoubt {
  std::string model, dataset;        ///< as the report names them
  std::vector<std::string> signals;  ///< the features, in the weights' order
  LogisticModel logistic;
};

/// Every fitted combined score of an `eval --doubt --json` output (its array of reports; reports
/// whose combined score was not fitted are left out). Throws Error naming the file and what is
/// wrong with it: not JSON, not such an output, a weight that is not a finite number.
std::vector<CombinedDoubt> readCombinedDoubt(const std::string& path);

/// P(wrong) of each step of `signals` by the combined score: each feature the signal of that name
/// taken as the fitting took it (combinedFeature); a signal the steps lack, or a step without a
/// value, counts at its fitted mean (LogisticModel::predict).
std::vector<double> combinedDoubt(const CombinedDoubt& combined, const DoubtSignals& signals);

}  // namespace foveal::core::train
