#include "run/remote_run.h"

#include <cerrno>
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

// The files the mirror copies: every monitor reads these and nothing else.
bool appendOnly(const std::string& name) {
  return name == run_folder::kMetrics || name == run_folder::kTrainLog;
}

}  // namespace

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
  if (m_jobId.empty()) return {JobState::Unknown, "not submitted", 0};
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

std::string RemoteRun::mirrorAppend(const std::string& name, uint64_t remoteSize, MirrorResult& r) {
  const fs::path local = fs::path(m_localDir) / name;
  std::error_code ec;
  const uint64_t have = fs::exists(local, ec) ? fs::file_size(local, ec) : 0;
  if (remoteSize <= have) return {};
  const std::string path = shellQuote(m_target.remoteDir + "/" + name);
  const std::string bytes = m_target.shell().check(
      "tail -c +" + std::to_string(have + 1) + " " + path, "reading " + name);
  std::ofstream out(local, std::ios::binary | std::ios::app);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) throw Error(local.string() + ": cannot append to the mirror");
  r.bytes += bytes.size();
  r.files.push_back(name);
  return bytes;
}

MirrorResult RemoteRun::mirror() {
  MirrorResult r;
  if (!m_target.mirrored()) return r;  // the trainer writes the local folder itself
  const RemoteShell sh = m_target.shell();
  try {
    const std::string listing = sh.check(
        "cd " + shellQuote(m_target.remoteDir) +
            " 2>/dev/null || exit 0; for f in config.json metrics.jsonl train.log latest.fvm "
            "best.fvm latest.state history/iter-*.fvm; do [ -f \"$f\" ] && stat -c '%s %.9Y %i %n' "
            "-- \"$f\"; "
            "done; true",
        "listing the run folder " + m_target.remoteDir);
    std::map<std::string, std::pair<uint64_t, std::string>> remote;  // name -> size, signature
    std::istringstream in(listing);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      uint64_t size = 0;
      std::string mtime, inode, name;
      if (!(ls >> size >> mtime >> inode >> name)) continue;
      remote[name] = {size, std::to_string(size) + " " + mtime + " " + inode};
    }
    fs::create_directories(fs::path(m_localDir) / run_folder::kHistoryDir);
    bool changed = false;
    // The optimiser's and loader's state stays there (resuming happens there): only whether
    // it exists, and which one, so that the window offers Resume.
    const auto state = remote.find(run_folder::kState);
    const std::string stateSignature = state == remote.end() ? "" : state->second.second;
    if (stateSignature != m_remoteState) {
      m_remoteState = stateSignature;
      changed = true;
    }
    if (state != remote.end()) remote.erase(state);
    for (const auto& [name, info] : remote) {
      const auto& [size, signature] = info;
      const fs::path local = fs::path(m_localDir) / name;
      std::string inode = signature.substr(signature.rfind(' ') + 1);
      const auto old = m_mirrored.find(name);
      const std::string oldInode =
          old == m_mirrored.end() ? "" : old->second.substr(old->second.rfind(' ') + 1);
      std::error_code ec;
      const uint64_t have = fs::exists(local, ec) ? fs::file_size(local, ec) : 0;
      if (appendOnly(name) && (oldInode.empty() || oldInode == inode) && size >= have) {
        // Grown in place: the bytes after the local size.
        mirrorAppend(name, size, r);
        if (old == m_mirrored.end() || old->second != signature) {
          m_mirrored[name] = signature;
          changed = true;
        }
        continue;
      }
      if (old != m_mirrored.end() && old->second == signature && fs::exists(local, ec)) continue;
      const std::string bytes =
          sh.check("cat -- " + shellQuote(m_target.remoteDir + "/" + name), "reading " + name);
      writeFileAtomically(local.string(), bytes, "mirrored " + name);
      r.bytes += bytes.size();
      r.files.push_back(name);
      m_mirrored[name] = signature;
      changed = true;
    }
    // History files that the trainer pruned go here too.
    for (auto it = m_mirrored.begin(); it != m_mirrored.end();) {
      if (!remote.count(it->first) &&
          it->first.rfind(std::string(run_folder::kHistoryDir) + "/", 0) == 0) {
        std::error_code ec;
        fs::remove(fs::path(m_localDir) / it->first, ec);
        r.files.push_back(it->first);
        it = m_mirrored.erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
    if (changed) save();
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = e.what();
  }
  return r;
}

}  // namespace foveal::core
