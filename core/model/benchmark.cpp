#include "model/benchmark.h"

#include "model/backbone.h"

#include <ATen/Parallel.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <algorithm>
#include <chrono>
#include <functional>

#include "base/compute_device.h"
#include "base/cpu_features.h"
#include "formats/checkpoint.h"
#include "model/cuda_autocast.h"
#include "model/losses.h"
#include "model/model_variants.h"
#include "model/recognizer.h"

namespace foveal::core {

std::vector<std::pair<std::string, ModelConfig>> benchConfigs(double width) {
  std::vector<std::pair<std::string, ModelConfig>> out;
  for (auto& v : modelVariants(width)) out.emplace_back(v.name, v.config);
  return out;
}

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}
}  // namespace

std::string benchDeviceDescription(const std::string& device) {
  return describeDevice(resolveDevice(device));
}

std::vector<BenchResult> runBenchmarks(const BenchOptions& opt) {
  const torch::Device device = resolveDevice(opt.device);
  const bool cuda = device.is_cuda();
  prepareDevice(device);  // as the trainer does
  auto sync = [&] {
    if (cuda) torch::cuda::synchronize(device.index());
  };
  std::vector<BenchResult> results;
  for (const auto& entry : benchConfigs(opt.width)) {
    const std::string& name = entry.first;
    const ModelConfig& cfg = entry.second;
    if (!opt.only.empty() && std::find(opt.only.begin(), opt.only.end(), name) == opt.only.end())
      continue;
    torch::manual_seed(0);
    Recognizer model(cfg);
    model->to(device);
    BenchResult r;
    r.name = name;
    r.width = opt.width;
    r.batch = opt.batch;
    r.threads = at::get_num_threads();
    r.device = device.str();
    const bool sharp = cfg.needsUpsampled();
    auto input = [&](int64_t b) {
      return std::make_pair(
          (torch::rand({b, 1, 32, 100}) * 2 - 1).to(device),
          sharp ? (torch::rand({b, 1, 32, cfg.preprocessing.upsampledW()}) * 2 - 1).to(device)
                : torch::Tensor());
    };
    // Median wall time of `runs` calls of f, each ended by a device synchronisation.
    auto timeEach = [&](int runs, const std::function<void()>& f) {
      std::vector<double> times;
      for (int i = 0; i < runs; ++i) {
        const auto t0 = Clock::now();
        f();
        sync();
        times.push_back(msSince(t0));
      }
      return median(times);
    };
    model->eval();
    {
      c10::InferenceMode guard;
      const auto one = input(1);
      const auto& img1 = one.first;
      const auto& up1 = one.second;
      for (int i = 0; i < 3; ++i) model->forward(img1, up1);  // warm-up
      sync();
      r.latencyMs = timeEach(opt.repeats, [&] { model->forward(img1, up1); });
      if (opt.beamWidth >= 2 && !cfg.isCtc()) {
        DecodeOptions beam;
        beam.beamWidth = opt.beamWidth;
        model->forward(img1, up1, beam);  // warm-up
        sync();
        r.beamWidth = opt.beamWidth;
        r.beamLatencyMs =
            timeEach(std::max(1, opt.repeats / 2), [&] { model->forward(img1, up1, beam); });
      }

      const auto batch = input(opt.batch);
      const auto& imgB = batch.first;
      const auto& upB = batch.second;
      model->forward(imgB, upB);
      sync();
      const auto t0 = Clock::now();
      for (int i = 0; i < opt.batchRepeats; ++i) model->forward(imgB, upB);
      sync();
      r.batchImagesPerS = opt.batch * opt.batchRepeats / (msSince(t0) / 1000.0);
    }
    if (opt.train) {
      model->train();
      const auto batch = input(opt.batch);
      const auto& imgB = batch.first;
      const auto& upB = batch.second;
      auto targets = torch::randint(1, 11, {opt.batch, cfg.steps()}, torch::kLong).to(device);
      auto lengths = torch::full({opt.batch}, cfg.maxLength, torch::kLong).to(device);
      MovingBaseline baseline;
      bool autocast = false;
      auto step = [&](bool naive) {
        DecodeOptions d;
        d.targets = targets;
        d.recomputeKeys = naive;
        RecognizerOutput out;
        {
          CudaAutocastScope ac(autocast);  // the forward pass, as in the trainer
          out = model->forward(imgB, upB, d);
        }
        LossInputs in;
        in.targets = targets;
        in.lengths = lengths;
        in.lambdaR = 1.0;
        in.baseline = baseline.update(model->stats(out, targets, lengths).rewardSum /
                                      static_cast<double>(targets.numel()));
        auto loss = model->loss(out, in);
        model->zero_grad();
        loss.total.backward();
      };
      auto imagesPerS = [&](bool naive) {
        step(naive);  // warm-up (and cuDNN's autotuning)
        sync();
        const auto t0 = Clock::now();
        for (int i = 0; i < opt.batchRepeats; ++i) step(naive);
        sync();
        return opt.batch * opt.batchRepeats / (msSince(t0) / 1000.0);
      };
      setCpuBf16Convolutions(!cuda && opt.bf16);
      autocast = cuda && opt.bf16;
      r.bf16 = cuda ? autocast : cpuBf16Convolutions();
      r.trainImagesPerS = imagesPerS(false);
      // The straightforward implementation: fp32, W x recomputed at every step (same maths).
      setCpuBf16Convolutions(false);
      autocast = false;
      r.trainNaiveImagesPerS = imagesPerS(true);
    }
    results.push_back(r);
  }
  return results;
}

ModelBenchResult benchModelFile(const std::string& path, const DtrbOptions& dtrb, int batch,
                                int repeats) {
  auto loaded = loadModelFile(path, dtrb);
  const auto& cfg = loaded.config;
  const auto& pp = cfg.preprocessing;
  ModelBenchResult r;
  r.description = cfg.describe();
  r.batch = batch;
  r.threads = at::get_num_threads();
  c10::InferenceMode guard;
  torch::manual_seed(0);
  auto run = [&](int64_t b, int runs) {
    const auto image = torch::rand({b, pp.channels(), pp.inputH, pp.inputW}) * 2 - 1;
    const auto up = cfg.needsUpsampled() ? torch::rand({b, 1, pp.inputH, pp.upsampledW()}) * 2 - 1
                                         : torch::Tensor();
    for (int i = 0; i < 2; ++i) loaded.model->forward(image, up);  // warm-up
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
      const auto t0 = Clock::now();
      loaded.model->forward(image, up);
      times.push_back(msSince(t0));
    }
    return median(times);
  };
  r.latencyMs = run(1, repeats);
  r.batchMs = run(batch, std::max(3, repeats / 5));
  return r;
}

}  // namespace foveal::core
