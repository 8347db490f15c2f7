#pragma once
// The training loop of the paper (section 2.4): batches from the data loader, the recognizer with
// teacher forcing, the prediction stage's loss (cross entropy for soft; the hybrid REINFORCE
// estimator with the moving-average baseline for hard and sharp; + the L2 reference term),
// backward, gradient norm, ADADELTA. It owns a run directory:
//   config.json    the TrainConfig
//   metrics.jsonl  one JSON object per line, "kind": "train" | "eval" | "skip" | "checkpoint" |
//                  "stop" (fields: docs/manual/training.md)
//   latest.fvm     the model (loadCheckpoint / ModelSession::open read it), "extra.training" says
//                  at which iteration it was written and names its state file
//   latest.state   everything --resume needs, self-contained: weights, optimiser state, sampling
//                  generator, baseline, iteration, data position
//   best.fvm       the model with the best evaluation accuracy so far
//   tensorboard/   metrics.jsonl's scalars as TensorBoard event files, one file a session
// Every file is written to a temporary name and renamed. Torch-free interface.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "train/train_config.h"

namespace foveal::core::train {

class ProcessGroup;

struct TrainHooks {
  /// Set (by a signal handler) to stop after the current iteration with a checkpoint.
  const std::atomic<bool>* stop = nullptr;
  /// Human-readable progress lines (the CLI prints them).
  std::function<void(const std::string&)> progress;
  /// Tests: return true to fill that iteration's images (1-based) with NaN.
  std::function<bool(int64_t iteration)> poisonBatch;
};

struct RunOptions {
  std::string runDir;
  /// Continue the run in runDir from latest.state (the config must be runDir's config.json,
  /// possibly with more iterations).
  bool resume = false;
  /// Stop with a checkpoint once this many iterations are done, as an interruption would (-1: no).
  int64_t stopAfter = -1;
  /// Data-parallel group (null: one process). Only rank 0 writes the run directory.
  std::shared_ptr<ProcessGroup> group;
};

struct TrainResult {
  int64_t iteration = 0;  ///< iterations done (skipped steps included)
  bool interrupted = false;
  double loss = 0;           ///< of the last logged iteration
  double trainAccuracy = 0;  ///< of the last logged iteration (teacher forced)
  double imagesPerS = 0;     ///< over the whole session
  double bestAccuracy = -1;  ///< best evaluation accuracy (-1: none)
  int64_t skippedSteps = 0;
  /// The steps ran in bf16: CUDA autocast, or the CPU's convolutions where it computes bf16.
  bool bf16 = false;
  std::string latest;  ///< path of latest.fvm ("" on ranks other than 0)
};

class Trainer {
 public:
  /// Prepares the run: validates the config, opens the data, builds (or, resuming, restores) the
  /// model and optimiser, writes config.json. Throws Error naming the file and the problem.
  Trainer(const TrainConfig& config, RunOptions options, TrainHooks hooks = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  /// Trains until config.iterations (or a stop). Throws Error when too many steps in a row are
  /// non-finite (the last checkpoint is kept).
  TrainResult run();

  int64_t iteration() const;
  /// Writes the current model as a .fvm (any rank).
  void exportModel(const std::string& path) const;
  /// One line: device, threads, data, model.
  std::string describe() const;

  /// Reads runDir/config.json. Throws Error.
  static TrainConfig loadRunConfig(const std::string& runDir);

  struct Impl;

 private:
  std::unique_ptr<Impl> d;
};

}  // namespace foveal::core::train
