#include "train/train_bench.h"

#include <algorithm>
#include <filesystem>
#include <random>

#include "base/compute_device.h"
#include "trace/model_session.h"
#include "train/trainer.h"

namespace fs = std::filesystem;

namespace foveal::core::train {

TrainBenchResult benchTraining(const TrainBenchOptions& o) {
  TrainConfig cfg = presetConfig(o.preset, o.width);
  cfg.batchSize = o.batch;
  cfg.iterations = o.iterations + 1;
  cfg.evalData.clear();
  cfg.checkpointInterval = 0;
  cfg.logInterval = cfg.iterations;
  cfg.device = o.device;
  cfg.threads = o.threads;
  cfg.skipEndedRows = o.skipEndedRows;
  cfg.bf16 = o.bf16;
  if (o.loaderThreads > 0) cfg.loaderThreads = o.loaderThreads;
  if (!o.data.empty()) cfg.trainData = {o.data};
  const fs::path dir =
      fs::temp_directory_path() / ("foveal-bench-train-" + std::to_string(std::random_device{}()));
  TrainBenchResult r;
  r.preset = o.preset;
  r.width = o.width;
  r.batch = o.batch;
  r.iterations = o.iterations;
  try {
    RunOptions ro;
    ro.runDir = dir.string();
    Trainer trainer(cfg, ro);
    r.device = describeDevice(resolveDevice(o.device));
    OperatorRecorder recorder(o.profile > 0);
    TrainResult result;
    {
      RouteRecording routes;
      result = trainer.run();
      r.routes = recordedRoutes();
    }
    r.profile = recorder.finish();
    r.profile.keep(o.profile);
    r.imagesPerS = result.imagesPerS;
    r.bf16 = result.bf16;
    r.msPerIteration = result.imagesPerS > 0 ? 1000.0 * o.batch / result.imagesPerS : 0.0;
  } catch (...) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    throw;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return r;
}

}  // namespace foveal::core::train
