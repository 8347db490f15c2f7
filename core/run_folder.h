#pragma once
// The run-folder contract (docs/ARCHITECTURE.md "Run folders"): the names of the files a
// `foveal-cli train` process writes and every monitor (the GUI's Training page, its live preview
// and evaluation panel, run_log.h) reads. Declared once; Torch- and Qt-free.
#include <vector>

namespace foveal::core::run_folder {

inline constexpr const char* kConfig = "config.json";      ///< the train config, written first
inline constexpr const char* kMetrics = "metrics.jsonl";   ///< one JSON record per line, appended
inline constexpr const char* kLatestModel = "latest.fvm";  ///< the last checkpoint
inline constexpr const char* kBestModel = "best.fvm";      ///< the best evaluation's checkpoint
inline constexpr const char* kState = "latest.state";      ///< optimiser and loader, for --resume

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
