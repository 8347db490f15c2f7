#pragma once
// Training throughput for `foveal-cli bench-train`: the real training step (data loader, forward
// with teacher forcing, loss, backward, gradient norm, ADADELTA) of a preset, measured over a few
// iterations after a warm-up one. Torch-free.
#include <string>
#include <vector>

#include "base/kernel_routes.h"
#include "train/operator_profile.h"

namespace foveal::core::train {

struct TrainBenchOptions {
  std::string preset = "digits-soft";
  double width = 1.0;
  int batch = 32;
  int iterations = 5;  ///< measured iterations (one more runs first as warm-up)
  std::string device = "cpu";
  int threads = 0;
  std::string data;  ///< training data ("" : the preset's)
  int profile = 0;   ///< > 0: list this many operators, costliest first (LibTorch's profiler)
  bool skipEndedRows = false;  ///< TrainConfig::skipEndedRows
  bool bf16 = true;            ///< TrainConfig::bf16 (CUDA autocast; CPUs with native bf16)
  int loaderThreads = 0;       ///< > 0: TrainConfig::loaderThreads (a GPU outruns two)
};

struct TrainBenchResult {
  std::string preset;
  double width = 1.0;
  int batch = 0;
  int iterations = 0;
  double imagesPerS = 0;
  double msPerIteration = 0;
  std::string device;
  bool bf16 = false;  ///< the step ran in bf16 (CUDA autocast, or the CPU's native bf16)
  /// With options.profile: the costliest operators over every step, the warm-up included.
  OperatorProfile profile;
  /// The kernel each layer ran on over the run (base/kernel_routes.h), the warm-up included.
  std::vector<RouteUse> routes;
};

/// Runs in a temporary run directory that is removed afterwards. Throws Error.
TrainBenchResult benchTraining(const TrainBenchOptions& options);

}  // namespace foveal::core::train
