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
#include "model/autocast.h"
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

// f(), its layers' routes appended to `into` (base/kernel_routes.h).
template <typename F>
void noteRoutesOf(std::vector<RouteUse>& into, F&& f) {
  RouteRecording recording;
  f();
  for (auto& r : recordedRoutes()) into.push_back(std::move(r));
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Measures each model of runBenchmarks on one device: inference, then training.
class Bench {
 public:
  explicit Bench(const BenchOptions& opt)
      : m_opt(opt), m_device(resolveDevice(opt.device)), m_cuda(m_device.is_cuda()) {
    prepareDevice(m_device);  // as the trainer does
  }
  BenchResult measure(const std::string& name, const ModelConfig& cfg) const;

 private:
  using Input = std::pair<torch::Tensor, torch::Tensor>;  // image, upsampled (if needed)

  void sync() const {
    if (m_cuda) torch::cuda::synchronize(m_device.index());
  }
  Input input(const ModelConfig& cfg, int64_t b) const;
  double timeEach(int runs, const std::function<void()>& f) const;
  void inference(Recognizer& model, const ModelConfig& cfg, BenchResult& r) const;
  void training(Recognizer& model, const ModelConfig& cfg, BenchResult& r) const;

  const BenchOptions& m_opt;
  torch::Device m_device;
  bool m_cuda;
};

BenchResult Bench::measure(const std::string& name, const ModelConfig& cfg) const {
  torch::manual_seed(0);
  Recognizer model(cfg);
  model->to(m_device);
  BenchResult r;
  r.name = name;
  r.width = m_opt.width;
  r.batch = m_opt.batch;
  r.threads = at::get_num_threads();
  r.device = m_device.str();
  inference(model, cfg, r);
  if (m_opt.train) training(model, cfg, r);
  return r;
}

// Random images in [-1, 1] at 100x32, and the upsampled copy when the glimpse needs it.
Bench::Input Bench::input(const ModelConfig& cfg, int64_t b) const {
  const bool sharp = cfg.needsUpsampled();
  return std::make_pair(
      (torch::rand({b, 1, 32, 100}) * 2 - 1).to(m_device),
      sharp ? (torch::rand({b, 1, 32, cfg.preprocessing.upsampledW()}) * 2 - 1).to(m_device)
            : torch::Tensor());
}

// Median wall time of `runs` calls of f, each ended by a device synchronisation.
double Bench::timeEach(int runs, const std::function<void()>& f) const {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    f();
    sync();
    times.push_back(msSince(t0));
  }
  return median(times);
}

void Bench::inference(Recognizer& model, const ModelConfig& cfg, BenchResult& r) const {
  model->eval();
  c10::InferenceMode guard;
  const auto one = input(cfg, 1);
  const auto& img1 = one.first;
  const auto& up1 = one.second;
  noteRoutesOf(r.routes, [&] { model->forward(img1, up1); });
  for (int i = 0; i < 2; ++i) model->forward(img1, up1);  // warm-up
  sync();
  r.latencyMs = timeEach(m_opt.repeats, [&] { model->forward(img1, up1); });
  if (m_opt.beamWidth >= 2 && !cfg.isCtc()) {
    DecodeOptions beam;
    beam.beamWidth = m_opt.beamWidth;
    model->forward(img1, up1, beam);  // warm-up
    sync();
    r.beamWidth = m_opt.beamWidth;
    r.beamLatencyMs =
        timeEach(std::max(1, m_opt.repeats / 2), [&] { model->forward(img1, up1, beam); });
  }

  const auto batch = input(cfg, m_opt.batch);
  const auto& imgB = batch.first;
  const auto& upB = batch.second;
  noteRoutesOf(r.routes, [&] { model->forward(imgB, upB); });
  sync();
  const auto t0 = Clock::now();
  for (int i = 0; i < m_opt.batchRepeats; ++i) model->forward(imgB, upB);
  sync();
  r.batchImagesPerS = m_opt.batch * m_opt.batchRepeats / (msSince(t0) / 1000.0);
}

// Forward and backward of the loss (no optimiser), as tuned and the straightforward way.
void Bench::training(Recognizer& model, const ModelConfig& cfg, BenchResult& r) const {
  model->train();
  const auto batch = input(cfg, m_opt.batch);
  const auto& imgB = batch.first;
  const auto& upB = batch.second;
  auto targets = torch::randint(1, 11, {m_opt.batch, cfg.steps()}, torch::kLong).to(m_device);
  auto lengths = torch::full({m_opt.batch}, cfg.maxLength, torch::kLong).to(m_device);
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
    if (naive)
      step(naive);  // warm-up (and cuDNN's autotuning)
    else
      noteRoutesOf(r.routes, [&] { step(naive); });
    sync();
    const auto t0 = Clock::now();
    for (int i = 0; i < m_opt.batchRepeats; ++i) step(naive);
    sync();
    return m_opt.batch * m_opt.batchRepeats / (msSince(t0) / 1000.0);
  };
  setCpuBf16Convolutions(!m_cuda && m_opt.bf16);
  autocast = m_cuda && m_opt.bf16;
  r.trainImagesPerS = imagesPerS(false);
  r.bf16 = m_cuda ? autocast : cpuBf16Used();
  // The straightforward implementation: fp32, W x recomputed at every step (same maths).
  setCpuBf16Convolutions(false);
  autocast = false;
  r.trainNaiveImagesPerS = imagesPerS(true);
}

}  // namespace

std::string benchDeviceDescription(const std::string& device) {
  return describeDevice(resolveDevice(device));
}

std::vector<BenchResult> runBenchmarks(const BenchOptions& opt) {
  const Bench bench(opt);
  std::vector<BenchResult> results;
  for (const auto& [name, cfg] : benchConfigs(opt.width)) {
    if (!opt.only.empty() && std::find(opt.only.begin(), opt.only.end(), name) == opt.only.end())
      continue;
    results.push_back(bench.measure(name, cfg));
  }
  return results;
}

ModelBenchResult benchModelFile(const std::string& path, const ImportOptions& options, int batch,
                                int repeats) {
  auto loaded = loadModelFile(path, options);
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
    noteRoutesOf(r.routes, [&] { loaded.model->forward(image, up); });
    loaded.model->forward(image, up);  // warm-up
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
