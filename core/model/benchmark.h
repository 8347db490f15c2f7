#pragma once
// Speed measurements for `foveal-cli bench`: inference latency and throughput of every mechanism
// on this machine. Torch-free interface; results are plain numbers.
#include <string>
#include <vector>

#include "base/kernel_routes.h"
#include "formats/model_format.h"
#include "model/model_config.h"

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
  bool bf16 =
      false;  ///< the training figure used bf16 (CPU convolutions with native bf16; CUDA autocast)
  double beamLatencyMs = 0;  ///< median batch-1 inference with beam search (0: not measured)
  int beamWidth = 0;
  std::string device;  ///< "cpu", "cuda:0"
  /// The kernel each layer ran on (base/kernel_routes.h), noted over one pass of each measurement
  /// (batch 1, the batch, a training step), each pass's layers with their shapes.
  std::vector<RouteUse> routes;
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
  /// "cpu", "cuda" or "cuda:N". On CUDA the clock is read after synchronising the device, and
  /// training uses bf16 autocast (when `bf16`) with cuDNN autotuning.
  std::string device = "cpu";
  int beamWidth = 5;  ///< batch-1 latency with a beam search of this width too (< 2: skip)
};

/// The device a bench option names: "cpu (2 threads)", "cuda:0" (resolveDevice, describeDevice in
/// compute_device.h). Throws Error
/// for a malformed name or a CUDA device this build or machine does not have.
std::string benchDeviceDescription(const std::string& device);

/// The mechanisms benchmarked: soft, hard, sharp {pooling, chain, weighting} x {1, 2 STNs}.
std::vector<std::pair<std::string, ModelConfig>> benchConfigs(double width);

std::vector<BenchResult> runBenchmarks(const BenchOptions& options);

/// One model file (a .fvm or an imported DTRB .pth): greedy inference on random inputs of the
/// model's own input size, preprocessing excluded (as the Python side of scripts/bench-dtrb).
struct ModelBenchResult {
  std::string description;
  double latencyMs = 0;  ///< median at batch 1
  double batchMs = 0;    ///< median at `batch`
  int batch = 0;
  int threads = 0;
  std::vector<RouteUse> routes;  ///< over one pass at batch 1 and one at `batch`
};
ModelBenchResult benchModelFile(const std::string& path, const ImportOptions& options, int batch,
                                int repeats);

}  // namespace foveal::core
