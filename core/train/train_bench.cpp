#include "train/train_bench.h"

#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <utility>

#include "base/compute_device.h"
#include "trace/model_session.h"
#include "train/trainer.h"

namespace fs = std::filesystem;

namespace foveal::core::train {

namespace {

namespace prof = torch::autograd::profiler;

std::string shapeText(const std::vector<std::vector<int64_t>>& shapes) {
  std::string t;
  for (const auto& shape : shapes) {
    if (shape.empty()) continue;
    t += " [";
    for (size_t i = 0; i < shape.size(); ++i) t += (i ? "," : "") + std::to_string(shape[i]);
    t += "]";
  }
  return t;
}

// Self time per operator and input shapes from the legacy profiler's push / pop events: each
// range's time less the time of the ranges it encloses, on each thread.
std::vector<OperatorTime> selfTimes(const prof::thread_event_lists& lists, double& total) {
  std::map<std::string, OperatorTime> byKey;
  for (const auto& events : lists) {
    std::vector<std::pair<const prof::LegacyEvent*, double>> open;  // range, children's time
    for (const auto& e : events) {
      if (e.kind() == prof::EventKind::PushRange) {
        open.emplace_back(&e, 0.0);
      } else if (e.kind() == prof::EventKind::PopRange && !open.empty()) {
        const auto [start, children] = open.back();
        open.pop_back();
        const double us = start->cpuElapsedUs(e);
        const std::string key = start->name() + shapeText(start->shapes());
        auto& op = byKey[key];
        op.name = key;
        op.calls += 1;
        op.selfMs += (us - children) / 1000.0;
        if (!open.empty()) open.back().second += us;
      }
    }
  }
  std::vector<OperatorTime> ops;
  total = 0;
  for (auto& [key, op] : byKey) {
    total += op.selfMs;
    ops.push_back(std::move(op));
  }
  std::sort(ops.begin(), ops.end(),
            [](const OperatorTime& a, const OperatorTime& b) { return a.selfMs > b.selfMs; });
  return ops;
}

}  // namespace

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
    if (o.profile > 0)
      prof::enableProfilerLegacy(torch::profiler::impl::ProfilerConfig(
          torch::profiler::impl::ProfilerState::CPU, /*report_input_shapes=*/true,
          /*profile_memory=*/false));
    TrainResult result;
    try {
      result = trainer.run();
    } catch (...) {
      if (o.profile > 0) prof::disableProfilerLegacy();
      throw;
    }
    if (o.profile > 0) {
      r.operators = selfTimes(prof::disableProfilerLegacy(), r.profiledMs);
      if (r.operators.size() > static_cast<size_t>(o.profile))
        r.operators.resize(static_cast<size_t>(o.profile));
    }
    r.imagesPerS = result.imagesPerS;
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
