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
#include "image/grey_image.h"
#include "model/autocast.h"
#include "model/backbone.h"
#include "model/charset.h"
#include "model/losses.h"
#include "run/run_lock.h"
#include "run/tensorboard_events.h"
#include "trace/model_session.h"
#include "train/adadelta.h"
#include "train/dataset_views.h"
#include "train/distributed.h"
#include "train/evaluate_model.h"
#include "train/step_kernels.h"

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

// The glyph images of the sharp + reference model, one per class, side by side in one 8-bit PGM
// of the run folder (run_folder::kReferenceGlyphs): a build with OpenCV renders them when the run
// starts and writes the file; a resume, or a build without OpenCV (a GPU machine's engine), reads
// them from it. Returns [K, 1, ph, pw] in [-1, 1].
torch::Tensor referenceImages(const ModelConfig& mc, const Charset& charset, const fs::path& run,
                              bool writer) {
  const fs::path file = run / run_folder::kReferenceGlyphs;
  const int classes = charset.size();
  GreyImage strip;  // the glyphs side by side: classes * patchW wide, patchH high
  std::error_code ec;
  if (fs::exists(file, ec)) {
    strip = readImage(file.string());
    if (strip.height != mc.patchH || strip.width != classes * mc.patchW)
      throw Error(file.string() + ": " + std::to_string(strip.width) + "x" +
                  std::to_string(strip.height) + " is not " + std::to_string(classes) +
                  " reference glyphs of the model's patch " + std::to_string(mc.patchW) + "x" +
                  std::to_string(mc.patchH) + " side by side");
  } else {
    if (!data::canRenderText())
      throw Error(
          "the sharp + reference model needs reference glyphs: this build (no OpenCV) cannot "
          "render them, and " +
          file.string() +
          " does not exist (a build with OpenCV writes it when the run starts; copy it into the "
          "run folder)");
    const auto glyphs = data::referenceGlyphs(charset);
    strip = GreyImage(classes * mc.patchW, mc.patchH,
                      std::vector<uint8_t>(static_cast<size_t>(classes) * mc.patchW * mc.patchH));
    for (int k = 0; k < classes; ++k) {
      const auto& g = glyphs[static_cast<size_t>(k)];
      if (g.width != mc.patchW || g.height != mc.patchH)
        throw Error("reference glyph " + charset.token(k) + " is " + std::to_string(g.width) + "x" +
                    std::to_string(g.height) + ", the model's patch " + std::to_string(mc.patchW) +
                    "x" + std::to_string(mc.patchH));
      for (int y = 0; y < mc.patchH; ++y)
        std::copy_n(g.pixels.begin() + static_cast<std::ptrdiff_t>(y) * mc.patchW, mc.patchW,
                    strip.pixels.begin() + static_cast<std::ptrdiff_t>(y) * strip.width +
                        static_cast<std::ptrdiff_t>(k) * mc.patchW);
    }
    if (writer) {
      std::string pgm =
          "P5\n" + std::to_string(strip.width) + " " + std::to_string(strip.height) + "\n255\n";
      pgm.append(strip.pixels.begin(), strip.pixels.end());
      writeFileAtomically(file.string(), pgm, "reference glyphs");
    }
  }
  // [patchH, classes, patchW] -> [classes, 1, patchH, patchW], in [-1, 1].
  return torch::from_blob(strip.pixels.data(), {mc.patchH, classes, mc.patchW}, torch::kUInt8)
      .permute({1, 0, 2})
      .unsqueeze(1)
      .to(torch::kFloat)
      .div(127.5)
      .sub(1.0)
      .contiguous();
}

// One batch on the training device.
struct DeviceBatch {
  torch::Tensor images, upsampled, targets, lengths;
};

// One micro-batch's forward pass, kept until its loss is taken.
struct Micro {
  RecognizerOutput out;
  torch::Tensor targets, lengths;
  double weight;
};

// What one step measured: summed over its micro-batches and, once reduced, over every rank (the
// loss terms then averaged over the ranks).
struct StepStats {
  int64_t iteration = 0;
  double images = 0;
  double rewardSum = 0, rewardCount = 0, correct = 0;
  double loss = 0, nll = 0, reinforce = 0, reference = 0;
  double gradNorm = std::numeric_limits<double>::quiet_NaN();
  bool finite = true;  ///< loss and gradient finite on every rank: the step is taken
  bool stop = false;   ///< a stop was asked for, on some rank

  double reward() const { return rewardCount > 0 ? rewardSum / rewardCount : 0.0; }
  double accuracy() const { return images > 0 ? correct / images : 0.0; }
};

// Images per second: per log interval, and over the session leaving out its first iteration
// (allocation, loader start-up).
struct Throughput {
  Clock::time_point intervalStart = Clock::now(), lastStep = Clock::now(), rateStart = Clock::now();
  int64_t intervalImages = 0, sessionImages = 0;
  bool firstDone = false;

  void stepDone(double images) {
    intervalImages += static_cast<int64_t>(images);
    if (firstDone)
      sessionImages += static_cast<int64_t>(images);
    else
      rateStart = Clock::now();
    firstDone = true;
  }
  double intervalRate() const {
    const double dt = seconds(intervalStart, Clock::now());
    return dt > 0 ? intervalImages / dt : 0.0;
  }
  void restartInterval() {
    intervalStart = Clock::now();
    intervalImages = 0;
  }
  double sessionRate() const {
    const double dt = seconds(rateStart, lastStep);
    return dt > 0 ? sessionImages / dt : 0.0;
  }
};

// CPU: the convolutions in bf16 where the CPU computes it natively (AMX / AVX512-BF16), for as
// long as the run lasts.
struct CpuBf16Scope {
  explicit CpuBf16Scope(bool on) { setCpuBf16Convolutions(on); }
  ~CpuBf16Scope() { setCpuBf16Convolutions(false); }
};

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
  bool crossDeviceResume = false;  ///< the state's generator was another device kind's

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
    appendEvents(record);
  }
  // The same scalars as TensorBoard events (run_folder::kTensorBoardDir), for a user's own
  // dashboard (TensorBoard, `wandb sync`): "train/<field>", "eval/<field>", "eval/<set>/<field>"
  // at step = iteration, with the record's time. A session's first record opens its file; a
  // resume's record is torch's purge marker, so TensorBoard drops the interrupted tail as
  // resumeMetrics drops it from metrics.jsonl. Secondary to metrics.jsonl: a failure is said once
  // and stops only the events.
  mutable std::unique_ptr<TensorBoardWriter> events;
  mutable bool eventsFailed = false;
  void appendEvents(const json& record) const {
    const std::string kind = record.value("kind", "");
    if (eventsFailed || (kind != "train" && kind != "eval" && kind != "resume")) return;
    try {
      const double time = record.at(run_folder::kTimeKey).get<double>();
      const int64_t it = record.value("iteration", int64_t(0));
      if (!events)
        events =
            std::make_unique<TensorBoardWriter>((run / run_folder::kTensorBoardDir).string(), time);
      if (kind == "resume") return events->addSessionStart(it + 1, time);
      const auto scalars = [&](const json& fields, const std::string& prefix) {
        for (const auto& [key, value] : fields.items())
          if (value.is_number() && key != "iteration" && key != "elapsed_s" && key != "count" &&
              key != run_folder::kTimeKey)
            events->addScalar(prefix + key, value.get<double>(), it, time);
      };
      scalars(record, kind + "/");
      if (kind == "eval")
        for (const auto& set : record.value("datasets", json::array()))
          scalars(set, "eval/" + set.value("name", std::string("set")) + "/");
    } catch (const Error& e) {
      eventsFailed = true;
      log(std::string("no TensorBoard events from here on: ") + e.what());
    }
  }
  double elapsed() const { return elapsedBefore + seconds(sessionStart, Clock::now()); }

  void setup(bool resuming);
  void openRunFolder(bool resuming);
  void startFresh();
  void makeOptimizer();
  void loadState(const fs::path& path);
  /// Rewrites config.json with what the resume changed, drops the metrics records written after
  /// the state being resumed (an interrupted tail) and records the resume.
  void resumeMetrics();
  // config.json: what the run is (its model, data, end, device), rewritten on a resume.
  void writeConfig() const { writeTextAtomically(run / run_folder::kConfig, cfg.toJson() + "\n"); }
  void saveState(const fs::path& path) const;

  // One training step, in order.
  bool hybrid() const { return cfg.model.selectsRegions() && cfg.lambdaR > 0; }
  StepStats step(Throughput& rate);
  DeviceBatch loadBatch(int64_t it);
  std::vector<torch::Tensor> copyBuffers() const;
  /// The steps run under CUDA autocast (bf16): a CUDA device and bf16 asked for.
  bool cudaBf16() const { return device.is_cuda() && cfg.bf16; }
  std::vector<Micro> forward(const DeviceBatch& batch, StepStats& st);
  void reduceForward(StepStats& st) const;
  void backward(std::vector<Micro> micro, double baselineForLoss, StepStats& st);
  std::vector<at::Tensor> reduceGradients(StepStats& st);
  void measureGradients(const std::vector<at::Tensor>& grads, StepStats& st) const;
  void update(const MovingBaseline& next);
  void skip(const StepStats& st, const std::vector<torch::Tensor>& savedBuffers);
  bool logStep(const StepStats& st, Throughput& rate) const;
  void evaluateAndCheckpoint(int64_t it);

  /// The one place a model file is written: a CPU copy of the model, saved with `extra`.
  void writeModel(const fs::path& path, const std::string& extra) const;
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
  openRunFolder(resuming);
  device = resolveDevice(cfg.device);
  if (cfg.threads > 0 || device.is_cpu()) setComputeThreads(cfg.threads);
  prepareDevice(device);
  charset = cfg.model.makeCharset();

  trainData = openTrainingData(cfg.trainData);
  if (writer)
    for (const auto& spec : cfg.evalData) evalData.emplace_back(spec, data::openDataset(spec));
  if (cfg.model.reference && cfg.model.attention == "sharp")
    references = referenceImages(cfg.model, charset, run, writer).to(device);

  {
    // Initial weights come from the global generator: ranks that run as threads of one process
    // (the tests) must not interleave their draws, or rank 0's weights depend on timing.
    static std::mutex initMutex;
    std::lock_guard<std::mutex> lock(initMutex);
    torch::manual_seed(cfg.seed);
    model = Recognizer(cfg.model);
  }
  if (resuming)
    loadState(run / run_folder::kState);  // weights, optimiser, generator, position
  else
    startFresh();
  model->train();
}

void Trainer::Impl::openRunFolder(bool resuming) {
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
}

// A new run: its generator, the warm start, the optimiser, every rank on rank 0's weights, and
// the run folder's config.json and empty metrics log.
void Trainer::Impl::startFresh() {
  if (device.is_cpu()) {
    gen = at::detail::createCPUGenerator(cfg.seed * 1000003ull + static_cast<uint64_t>(rank));
  } else {
    gen = at::globalContext().defaultGenerator(device);
    gen.set_current_seed(cfg.seed * 1000003ull + static_cast<uint64_t>(rank));
  }
  if (!cfg.initFrom.empty())
    log("warm start from " + cfg.initFrom + ": " + warmStart(model, cfg.initFrom).summary());
  model->to(device);
  makeOptimizer();
  if (opt.group) {  // every rank starts from rank 0's weights
    torch::NoGradGuard ng;
    std::vector<at::Tensor> ts;
    for (auto& p : model->parameters()) ts.push_back(p.data());
    for (auto& b : model->buffers()) ts.push_back(b);
    opt.group->broadcast(ts, 0);
  }
  if (writer) {
    writeConfig();
    writeTextAtomically(run / run_folder::kMetrics, "");
    // The event files of an earlier start that never checkpointed go with its metrics.
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run / run_folder::kTensorBoardDir, ec))
      if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
        fs::remove(e.path(), ec);
  }
}

void Trainer::Impl::makeOptimizer() {
  AdadeltaOptions ao(cfg.lr);
  ao.rho(cfg.rho).eps(cfg.eps).weight_decay(cfg.weightDecay);
  optimizer = std::make_unique<Adadelta>(model->parameters(), ao);
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
    makeOptimizer();
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
    try {
      gen.set_state(g);
    } catch (const c10::Error&) {
      // A run trained on another kind of device (a GPU run resumed on a CPU, or back): its
      // generator's state has another layout. Everything else carries over; the sampling
      // (hard and sharp attention's REINFORCE draws) goes on from a generator seeded by the run's
      // seed and iteration, so the run continues, no longer bit-identical to an uninterrupted one.
      const auto it = meta.at("iteration").get<int64_t>();
      gen.set_current_seed(static_cast<uint64_t>(cfg.seed) * 1000003ull +
                           static_cast<uint64_t>(it));
      crossDeviceResume = true;
    }
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
  resumeMetrics();
}

void Trainer::Impl::resumeMetrics() {
  if (writer) {
    // What a resume may change (its length, evaluation, checkpoints, device) is the run's from
    // now on: monitors read the run's end and ETA from config.json.
    writeConfig();
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
    json record = {{"kind", "resume"}, {"iteration", iteration}, {"elapsed_s", elapsedBefore}};
    if (crossDeviceResume) record["generator"] = "reseeded";
    appendMetrics(record);
  }
  if (crossDeviceResume)
    log("the training state was written on another kind of device: its random generator cannot "
        "be restored here, so sampling continues from one seeded by the run's seed and iteration "
        "(the weights, optimiser and data position carry over; the run is no longer bit-identical "
        "to an uninterrupted one)");
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
  const json extra = {{"training", extraJson()}};
  writeModel(dir / run_folder::historyFileName(iteration), extra.dump());
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

// Model files hold CPU tensors: a model on another device is saved through a CPU copy.
void Trainer::Impl::writeModel(const fs::path& path, const std::string& extra) const {
  Recognizer m = model;
  if (!device.is_cpu())
    m = std::dynamic_pointer_cast<RecognizerImpl>(model->clone(torch::Device(torch::kCPU)));
  saveCheckpoint(path.string(), m, extra);
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
  writeModel(run / run_folder::kLatestModel, extra.dump());
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
    writeModel(run / run_folder::kBestModel, extra.dump());
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

// One iteration: the batch, the forward pass of every micro-batch, the reduction across
// processes, backward, the gradients, then the update or, when anything is non-finite, a skip.
StepStats Trainer::Impl::step(Throughput& rate) {
  StepStats st;
  st.iteration = iteration + 1;
  const DeviceBatch batch = loadBatch(st.iteration);
  // The forward pass updates batch-norm running statistics even when the step is then skipped:
  // keep them, so a poisoned batch cannot leave NaN in the buffers (and so in a checkpoint).
  const std::vector<torch::Tensor> savedBuffers = copyBuffers();
  std::vector<Micro> micro = forward(batch, st);
  reduceForward(st);
  // b_j folds in this batch's reward (over all ranks) before any REINFORCE term uses it; every
  // micro-batch and rank uses the same b_j. The loss is a pure function of it.
  const double reward = st.reward();
  MovingBaseline next = baseline;
  if (hybrid() && std::isfinite(reward)) next.update(reward);
  const double baselineForLoss = hybrid() ? (std::isfinite(reward) ? next.value() : reward) : 0.0;
  backward(std::move(micro), baselineForLoss, st);
  const std::vector<at::Tensor> grads = reduceGradients(st);
  measureGradients(grads, st);
  iteration = st.iteration;
  rate.stepDone(st.images);
  if (st.finite)
    update(next);
  else
    skip(st, savedBuffers);
  rate.lastStep = Clock::now();
  return st;
}

DeviceBatch Trainer::Impl::loadBatch(int64_t it) {
  const data::Batch batch = nextBatch();
  DeviceBatch b;
  b.images = batch.images.to(device);
  b.upsampled = batch.upsampled.defined() ? batch.upsampled.to(device) : torch::Tensor();
  b.targets = batch.targets.to(device);
  b.lengths = batch.lengths.to(device);
  if (hooks.poisonBatch && hooks.poisonBatch(it))
    b.images.fill_(std::numeric_limits<float>::quiet_NaN());
  return b;
}

std::vector<torch::Tensor> Trainer::Impl::copyBuffers() const {
  torch::NoGradGuard ng;
  std::vector<torch::Tensor> copies;
  for (const auto& b : model->buffers()) copies.push_back(b.clone());
  return copies;
}

// Forward every micro-batch first, so the baseline b_j can fold in the reward of the whole batch
// (over all ranks) before any REINFORCE term uses it, as in equation 9.
std::vector<Micro> Trainer::Impl::forward(const DeviceBatch& batch, StepStats& st) {
  const int64_t B = batch.images.size(0);
  const int64_t m = std::min<int64_t>(cfg.microBatches, B);
  const bool autocast = cudaBf16();
  st.images = static_cast<double>(B);
  std::vector<Micro> micro;
  for (int64_t k = 0; k < m; ++k) {
    auto idx = torch::arange(k, B, m, torch::TensorOptions(torch::kLong).device(device));
    Micro mb;
    mb.targets = batch.targets.index_select(0, idx);
    mb.lengths = batch.lengths.index_select(0, idx);
    mb.weight = static_cast<double>(idx.size(0)) / static_cast<double>(B);
    DecodeOptions dec;
    dec.targets = mb.targets;
    dec.sample = true;
    dec.generator = gen;
    dec.skipEndedRows = cfg.skipEndedRows;
    try {
      CudaAutocastScope ac(autocast);
      mb.out = model->forward(
          batch.images.index_select(0, idx),
          batch.upsampled.defined() ? batch.upsampled.index_select(0, idx) : torch::Tensor(), dec);
    } catch (const c10::Error& e) {
      // Sampling a_t from a NaN alpha (hard, sharp) fails inside the forward pass: the same
      // non-finite step as a NaN loss. Anything else is a real error.
      const std::string what = e.what_without_backtrace();
      if (what.find("nan") == std::string::npos && what.find("inf") == std::string::npos) throw;
      st.rewardSum = std::numeric_limits<double>::quiet_NaN();
      st.loss = std::numeric_limits<double>::quiet_NaN();
      st.finite = false;
      return {};
    }
    if (mb.out.logProbs.scalar_type() != torch::kFloat)
      mb.out.logProbs = mb.out.logProbs.to(torch::kFloat);
    const BatchStats bs = model->stats(mb.out, mb.targets, mb.lengths);
    st.rewardSum += bs.rewardSum;
    st.rewardCount += bs.rewardCount;
    st.correct += bs.correct;
    micro.push_back(std::move(mb));
  }
  return micro;
}

// The reward, the accuracy and the images over all ranks, and one decision to stop: every rank
// stops at the same iteration.
void Trainer::Impl::reduceForward(StepStats& st) const {
  const bool stopRequested = hooks.stop && hooks.stop->load();
  if (!opt.group) {
    st.stop = stopRequested;
    return;
  }
  const auto r = opt.group->allReduceSum(
      {st.rewardSum, st.rewardCount, st.correct, st.images, stopRequested ? 1.0 : 0.0});
  st.rewardSum = r[0];
  st.rewardCount = r[1];
  st.correct = r[2];
  st.images = r[3];
  st.stop = r[4] > 0;
}

// The loss of every micro-batch, weighted by its share of the batch; a non-finite one is
// counted but not back-propagated.
void Trainer::Impl::backward(std::vector<Micro> micro, double baselineForLoss, StepStats& st) {
  optimizer->zero_grad();
  for (auto& mb : micro) {
    LossInputs in;
    in.targets = mb.targets;
    in.lengths = mb.lengths;
    in.lambdaR = cfg.lambdaR;
    in.baseline = baselineForLoss;
    in.references = references;
    in.referenceWeight = cfg.referenceWeight;
    auto terms = model->loss(mb.out, in);
    auto loss = terms.total * mb.weight;
    const double lv = loss.item<double>();
    st.loss += lv;
    st.nll += terms.nll.item<double>() * mb.weight;
    st.reinforce += terms.reinforce.item<double>() * mb.weight;
    if (terms.reference.defined()) st.reference += terms.reference.item<double>() * mb.weight;
    if (!std::isfinite(lv)) {
      st.finite = false;
      continue;
    }
    loss.backward();
  }
}

// Every parameter's gradient (zeros for one that took no part); with several ranks the loss
// terms are averaged over them, and the gradients too when every rank's step is finite.
std::vector<at::Tensor> Trainer::Impl::reduceGradients(StepStats& st) {
  std::vector<at::Tensor> grads;
  for (auto& p : model->parameters()) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad());
  }
  if (opt.group) {
    const auto r = opt.group->allReduceSum(
        {st.finite ? 0.0 : 1.0, st.loss, st.nll, st.reinforce, st.reference});
    st.finite = r[0] == 0;
    st.loss = r[1] / world;
    st.nll = r[2] / world;
    st.reinforce = r[3] / world;
    st.reference = r[4] / world;
    if (st.finite) opt.group->allReduceMean(grads);
  }
  return grads;
}

void Trainer::Impl::measureGradients(const std::vector<at::Tensor>& grads, StepStats& st) const {
  if (!st.finite) return;
  torch::NoGradGuard ng;
  // CPU float gradients in one pass each (the tensor ops made a double copy and its square);
  // the others (CUDA) as tensor ops on their device, in double.
  double cpuSum = 0;
  auto sq = torch::zeros({}, torch::TensorOptions(torch::kDouble).device(device));
  bool onDevice = false;
  for (auto& g : grads) {
    if (g.is_cpu() && g.scalar_type() == torch::kFloat && g.is_contiguous()) {
      const float* x = g.data_ptr<float>();
      cpuSum += at::parallel_reduce(
          int64_t(0), g.numel(), int64_t(1) << 16, 0.0,
          [&](int64_t b, int64_t e, double acc) { return acc + squaredSum(x + b, e - b); },
          std::plus<double>());
    } else {
      sq += g.to(torch::kDouble).pow(2).sum();
      onDevice = true;
    }
  }
  st.gradNorm = std::sqrt(cpuSum + (onDevice ? sq.item<double>() : 0.0));
  st.finite = std::isfinite(st.gradNorm);
}

void Trainer::Impl::update(const MovingBaseline& next) {
  optimizer->step();
  consecutiveNonFinite = 0;
  if (hybrid()) baseline = next;
  if (opt.group) {  // batch-norm statistics follow rank 0, as DDP's broadcast_buffers does
    torch::NoGradGuard ng;
    std::vector<at::Tensor> bufs;
    for (auto& b : model->buffers()) bufs.push_back(b);
    opt.group->broadcast(bufs, 0);
  }
}

// A non-finite step leaves the weights, the buffers and the baseline as they were; too many in a
// row end the run.
void Trainer::Impl::skip(const StepStats& st, const std::vector<torch::Tensor>& savedBuffers) {
  optimizer->zero_grad();
  {
    torch::NoGradGuard ng;
    auto buffers = model->buffers();
    for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(savedBuffers[i]);
  }
  ++consecutiveNonFinite;
  ++skippedSteps;
  const int64_t it = st.iteration;
  appendMetrics({{"kind", "skip"},
                 {"iteration", it},
                 {"reason", "non-finite loss or gradient"},
                 {"loss", num(st.loss)},
                 {"grad_norm", num(st.gradNorm)},
                 {"consecutive", consecutiveNonFinite},
                 {"elapsed_s", elapsed()}});
  log("iter " + std::to_string(it) + ": non-finite loss or gradient, step skipped (" +
      std::to_string(consecutiveNonFinite) + " in a row)");
  if (consecutiveNonFinite >= cfg.maxNonFinite)
    throw Error("training stopped at iteration " + std::to_string(it) + ": " +
                std::to_string(consecutiveNonFinite) +
                " non-finite losses in a row (the last checkpoint, " +
                (run / run_folder::kLatestModel).string() +
                ", holds the last good weights); lower the learning rate or check the data");
}

// A "train" record and a progress line every logInterval iterations and at the last one, for a
// step that was taken; true when it wrote them.
bool Trainer::Impl::logStep(const StepStats& st, Throughput& rate) const {
  const int64_t it = st.iteration;
  if (!st.finite || (it % cfg.logInterval != 0 && it != cfg.iterations)) return false;
  const double ips = rate.intervalRate();
  appendMetrics({{"kind", "train"},
                 {"iteration", it},
                 {"epoch", epoch},
                 {"loss", num(st.loss)},
                 {"nll", num(st.nll)},
                 {"reinforce", num(st.reinforce)},
                 {"reference", references.defined() ? num(st.reference) : json(nullptr)},
                 {"reward", num(st.reward())},
                 {"baseline", hybrid() ? num(baseline.value()) : json(nullptr)},
                 {"grad_norm", num(st.gradNorm)},
                 {"train_accuracy", st.accuracy()},
                 {"lr", cfg.lr},
                 {"images_per_s", ips},
                 {"elapsed_s", elapsed()}});
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "iter %lld/%lld  loss %.4f  nll %.4f  reward %.4f  acc %.3f  |g| %.3g  "
                "%.1f img/s",
                static_cast<long long>(it), static_cast<long long>(cfg.iterations), st.loss, st.nll,
                st.reward(), st.accuracy(), st.gradNorm, ips);
  log(buf);
  rate.restartInterval();
  return true;
}

// The last iteration's evaluation and checkpoint are run()'s closing ones.
void Trainer::Impl::evaluateAndCheckpoint(int64_t it) {
  const bool last = it == cfg.iterations;
  if (cfg.evalInterval > 0 && it % cfg.evalInterval == 0 && !last) evaluate();
  if (cfg.checkpointInterval > 0 && it % cfg.checkpointInterval == 0 && !last)
    writeCheckpoint("interval");
  if (cfg.historyInterval > 0 && it % cfg.historyInterval == 0) writeHistory();
}

TrainResult Trainer::run() {
  auto& s = *d;
  const auto& cfg = s.cfg;
  const CpuBf16Scope cpuBf16(s.device.is_cpu() && cfg.bf16);
  bool precisionTold = !cpuBf16Convolutions();  // said after the first step: by the width
  s.sessionStart = Clock::now();
  Throughput rate;
  s.log("training " + std::to_string(cfg.iterations) + " iterations from iteration " +
        std::to_string(s.iteration) + " on " + describeDevice(s.device) +
        (s.world > 1 ? ", rank " + std::to_string(s.rank) + " of " + std::to_string(s.world)
                     : std::string()));

  TrainResult result;
  bool stopped = false;
  while (s.iteration < cfg.iterations) {
    if (s.opt.stopAfter >= 0 && s.iteration >= s.opt.stopAfter) {
      stopped = true;
      break;
    }
    const StepStats st = s.step(rate);
    if (!precisionTold) {
      precisionTold = true;
      s.log(cpuBf16Used() ? std::string("CPU convolutions in bf16 (this CPU computes bf16 "
                                        "natively; --no-bf16: fp32)")
                          : "CPU convolutions in fp32: this CPU computes bf16 natively, but "
                            "bf16 is used only for VGG features of " +
                                std::to_string(kCpuBf16MinChannels) +
                                " channels or more, where it is faster");
    }
    if (s.logStep(st, rate)) {
      result.loss = st.loss;
      result.trainAccuracy = st.accuracy();
    }
    if (st.stop) {
      stopped = true;
      break;
    }
    s.evaluateAndCheckpoint(st.iteration);
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
  result.imagesPerS = rate.sessionRate();
  result.bestAccuracy = s.bestAccuracy;
  result.skippedSteps = s.skippedSteps;
  result.bf16 = cpuBf16Used() || s.cudaBf16();
  result.latest = s.writer ? (s.run / run_folder::kLatestModel).string() : "";
  return result;
}

void Trainer::exportModel(const std::string& path) const {
  d->checkFinite(path.c_str());
  d->writeModel(path, "");
}

std::string Trainer::describe() const {
  std::string s = d->cfg.model.describe() + "; data " + d->trainData->describe() + "; " +
                  describeDevice(d->device);
  if (d->world > 1) s += "; " + std::to_string(d->world) + " processes";
  return s;
}

}  // namespace foveal::core::train
