#pragma once
// Everything that defines a training run, as a value: the model, the data, the schedule, the
// optimiser and the device. Serialised as JSON into the run directory (config.json), so a run can
// be resumed and its numbers traced back. Presets hold the paper's experiments. Torch-free.
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace foveal::core::train {

struct TrainConfig {
  std::string preset;  ///< the preset it started from ("" when built by hand)
  ModelConfig model;
  /// Training data: dataset arguments as openDataset takes them, concatenated (finite sets) or a
  /// single endless stream.
  std::vector<std::string> trainData;
  /// Evaluation sets, each reported on its own.
  std::vector<std::string> evalData;
  /// Warm start: a model file whose parameters initialise every tensor of the new model with the
  /// same name and shape (the sharpener's encoder also from the source backbone); "" = none.
  std::string initFrom;
  int64_t iterations = 30000;
  int batchSize = 192;  ///< per process (the paper: 192 per GPU)
  /// Gradient accumulation: each batch is split into this many strided micro-batches (micro-batch
  /// k takes rows k, k+m, ...), exactly as ranks shard it; batch norm sees each micro-batch alone.
  int microBatches = 1;
  uint64_t seed = 1;
  double lambdaR = 1.0;          ///< REINFORCE weight (hard, sharp)
  double referenceWeight = 1.0;  ///< sharp + reference: weight of the L2 patch term
  int64_t logInterval = 10;      ///< a metrics.jsonl "train" record every N iterations
  int64_t evalInterval = 1000;   ///< 0: only at the end
  int64_t evalLimit = 1000;      ///< images per evaluation set during training (0: all)
  int64_t checkpointInterval = 1000;
  /// A copy of the model in the run's history/ folder every N iterations (0: none), for watching
  /// one image's reading form across the run (the GUI's preview slider). At most historyKeep
  /// files are kept: past that, every other one is removed and the spacing doubles, so the
  /// history always spans the whole run at even spacing (docs/manual/training.md "Checkpoint
  /// history").
  int64_t historyInterval = 1000;
  int historyKeep = 24;
  int maxNonFinite = 20;  ///< this many skipped steps in a row stop the run
  // Optimiser (ADADELTA).
  double lr = 1.0;
  double rho = 0.95;
  double eps = 1e-6;
  double weightDecay = 4e-5;
  // Device.
  std::string device = "cpu";  ///< "cpu", "cuda", "cuda:N"
  int threads = 0;             ///< CPU compute threads (0: one per core)
  int loaderThreads = 2;
  /// bf16 autocast: on CUDA for the forward pass; on a CPU with native bf16 (AMX, AVX512-BF16)
  /// for the convolutions. fp32 weights, fp32 after the CNN on the CPU.
  bool bf16 = true;
  /// Sharp models: the glimpse only for the rows whose label has not ended at each step
  /// (DecodeOptions::skipEndedRows; batch norm's statistics then cover those rows alone). Off in
  /// runs whose config.json predates it.
  bool skipEndedRows = false;

  /// Throws Error naming the first bad field.
  void validate() const;
  std::string toJson() const;
  /// Parses and validates; `origin` names the file in messages.
  static TrainConfig fromJson(const std::string& json, const std::string& origin = "config");
};

struct Preset {
  std::string name;
  std::string description;
  TrainConfig config;
};

/// `foveal-cli train --list-presets --json`: [{"name", "description", "stages", "config"}], the
/// config as TrainConfig::toJson writes it. Programs read this instead of the human listing.
std::string presetsJson();

/// The paper's experiments at width 1.0: digits-{soft, hard, sharp-pooling, sharp-chain,
/// sharp-weighting, sharp-pooling-reference}, text-{soft, hard, sharp-chain-1stn,
/// sharp-pooling-2stn, sharp-chain-2stn, sharp-weighting-2stn}.
std::vector<Preset> presets();
/// The named preset with the model scaled to `width`. Throws Error listing the names.
TrainConfig presetConfig(const std::string& name, double width = 1.0);
/// The ten digit test sets of the paper's Table 1 (normal 5..13, then rotated 5..13).
std::vector<std::string> digitProtocolSets(int64_t count = 0);
/// Sequences of the training pool's digits at 5 and 13 digits (normal), `count` images each
/// (0: 10,000, as the test sets): what a model that memorised its glyphs reads best.
std::vector<std::string> digitTrainPoolSets(int64_t count = 0);

}  // namespace foveal::core::train
