#include "run/remote_run.h"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "run/run_folder.h"

namespace foveal::core {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* jobStateName(JobState s) {
  switch (s) {
    case JobState::Unknown:
      return "unknown";
    case JobState::Pending:
      return "pending";
    case JobState::Running:
      return "running";
    case JobState::Completed:
      return "completed";
    case JobState::Stopped:
      return "stopped";
    case JobState::Failed:
      return "failed";
    case JobState::Cancelled:
      return "cancelled";
    case JobState::Timeout:
      return "timeout";
    case JobState::Preempted:
      return "preempted";
    case JobState::NodeFail:
      return "node failure";
    case JobState::Requeued:
      return "requeued";
    case JobState::Gone:
      return "gone";
  }
  return "unknown";
}

JobState parseSlurmState(const std::string& text) {
  std::string s = text.substr(0, text.find(' '));  // "CANCELLED by 0"
  while (!s.empty() && (s.back() == '+' || s.back() == '\r')) s.pop_back();
  if (s == "PENDING" || s == "PD" || s == "SUSPENDED" || s == "REQUEUE_HOLD" ||
      s == "RESV_DEL_HOLD")
    return JobState::Pending;
  if (s == "RUNNING" || s == "R" || s == "COMPLETING" || s == "CG" || s == "CONFIGURING" ||
      s == "STAGE_OUT" || s == "SIGNALING" || s == "RESIZING")
    return JobState::Running;
  if (s == "COMPLETED" || s == "CD") return JobState::Completed;
  if (s == "FAILED" || s == "F" || s == "OUT_OF_MEMORY" || s == "BOOT_FAIL" || s == "DEADLINE")
    return JobState::Failed;
  if (s == "CANCELLED" || s == "CA") return JobState::Cancelled;
  if (s == "TIMEOUT" || s == "TO") return JobState::Timeout;
  if (s == "PREEMPTED" || s == "PR") return JobState::Preempted;
  if (s == "NODE_FAIL" || s == "NF") return JobState::NodeFail;
  if (s == "REQUEUED" || s == "REQUEUE_FED" || s == "RQ") return JobState::Requeued;
  return JobState::Unknown;
}

bool jobFinished(JobState s) {
  return s == JobState::Completed || s == JobState::Stopped || s == JobState::Failed ||
         s == JobState::Cancelled || s == JobState::Timeout || s == JobState::NodeFail ||
         s == JobState::Gone;
}

namespace {

std::vector<std::string> splitOn(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string field(const std::string& line, const std::string& key) {
  const std::string k = " " + key + "=";
  const std::string padded = " " + line;
  const size_t p = padded.find(k);
  if (p == std::string::npos) return {};
  const size_t b = p + k.size();
  return padded.substr(b, padded.find(' ', b) - b);
}

// A trainer that stopped on SIGTERM exits with 130 (foveal-cli train): a stop, not a failure.
constexpr int kStoppedExit = 130;

JobStatus fromExit(JobState state, const std::string& exitCode) {
  JobStatus st{state, {}, 0};
  const int code = std::atoi(exitCode.substr(0, exitCode.find(':')).c_str());
  if (state == JobState::Failed && code == kStoppedExit) st.state = JobState::Stopped;
  if (!exitCode.empty() && exitCode != "0:0") st.reason = "exit code " + exitCode;
  return st;
}

}  // namespace

JobStatus parseSlurmStatus(const std::string& output) {
  std::istringstream in(output);
  std::string line;
  JobStatus fromSqueue, fromSacct, fromScontrol;
  bool squeue = false, sacct = false, scontrol = false;
  while (std::getline(in, line)) {
    if (line.rfind("squeue|", 0) == 0) {
      const auto f = splitOn(line, '|');
      fromSqueue.state = parseSlurmState(f.size() > 1 ? f[1] : "");
      if (f.size() > 2 && f[2] != "None") fromSqueue.reason = f[2];
      squeue = true;
    } else if (line.rfind("sacct|", 0) == 0 && !sacct) {
      const auto f = splitOn(line, '|');
      fromSacct = fromExit(parseSlurmState(f.size() > 1 ? f[1] : ""), f.size() > 2 ? f[2] : "");
      sacct = true;
    } else if (line.find("JobState=") != std::string::npos) {
      fromScontrol = fromExit(parseSlurmState(field(line, "JobState")), field(line, "ExitCode"));
      const std::string reason = field(line, "Reason");
      if (fromScontrol.state == JobState::Pending && reason != "None") fromScontrol.reason = reason;
      fromScontrol.restarts = std::atoi(field(line, "Restarts").c_str());
      scontrol = true;
    }
  }
  // scontrol alone knows the restarts; the live state is squeue's when it has one.
  JobStatus st = scontrol ? fromScontrol : sacct ? fromSacct : JobStatus{JobState::Gone, {}, 0};
  if (squeue && fromSqueue.state != JobState::Unknown) {
    st.state = fromSqueue.state;
    st.reason = fromSqueue.reason;
  } else if (!scontrol && sacct) {
    st = fromSacct;
  }
  return st;
}

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A part of a path as trainers write them: letters, digits and . _ - = + , @, not starting
// with '.' (hidden, "..") or '-' (an option to a command).
bool plainPart(const std::string& part) {
  if (part.empty() || part.size() > 255 || part[0] == '.' || part[0] == '-') return false;
  for (unsigned char c : part)
    if (!std::isalnum(c) && c != '.' && c != '_' && c != '-' && c != '=' && c != '+' && c != ',' &&
        c != '@')
      return false;
  return true;
}

constexpr int kForeignDepth = 4;  // strhub's lightning_logs/version_N/, MMEngine's TS/vis_data/
constexpr const char* kEventPrefix = "events.out.tfevents.";

}  // namespace

MirrorKind mirrorKind(const std::string& name, bool foreign) {
  std::vector<std::string> parts = splitOn(name, '/');
  if (parts.empty() || int(parts.size()) > (foreign ? kForeignDepth : 2)) return MirrorKind::Skip;
  for (const auto& p : parts)
    if (!plainPart(p)) return MirrorKind::Skip;
  const std::string& base = parts.back();
  const bool top = parts.size() == 1;
  if (base.rfind(kEventPrefix, 0) == 0 && base.size() > std::strlen(kEventPrefix))
    return foreign || top ? MirrorKind::Append : MirrorKind::Skip;
  if (!foreign) {
    if (parts.size() == 2)
      return parts[0] == run_folder::kHistoryDir && run_folder::historyIteration(base) >= 0 &&
                     base == run_folder::historyFileName(run_folder::historyIteration(base))
                 ? MirrorKind::Whole
                 : MirrorKind::Skip;
    if (base == run_folder::kMetrics || base == run_folder::kTrainLog) return MirrorKind::Append;
    if (base == run_folder::kConfig || base == run_folder::kLatestModel ||
        base == run_folder::kBestModel)
      return MirrorKind::Whole;
    if (base == run_folder::kState) return MirrorKind::Note;
    return MirrorKind::Skip;
  }
  // The logs: DTRB's and EasyOCR's (log_train.txt, log_dataset.txt, opt.txt, all appended),
  // PaddleOCR's train.log, MMEngine's TIMESTAMP.log and vis_data/scalars.json (appended).
  if (base == "log_train.txt" || base == "log_dataset.txt" || base == "opt.txt" ||
      base == "scalars.json" || endsWith(base, ".log"))
    return MirrorKind::Append;
  // Rewritten whole: Lightning's CSVLogger rewrites metrics.csv (its header grows with new keys),
  // hparams.yaml, PaddleOCR's config.yml, MMEngine's last_checkpoint.
  if (base == "metrics.csv" || base == "hparams.yaml" || base == "config.yml" ||
      base == "config.yaml" || base == "last_checkpoint")
    return MirrorKind::Whole;
  for (const char* ext :
       {".pth", ".ckpt", ".pdparams", ".mlmodel", ".pt", ".safetensors", ".pth.tar"})
    if (endsWith(base, ext) && base.size() > std::strlen(ext)) return MirrorKind::Checkpoint;
  return MirrorKind::Skip;
}

std::string printableName(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::vector<RemoteFileEntry> parseRemoteListing(const std::string& listing,
                                                std::vector<std::string>* bad) {
  std::vector<RemoteFileEntry> out;
  size_t at = 0;
  while (at < listing.size()) {
    size_t end = listing.find('\0', at);
    if (end == std::string::npos) end = listing.size();  // a record cut short: parsed as it is
    const std::string record = listing.substr(at, end - at);
    at = end + 1;
    if (record.empty()) continue;
    // SIZE MTIME INODE NAME: the name is everything after the third space (it may hold spaces
    // and newlines itself).
    const size_t s1 = record.find(' ');
    const size_t s2 = s1 == std::string::npos ? s1 : record.find(' ', s1 + 1);
    const size_t s3 = s2 == std::string::npos ? s2 : record.find(' ', s2 + 1);
    const std::string size = record.substr(0, s1);
    if (s3 == std::string::npos || size.empty() ||
        size.find_first_not_of("0123456789") != std::string::npos || size.size() > 19) {
      if (bad) bad->push_back(printableName(record) + ": not a listing record");
      continue;
    }
    RemoteFileEntry e;
    e.size = std::stoull(size);
    e.signature = record.substr(0, s3);
    e.name = record.substr(s3 + 1);
    if (e.name.rfind("./", 0) == 0) e.name.erase(0, 2);
    out.push_back(std::move(e));
  }
  return out;
}

RemoteRun RemoteRun::create(const std::string& localDir, const RunTarget& target,
                            const std::vector<std::string>& trainArgs) {
  if (!target.remote()) throw Error("run target 'local': start the trainer directly");
  target.slurm.validate();
  std::error_code ec;
  fs::create_directories(localDir, ec);
  if (ec) throw Error(localDir + ": cannot create the run folder (" + ec.message() + ")");
  if (fs::exists(fs::path(localDir) / run_folder::kRemote))
    throw Error(localDir + ": this folder already holds a run (" +
                std::string(run_folder::kRemote) + "); use 'runs resume' or another folder");
  RemoteRun r;
  r.m_localDir = localDir;
  r.m_target = target;
  if (!target.mirrored()) r.m_target.remoteDir = fs::absolute(localDir).lexically_normal().string();
  r.m_trainArgs = trainArgs;
  r.save();
  return r;
}

RemoteRun RemoteRun::attach(const std::string& localDir, const RunTarget& target) {
  if (!target.mirrored())
    throw Error("run target '" + target.toString() +
                "': another trainer's run folder is followed on an SSH host (ssh://HOST/DIR or "
                "slurm://LOGIN/DIR); a folder on this machine is added as it is");
  if (target.remoteDir.empty()) throw Error(target.toString() + ": names no run folder");
  std::error_code ec;
  fs::create_directories(localDir, ec);
  if (ec) throw Error(localDir + ": cannot create the mirror folder (" + ec.message() + ")");
  if (fs::exists(fs::path(localDir) / run_folder::kRemote))
    throw Error(localDir + ": this folder already holds a run (" +
                std::string(run_folder::kRemote) + "); choose another folder for the mirror");
  RemoteRun r;
  r.m_localDir = localDir;
  r.m_target = target;
  r.m_foreign = true;
  r.save();
  return r;
}

bool RemoteRun::resumable() const {
  if (!m_target.mirrored()) {
    std::error_code ec;
    return fs::exists(fs::path(m_localDir) / run_folder::kState, ec);
  }
  return !m_remoteState.empty();
}

bool RemoteRun::isRemoteRun(const std::string& localDir) {
  std::error_code ec;
  return fs::exists(fs::path(localDir) / run_folder::kRemote, ec);
}

RemoteRun RemoteRun::open(const std::string& localDir) {
  const std::string path = (fs::path(localDir) / run_folder::kRemote).string();
  if (!fs::exists(path))
    throw Error(localDir + ": not a run on another machine (no " +
                std::string(run_folder::kRemote) + ")");
  const std::string text = readFile(path);
  RemoteRun r;
  r.m_localDir = localDir;
  try {
    const json j = json::parse(text);
    r.m_target = RunTarget::fromJson(j.at("target").dump(), path);
    r.m_trainArgs = j.value("train_args", std::vector<std::string>{});
    r.m_resumeArgs = j.value("resume_args", std::vector<std::string>{});
    r.m_jobId = j.value("job", "");
    r.m_mirrored = j.value("mirrored", std::map<std::string, std::string>{});
    r.m_remoteState = j.value("remote_state", "");
    r.m_foreign = j.value("foreign", false);
    r.m_pending = j.value("pending", std::map<std::string, std::string>{});
  } catch (const json::exception& e) {
    throw Error(path + ": not a remote run description (" + e.what() + ")");
  }
  return r;
}

void RemoteRun::save() const {
  json j;
  j["target"] = json::parse(m_target.toJson());
  j["train_args"] = m_trainArgs;
  j["resume_args"] = m_resumeArgs;
  j["job"] = m_jobId;
  j["mirrored"] = m_mirrored;
  j["remote_state"] = m_remoteState;
  if (m_foreign) {
    j["foreign"] = true;
    j["pending"] = m_pending;
  }
  writeFileAtomically((fs::path(m_localDir) / run_folder::kRemote).string(), j.dump(2) + "\n",
                      "remote run description");
}

std::string RemoteRun::batchScript() const {
  return m_target.batchScript(m_trainArgs, m_resumeArgs);
}

std::string RemoteRun::submit(bool resume, const std::vector<std::string>& resumeArgs) {
  const RemoteShell sh = m_target.shell();
  if (resume && !m_jobId.empty()) {
    // The trainer's lock would refuse a second one in the folder anyway; say so before queueing.
    const JobStatus st = status();
    if (!jobFinished(st.state))
      throw Error(m_localDir + ": job " + m_jobId + " is still " + jobStateName(st.state) +
                  "; stop it (and let it write its checkpoint) before resuming");
  }
  if (resume) m_resumeArgs = resumeArgs;
  // The folder's absolute path: the batch script and the trainer must not depend on where a
  // later shell starts.
  std::string dir = sh.check("mkdir -p " + shellQuote(m_target.remoteDir) + " && cd " +
                                 shellQuote(m_target.remoteDir) + " && pwd",
                             "creating the run folder " + m_target.remoteDir);
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
  m_target.remoteDir = dir;
  std::string id;
  if (m_target.kind == RunTarget::Kind::Slurm) {
    const std::string out =
        sh.check("cd " + shellQuote(dir) + " && cat > " + run_folder::kBatchScript +
                     " && sbatch --parsable " + run_folder::kBatchScript,
                 "submitting the batch script with sbatch", batchScript());
    id = out.substr(0, out.find_first_of(";\n"));
    if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos)
      throw Error("sbatch on " + sh.where() + " answered '" + out + "', not a job id");
  } else {
    std::vector<std::string> args;
    if (resume) {
      args = {"--resume"};
      args.insert(args.end(), resumeArgs.begin(), resumeArgs.end());
    } else {
      args = m_trainArgs;
    }
    const std::string out = sh.check(m_target.sshLaunchCommand(args), "starting the trainer");
    id = out.substr(0, out.find('\n'));
    if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
      throw Error("starting the trainer on " + sh.where() + " gave no process id: " + out);
  }
  m_jobId = id;
  save();
  return id;
}

JobStatus RemoteRun::status() const {
  if (m_jobId.empty())
    return {JobState::Unknown, m_foreign ? "another trainer's run, followed here" : "not submitted",
            0};
  const RemoteShell sh = m_target.shell();
  if (m_target.kind == RunTarget::Kind::Slurm) {
    const std::string j = shellQuote(m_jobId);
    const std::string out =
        sh.check("squeue -h -j " + j + " -o 'squeue|%T|%r' 2>/dev/null; sacct -n -P -X -j " + j +
                     " -o State,ExitCode 2>/dev/null | sed 's/^/sacct|/'; scontrol -o show job " +
                     j + " 2>/dev/null; true",
                 "asking Slurm for job " + m_jobId);
    return parseSlurmStatus(out);
  }
  const std::string ctl = shellQuote(m_target.remoteDir + "/" + kRemoteControlDir);
  const std::string out =
      sh.check("cd " + ctl +
                   " 2>/dev/null || { echo missing; exit 0; }; if [ -f exit ]; then "
                   "echo \"exit $(cat exit)\"; elif [ -s pid ] && kill -0 \"$(cat pid)\" "
                   "2>/dev/null; then echo running; else echo gone; fi",
               "asking for trainer " + m_jobId);
  if (out.rfind("running", 0) == 0) return {JobState::Running, {}, 0};
  if (out.rfind("exit ", 0) == 0) {
    const int code = std::atoi(out.c_str() + 5);
    if (code == 0) return {JobState::Completed, {}, 0};
    if (code == kStoppedExit) return {JobState::Stopped, {}, 0};
    return {JobState::Failed, "exit status " + std::to_string(code), 0};
  }
  return {JobState::Gone, out.rfind("missing", 0) == 0 ? "no run folder" : "the trainer vanished",
          0};
}

void RemoteRun::stop() {
  if (m_jobId.empty()) throw Error(m_localDir + ": the run was never submitted");
  const RemoteShell sh = m_target.shell();
  if (m_target.kind == RunTarget::Kind::Slurm) {
    // --signal without --batch/--full reaches the job's steps, the trainers, and spares the
    // batch shell, which waits for them. A job that has not started has no step: cancel it.
    const JobStatus st = status();
    if (st.state == JobState::Pending || st.state == JobState::Requeued)
      sh.check("scancel " + shellQuote(m_jobId), "cancelling job " + m_jobId);
    else
      sh.check("scancel --signal=TERM " + shellQuote(m_jobId), "stopping job " + m_jobId);
    return;
  }
  const std::string pid = shellQuote(m_target.remoteDir + "/" + kRemoteControlDir + "/pid");
  sh.check("kill -TERM \"$(cat " + pid + ")\"", "stopping trainer " + m_jobId);
}

namespace {

// A file there that cannot be read: named and left out of this pass. A dropped connection is
// not the file's fault: it ends the pass (thrown), and the next pass asks again.
struct Unreadable {
  std::string message;
};
struct ConnectionLost {
  std::string message;
};

std::string fetch(const RemoteShell& sh, const std::string& command, const std::string& name) {
  ProcessResult p;
  try {
    p = sh.run(command);
  } catch (const std::exception& e) {  // ssh itself could not be started
    throw ConnectionLost{e.what()};
  }
  if (p.ok()) return p.out;
  std::string why = p.err;
  while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
  if (p.timedOut) why = "timed out";
  if (!sh.local() && (p.exitCode == kSshConnectionFailed || p.timedOut || p.exitCode < 0))
    throw ConnectionLost{
        "reading " + printableName(name) + " on " + sh.where() +
        " failed: " + (why.empty() ? "ssh exited with status " + std::to_string(p.exitCode) : why)};
  throw Unreadable{why.empty() ? "cannot be read (status " + std::to_string(p.exitCode) + ")"
                               : "cannot be read: " + why};
}

}  // namespace

std::string RemoteRun::mirrorAppend(const std::string& name, uint64_t remoteSize, MirrorResult& r) {
  const fs::path local = fs::path(m_localDir) / name;
  std::error_code ec;
  const uint64_t have = fs::exists(local, ec) ? fs::file_size(local, ec) : 0;
  if (remoteSize <= have) return {};
  const std::string path = shellQuote(m_target.remoteDir + "/" + name);
  const std::string bytes =
      fetch(m_target.shell(), "tail -c +" + std::to_string(have + 1) + " -- " + path, name);
  if (!local.parent_path().empty()) fs::create_directories(local.parent_path(), ec);
  std::ofstream out(local, std::ios::binary | std::ios::app);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) throw Error(local.string() + ": cannot append to the mirror");
  r.bytes += bytes.size();
  r.files.push_back(name);
  return bytes;
}

std::string RemoteRun::listingCommand() const {
  // NUL-separated (any byte but NUL may be in a name): find's names, stat's size, time and
  // inode. Hidden folders (the SSH launcher's .foveal) are not looked into.
  std::string names;
  const auto add = [&](const std::string& pattern) {
    names += (names.empty() ? "-name " : " -o -name ") + shellQuote(pattern);
  };
  if (m_foreign) {
    for (const char* p :
         {"log_train.txt", "log_dataset.txt", "opt.txt", "*.log", "scalars.json", "metrics.csv",
          "hparams.yaml", "config.yml", "config.yaml", "last_checkpoint", "events.out.tfevents.*",
          "*.pth", "*.ckpt", "*.pdparams", "*.mlmodel", "*.pt", "*.safetensors", "*.pth.tar"})
      add(p);
  } else {
    for (const char* p : {run_folder::kConfig, run_folder::kMetrics, run_folder::kTrainLog,
                          run_folder::kLatestModel, run_folder::kBestModel, run_folder::kState,
                          "iter-*.fvm", "events.out.tfevents.*"})
      add(p);
  }
  return "cd " + shellQuote(m_target.remoteDir) + " 2>/dev/null || exit 0; find . -maxdepth " +
         std::to_string(m_foreign ? kForeignDepth : 2) + " -name '.?*' -prune -o -type f \\( " +
         names + " \\) -print0 | xargs -0r stat --printf '%s %.9Y %i %n\\0' -- 2>/dev/null; true";
}

namespace {

// name -> size, signature
using RemoteFiles = std::map<std::string, std::pair<uint64_t, std::string>>;

// The listing's files that the mirror copies; the names the trainer does not write, and the
// records that do not parse, go to r.skipped.
RemoteFiles filesToMirror(const std::string& listing, bool foreign, MirrorResult& r) {
  RemoteFiles remote;
  std::vector<std::string> bad;
  for (auto& e : parseRemoteListing(listing, &bad)) {
    if (mirrorKind(e.name, foreign) == MirrorKind::Skip) {
      r.skipped.push_back(printableName(e.name) + ": not a name " +
                          (foreign ? "the trainer writes" : "Foveal's trainer writes"));
      continue;
    }
    remote[e.name] = {e.size, e.signature};
  }
  for (const auto& b : bad) r.skipped.push_back(b);
  return remote;
}

// A torch zip (.pth, .pt, .ckpt) is whole once its end record is there: a trainer that
// pauses midway leaves a still, half file, which is not copied (26 bytes asked).
bool halfWrittenTorchZip(const RemoteShell& sh, const std::string& remoteDir,
                         const std::string& name) {
  if (!(endsWith(name, ".pth") || endsWith(name, ".pt") || endsWith(name, ".ckpt") ||
        endsWith(name, ".pth.tar")))
    return false;
  const std::string q = shellQuote(remoteDir + "/" + name);
  const std::string ends = fetch(sh, "head -c 4 -- " + q + " && tail -c 22 -- " + q, name);
  return ends.size() >= 26 && ends.compare(0, 4, "PK\x03\x04") == 0 &&
         ends.compare(ends.size() - 22, 4, "PK\x05\x06") != 0;
}

// What the trainer removed there (pruned history, strhub's worse checkpoints) goes here too;
// logs and settings stay. Whether `mirrored` changed.
bool removePruned(const RemoteFiles& remote, bool foreign, const std::string& localDir,
                  std::map<std::string, std::string>& mirrored, MirrorResult& r) {
  bool changed = false;
  for (auto it = mirrored.begin(); it != mirrored.end();) {
    const MirrorKind kind = mirrorKind(it->first, foreign);
    const bool prunable = foreign
                              ? kind == MirrorKind::Checkpoint
                              : it->first.rfind(std::string(run_folder::kHistoryDir) + "/", 0) == 0;
    if (!remote.count(it->first) && prunable) {
      std::error_code ec;
      fs::remove(fs::path(localDir) / it->first, ec);
      r.files.push_back(it->first);
      it = mirrored.erase(it);
      changed = true;
    } else {
      ++it;
    }
  }
  return changed;
}

// A checkpoint waiting to settle that is no longer there waits no more; whether `pending`
// changed.
bool forgetGonePending(const RemoteFiles& remote, std::map<std::string, std::string>& pending) {
  bool changed = false;
  for (auto it = pending.begin(); it != pending.end();)
    if (!remote.count(it->first)) {
      it = pending.erase(it);
      changed = true;
    } else {
      ++it;
    }
  return changed;
}

}  // namespace

bool RemoteRun::mirrorFile(const RemoteShell& sh, const std::string& name, uint64_t size,
                           const std::string& signature, double now, MirrorResult& r) {
  const MirrorKind kind = mirrorKind(name, m_foreign);
  const fs::path local = fs::path(m_localDir) / name;
  std::string inode = signature.substr(signature.rfind(' ') + 1);
  const auto old = m_mirrored.find(name);
  const std::string oldInode =
      old == m_mirrored.end() ? "" : old->second.substr(old->second.rfind(' ') + 1);
  std::error_code ec;
  const uint64_t have = fs::exists(local, ec) ? fs::file_size(local, ec) : 0;
  if (kind == MirrorKind::Append && (oldInode.empty() || oldInode == inode) && size >= have) {
    // Grown in place: the bytes after the local size.
    mirrorAppend(name, size, r);
    if (old == m_mirrored.end() || old->second != signature) {
      m_mirrored[name] = signature;
      return true;
    }
    return false;
  }
  if (old != m_mirrored.end() && old->second == signature && fs::exists(local, ec))
    return m_pending.erase(name) > 0;
  if (kind == MirrorKind::Checkpoint) {
    // Copied once it is complete: the same size, time and inode across two listings
    // settleSeconds() apart (a trainer writing it in place changes them as it writes).
    const auto p = m_pending.find(name);
    const size_t bar = p == m_pending.end() ? std::string::npos : p->second.rfind('|');
    const bool same = bar != std::string::npos && p->second.substr(0, bar) == signature;
    if (!same) {
      m_pending[name] = signature + "|" + std::to_string(now);
      return true;
    }
    if (now - std::atof(p->second.c_str() + bar + 1) < m_settleSeconds) return false;
    if (halfWrittenTorchZip(sh, m_target.remoteDir, name)) return false;
  }
  const std::string bytes =
      fetch(sh, "cat -- " + shellQuote(m_target.remoteDir + "/" + name), name);
  if (kind == MirrorKind::Checkpoint && bytes.size() != size) {
    // Written to while it was read: it settles again.
    m_pending[name] = "|0";
    return true;
  }
  if (!local.parent_path().empty()) fs::create_directories(local.parent_path(), ec);
  writeFileAtomically(local.string(), bytes, "mirrored " + printableName(name));
  r.bytes += bytes.size();
  r.files.push_back(name);
  m_mirrored[name] = signature;
  m_pending.erase(name);
  return true;
}

MirrorResult RemoteRun::mirror() {
  MirrorResult r;
  if (!m_target.mirrored()) return r;  // the trainer writes the local folder itself
  const RemoteShell sh = m_target.shell();
  try {
    const std::string listing =
        sh.check(listingCommand(), "listing the run folder " + m_target.remoteDir);
    RemoteFiles remote = filesToMirror(listing, m_foreign, r);
    if (!m_foreign) fs::create_directories(fs::path(m_localDir) / run_folder::kHistoryDir);
    bool changed = false;
    // The optimiser's and loader's state stays there (resuming happens there): only whether
    // it exists, and which one, so that the window offers Resume.
    const auto state = m_foreign ? remote.end() : remote.find(run_folder::kState);
    const std::string stateSignature = state == remote.end() ? "" : state->second.second;
    if (!m_foreign && stateSignature != m_remoteState) {
      m_remoteState = stateSignature;
      changed = true;
    }
    if (state != remote.end()) remote.erase(state);
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (const auto& [name, info] : remote) {
      try {
        if (mirrorFile(sh, name, info.first, info.second, now, r)) changed = true;
      } catch (const Unreadable& u) {
        r.skipped.push_back(printableName(name) + ": " + u.message);
      } catch (const Error& e) {  // not writable here (a folder in its place, a full disk)
        r.skipped.push_back(printableName(name) + ": " + e.what());
      }
    }
    if (removePruned(remote, m_foreign, m_localDir, m_mirrored, r)) changed = true;
    if (forgetGonePending(remote, m_pending)) changed = true;
    if (changed) save();
  } catch (const ConnectionLost& e) {
    r.ok = false;
    r.error = e.message;
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = e.what();
  }
  return r;
}

}  // namespace foveal::core
