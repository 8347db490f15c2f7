#pragma once
// Training throughput for `foveal-cli bench-train`: the real training step (data loader, forward
// with teacher forcing, loss, backward, gradient norm, ADADELTA) of a preset, measured over a few
// iterations after a warm-up one. Torch-free.
#include <string>
#include <vector>

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
};

/// One operator (with its input shapes) over every step the profiler saw, the warm-up included.
struct OperatorTime {
  std::string name;  ///< e.g. "aten::convolution_backward [64,4,16,41] [4,4,3,3] ..."
  long calls = 0;
  double selfMs = 0;  ///< time in the operator itself, not in operators it called
};

struct TrainBenchResult {
  std::string preset;
  double width = 1.0;
  int batch = 0;
  int iterations = 0;
  double imagesPerS = 0;
  double msPerIteration = 0;
  std::string device;
  std::vector<OperatorTime> operators;  ///< with options.profile: the costliest, self time
  double profiledMs = 0;                ///< with options.profile: all operators' self time
};

/// Runs in a temporary run directory that is removed afterwards. Throws Error.
TrainBenchResult benchTraining(const TrainBenchOptions& options);

}  // namespace foveal::core::train
