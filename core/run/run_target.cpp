#include "run/run_target.h"

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace foveal::core {

namespace {

using json = nlohmann::json;

// A value that goes into an #SBATCH line: sbatch reads the line itself (no shell), so a newline
// would start another line and a space would end the value.
void checkSlurmWord(const std::string& value, const char* option, bool spacesAllowed = false) {
  for (char c : value)
    if (c == '\n' || c == '\r' || c == '\0' || (!spacesAllowed && (c == ' ' || c == '\t')))
      throw Error("Slurm option --" + std::string(option) + " '" + value +
                  "': it may not contain " +
                  (c == ' ' || c == '\t' ? "spaces" : "a line break or a NUL"));
}

void checkCount(int v, const char* option, int min) {
  if (v < min)
    throw Error("Slurm option --" + std::string(option) + " " + std::to_string(v) +
                ": must be at least " + std::to_string(min));
}

}  // namespace

void SlurmOptions::validate() const {
  checkSlurmWord(partition, "partition");
  checkSlurmWord(memory, "mem");
  checkSlurmWord(time, "time");
  checkSlurmWord(account, "account");
  checkSlurmWord(qos, "qos");
  checkCount(gpus, "gpus", 0);
  checkCount(cpusPerTask, "cpus-per-task", 0);
  checkCount(nodes, "nodes", 0);
  checkCount(ntasks, "ntasks", 1);
  checkCount(ntasksPerNode, "ntasks-per-node", 0);
  checkCount(signalSeconds, "signal", 0);
  for (const auto& line : extra) checkSlurmWord(line, "extra", true);
}

RunTarget RunTarget::parse(const std::string& text) {
  RunTarget t;
  if (text.empty() || text == "local") return t;
  if (text == "slurm") {
    t.kind = Kind::Slurm;
    return t;
  }
  std::string rest;
  if (text.rfind("ssh://", 0) == 0) {
    t.kind = Kind::Ssh;
    rest = text.substr(6);
  } else if (text.rfind("slurm://", 0) == 0) {
    t.kind = Kind::Slurm;
    rest = text.substr(8);
  } else {
    throw Error("run target '" + text +
                "': expected local, ssh://[user@]host[:port]/DIR, slurm or "
                "slurm://[user@]login[:port]/DIR");
  }
  const size_t slash = rest.find('/');
  if (slash == std::string::npos || slash + 1 >= rest.size())
    throw Error("run target '" + text + "': the run folder on the host is missing (.../DIR)");
  t.host = SshHost::parse(rest.substr(0, slash));
  t.remoteDir = rest.substr(slash + 1);  // "/abs" when the text had "//abs"
  for (char c : t.remoteDir)
    if (c == '\n' || c == '\0')
      throw Error("run target '" + text + "': the run folder contains a line break or a NUL");
  return t;
}

std::string RunTarget::toString() const {
  switch (kind) {
    case Kind::Local:
      return "local";
    case Kind::Ssh:
      return "ssh://" + host.toString() + "/" + remoteDir;
    case Kind::Slurm:
      return host.empty() ? "slurm" : "slurm://" + host.toString() + "/" + remoteDir;
  }
  return "local";
}

const char* RunTarget::kindName() const {
  return kind == Kind::Ssh ? "ssh" : kind == Kind::Slurm ? "slurm" : "local";
}

std::string RunTarget::batchScript(const std::vector<std::string>& trainArgs,
                                   const std::vector<std::string>& resumeArgs) const {
  slurm.validate();
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=foveal\n";
  s += "#SBATCH --output=slurm-%j.out\n";  // in the run folder: sbatch is started there
  s += "#SBATCH --open-mode=append\n";     // a requeued job adds to its log
  if (slurm.requeue) s += "#SBATCH --requeue\n";
  if (slurm.signalSeconds > 0)
    s += "#SBATCH --signal=B:TERM@" + std::to_string(slurm.signalSeconds) + "\n";
  if (!slurm.partition.empty()) s += "#SBATCH --partition=" + slurm.partition + "\n";
  if (slurm.nodes > 0) s += "#SBATCH --nodes=" + std::to_string(slurm.nodes) + "\n";
  s += "#SBATCH --ntasks=" + std::to_string(slurm.ntasks) + "\n";
  if (slurm.ntasksPerNode > 0)
    s += "#SBATCH --ntasks-per-node=" + std::to_string(slurm.ntasksPerNode) + "\n";
  if (slurm.cpusPerTask > 0)
    s += "#SBATCH --cpus-per-task=" + std::to_string(slurm.cpusPerTask) + "\n";
  if (slurm.gpus > 0) s += "#SBATCH --gres=gpu:" + std::to_string(slurm.gpus) + "\n";
  if (!slurm.memory.empty()) s += "#SBATCH --mem=" + slurm.memory + "\n";
  if (!slurm.time.empty()) s += "#SBATCH --time=" + slurm.time + "\n";
  if (!slurm.account.empty()) s += "#SBATCH --account=" + slurm.account + "\n";
  if (!slurm.qos.empty()) s += "#SBATCH --qos=" + slurm.qos + "\n";
  for (const auto& line : slurm.extra)
    s += (line.rfind("#SBATCH", 0) == 0 ? line : "#SBATCH " + line) + "\n";
  s += "\n";
  s += "run=" + shellQuote(remoteDir) + "\n";
  s += "cli=" + shellQuote(remoteCli) + "\n";
  s += "# A requeued or restarted job finds its checkpoint and goes on from it.\n";
  s += "if [ -f \"$run/latest.state\" ]; then\n";
  s += "  args=(train --run \"$run\" --resume" +
       (resumeArgs.empty() ? std::string() : " " + shellJoin(resumeArgs)) + ")\n";
  s += "else\n";
  s += "  args=(train --run \"$run\"" +
       (trainArgs.empty() ? std::string() : " " + shellJoin(trainArgs)) + ")\n";
  s += "fi\n";
  s += "# c10d's rendezvous: the first node of the job hosts it, on a port derived from the job.\n";
  s += "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  s += "# ... at the address Slurm reaches that node at (its NodeAddr): the node's name need not\n";
  s += "# resolve (c10d of LibTorch 2.6 waits for ever on a name that does not).\n";
  s += "addr=$(scontrol show node \"$MASTER_ADDR\" -o 2>/dev/null | tr ' ' '\\n' | "
       "sed -n 's/^NodeAddr=//p')\n";
  s += "if [ -n \"$addr\" ]; then export MASTER_ADDR=$addr; fi\n";
  s += "export MASTER_PORT=$((20000 + SLURM_JOB_ID % 20000))\n";
  s += "# The warning signal (B:) reaches this shell only: pass it on to the trainers, which\n";
  s += "# write a checkpoint and stop, and wait for them. Through scancel, not to srun: srun\n";
  s += "# answers SIGTERM by killing its tasks.\n";
  s += "trap 'scancel --signal=TERM \"$SLURM_JOB_ID\"' TERM\n";
  s += "srun --kill-on-bad-exit=1 bash -c 'export RANK=$SLURM_PROCID "
       "WORLD_SIZE=$SLURM_NTASKS LOCAL_RANK=$SLURM_LOCALID; exec \"$@\"' foveal-train "
       "\"$cli\" \"${args[@]}\" &\n";
  s += "step=$!\n";
  s += "wait \"$step\"\n";
  s += "status=$?\n";
  s += "while kill -0 \"$step\" 2>/dev/null; do wait \"$step\"; status=$?; done\n";
  s += "exit $status\n";
  return s;
}

std::string RunTarget::sshLaunchCommand(const std::vector<std::string>& trainArgs) const {
  const std::string ctl = shellQuote(remoteDir + "/" + kRemoteControlDir);
  std::vector<std::string> argv = {remoteCli, "train", "--run", remoteDir};
  argv.insert(argv.end(), trainArgs.begin(), trainArgs.end());
  // The inner script runs under nohup, detached from the SSH session: it records the trainer's
  // pid (for stop) and, once it ends, its exit status (for the state).
  const std::string inner = shellJoin(argv) + " & echo $! > " + ctl + "/pid; wait $!; echo $? > " +
                            ctl + "/exit.tmp && mv " + ctl + "/exit.tmp " + ctl + "/exit";
  return "mkdir -p " + ctl + " && rm -f " + ctl + "/exit " + ctl + "/pid || exit 1; nohup sh -c " +
         shellQuote(inner) + " >" + ctl + "/stdout.log 2>&1 </dev/null & i=0; while [ ! -s " + ctl +
         "/pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; cat " + ctl + "/pid";
}

std::string RunTarget::toJson() const {
  json j;
  j["kind"] = kindName();
  j["host"] = host.toString();
  j["ssh_config"] = host.configFile;
  j["ssh_identity"] = host.identityFile;
  j["remote_dir"] = remoteDir;
  j["remote_cli"] = remoteCli;
  json s;
  s["partition"] = slurm.partition;
  s["gpus"] = slurm.gpus;
  s["cpus_per_task"] = slurm.cpusPerTask;
  s["mem"] = slurm.memory;
  s["time"] = slurm.time;
  s["account"] = slurm.account;
  s["qos"] = slurm.qos;
  s["nodes"] = slurm.nodes;
  s["ntasks"] = slurm.ntasks;
  s["ntasks_per_node"] = slurm.ntasksPerNode;
  s["signal_s"] = slurm.signalSeconds;
  s["requeue"] = slurm.requeue;
  s["extra"] = slurm.extra;
  j["slurm"] = s;
  return j.dump(2);
}

RunTarget RunTarget::fromJson(const std::string& text, const std::string& source) {
  try {
    const json j = json::parse(text);
    RunTarget t;
    const std::string kind = j.at("kind").get<std::string>();
    if (kind == "ssh")
      t.kind = Kind::Ssh;
    else if (kind == "slurm")
      t.kind = Kind::Slurm;
    else if (kind != "local")
      throw Error(source + ": unknown target kind '" + kind + "'");
    const std::string host = j.value("host", "");
    if (!host.empty()) t.host = SshHost::parse(host);
    t.host.configFile = j.value("ssh_config", "");
    t.host.identityFile = j.value("ssh_identity", "");
    t.remoteDir = j.value("remote_dir", "");
    t.remoteCli = j.value("remote_cli", "foveal-cli");
    if (j.contains("slurm")) {
      const json& s = j["slurm"];
      t.slurm.partition = s.value("partition", "");
      t.slurm.gpus = s.value("gpus", 0);
      t.slurm.cpusPerTask = s.value("cpus_per_task", 0);
      t.slurm.memory = s.value("mem", "");
      t.slurm.time = s.value("time", "");
      t.slurm.account = s.value("account", "");
      t.slurm.qos = s.value("qos", "");
      t.slurm.nodes = s.value("nodes", 0);
      t.slurm.ntasks = s.value("ntasks", 1);
      t.slurm.ntasksPerNode = s.value("ntasks_per_node", 0);
      t.slurm.signalSeconds = s.value("signal_s", 120);
      t.slurm.requeue = s.value("requeue", true);
      t.slurm.extra = s.value("extra", std::vector<std::string>{});
    }
    return t;
  } catch (const json::exception& e) {
    throw Error(source + ": not a run target (" + e.what() + ")");
  }
}

}  // namespace foveal::core
