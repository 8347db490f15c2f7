#include "cli_runs.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <stdexcept>
#include <thread>

#include "base/error.h"
#include "cli_args.h"
#include "run/remote_run.h"
#include "run/run_log.h"

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

}  // namespace

int runRunsCommand(const std::vector<std::string>& args) {
  if (args.empty())
    throw std::invalid_argument("runs needs a subcommand: list, status, follow, stop or resume");
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
      sub == "follow"   ? std::set<std::string>{"interval", "timeout"}
      : sub == "resume" ? std::set<std::string>{"iterations", "threads", "device"}
                        : std::set<std::string>{};
  const CliArgs a(rest, valued, {});
  if (a.positionals().size() != 1) throw std::invalid_argument("runs " + sub + " needs one RUN");
  const std::string dir = a.positionals()[0];
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
