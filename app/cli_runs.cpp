#include "cli_runs.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cli_args.h"
#include "image/grey_image.h"
#include "run/remote_run.h"
#include "run/run_folder.h"
#include "run/run_log.h"
#include "run/trainer_checkpoint_options.h"
#include "run/trainer_logs.h"
#include "trace/model_session.h"

namespace foveal::app {

namespace core = foveal::core;
namespace fs = std::filesystem;

const char* kRunsUsage =
    R"(  train       ... --run DIR --target ssh://[user@]host[:port]/RDIR | slurm | slurm://[user@]login[:port]/RDIR
              [--remote-cli PATH] [--ssh-config FILE] [--ssh-identity KEY] [--slurm-partition P]
              [--slurm-gpus N] [--slurm-cpus N] [--slurm-mem M] [--slurm-time T] [--slurm-account A]
              [--slurm-qos Q] [--slurm-nodes N] [--slurm-ntasks N] [--slurm-ntasks-per-node N]
              [--slurm-signal S] [--slurm-no-requeue] [--slurm-extra LINE[;LINE...]] [--print-script]
              train on an SSH host (RDIR there; relative to the home, //abs for an absolute path) or
              a Slurm cluster (sbatch here, or through a login host by SSH); DIR is the local
              folder: the run's description and, for another machine, the mirror of RDIR's small
              files. ssh runs in batch mode (keys or an agent; --ssh-identity: that key only) with
              host keys checked. Slurm jobs
              are requeueable, get SIGTERM S s (default 120) before their time limit and resume
              from their checkpoint when they start again; --slurm-ntasks N trains data-parallel
              under srun. --print-script prints the batch script and submits nothing
  runs        list [ROOT] | status RUN | follow RUN [--interval S] [--timeout S] | stop RUN |
              resume RUN [--iterations N] [--threads N] [--device D]
              the runs on other machines under ROOT (default .); a run's job state (pending and
              why, running, completed, stopped, failed, cancelled, timeout, preempted, node
              failure); follow mirrors the run folder and prints its records until the job ends
              (exit 0 when it completed or stopped); stop sends SIGTERM to the trainer, which
              writes a checkpoint; resume starts it again from there
              show DIR [--json] [--settle S] | follow DIR [--interval S] [--settle S] [--idle S]
              [--timeout S] [--probe IMAGE...]
              another trainer's run folder (TensorBoard event files, deep-text-recognition-
              benchmark's or EasyOCR's log_train.txt, MMEngine's vis_data/scalars.json,
              PaddleOCR's train.log, Lightning's or PyLaia's metrics.csv): show prints its
              curves (the trainer's tags and the catalogue names they map to) and its complete
              checkpoints (--json: {"trainer", "series": [{"tag", "catalogue", "points": [{"step",
              "value", "wall_time"}]}], "checkpoints": [{"file", "step"}], "damage"}); follow
              prints the latest values as the logs grow and each checkpoint once complete (its
              size and time unchanged for --settle S, default 2), and with --probe reads each
              IMAGE with every new checkpoint (DTRB's options from the run's opt.txt); it stops
              after --idle S without news (exit 0) or --timeout S (exit 1)
)";

namespace {

// The options that say where and how a run is submitted; every other option goes to the trainer.
const std::set<std::string> kTargetValued = {
    "target",          "run",        "remote-cli",  "ssh-config",   "ssh-identity",
    "slurm-partition", "slurm-gpus", "slurm-cpus",  "slurm-mem",    "slurm-time",
    "slurm-account",   "slurm-qos",  "slurm-nodes", "slurm-ntasks", "slurm-ntasks-per-node",
    "slurm-signal",    "slurm-extra"};
const std::set<std::string> kTargetFlags = {"print-script", "slurm-no-requeue"};

std::string describe(const core::JobStatus& st) {
  std::string s = core::jobStateName(st.state);
  if (!st.reason.empty()) s += " (" + st.reason + ")";
  if (st.restarts > 0) s += ", restarted " + std::to_string(st.restarts) + "x";
  return s;
}

}  // namespace

bool wantsRemoteTrain(const std::vector<std::string>& args) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--target") return args[i + 1] != "local";
  return false;
}

int runRemoteTrainCommand(const std::vector<std::string>& args) {
  std::vector<std::string> mine, trainArgs;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string name = args[i].rfind("--", 0) == 0 ? args[i].substr(2) : "";
    if (kTargetValued.count(name)) {
      if (i + 1 >= args.size()) throw std::invalid_argument("--" + name + " needs a value");
      mine.push_back(args[i]);
      mine.push_back(args[++i]);
    } else if (kTargetFlags.count(name)) {
      mine.push_back(args[i]);
    } else if (name == "resume") {
      throw std::invalid_argument("a run on another machine resumes with 'foveal-cli runs resume'");
    } else {
      trainArgs.push_back(args[i]);
    }
  }
  const CliArgs a(mine, kTargetValued, kTargetFlags);
  core::RunTarget t = core::RunTarget::parse(a.required("target"));
  t.host.configFile = a.value("ssh-config", "");
  t.host.identityFile = a.value("ssh-identity", "");
  // ssh only warns about a missing file and goes on with other keys: say so here instead.
  for (const auto& [option, file] : {std::pair{"--ssh-config", t.host.configFile},
                                     std::pair{"--ssh-identity", t.host.identityFile}}) {
    std::error_code ec;
    if (!file.empty() && !fs::is_regular_file(file, ec))
      throw core::Error(file + ": no such file (" + option + ")");
  }
  t.remoteCli = a.value("remote-cli", t.remoteCli);
  auto& s = t.slurm;
  s.partition = a.value("slurm-partition", "");
  s.gpus = a.intValue("slurm-gpus", 0);
  s.cpusPerTask = a.intValue("slurm-cpus", 0);
  s.memory = a.value("slurm-mem", "");
  s.time = a.value("slurm-time", "");
  s.account = a.value("slurm-account", "");
  s.qos = a.value("slurm-qos", "");
  s.nodes = a.intValue("slurm-nodes", 0);
  s.ntasks = a.intValue("slurm-ntasks", 1);
  s.ntasksPerNode = a.intValue("slurm-ntasks-per-node", 0);
  s.signalSeconds = a.intValue("slurm-signal", 120);
  s.requeue = !a.has("slurm-no-requeue");
  s.extra = splitSemicolons(a.value("slurm-extra", ""));
  s.validate();
  if (t.kind != core::RunTarget::Kind::Slurm)
    for (const auto& o : mine)
      if (o.rfind("--slurm-", 0) == 0)
        throw std::invalid_argument(o + " needs a Slurm target (--target slurm...)");
  const std::string run = a.required("run");
  if (a.has("print-script")) {
    if (t.kind != core::RunTarget::Kind::Slurm)
      throw std::invalid_argument("--print-script needs a Slurm target");
    if (!t.mirrored()) t.remoteDir = fs::absolute(run).lexically_normal().string();
    std::cout << t.batchScript(trainArgs);
    return 0;
  }
  auto remote = core::RemoteRun::create(run, t, trainArgs);
  const std::string id = remote.submit();
  std::cout << (t.kind == core::RunTarget::Kind::Slurm ? "submitted job " : "started trainer pid ")
            << id << " on " << t.toString() << "\nfollow it: foveal-cli runs follow " << run
            << "\n";
  return 0;
}

namespace {

int follow(const std::string& dir, double interval, double timeout) {
  auto remote = core::RemoteRun::open(dir);
  core::RunLog log(remote.runDir());
  const auto start = std::chrono::steady_clock::now();
  std::string lastState;
  bool connectionLost = false;
  std::set<std::string> skippedShown;
  size_t shown = 0;
  int generation = log.generation();
  // Prints the records that arrived since the last call (all again when the file was replaced).
  const auto printNew = [&] {
    log.refresh();
    if (log.generation() != generation) {
      generation = log.generation();
      shown = 0;
    }
    for (; shown < log.records().size(); ++shown) {
      const auto& r = log.records()[shown];
      if (r.kind == "train")
        std::printf("iteration %lld loss %.4f\n", static_cast<long long>(r.iteration()),
                    r.value("loss"));
      else
        std::printf("%s at iteration %lld%s\n", r.kind.c_str(),
                    static_cast<long long>(r.iteration()),
                    r.string("reason").empty() ? "" : (" (" + r.string("reason") + ")").c_str());
    }
    std::fflush(stdout);
  };
  for (;;) {
    const auto m = remote.mirror();
    core::JobStatus st;
    std::string error = m.ok ? "" : m.error;
    if (m.ok) {
      try {
        st = remote.status();
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    if (!error.empty()) {
      if (!connectionLost) std::cout << "connection lost: " << error << "; retrying" << std::endl;
      connectionLost = true;
    } else {
      if (connectionLost) std::cout << "connection back; the mirror catches up" << std::endl;
      connectionLost = false;
      // What the mirror left out (a name the trainer does not write, a file unreadable there),
      // once each: the pass went on without it.
      for (const auto& s : m.skipped)
        if (skippedShown.insert(s).second) std::cout << "left out: " << s << std::endl;
      printNew();
      const std::string state = describe(st);
      if (state != lastState) std::cout << "job " << remote.jobId() << ": " << state << std::endl;
      lastState = state;
      if (core::jobFinished(st.state)) {
        // One more pass: what the trainer wrote last arrives before the follow ends.
        const auto last = remote.mirror();
        if (last.ok) {
          printNew();
          std::cout << "mirror complete" << std::endl;
          return st.state == core::JobState::Completed || st.state == core::JobState::Stopped ? 0
                                                                                              : 1;
        }
      }
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timeout > 0 && elapsed > timeout) {
      std::cout << "gave up following after " << timeout << " s" << std::endl;
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(interval * 1000)));
  }
}

// ---- Another trainer's run folder (issue 72)

bool isForeignRun(const std::string& dir) {
  // Foveal's own runs (a local one has config.json and metrics.jsonl; one on another machine
  // remote.json) keep `runs follow`'s job-following behaviour.
  std::error_code ec;
  const fs::path d(dir);
  if (core::RemoteRun::isRemoteRun(dir)) return false;
  return !(fs::exists(d / core::run_folder::kConfig, ec) &&
           fs::exists(d / core::run_folder::kMetrics, ec));
}

nlohmann::ordered_json number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

int showForeign(const std::string& dir, bool asJson, double settle) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw core::Error(dir + ": not a folder");
  core::TrainerRun run(dir);
  run.setSettleSeconds(settle);
  run.refresh();
  if (!run.format() && run.checkpoints().empty())
    throw core::Error(dir +
                      ": no run of a known trainer here (TensorBoard event files, "
                      "log_train.txt, vis_data/scalars.json, train.log or metrics.csv)");
  if (asJson) {
    nlohmann::ordered_json out;
    out["trainer"] = run.trainer();
    out["series"] = nlohmann::ordered_json::array();
    for (const auto& s : run.series()) {
      nlohmann::ordered_json points = nlohmann::ordered_json::array();
      for (const auto& p : s.points)
        points.push_back(
            {{"step", p.step}, {"value", number(p.value)}, {"wall_time", number(p.wallTime)}});
      out["series"].push_back({{"tag", s.tag}, {"catalogue", s.catalogue}, {"points", points}});
    }
    out["checkpoints"] = nlohmann::ordered_json::array();
    for (const auto& c : run.checkpoints())
      out["checkpoints"].push_back(
          {{"file", c.file},
           {"step", c.step >= 0 ? nlohmann::ordered_json(c.step) : nlohmann::ordered_json()}});
    out["damage"] = nlohmann::ordered_json::array();
    for (const auto& d : run.damage())
      out["damage"].push_back({{"file", d.file}, {"offset", d.offset}, {"message", d.message}});
    std::cout << out.dump(1) << "\n";
    return 0;
  }
  std::cout << "trainer: "
            << (run.format() ? run.trainer() + " (" + run.format()->name() + ")" : "?")
            << "\nseries: " << run.series().size() << "\n";
  for (const auto& s : run.series()) {
    std::printf("  %-40s %-14s %6zu points", s.tag.c_str(),
                s.catalogue.empty() ? "-" : s.catalogue.c_str(), s.points.size());
    if (!s.points.empty())
      std::printf("  steps %lld..%lld  last %s", static_cast<long long>(s.points.front().step),
                  static_cast<long long>(s.points.back().step), fmt(s.points.back().value).c_str());
    std::printf("\n");
  }
  std::printf("checkpoints: %zu\n", run.checkpoints().size());
  for (const auto& c : run.checkpoints())
    std::printf("  %-60s step %s%s  %llu bytes\n", c.file.c_str(),
                c.step >= 0 ? std::to_string(c.step).c_str() : "?",
                c.epoch >= 0 ? (" (epoch " + std::to_string(c.epoch) + ")").c_str() : "",
                static_cast<unsigned long long>(c.size));
  for (const auto& d : run.damage())
    std::printf("damage: %s: byte %llu: %s\n", d.file.c_str(),
                static_cast<unsigned long long>(d.offset), d.message.c_str());
  std::fflush(stdout);
  return 0;
}

struct Probe {
  std::string path;
  core::GreyImage image;
};

// Reads the probes with checkpoint `c` of the run: opened as `trace` opens a model file, with
// the options the trainer wrote beside it (DTRB's opt.txt).
void readProbes(const std::string& dir, const core::TrainerCheckpoint& c,
                const std::vector<Probe>& probes) {
  const std::string path = (fs::path(dir) / c.file).string();
  if (fs::path(c.file).extension() == ".pdparams") {
    std::cout << "  (PaddlePaddle weights: Foveal cannot open them)" << std::endl;
    return;
  }
  try {
    const auto options = core::trainerCheckpointOptions(dir, c.file);
    const auto session = core::ModelSession::open(path, options);
    for (const auto& p : probes) {
      const auto t = session->trace(p.image, p.path);
      std::printf("  probe %s: \"%s\" confidence %.4f\n", fs::path(p.path).filename().c_str(),
                  t.prediction.c_str(), t.confidence);
    }
  } catch (const std::exception& e) {
    std::cout << "  cannot read the probes with it: " << e.what() << "\n";
  }
  std::fflush(stdout);
}

int followForeign(const std::string& dir, const std::vector<std::string>& images, double interval,
                  double settle, double idle, double timeout) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw core::Error(dir + ": not a folder");
  std::vector<Probe> probes;
  for (const auto& img : images) probes.push_back({img, core::readImage(img, /*keepColour=*/true)});
  core::TrainerRun run(dir);
  run.setSettleSeconds(settle);
  const auto start = std::chrono::steady_clock::now();
  auto lastNews = start;
  std::map<std::string, int64_t> printedStep;                 // per tag, the newest step printed
  std::set<std::tuple<std::string, int64_t, uint64_t>> seen;  // checkpoints: file, time, size
  size_t damageShown = 0;
  bool announced = false;
  for (;;) {
    const bool changed = run.refresh();
    if (!announced && run.format()) {
      std::cout << "following " << dir << ": " << run.trainer() << " (" << run.format()->name()
                << ")" << std::endl;
      announced = true;
    }
    // One line per look: each tag's newest value, at the newest step among them.
    int64_t newest = -1;
    std::string line;
    for (const auto& s : run.series()) {
      if (s.points.empty()) continue;
      auto& printed =
          printedStep.try_emplace(s.tag, std::numeric_limits<int64_t>::min()).first->second;
      if (s.points.back().step <= printed) continue;
      printed = s.points.back().step;
      newest = std::max(newest, printed);
      line += "  " + s.tag + " " + fmt(s.points.back().value);
    }
    if (!line.empty()) std::cout << "step " << newest << ":" << line << std::endl;
    if (run.damage().size() < damageShown) damageShown = 0;  // read again from the start
    for (; damageShown < run.damage().size(); ++damageShown) {
      const auto& d = run.damage()[damageShown];
      std::cout << "damage: " << d.file << ": byte " << d.offset << ": " << d.message << std::endl;
    }
    for (const auto& c : run.checkpoints()) {
      if (!seen.insert({c.file, c.mtimeNs, c.size}).second) continue;
      std::cout << "checkpoint " << c.file << " (step "
                << (c.step >= 0 ? std::to_string(c.step) : std::string("?"))
                << (c.epoch >= 0 ? ", epoch " + std::to_string(c.epoch) : std::string()) << ", "
                << c.size << " bytes)" << std::endl;
      if (!probes.empty()) readProbes(dir, c, probes);
    }
    const auto now = std::chrono::steady_clock::now();
    if (changed) lastNews = now;
    const double quiet = std::chrono::duration<double>(now - lastNews).count();
    const double elapsed = std::chrono::duration<double>(now - start).count();
    if (idle > 0 && quiet >= idle) {
      std::cout << "nothing new for " << idle << " s: stopped following" << std::endl;
      return 0;
    }
    if (timeout > 0 && elapsed > timeout) {
      std::cout << "gave up following after " << timeout << " s" << std::endl;
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(interval * 1000)));
  }
}

}  // namespace

int runRunsCommand(const std::vector<std::string>& args) {
  if (args.empty())
    throw std::invalid_argument(
        "runs needs a subcommand: list, status, follow, stop, resume or show");
  const std::string sub = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "list") {
    const CliArgs a(rest, {}, {});
    if (a.positionals().size() > 1) throw std::invalid_argument("runs list takes one ROOT");
    const std::string root = a.positionals().empty() ? "." : a.positionals()[0];
    std::error_code ec;
    if (!fs::is_directory(root, ec)) throw core::Error(root + ": not a folder");
    for (const auto& e : fs::directory_iterator(root, ec)) {
      if (!e.is_directory() || !core::RemoteRun::isRemoteRun(e.path().string())) continue;
      const auto r = core::RemoteRun::open(e.path().string());
      std::string state;
      try {
        state = describe(r.status());
      } catch (const std::exception& ex) {
        state = std::string("unknown: ") + ex.what();
      }
      std::cout << e.path().filename().string() << "  " << r.target().toString() << "  job "
                << r.jobId() << "  " << state << "\n";
    }
    return 0;
  }
  const std::set<std::string> valued =
      sub == "follow"   ? std::set<std::string>{"interval", "timeout", "settle", "idle"}
      : sub == "resume" ? std::set<std::string>{"iterations", "threads", "device"}
      : sub == "show"   ? std::set<std::string>{"settle"}
                        : std::set<std::string>{};
  const std::set<std::string> flags = sub == "follow" ? std::set<std::string>{"probe"}
                                      : sub == "show" ? std::set<std::string>{"json"}
                                                      : std::set<std::string>{};
  const CliArgs a(rest, valued, flags);
  if (a.positionals().empty()) throw std::invalid_argument("runs " + sub + " needs one RUN");
  const std::string dir = a.positionals()[0];
  // --probe IMAGE...: the positionals after the folder.
  const std::vector<std::string> images(a.positionals().begin() + 1, a.positionals().end());
  if (!images.empty() && !(sub == "follow" && a.has("probe")))
    throw std::invalid_argument("runs " + sub + " needs one RUN");
  if (a.has("probe") && images.empty()) throw std::invalid_argument("--probe needs images");
  if (sub == "show")
    return showForeign(dir, a.has("json"), a.doubleInRange("settle", 2.0, 0, 3600));
  if (sub == "follow" &&
      (a.has("probe") || a.has("settle") || a.has("idle") || isForeignRun(dir))) {
    if (core::RemoteRun::isRemoteRun(dir))
      throw std::invalid_argument(dir +
                                  ": a Foveal run on another machine: follow it without "
                                  "--probe, --settle and --idle");
    return followForeign(dir, images, a.doubleInRange("interval", 2.0, 0.05, 3600),
                         a.doubleInRange("settle", 2.0, 0, 3600),
                         a.doubleInRange("idle", 0, 0, 1e7), a.doubleInRange("timeout", 0, 0, 1e7));
  }
  if (sub == "status") {
    const auto r = core::RemoteRun::open(dir);
    core::RunLog log(r.runDir());
    log.refresh();
    std::cout << "target: " << r.target().toString() << "\njob: " << r.jobId()
              << "\nstate: " << describe(r.status()) << "\niteration: " << log.iteration() << "/"
              << log.totalIterations() << "\n";
    return 0;
  }
  if (sub == "follow")
    return follow(dir, a.doubleValue("interval", 5.0), a.doubleValue("timeout", 0));
  if (sub == "stop") {
    auto r = core::RemoteRun::open(dir);
    r.stop();
    std::cout << "sent SIGTERM to job " << r.jobId() << ": it writes a checkpoint and stops\n";
    return 0;
  }
  if (sub == "resume") {
    auto r = core::RemoteRun::open(dir);
    std::vector<std::string> extra;
    for (const char* o : {"iterations", "threads", "device"})
      if (a.has(o)) extra.insert(extra.end(), {std::string("--") + o, a.value(o)});
    const std::string id = r.submit(/*resume=*/true, extra);
    std::cout << "resumed as job " << id << "\n";
    return 0;
  }
  throw std::invalid_argument("runs: unknown subcommand '" + sub + "'");
}

}  // namespace foveal::app
