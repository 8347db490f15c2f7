#include "cli_train.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include "base/cpu_features.h"
#include "base/error.h"
#include "base/heap_tuning.h"
#include "base/kernel_routes.h"
#include "cli_args.h"
#include "cli_model.h"
#include "cli_runs.h"
#include "data/glyph_augment.h"
#include "run/run_folder.h"
#include "train/distributed.h"
#include "train/train_bench.h"
#include "train/train_config.h"
#include "train/trainer.h"

namespace foveal::app {

namespace {

// Every line `train` prints, also appended to the run folder's train.log with the local time:
// a run started elsewhere (a server, a cluster job) keeps its own account of what happened.
class TrainLog {
 public:
  // Lines said before the folder is known (the warm start's, said while the trainer is made) are
  // kept and written first.
  void open(const std::string& path) {
    m_path = path;
    errno = 0;
    m_file.open(path, std::ios::app);
    if (!m_file.is_open()) {
      warn();
      return;
    }
    for (const auto& l : m_pending) write(l);
    m_pending.clear();
  }
  void line(const std::string& text, bool toStdout = true) {
    if (toStdout) std::cout << text << std::endl;
    char stamp[32];
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &local);
    const std::string stamped = std::string(stamp) + "  " + text;
    if (m_file.is_open())
      write(stamped);
    else if (m_path.empty())
      m_pending.push_back(stamped);
  }

 private:
  void write(const std::string& stamped) {
    if (!m_file) return;  // said once: a full disk
    errno = 0;
    m_file << stamped << std::endl;
    if (!m_file)
      warn();  // a full disk: said once, and the log stops; metrics.jsonl (which
               // stops the run when it cannot be appended to) stays the record
  }
  void warn() {
    std::cerr << "warning: cannot append to " << m_path << " ("
              << (errno ? std::strerror(errno) : "write failed")
              << "); training goes on without its text log\n";
  }
  std::string m_path;
  std::ofstream m_file;
  std::vector<std::string> m_pending;
};

}  // namespace

const char* kTrainUsage =
    R"(  train       --preset NAME --run DIR [--width W] [--iterations N] [--batch B]
              [--micro-batches M] [--data SPEC[;SPEC...]] [--eval-data SPEC[;SPEC...]]
              [--eval-interval N] [--eval-limit N] [--checkpoint-interval N] [--log-interval N]
              [--max-length N] [--lambda-r X] [--lr X] [--reference-weight X] [--seed S]
              [--device cpu|cuda|cuda:N] [--threads N] [--loader-threads N] [--no-bf16]
              [--init-from MODEL.fvm] [--history-interval N] [--history-keep K] [--augment]
              [--skip-ended-rows]
              train a model into run directory DIR (config.json, metrics.jsonl, latest.fvm,
              latest.state, best.fvm, history/iter-N.fvm); SIGINT/SIGTERM stop with a
              checkpoint; history/ keeps a model every N iterations (default 1000, 0: none),
              at most K of them (default 24: past that every other one goes, the spacing doubles);
              --init-from starts from a trained model's tensors of the same name and shape;
              --lr sets ADADELTA's learning rate (default 1, the paper's; a smaller one for
              fine-tuning a trained model); --reference-weight the weight of a sharp
              + reference model's reference loss (default 1);
              --augment distorts each training digit (the digit specs get every aug-...
              parameter of the defaults, recorded in config.json; see data show);
              --skip-ended-rows: a sharp model computes each step's glimpse only for the
              images whose label has not ended (faster with mixed lengths; batch norm's
              statistics then cover those images alone)
              --run DIR --resume [--iterations N] [--device D] [--threads N]
              continue DIR exactly where its last checkpoint left off
              --list-presets [--json]   the presets and their settings (--json: for programs)
              --preset NAME [--transformation T] [--features F] [--sequence S] [--projection]
              [--prediction P] [--cell C] [--attention G] ...: the preset with other stages
              Several processes (WORLD_SIZE, RANK, MASTER_ADDR, MASTER_PORT set, e.g. by
              torchrun-style launchers) train data-parallel over c10d/Gloo; rank 0 writes DIR
  bench-train [--preset NAME] [--width W] [--batch B] [--iterations N] [--data SPEC]
              [--device D] [--threads N] [--loader-threads N] [--profile N]
              [--skip-ended-rows] [--no-bf16] [--json]
              images/s of full training steps (loader, forward, loss, backward, ADADELTA);
              --profile N lists the N costliest operators with their input shapes (self time
              over every step, through LibTorch's profiler, which slows the steps it times);
              --skip-ended-rows as train's; prints the CPU's instruction sets and the kernel
              each layer ran on (its shape, the route, how many times)
)";

namespace {

namespace core = foveal::core;
namespace tr = foveal::core::train;

// The one piece of process-wide state a signal handler may touch.
std::atomic<bool> g_stopRequested{false};

extern "C" void onStopSignal(int sig) {
  g_stopRequested = true;
  // A second Ctrl-C ends the process at once. SIGTERM does not escalate: a scheduler may deliver
  // it more than once (Slurm signals the job's steps and the batch shell passes its own warning
  // on), and the checkpoint must still be written; SIGKILL is the scheduler's escalation.
  if (sig == SIGINT) std::signal(SIGINT, SIG_DFL);
}

// --augment: every digit training set gets the augmentation defaults, written out parameter by
// parameter so that config.json records them (a later change of the defaults leaves the run's
// data as it was).
void augmentDigitSets(std::vector<std::string>& sets) {
  bool any = false;
  for (auto& s : sets) {
    if (s.rfind("digits:", 0) != 0) continue;
    if (s.find("augment") != std::string::npos || s.find("aug-") != std::string::npos)
      throw std::invalid_argument("--augment: " + s + " already sets its augmentation");
    s += core::data::GlyphAugmentSpec::defaults().toSpecItems();
    any = true;
  }
  if (!any) throw std::invalid_argument("--augment applies to digit training data (digits:...)");
}

std::string presetLine(const tr::Preset& p) {
  const auto& c = p.config;
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "%-32s %s\n%32s  model: %s, region scale %.1f\n%32s  batch %d, "
      "%lld iterations, lambda_r %g, ADADELTA lr %g rho %g weight decay %g\n%32s  "
      "train: %s%s\n%32s  eval: %zu set(s)\n",
      p.name.c_str(), p.description.c_str(), "", c.model.describe().c_str(),
      c.model.preprocessing.regionScale, "", c.batchSize, static_cast<long long>(c.iterations),
      c.lambdaR, c.lr, c.rho, c.weightDecay, "", c.trainData.front().c_str(),
      c.trainData.size() > 1 ? (" + " + std::to_string(c.trainData.size() - 1) + " more").c_str()
                             : "",
      "", c.evalData.size());
  return buf;
}

}  // namespace

namespace {

// The options of `train`: the valued ones, then the flags, the stage options with each.
CliArgs parseTrainArgs(const std::vector<std::string>& args) {
  std::set<std::string> valued = {"preset",
                                  "run",
                                  "width",
                                  "iterations",
                                  "batch",
                                  "micro-batches",
                                  "data",
                                  "eval-data",
                                  "eval-interval",
                                  "eval-limit",
                                  "checkpoint-interval",
                                  "history-interval",
                                  "history-keep",
                                  "log-interval",
                                  "max-length",
                                  "lambda-r",
                                  "lr",
                                  "reference-weight",
                                  "seed",
                                  "device",
                                  "threads",
                                  "loader-threads",
                                  "init-from"};
  valued.insert(kStageOptions.begin(), kStageOptions.end());
  std::set<std::string> flags = {"resume", "list-presets", "no-bf16",
                                 "json",   "augment",      "skip-ended-rows"};
  flags.insert(kStageFlags.begin(), kStageFlags.end());
  return CliArgs(args, valued, flags);
}

// --list-presets, as text or (--json) for programs; false when the command trains instead.
bool printPresetsIfAsked(const CliArgs& a) {
  if (a.has("list-presets") && a.has("json")) {
    // For programs (the GUI's New-run dialog): every preset with its whole train config.
    std::cout << tr::presetsJson() << "\n";
    return true;
  }
  if (a.has("json")) throw std::invalid_argument("--json goes with --list-presets");
  if (a.has("list-presets")) {
    std::cout << "presets (the paper's settings at width 1.0; --width scales the model):\n\n";
    for (const auto& p : tr::presets()) std::cout << presetLine(p) << "\n";
    return true;
  }
  return false;
}

// --resume: the run's own config.json; the options it holds (preset, model, data, seed, learning
// rate...) cannot change.
tr::TrainConfig resumedConfig(const CliArgs& a, const std::string& run) {
  std::vector<std::string> fixed = {"preset",         "width",      "batch",    "micro-batches",
                                    "data",           "max-length", "lambda-r", "seed",
                                    "init-from",      "augment",    "lr",       "reference-weight",
                                    "skip-ended-rows"};
  fixed.insert(fixed.end(), kStageOptions.begin(), kStageOptions.end());
  fixed.insert(fixed.end(), kStageFlags.begin(), kStageFlags.end());
  for (const auto& name : fixed)
    if (a.has(name))
      throw std::invalid_argument("--" + name +
                                  " cannot change when resuming (the run's config.json holds it)");
  return tr::Trainer::loadRunConfig(run);
}

// A new run: the preset with the options over it.
tr::TrainConfig newRunConfig(const CliArgs& a) {
  tr::TrainConfig cfg = tr::presetConfig(a.required("preset"), a.doubleValue("width", 1.0));
  applyStageOptions(a, cfg.model);  // any combination of stages over the preset's
  cfg.batchSize = a.intValue("batch", cfg.batchSize);
  cfg.microBatches = a.intValue("micro-batches", cfg.microBatches);
  cfg.model.maxLength = a.intValue("max-length", cfg.model.maxLength);
  cfg.lambdaR = a.doubleValue("lambda-r", cfg.lambdaR);
  cfg.lr = a.doubleValue("lr", cfg.lr);
  cfg.referenceWeight = a.doubleValue("reference-weight", cfg.referenceWeight);
  cfg.seed = static_cast<uint64_t>(a.intValue("seed", static_cast<int>(cfg.seed)));
  if (a.has("data")) cfg.trainData = splitSemicolons(a.value("data"));
  if (a.has("augment")) augmentDigitSets(cfg.trainData);
  cfg.initFrom = a.value("init-from", "");
  if (a.has("skip-ended-rows")) cfg.skipEndedRows = true;
  return cfg;
}

// The options a resumed run may change too: its length, evaluation, checkpoints and device.
void applyRunOptions(const CliArgs& a, tr::TrainConfig& cfg) {
  cfg.iterations = a.intValue("iterations", static_cast<int>(cfg.iterations));
  if (a.has("eval-data")) cfg.evalData = splitSemicolons(a.value("eval-data"));
  cfg.evalInterval = a.intValue("eval-interval", static_cast<int>(cfg.evalInterval));
  cfg.evalLimit = a.intValue("eval-limit", static_cast<int>(cfg.evalLimit));
  cfg.checkpointInterval =
      a.intValue("checkpoint-interval", static_cast<int>(cfg.checkpointInterval));
  cfg.logInterval = a.intValue("log-interval", static_cast<int>(cfg.logInterval));
  cfg.historyInterval = a.intValue("history-interval", static_cast<int>(cfg.historyInterval));
  cfg.historyKeep = a.intValue("history-keep", cfg.historyKeep);
  cfg.device = a.value("device", cfg.device);
  cfg.threads = a.intValue("threads", cfg.threads);
  cfg.loaderThreads = a.intValue("loader-threads", cfg.loaderThreads);
  if (a.has("no-bf16")) cfg.bf16 = false;
}

// The last lines of a run: how far it went, how fast, its best accuracy and its model.
void printTrainSummary(TrainLog& log, const tr::TrainResult& r) {
  char summary[256];
  std::snprintf(summary, sizeof summary, "%s at iteration %lld: %.1f img/s, %lld step(s) skipped",
                r.interrupted ? "stopped" : "finished", static_cast<long long>(r.iteration),
                r.imagesPerS, static_cast<long long>(r.skippedSteps));
  std::string text = summary;
  if (r.bestAccuracy >= 0) {
    std::snprintf(summary, sizeof summary, ", best eval accuracy %.2f%%", 100 * r.bestAccuracy);
    text += summary;
  }
  log.line(text);
  log.line("model: " + r.latest);
}

// Trains `cfg` into `run` (a process of several when the environment says so) until it ends or
// a signal stops it with a checkpoint; 130 when stopped.
int runTraining(const tr::TrainConfig& cfg, const std::string& run, bool resume) {
  tr::RunOptions ro;
  ro.runDir = run;
  ro.resume = resume;
  if (const auto dist = tr::DistributedOptions::fromEnvironment()) {
    std::cerr << "rank " << dist->rank << " of " << dist->worldSize << ": joining "
              << dist->masterAddr << ":" << dist->masterPort << "\n";
    ro.group = std::make_shared<tr::ProcessGroup>(*dist);
  }
  const bool leader = !ro.group || ro.group->rank() == 0;
  TrainLog log;
  tr::TrainHooks hooks;
  hooks.stop = &g_stopRequested;
  hooks.progress = [&log](const std::string& line) { log.line(line); };
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);

  tr::Trainer trainer(cfg, ro, hooks);  // creates and locks the run folder
  if (leader) log.open(run + "/" + core::run_folder::kTrainLog);
  if (leader) log.line(trainer.describe());
  tr::TrainResult r;
  try {
    r = trainer.run();
  } catch (const std::exception& e) {
    log.line(std::string("error: ") + e.what(), /*toStdout=*/false);
    throw;
  }
  if (leader) printTrainSummary(log, r);
  return r.interrupted ? 130 : 0;
}

}  // namespace

int runTrainCommand(const std::vector<std::string>& args) {
  if (wantsRemoteTrain(args)) return runRemoteTrainCommand(args);
  const CliArgs a = parseTrainArgs(args);
  if (!a.positionals().empty()) throw std::invalid_argument("train takes no positional arguments");
  if (printPresetsIfAsked(a)) return 0;
  const std::string run = a.required("run");
  const bool resume = a.has("resume");
  tr::TrainConfig cfg = resume ? resumedConfig(a, run) : newRunConfig(a);
  applyRunOptions(a, cfg);
  return runTraining(cfg, run, resume);
}

int runTrainBenchCommand(const std::vector<std::string>& args) {
  const CliArgs a(args,
                  {"preset", "width", "batch", "iterations", "data", "device", "threads", "profile",
                   "loader-threads"},
                  {"json", "skip-ended-rows", "no-bf16"});
  tr::TrainBenchOptions o;
  o.preset = a.value("preset", o.preset);
  o.width = a.doubleValue("width", o.width);
  o.batch = a.intValue("batch", o.batch);
  o.iterations = a.intValue("iterations", o.iterations);
  o.data = a.value("data");
  o.device = a.value("device", o.device);
  o.threads = a.intValue("threads", 0);
  o.profile = a.intValue("profile", 0);
  o.skipEndedRows = a.has("skip-ended-rows");
  o.bf16 = !a.has("no-bf16");
  o.loaderThreads = a.intValue("loader-threads", 0);
  if (o.batch < 1 || o.iterations < 1)
    throw std::invalid_argument("--batch and --iterations must be positive");
  if (o.profile < 0) throw std::invalid_argument("--profile must be a number of operators");
  const auto r = tr::benchTraining(o);
  if (a.has("json")) {
    std::printf(
        "{\"preset\": \"%s\", \"width\": %g, \"batch\": %d, \"iterations\": %d, \"device\": "
        "\"%s\", \"cpu\": \"%s\", \"bf16\": %s, \"heap\": \"%s\", \"train_images_per_s\": %.2f, "
        "\"ms_per_iteration\": %.1f",
        r.preset.c_str(), r.width, r.batch, r.iterations, r.device.c_str(),
        core::cpuFeatureSummary().c_str(), r.bf16 ? "true" : "false", core::heapSettings().c_str(),
        r.imagesPerS, r.msPerIteration);
    std::printf(", \"routes\": %s", core::routesJson(r.routes).c_str());
    if (o.profile > 0) {  // the profile's keys in this object
      const std::string p = r.profile.toJson();
      std::printf(", %s", p.substr(1, p.size() - 2).c_str());
    }
    std::printf("}\n");
    return 0;
  }
  std::printf("cpu: %s\n", core::cpuFeatureSummary().c_str());
  std::printf(
      "%s, width %g, batch %d on %s%s: %.1f training images/s (%.0f ms a step, %d steps; heap: "
      "%s)\n",
      r.preset.c_str(), r.width, r.batch, r.device.c_str(), r.bf16 ? ", bf16" : "", r.imagesPerS,
      r.msPerIteration, r.iterations, core::heapSettings().c_str());
  std::printf("kernel routes (every step, the warm-up included):\n%s",
              core::formatRoutes(r.routes).c_str());
  if (o.profile > 0)
    std::printf("%s", r.profile
                          .toText("profiled (every step, the warm-up included; the profiler "
                                  "slows each operator)")
                          .c_str());
  return 0;
}

}  // namespace foveal::app
