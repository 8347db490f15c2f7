#pragma once
// The run-folder contract (docs/ARCHITECTURE.md "Run folders"): the names of the files a
// `foveal-cli train` process writes and every monitor (the GUI's Training page, its live preview
// and evaluation panel, run_log.h) reads. Declared once; Torch- and Qt-free.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace foveal::core::run_folder {

inline constexpr const char* kConfig = "config.json";      ///< the train config, written first
inline constexpr const char* kMetrics = "metrics.jsonl";   ///< one JSON record per line, appended
inline constexpr const char* kLatestModel = "latest.fvm";  ///< the last checkpoint
inline constexpr const char* kBestModel = "best.fvm";      ///< the best evaluation's checkpoint
inline constexpr const char* kState = "latest.state";      ///< optimiser and loader, for --resume
/// The sharp + reference model's glyph per class, side by side in one 8-bit PGM: rendered (with
/// OpenCV) and written when the run starts, read on a resume and where the build cannot render.
inline constexpr const char* kReferenceGlyphs = "reference-glyphs.pgm";
/// What `foveal-cli train` printed (rank 0), each line stamped with the local time, appended
/// across resumes: the run's human-readable history, e.g. for a run on another machine.
inline constexpr const char* kTrainLog = "train.log";
/// A run on an SSH host or a Slurm cluster: where it runs, its job, and what the local mirror
/// holds (core/run/remote_run.h). Only in the local folder; the trainer never reads it.
inline constexpr const char* kRemote = "remote.json";
/// The batch script of a Slurm run, in the run folder where sbatch reads it.
inline constexpr const char* kBatchScript = "job.sbatch";
/// Periodic copies of the model (TrainConfig::historyInterval, at most historyKeep of them):
/// history/iter-NNNNNNNNN.fvm, the iteration zero-padded to nine digits, oldest first by name.
inline constexpr const char* kHistoryDir = "history";
/// The run's scalars as TensorBoard event files (the same as metrics.jsonl's, tags
/// "<kind>/<field>" and "eval/<set>/<field>"; core/run/tensorboard_events.h), one file a session.
inline constexpr const char* kTensorBoardDir = "tensorboard";

/// The file name of the history checkpoint written at `iteration`.
inline std::string historyFileName(int64_t iteration) {
  char name[40];
  std::snprintf(name, sizeof name, "iter-%09lld.fvm", static_cast<long long>(iteration));
  return name;
}

/// The iteration of a history file name, or -1 when `name` is not one.
inline int64_t historyIteration(const std::string& name) {
  const std::string prefix = "iter-", suffix = ".fvm";
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits =
      name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18) return -1;
  int64_t v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

/// Every metrics.jsonl record carries the wall-clock time it was written: Unix seconds (UTC,
/// millisecond precision) under this key. Records of older runs lack it; elapsed_s (seconds the
/// run has trained, resumes included) is in most records either way.
inline constexpr const char* kTimeKey = "time";

/// A metric of metrics.jsonl that monitors plot: its key in records of `kind` ("train" or
/// "eval"), a label, and whether it is never negative (log scale possible).
struct Metric {
  const char* key;
  const char* kind;
  const char* label;
  bool nonNegative;
};

/// Every metric the trainer writes and a monitor plots (the trainer's test checks both ways).
inline const std::vector<Metric>& metricCatalogue() {
  static const std::vector<Metric> metrics = {
      {"loss", "train", "loss", true},
      {"nll", "train", "NLL term", true},
      {"reinforce", "train", "REINFORCE term", false},
      {"reference", "train", "reference L2", true},
      {"reward", "train", "reward log p(y|a)", false},
      {"baseline", "train", "baseline b", false},
      {"grad_norm", "train", "gradient norm", true},
      {"train_accuracy", "train", "train accuracy", false},
      {"accuracy", "eval", "eval accuracy", false},
      {"ned", "eval", "eval norm. edit dist.", true},
      {"entropy", "eval", "attention entropy", true},
      {"lr", "train", "learning rate", true},
      {"images_per_s", "train", "images / s", true},
  };
  return metrics;
}

}  // namespace foveal::core::run_folder
