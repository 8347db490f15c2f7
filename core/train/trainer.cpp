#include "train/trainer.h"
#include "run/run_folder.h"
#include "train/warm_start.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "base/atomic_file.h"
#include "base/compute_device.h"
#include "base/error.h"
#include "base/safe_read.h"
#include "data/data_loader.h"
#include "data/dataset_factory.h"
#include "data/synthetic_words.h"
#include "formats/checkpoint.h"
#include "formats/state_file.h"
#include "model/backbone.h"
#include "model/charset.h"
#include "model/cuda_autocast.h"
#include "model/losses.h"
#include "run/run_lock.h"
#include "trace/model_session.h"
#include "train/adadelta.h"
#include "train/dataset_views.h"
#include "train/distributed.h"
#include "train/evaluate_model.h"

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace foveal::core::train {

namespace {

constexpr const char* kStateFormat = "foveal-train-state";
constexpr int kStateVersion = 1;

std::string readText(const fs::path& p) {
  return readRegularFile(p.string(), "file", kMaxSmallFileBytes);
}

void writeTextAtomically(const fs::path& p, const std::string& text) {
  writeFileAtomically(p.string(), text,
                      p.filename() == run_folder::kConfig ? "run configuration" : "file");
}

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

/// Finite JSON number or null.
json num(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

}  // namespace

struct Trainer::Impl {
  TrainConfig cfg;
  RunOptions opt;
  TrainHooks hooks;
  fs::path run;
  bool writer = true;                // rank 0
  std::unique_ptr<RunLock> runLock;  // the writer's hold on the run folder (core/run/run_lock.h)
  int rank = 0, world = 1;
  torch::Device device{torch::kCPU};
  Charset charset;

  Recognizer model{nullptr};
  std::unique_ptr<Adadelta> optimizer;
  MovingBaseline baseline;
  at::Generator gen;
  torch::Tensor references;  // [K, 1, ph, pw] in [-1, 1], sharp + reference only

  data::DatasetPtr trainData;
  std::vector<std::pair<std::string, data::DatasetPtr>> evalData;
  std::unique_ptr<data::DataLoader> loader;

  // Position and bookkeeping (all saved in the state).
  int64_t iteration = 0;
  int64_t epoch = 0;
  int64_t batchInEpoch = 0;  // batches of this epoch already consumed
  double elapsedBefore = 0;  // seconds of earlier sessions
  double bestAccuracy = -1;
  int64_t bestIteration = -1;
  int64_t historyStride = 0;  ///< the history's spacing now (a multiple of historyInterval)
  int consecutiveNonFinite = 0;
  int64_t skippedSteps = 0;

  Clock::time_point sessionStart = Clock::now();

  void log(const std::string& line) const {
    if (hooks.progress && writer) hooks.progress(line);
  }
  void appendMetrics(json record) const {
    if (!writer) return;
    // The wall-clock time it was written (Unix seconds, UTC): monitors draw the runs on a date
    // axis with it (run_folder.h kTimeKey).
    record[run_folder::kTimeKey] =
        std::round(
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count() *
            1000.0) /
        1000.0;
    std::ofstream out(run / run_folder::kMetrics, std::ios::app);
    errno = 0;
    out << record.dump() << "\n";
    out.flush();
    if (!out)
      throw Error((run / run_folder::kMetrics).string() + ": cannot append to the metrics log (" +
                  (errno ? std::strerror(errno) : "write failed") + ")");
  }
  double elapsed() const { return elapsedBefore + seconds(sessionStart, Clock::now()); }

  void setup(bool resuming);
  void loadState(const fs::path& path);
  void saveState(const fs::path& path) const;
  void writeCheckpoint(const std::string& reason);
  /// A history/ checkpoint at this iteration when it falls on the (doubling) spacing; thins
  /// the folder to at most historyKeep files.
  void writeHistory();
  void checkFinite(const char* what) const;
  data::Batch nextBatch();
  void evaluate();
  json extraJson() const;
};

TrainConfig Trainer::loadRunConfig(const std::string& runDir) {
  const fs::path p = fs::path(runDir) / run_folder::kConfig;
  return TrainConfig::fromJson(readText(p), p.string());
}

Trainer::Trainer(const TrainConfig& config, RunOptions options, TrainHooks hooks) : d(new Impl) {
  d->cfg = config;
  d->cfg.validate();
  d->opt = std::move(options);
  d->hooks = std::move(hooks);
  d->run = d->opt.runDir;
  if (d->opt.runDir.empty()) throw Error("training needs a run directory");
  if (d->opt.group) {
    d->rank = d->opt.group->rank();
    d->world = d->opt.group->worldSize();
  }
  d->writer = d->rank == 0;
  d->setup(d->opt.resume);
}

Trainer::~Trainer() = default;

int64_t Trainer::iteration() const { return d->iteration; }

void Trainer::Impl::setup(bool resuming) {
  const fs::path statePath = run / run_folder::kState;
  std::error_code ec;
  if (writer) {  // before any check of what the folder holds: another trainer may be writing it
    if (!resuming) fs::create_directories(run, ec);
    if (ec) throw Error(run.string() + ": cannot create the run directory (" + ec.message() + ")");
    if (fs::is_directory(run, ec)) runLock = std::make_unique<RunLock>(run.string());
  }
  if (resuming) {
    if (!fs::exists(statePath, ec))
      throw Error(statePath.string() + ": nothing to resume (no training state in this run)");
    const auto saved = loadRunConfig(run.string());
    if (json::parse(saved.model.toJson()) != json::parse(cfg.model.toJson()))
      throw Error((run / run_folder::kConfig).string() +
                  ": the model differs from the run being resumed");
  } else if (writer) {
    if (fs::exists(statePath, ec) || fs::exists(run / run_folder::kLatestModel, ec))
      throw Error(run.string() +
                  ": this run directory already holds a run; use --resume or another --run");
    fs::create_directories(run, ec);
    if (ec) throw Error(run.string() + ": cannot create the run directory (" + ec.message() + ")");
  }

  device = resolveDevice(cfg.device);
  if (cfg.threads > 0 || device.is_cpu()) setComputeThreads(cfg.threads);
  prepareDevice(device);
  charset = cfg.model.makeCharset();

  trainData = openTrainingData(cfg.trainData);
  if (writer)
    for (const auto& spec : cfg.evalData) evalData.emplace_back(spec, data::openDataset(spec));

  if (cfg.model.reference && cfg.model.attention == "sharp") {
    if (!data::canRenderText())
      throw Error(
          "the sharp + reference model needs reference glyphs, which this build (no "
          "OpenCV) cannot render");
    const auto glyphs = data::referenceGlyphs(charset);
    auto refs =
        torch::empty({static_cast<int64_t>(glyphs.size()), 1, cfg.model.patchH, cfg.model.patchW});
    for (size_t k = 0; k < glyphs.size(); ++k) {
      const auto& g = glyphs[k];
      if (g.width != cfg.model.patchW || g.height != cfg.model.patchH)
        throw Error("reference glyph " + charset.token(static_cast<int>(k)) + " is " +
                    std::to_string(g.width) + "x" + std::to_string(g.height) +
                    ", the model's patch " + std::to_string(cfg.model.patchW) + "x" +
                    std::to_string(cfg.model.patchH));
      auto t = torch::from_blob(const_cast<uint8_t*>(g.pixels.data()), {g.height, g.width},
                                torch::kUInt8);
      refs[static_cast<int64_t>(k)][0].copy_(t.to(torch::kFloat).div(127.5).sub(1.0));
    }
    references = refs.to(device);
  }

  {
    // Initial weights come from the global generator: ranks that run as threads of one process
    // (the tests) must not interleave their draws, or rank 0's weights depend on timing.
    static std::mutex initMutex;
    std::lock_guard<std::mutex> lock(initMutex);
    torch::manual_seed(cfg.seed);
    model = Recognizer(cfg.model);
  }
  if (resuming) {
    loadState(statePath);  // weights, optimiser, generator, position
  } else {
    if (device.is_cpu()) {
      gen = at::detail::createCPUGenerator(cfg.seed * 1000003ull + static_cast<uint64_t>(rank));
    } else {
      gen = at::globalContext().defaultGenerator(device);
      gen.set_current_seed(cfg.seed * 1000003ull + static_cast<uint64_t>(rank));
    }
    if (!cfg.initFrom.empty())
      log("warm start from " + cfg.initFrom + ": " + warmStart(model, cfg.initFrom).summary());
    model->to(device);
    AdadeltaOptions ao(cfg.lr);
    ao.rho(cfg.rho).eps(cfg.eps).weight_decay(cfg.weightDecay);
    optimizer = std::make_unique<Adadelta>(model->parameters(), ao);
    if (opt.group) {  // every rank starts from rank 0's weights
      torch::NoGradGuard ng;
      std::vector<at::Tensor> ts;
      for (auto& p : model->parameters()) ts.push_back(p.data());
      for (auto& b : model->buffers()) ts.push_back(b);
      opt.group->broadcast(ts, 0);
    }
    if (writer) {
      writeTextAtomically(run / run_folder::kConfig, cfg.toJson() + "\n");
      writeTextAtomically(run / run_folder::kMetrics, "");
    }
  }
  model->train();
}

void Trainer::Impl::checkFinite(const char* what) const {
  torch::NoGradGuard ng;
  for (const auto& p : model->named_parameters())
    if (!torch::isfinite(p.value()).all().item<bool>())
      throw Error(std::string("refusing to write ") + what + ": parameter '" + p.key() +
                  "' holds non-finite values");
  for (const auto& b : model->named_buffers())
    if (b.value().is_floating_point() && !torch::isfinite(b.value()).all().item<bool>())
      throw Error(std::string("refusing to write ") + what + ": buffer '" + b.key() +
                  "' holds non-finite values");
}

json Trainer::Impl::extraJson() const {
  return {{"iteration", iteration},
          {"epoch", epoch},
          {"batch_in_epoch", batchInEpoch},
          {"baseline", baseline.value()},
          {"baseline_initialised", baseline.initialised()},
          {"elapsed_s", elapsed()},
          {"best_accuracy", bestAccuracy},
          {"best_iteration", bestIteration},
          {"consecutive_non_finite", consecutiveNonFinite},
          {"skipped_steps", skippedSteps},
          {"world_size", world},
          {"preset", cfg.preset}};
}

void Trainer::Impl::saveState(const fs::path& path) const {
  torch::serialize::OutputArchive archive;
  json meta = extraJson();
  meta["format"] = kStateFormat;
  meta["format_version"] = kStateVersion;
  meta["model"] = json::parse(cfg.model.toJson());
  archive.write("meta", c10::IValue(meta.dump()));
  torch::serialize::OutputArchive m(archive.compilation_unit()), o(archive.compilation_unit());
  model->save(m);
  archive.write("model", m);
  optimizer->save(o);
  archive.write("optimizer", o);
  archive.write("generator", gen.get_state());
  std::ostringstream bytes;
  try {
    archive.save_to(bytes);
  } catch (const c10::Error& e) {
    throw Error(path.string() + ": cannot serialise the training state (" +
                e.what_without_backtrace() + ")");
  }
  writeFileAtomically(path.string(), sealTrainingState(bytes.str()), "training state");
}

void Trainer::Impl::loadState(const fs::path& path) {
  torch::serialize::InputArchive archive;
  json meta;
  std::istringstream sealed(readTrainingState(path.string()));  // checksum checked
  try {
    archive.load_from(sealed, torch::Device(torch::kCPU));
    c10::IValue mv;
    archive.read("meta", mv);
    meta = json::parse(mv.toStringRef());
  } catch (const std::exception& e) {
    throw Error(path.string() + ": unreadable training state (" + e.what() + ")");
  }
  if (meta.value("format", std::string()) != kStateFormat)
    throw Error(path.string() + ": not a Foveal training state");
  if (meta.value("format_version", 0) > kStateVersion)
    throw Error(path.string() + ": training state written by a newer Foveal");
  if (meta.at("model") != json::parse(cfg.model.toJson()))
    throw Error(path.string() + ": the training state belongs to another model config");
  if (meta.value("world_size", 1) != world)
    throw Error(path.string() + ": the run was trained with " +
                std::to_string(meta.value("world_size", 1)) + " process(es), not " +
                std::to_string(world) + " (the data position depends on it)");
  try {
    torch::serialize::InputArchive m, o;
    archive.read("model", m);
    model->load(m);
    model->to(device);
    AdadeltaOptions ao(cfg.lr);
    ao.rho(cfg.rho).eps(cfg.eps).weight_decay(cfg.weightDecay);
    optimizer = std::make_unique<Adadelta>(model->parameters(), ao);
    archive.read("optimizer", o);
    optimizer->load(o);
    for (auto& [key, st] : optimizer->state()) {
      auto& s = static_cast<AdadeltaParamState&>(*st);
      s.square_avg(s.square_avg().to(device));
      s.acc_delta(s.acc_delta().to(device));
    }
    torch::Tensor g;
    archive.read("generator", g);
    if (device.is_cpu()) {
      gen = at::detail::createCPUGenerator();
    } else {
      gen = at::globalContext().defaultGenerator(device);
    }
    gen.set_state(g);
  } catch (const c10::Error& e) {
    throw Error(path.string() + ": training state does not match the model (" +
                e.what_without_backtrace() + ")");
  }
  iteration = meta.at("iteration").get<int64_t>();
  epoch = meta.at("epoch").get<int64_t>();
  batchInEpoch = meta.at("batch_in_epoch").get<int64_t>();
  if (meta.at("baseline_initialised").get<bool>()) baseline.set(meta.at("baseline").get<double>());
  elapsedBefore = meta.value("elapsed_s", 0.0);
  bestAccuracy = meta.value("best_accuracy", -1.0);
  bestIteration = meta.value("best_iteration", int64_t(-1));
  consecutiveNonFinite = meta.value("consecutive_non_finite", 0);
  skippedSteps = meta.value("skipped_steps", int64_t(0));

  if (writer) {  // drop the records written after this state (an interrupted tail)
    const fs::path mp = run / run_folder::kMetrics;
    std::ifstream in(mp);
    std::string line, kept;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      try {
        if (json::parse(line).value("iteration", int64_t(0)) > iteration) continue;
      } catch (const json::exception&) {
        continue;  // a torn last line
      }
      kept += line + "\n";
    }
    writeTextAtomically(mp, kept);
    appendMetrics({{"kind", "resume"}, {"iteration", iteration}, {"elapsed_s", elapsedBefore}});
  }
}

void Trainer::Impl::writeHistory() {
  if (!writer) return;
  const fs::path dir = run / run_folder::kHistoryDir;
  // The spacing doubles each time the cap is passed; a resumed run starts again from the
  // interval and thins its new files the same way.
  if (historyStride < cfg.historyInterval) historyStride = cfg.historyInterval;
  if (iteration % historyStride != 0) return;
  checkFinite("a history checkpoint");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create the history folder: " + ec.message());
  Recognizer m = model;
  if (!device.is_cpu())
    m = std::dynamic_pointer_cast<RecognizerImpl>(model->clone(torch::Device(torch::kCPU)));
  json extra = {{"training", extraJson()}};
  saveCheckpoint((dir / run_folder::historyFileName(iteration)).string(), m, extra.dump());
  std::vector<std::pair<int64_t, fs::path>> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const int64_t it = run_folder::historyIteration(e.path().filename().string());
    if (it >= 0) files.emplace_back(it, e.path());
  }
  while (static_cast<int64_t>(files.size()) > cfg.historyKeep) {
    historyStride *= 2;
    std::vector<std::pair<int64_t, fs::path>> kept;
    for (auto& f : files) {
      if (f.first % historyStride == 0)
        kept.push_back(f);
      else
        fs::remove(f.second, ec);
    }
    files.swap(kept);
  }
}

void Trainer::Impl::writeCheckpoint(const std::string& reason) {
  if (!writer) return;
  checkFinite("a checkpoint");
  // The state first: it alone resumes the run, so a crash between the two renames leaves a
  // consistent pair (latest.fvm then lags one checkpoint behind, and says so in its extra).
  saveState(run / run_folder::kState);
  json extra = {{"training", extraJson()}};
  extra["training"]["state"] = run_folder::kState;
  extra["training"]["run"] = run.string();
  Recognizer m = model;
  if (!device.is_cpu())
    m = std::dynamic_pointer_cast<RecognizerImpl>(model->clone(torch::Device(torch::kCPU)));
  saveCheckpoint((run / run_folder::kLatestModel).string(), m, extra.dump());
  appendMetrics({{"kind", "checkpoint"},
                 {"iteration", iteration},
                 {"reason", reason},
                 {"file", run_folder::kLatestModel},
                 {"elapsed_s", elapsed()}});
}

data::Batch Trainer::Impl::nextBatch() {
  std::string why;  // what the loader skipped, should no batch come
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!loader) {
      data::LoaderOptions lo;
      lo.batchSize = cfg.batchSize;
      lo.seed = cfg.seed;
      lo.shuffle = true;
      lo.epoch = epoch;
      lo.startBatch = batchInEpoch;
      lo.rank = rank;
      lo.worldSize = world;
      lo.threads = cfg.loaderThreads;
      lo.prefetch = 4;
      lo.dropLast = true;  // full batches: every step (and every rank) sees batchSize images
      lo.skipBad = true;
      lo.maxLength = cfg.model.maxLength;
      lo.charset = charset;
      lo.preprocessing = cfg.model.preprocessing;
      lo.withUpsampled = cfg.model.needsUpsampled();
      loader = std::make_unique<data::DataLoader>(trainData, lo);
      if (loader->batchesPerEpoch() == 0)
        throw Error(trainData->describe() + ": fewer entries than one batch of " +
                    std::to_string(cfg.batchSize) + " per process");
    }
    if (auto b = loader->next()) {
      ++batchInEpoch;
      return std::move(*b);
    }
    if (!loader->skippedSummary().empty()) why = "; " + loader->skippedSummary();
    loader.reset();
    ++epoch;
    batchInEpoch = 0;
  }
  throw Error(trainData->describe() + ": no usable entry for this model" + why);
}

void Trainer::Impl::evaluate() {
  if (!writer || evalData.empty()) return;
  EvalOptions eo;
  eo.localisation = false;  // the run's curves need accuracy; `foveal-cli eval` localises
  eo.limit = cfg.evalLimit;
  eo.batchSize = std::max(cfg.batchSize, 32);
  eo.loaderThreads = cfg.loaderThreads;
  eo.keepFailures = false;
  EvalStats all;
  json sets = json::array();
  std::string line = "eval  iter " + std::to_string(iteration);
  for (const auto& [name, ds] : evalData) {
    const auto r = evaluateDataset(model, ds, name, eo, device);
    all.add(r.overall);
    sets.push_back({{"name", name},
                    {"count", r.overall.count},
                    {"accuracy", r.overall.accuracy()},
                    {"ned", r.overall.ned()},
                    {"entropy", r.overall.entropy()}});
  }
  const bool best = all.count > 0 && all.accuracy() > bestAccuracy;
  if (best) {
    bestAccuracy = all.accuracy();
    bestIteration = iteration;
    checkFinite(run_folder::kBestModel);
    json extra = {{"training", extraJson()}};
    extra["training"]["eval_accuracy"] = all.accuracy();
    Recognizer m = model;
    if (!device.is_cpu())
      m = std::dynamic_pointer_cast<RecognizerImpl>(model->clone(torch::Device(torch::kCPU)));
    saveCheckpoint((run / run_folder::kBestModel).string(), m, extra.dump());
  }
  appendMetrics({{"kind", "eval"},
                 {"iteration", iteration},
                 {"count", all.count},
                 {"accuracy", all.accuracy()},
                 {"ned", all.ned()},
                 {"entropy", all.entropy()},
                 {"datasets", sets},
                 {"best", best},
                 {"elapsed_s", elapsed()}});
  char buf[160];
  std::snprintf(buf, sizeof buf, "  accuracy %.2f%%  norm ED %.4f  entropy %.3f  (%lld images)%s",
                100 * all.accuracy(), all.ned(), all.entropy(), static_cast<long long>(all.count),
                best ? "  best" : "");
  log(line + buf);
}

TrainResult Trainer::run() {
  auto& s = *d;
  const auto& cfg = s.cfg;
  TrainResult result;
  const bool hybrid = cfg.model.selectsRegions() && cfg.lambdaR > 0;
  const bool autocast = s.device.is_cuda() && cfg.bf16;
  // CPU: the convolutions in bf16 where the CPU computes it natively (AMX / AVX512-BF16).
  struct CpuBf16Scope {
    explicit CpuBf16Scope(bool on) { setCpuBf16Convolutions(on); }
    ~CpuBf16Scope() { setCpuBf16Convolutions(false); }
  } cpuBf16(s.device.is_cpu() && cfg.bf16);
  if (cpuBf16Convolutions())
    s.log("CPU convolutions in bf16 (this CPU computes bf16 natively; --no-bf16: fp32)");
  s.sessionStart = Clock::now();
  auto intervalStart = Clock::now();
  int64_t intervalImages = 0, sessionImages = 0;
  bool firstDone = false;
  auto lastStep = Clock::now();
  auto rateStart = Clock::now();
  s.log("training " + std::to_string(cfg.iterations) + " iterations from iteration " +
        std::to_string(s.iteration) + " on " + describeDevice(s.device) +
        (s.world > 1 ? ", rank " + std::to_string(s.rank) + " of " + std::to_string(s.world)
                     : std::string()));

  bool stopped = false;
  while (s.iteration < cfg.iterations) {
    if (s.opt.stopAfter >= 0 && s.iteration >= s.opt.stopAfter) {
      stopped = true;
      break;
    }
    data::Batch batch = s.nextBatch();
    const int64_t it = s.iteration + 1;
    auto images = batch.images.to(s.device);
    auto up = batch.upsampled.defined() ? batch.upsampled.to(s.device) : torch::Tensor();
    auto targets = batch.targets.to(s.device);
    auto lengths = batch.lengths.to(s.device);
    if (s.hooks.poisonBatch && s.hooks.poisonBatch(it))
      images.fill_(std::numeric_limits<float>::quiet_NaN());
    const int64_t B = images.size(0);
    const int64_t m = std::min<int64_t>(cfg.microBatches, B);

    // Forward every micro-batch first, so the baseline b_j can fold in the reward of the whole
    // batch (over all ranks) before any REINFORCE term uses it, as in equation 9.
    struct Micro {
      RecognizerOutput out;
      torch::Tensor targets, lengths;
      double weight;
    };
    std::vector<Micro> micro;
    double rewardSum = 0, rewardCount = 0, correct = 0;
    bool forwardFailed = false;
    // The forward pass updates batch-norm running statistics even when the step is then skipped:
    // keep them, so a poisoned batch cannot leave NaN in the buffers (and so in a checkpoint).
    std::vector<torch::Tensor> savedBuffers;
    {
      torch::NoGradGuard ng;
      for (const auto& b : s.model->buffers()) savedBuffers.push_back(b.clone());
    }
    for (int64_t k = 0; k < m; ++k) {
      auto idx = torch::arange(k, B, m, torch::TensorOptions(torch::kLong).device(s.device));
      Micro mb;
      mb.targets = targets.index_select(0, idx);
      mb.lengths = lengths.index_select(0, idx);
      mb.weight = static_cast<double>(idx.size(0)) / static_cast<double>(B);
      DecodeOptions dec;
      dec.targets = mb.targets;
      dec.sample = true;
      dec.generator = s.gen;
      try {
        CudaAutocastScope ac(autocast);
        mb.out = s.model->forward(images.index_select(0, idx),
                                  up.defined() ? up.index_select(0, idx) : torch::Tensor(), dec);
      } catch (const c10::Error& e) {
        // Sampling a_t from a NaN alpha (hard, sharp) fails inside the forward pass: the same
        // non-finite step as a NaN loss. Anything else is a real error.
        const std::string what = e.what_without_backtrace();
        if (what.find("nan") == std::string::npos && what.find("inf") == std::string::npos) throw;
        forwardFailed = true;
        break;
      }
      if (mb.out.logProbs.scalar_type() != torch::kFloat)
        mb.out.logProbs = mb.out.logProbs.to(torch::kFloat);
      const BatchStats st = s.model->stats(mb.out, mb.targets, mb.lengths);
      rewardSum += st.rewardSum;
      rewardCount += st.rewardCount;
      correct += st.correct;
      micro.push_back(std::move(mb));
    }
    if (forwardFailed) {
      micro.clear();
      rewardSum = std::numeric_limits<double>::quiet_NaN();
    }
    const bool stopRequested = s.hooks.stop && s.hooks.stop->load();
    double globalImages = static_cast<double>(B);
    if (s.opt.group) {
      const auto r = s.opt.group->allReduceSum(
          {rewardSum, rewardCount, correct, globalImages, stopRequested ? 1.0 : 0.0});
      rewardSum = r[0];
      rewardCount = r[1];
      correct = r[2];
      globalImages = r[3];
      if (r[4] > 0) stopped = true;  // every rank stops at the same iteration
    } else if (stopRequested) {
      stopped = true;
    }
    const double reward = rewardCount > 0 ? rewardSum / rewardCount : 0.0;
    // b_j folds in this batch's reward (over all ranks) before any REINFORCE term uses it; every
    // micro-batch and rank uses the same b_j. The loss is a pure function of it.
    MovingBaseline next = s.baseline;
    if (hybrid && std::isfinite(reward)) next.update(reward);
    const double baselineForLoss = hybrid ? (std::isfinite(reward) ? next.value() : reward) : 0.0;

    s.optimizer->zero_grad();
    double nllSum = 0, reinforceSum = 0, referenceSum = 0;
    bool finite = !forwardFailed;
    double lossSum = forwardFailed ? std::numeric_limits<double>::quiet_NaN() : 0.0;
    for (auto& mb : micro) {
      LossInputs in;
      in.targets = mb.targets;
      in.lengths = mb.lengths;
      in.lambdaR = cfg.lambdaR;
      in.baseline = baselineForLoss;
      in.references = s.references;
      in.referenceWeight = cfg.referenceWeight;
      auto terms = s.model->loss(mb.out, in);
      auto loss = terms.total * mb.weight;
      const double lv = loss.item<double>();
      lossSum += lv;
      nllSum += terms.nll.item<double>() * mb.weight;
      reinforceSum += terms.reinforce.item<double>() * mb.weight;
      if (terms.reference.defined()) referenceSum += terms.reference.item<double>() * mb.weight;
      if (!std::isfinite(lv)) {
        finite = false;
        continue;
      }
      loss.backward();
    }
    micro.clear();

    std::vector<at::Tensor> grads;
    for (auto& p : s.model->parameters()) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      grads.push_back(p.grad());
    }
    if (s.opt.group) {
      const auto r = s.opt.group->allReduceSum(
          {finite ? 0.0 : 1.0, lossSum, nllSum, reinforceSum, referenceSum});
      finite = r[0] == 0;
      lossSum = r[1] / s.world;
      nllSum = r[2] / s.world;
      reinforceSum = r[3] / s.world;
      referenceSum = r[4] / s.world;
      if (finite) s.opt.group->allReduceMean(grads);
    }
    double gradNorm = std::numeric_limits<double>::quiet_NaN();
    if (finite) {
      torch::NoGradGuard ng;
      auto sq = torch::zeros({}, torch::TensorOptions(torch::kDouble).device(s.device));
      for (auto& g : grads) sq += g.to(torch::kDouble).pow(2).sum();
      gradNorm = std::sqrt(sq.item<double>());
      finite = std::isfinite(gradNorm);
    }
    s.iteration = it;
    intervalImages += static_cast<int64_t>(globalImages);
    // The session's rate leaves out its first iteration (allocation, loader start-up).
    if (firstDone)
      sessionImages += static_cast<int64_t>(globalImages);
    else
      rateStart = Clock::now();
    firstDone = true;
    if (!finite) {
      s.optimizer->zero_grad();
      {
        torch::NoGradGuard ng;
        auto buffers = s.model->buffers();
        for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(savedBuffers[i]);
      }
      ++s.consecutiveNonFinite;
      ++s.skippedSteps;
      s.appendMetrics({{"kind", "skip"},
                       {"iteration", it},
                       {"reason", "non-finite loss or gradient"},
                       {"loss", num(lossSum)},
                       {"grad_norm", num(gradNorm)},
                       {"consecutive", s.consecutiveNonFinite},
                       {"elapsed_s", s.elapsed()}});
      s.log("iter " + std::to_string(it) + ": non-finite loss or gradient, step skipped (" +
            std::to_string(s.consecutiveNonFinite) + " in a row)");
      if (s.consecutiveNonFinite >= cfg.maxNonFinite)
        throw Error("training stopped at iteration " + std::to_string(it) + ": " +
                    std::to_string(s.consecutiveNonFinite) +
                    " non-finite losses in a row (the last checkpoint, " +
                    (s.run / run_folder::kLatestModel).string() +
                    ", holds the last good weights); lower the learning rate or check the data");
    } else {
      s.optimizer->step();
      s.consecutiveNonFinite = 0;
      if (hybrid) s.baseline = next;
      if (s.opt.group) {  // batch-norm statistics follow rank 0, as DDP's broadcast_buffers does
        torch::NoGradGuard ng;
        std::vector<at::Tensor> bufs;
        for (auto& b : s.model->buffers()) bufs.push_back(b);
        s.opt.group->broadcast(bufs, 0);
      }
    }

    lastStep = Clock::now();
    const double accuracy = globalImages > 0 ? correct / globalImages : 0.0;
    if (finite && (it % cfg.logInterval == 0 || it == cfg.iterations)) {
      const double dt = seconds(intervalStart, Clock::now());
      const double ips = dt > 0 ? intervalImages / dt : 0.0;
      json rec = {{"kind", "train"},
                  {"iteration", it},
                  {"epoch", s.epoch},
                  {"loss", num(lossSum)},
                  {"nll", num(nllSum)},
                  {"reinforce", num(reinforceSum)},
                  {"reference", s.references.defined() ? num(referenceSum) : json(nullptr)},
                  {"reward", num(reward)},
                  {"baseline", hybrid ? num(s.baseline.value()) : json(nullptr)},
                  {"grad_norm", num(gradNorm)},
                  {"train_accuracy", accuracy},
                  {"lr", cfg.lr},
                  {"images_per_s", ips},
                  {"elapsed_s", s.elapsed()}};
      s.appendMetrics(rec);
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "iter %lld/%lld  loss %.4f  nll %.4f  reward %.4f  acc %.3f  |g| %.3g  "
                    "%.1f img/s",
                    static_cast<long long>(it), static_cast<long long>(cfg.iterations), lossSum,
                    nllSum, reward, accuracy, gradNorm, ips);
      s.log(buf);
      result.loss = lossSum;
      result.trainAccuracy = accuracy;
      intervalStart = Clock::now();
      intervalImages = 0;
    }
    if (stopped) break;
    const bool last = it == cfg.iterations;
    if (cfg.evalInterval > 0 && it % cfg.evalInterval == 0 && !last) s.evaluate();
    if (cfg.checkpointInterval > 0 && it % cfg.checkpointInterval == 0 && !last)
      s.writeCheckpoint("interval");
    if (cfg.historyInterval > 0 && it % cfg.historyInterval == 0) s.writeHistory();
  }

  if (stopped) {
    s.writeCheckpoint("stop");
    s.appendMetrics({{"kind", "stop"}, {"iteration", s.iteration}, {"elapsed_s", s.elapsed()}});
    s.log("stopped at iteration " + std::to_string(s.iteration) + "; checkpoint written");
  } else {
    s.evaluate();
    s.writeCheckpoint("end");
  }
  result.iteration = s.iteration;
  result.interrupted = stopped;
  const double dt = seconds(rateStart, lastStep);
  result.imagesPerS = dt > 0 ? sessionImages / dt : 0.0;
  result.bestAccuracy = s.bestAccuracy;
  result.skippedSteps = s.skippedSteps;
  result.latest = s.writer ? (s.run / run_folder::kLatestModel).string() : "";
  return result;
}

void Trainer::exportModel(const std::string& path) const {
  d->checkFinite(path.c_str());
  Recognizer m = d->model;
  if (!d->device.is_cpu())
    m = std::dynamic_pointer_cast<RecognizerImpl>(d->model->clone(torch::Device(torch::kCPU)));
  saveCheckpoint(path, m);
}

std::string Trainer::describe() const {
  std::string s = d->cfg.model.describe() + "; data " + d->trainData->describe() + "; " +
                  describeDevice(d->device);
  if (d->world > 1) s += "; " + std::to_string(d->world) + " processes";
  return s;
}

}  // namespace foveal::core::train
