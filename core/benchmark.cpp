#include "benchmark.h"

#include "backbone.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>
#include <algorithm>
#include <chrono>

#include "losses.h"
#include "recognizer.h"

namespace foveal::core {

std::vector<std::pair<std::string, ModelConfig>> benchConfigs(double width) {
  std::vector<std::pair<std::string, ModelConfig>> out;
  auto make = [&](AttentionKind a, ContextKind c, int stns) {
    ModelConfig cfg;
    cfg.attention = a;
    cfg.context = c;
    cfg.numStns = stns;
    cfg.width = width;
    cfg.preprocessing.regionScale = stns == 2 ? 2.0 : 1.8;
    return cfg;
  };
  out.emplace_back("soft", make(AttentionKind::Soft, ContextKind::Pooling, 1));
  out.emplace_back("hard", make(AttentionKind::Hard, ContextKind::Pooling, 1));
  for (int stns : {1, 2})
    for (auto c : {ContextKind::Pooling, ContextKind::Chain, ContextKind::Weighting})
      out.emplace_back("sharp-" + toString(c) + (stns == 2 ? "-2stn" : ""),
                       make(AttentionKind::Sharp, c, stns));
  return out;
}

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}
}  // namespace

std::vector<BenchResult> runBenchmarks(const BenchOptions& opt) {
  std::vector<BenchResult> results;
  for (const auto& entry : benchConfigs(opt.width)) {
    const std::string& name = entry.first;
    const ModelConfig& cfg = entry.second;
    if (!opt.only.empty() && std::find(opt.only.begin(), opt.only.end(), name) == opt.only.end())
      continue;
    torch::manual_seed(0);
    Recognizer model(cfg);
    BenchResult r;
    r.name = name;
    r.width = opt.width;
    r.batch = opt.batch;
    r.threads = at::get_num_threads();
    const bool sharp = cfg.attention == AttentionKind::Sharp;
    auto input = [&](int64_t b) {
      return std::make_pair(torch::rand({b, 1, 32, 100}) * 2 - 1,
                            sharp ? torch::rand({b, 1, 32, cfg.preprocessing.upsampledW()}) * 2 - 1
                                  : torch::Tensor());
    };
    model->eval();
    {
      c10::InferenceMode guard;
      const auto one = input(1);
      const auto& img1 = one.first;
      const auto& up1 = one.second;
      for (int i = 0; i < 3; ++i) model->forward(img1, up1);  // warm-up
      std::vector<double> times;
      for (int i = 0; i < opt.repeats; ++i) {
        const auto t0 = Clock::now();
        model->forward(img1, up1);
        times.push_back(msSince(t0));
      }
      std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
      r.latencyMs = times[times.size() / 2];

      const auto batch = input(opt.batch);
      const auto& imgB = batch.first;
      const auto& upB = batch.second;
      model->forward(imgB, upB);
      const auto t0 = Clock::now();
      for (int i = 0; i < opt.batchRepeats; ++i) model->forward(imgB, upB);
      r.batchImagesPerS = opt.batch * opt.batchRepeats / (msSince(t0) / 1000.0);
    }
    if (opt.train) {
      model->train();
      const auto batch = input(opt.batch);
      const auto& imgB = batch.first;
      const auto& upB = batch.second;
      auto targets = torch::randint(1, 11, {opt.batch, cfg.steps()}, torch::kLong);
      auto lengths = torch::full({opt.batch}, cfg.maxLength, torch::kLong);
      MovingBaseline baseline;
      auto step = [&](bool naive) {
        DecodeOptions d;
        d.targets = targets;
        d.recomputeKeys = naive;
        auto out = model->forward(imgB, upB, d);
        auto loss = attentionLoss(out, targets, lengths, cfg.attention, 1.0, baseline);
        model->zero_grad();
        loss.total.backward();
      };
      setCpuBf16Convolutions(opt.bf16);
      r.bf16 = cpuBf16Convolutions();
      step(false);  // warm-up
      auto t0 = Clock::now();
      for (int i = 0; i < opt.batchRepeats; ++i) step(false);
      r.trainImagesPerS = opt.batch * opt.batchRepeats / (msSince(t0) / 1000.0);
      // The straightforward implementation: fp32, W x recomputed at every step (same maths).
      setCpuBf16Convolutions(false);
      step(true);  // warm-up
      t0 = Clock::now();
      for (int i = 0; i < opt.batchRepeats; ++i) step(true);
      r.trainNaiveImagesPerS = opt.batch * opt.batchRepeats / (msSince(t0) / 1000.0);
    }
    results.push_back(r);
  }
  return results;
}

}  // namespace foveal::core
