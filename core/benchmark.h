#pragma once
// Speed measurements for `foveal-cli bench`: inference latency and throughput of every mechanism
// on this machine. Torch-free interface; results are plain numbers.
#include <string>
#include <vector>

#include "model_config.h"

namespace foveal::core {

struct BenchResult {
  std::string name;  ///< e.g. "sharp-chain-2stn"
  double width = 1.0;
  double latencyMs = 0;        ///< median batch-1 inference, preprocessing excluded
  double batchImagesPerS = 0;  ///< inference throughput at `batch`
  int batch = 0;
  double trainImagesPerS = 0;  ///< forward + backward of the loss (no optimiser), at `batch`
  /// The same with the attention projection of X recomputed at every decoder step, as a
  /// straightforward implementation does: the baseline the training speed is compared with.
  double trainNaiveImagesPerS = 0;
  int threads = 0;
  bool bf16 = false;  ///< the training figure used bf16 convolutions (CPU with native bf16)
};

struct BenchOptions {
  double width = 1.0;
  int batch = 32;
  int repeats = 20;  ///< batch-1 runs (median reported)
  int batchRepeats = 3;
  bool train = true;
  /// Training figure with bf16 convolutions where the CPU computes bf16 natively (as the trainer
  /// does by default); the straightforward baseline is always fp32.
  bool bf16 = true;
  std::vector<std::string> only;  ///< mechanism names to run (empty: all)
};

/// The mechanisms benchmarked: soft, hard, sharp {pooling, chain, weighting} x {1, 2 STNs}.
std::vector<std::pair<std::string, ModelConfig>> benchConfigs(double width);

std::vector<BenchResult> runBenchmarks(const BenchOptions& options);

}  // namespace foveal::core
