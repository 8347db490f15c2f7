#pragma once
// Where a training run runs: this machine, an SSH host, or a Slurm cluster (through a login host
// by SSH, or through sbatch on this machine), with what the job asks of the scheduler. A target
// turns `foveal-cli train` arguments into the command line or the batch script that starts the
// trainer there. Saved as JSON in the run's local folder (run_folder::kTarget) so `foveal-cli
// runs ...` and the GUI follow, stop and resume it later. Torch-free and Qt-free.
#include <string>
#include <vector>

#include "run/remote_shell.h"

namespace foveal::core {

/// What a Slurm job asks for. Empty strings and zeros leave the cluster's default.
struct SlurmOptions {
  std::string partition;
  int gpus = 0;           ///< --gres=gpu:N (per node)
  int cpusPerTask = 0;    ///< --cpus-per-task
  std::string memory;     ///< --mem, e.g. 16G
  std::string time;       ///< --time, e.g. 1-00:00:00
  std::string account;    ///< --account
  std::string qos;        ///< --qos
  int nodes = 0;          ///< --nodes
  int ntasks = 1;         ///< --ntasks: data-parallel processes under srun (Gloo on CPUs)
  int ntasksPerNode = 0;  ///< --ntasks-per-node
  /// The warning before the time limit (--signal=B:TERM@N): the batch shell passes SIGTERM to the
  /// trainers, which checkpoint. 0 sends none.
  int signalSeconds = 120;
  bool requeue = true;  ///< --requeue: a preempted or requeued job starts again (and resumes)
  std::vector<std::string> extra;  ///< more #SBATCH lines ("--constraint=a100" or "#SBATCH ...")

  /// Throws Error naming the option when a value would break the script (a newline, a space
  /// inside a partition name, a negative count).
  void validate() const;
};

struct RunTarget {
  enum class Kind { Local, Ssh, Slurm };
  Kind kind = Kind::Local;
  /// The host the commands go to (Ssh; Slurm through a login host). Empty: this machine.
  SshHost host;
  /// The run folder where the trainer writes it (on the host; for a local Slurm, the local one).
  std::string remoteDir;
  std::string remoteCli = "foveal-cli";  ///< the trainer program there
  SlurmOptions slurm;

  /// Parses "local", "ssh://[user@]host[:port]/DIR", "slurm" (sbatch on this machine) or
  /// "slurm://[user@]login[:port]/DIR". A DIR after the host's '/' is relative to the remote home
  /// ("ssh://h/runs/a"); "//" makes it absolute ("ssh://h//scratch/a"). Throws Error naming the
  /// text and the problem.
  static RunTarget parse(const std::string& text);
  std::string toString() const;
  const char* kindName() const;
  bool remote() const { return kind != Kind::Local; }
  RemoteShell shell() const { return RemoteShell(host); }
  /// True when the run folder is on another machine and the local folder is a mirror of it.
  bool mirrored() const { return remote() && !host.empty(); }

  /// The Slurm batch script that runs `foveal-cli train` with `trainArgs` (without --run, which
  /// the script adds) on a fresh start and with --resume `resumeArgs` when the folder already holds
  /// a checkpoint: a requeued job resumes by itself.
  std::string batchScript(const std::vector<std::string>& trainArgs,
                          const std::vector<std::string>& resumeArgs = {}) const;
  /// The shell command that starts the trainer in the background on an SSH host and records its
  /// pid (DIR/.foveal/pid) and exit status (DIR/.foveal/exit).
  std::string sshLaunchCommand(const std::vector<std::string>& trainArgs) const;

  std::string toJson() const;
  /// Throws Error naming `source` when the JSON is not a target.
  static RunTarget fromJson(const std::string& json, const std::string& source);
};

/// The folder inside a remote run folder where the SSH launcher keeps the trainer's pid, exit
/// status and output (not mirrored).
inline constexpr const char* kRemoteControlDir = ".foveal";

}  // namespace foveal::core
