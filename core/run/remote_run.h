#pragma once
// A training run on an SSH host or a Slurm cluster, seen from this machine: submitting it,
// following the job's state, mirroring its run folder's small files into the local folder, stopping
// and resuming it. The local folder holds run_folder::kRemote (the target, the job, the mirror's
// bookkeeping) and, for a run on another machine, the mirrored files, so RunLog, the previews and
// the evaluation read it as they read a local run. Torch-free and Qt-free.
//
// The mirror copies config.json, metrics.jsonl, train.log, latest.fvm, best.fvm and history/*.fvm,
// and notes whether latest.state (the optimiser's and loader's state, which only a resume there
// reads) exists there, without copying it: resumable() says so.
// metrics.jsonl and train.log only grow while the trainer runs, so the mirror asks for the bytes
// after the local file's size (the local file is the bookmark: an interrupted transfer writes
// nothing, the next one asks again, nothing is lost or doubled); a file that was replaced (a
// resume rewrites metrics.jsonl; the checkpoints are written by rename) is copied whole once its
// size, time or inode changes, into a temporary file renamed into place.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "run/run_target.h"

namespace foveal::core {

/// A Slurm job's or a remote trainer's state.
enum class JobState {
  Unknown,
  Pending,    ///< waiting in the queue (reason says why)
  Running,    ///< includes Slurm's COMPLETING and CONFIGURING
  Completed,  ///< the trainer finished its iterations
  Stopped,    ///< the trainer stopped on SIGTERM with a checkpoint (resumable)
  Failed,
  Cancelled,
  Timeout,
  Preempted,
  NodeFail,
  Requeued,  ///< requeued and waiting to start again (it resumes by itself)
  Gone,      ///< neither the scheduler nor the host knows it any more
};
const char* jobStateName(JobState state);
/// Slurm's state names (squeue %T, sacct State, scontrol JobState; "CANCELLED by 0" too).
JobState parseSlurmState(const std::string& text);
bool jobFinished(JobState state);  ///< nothing more will happen without a resubmission

struct JobStatus {
  JobState state = JobState::Unknown;
  std::string reason;  ///< Slurm's reason for a pending job, or the exit status
  int restarts = 0;    ///< times Slurm started the job again (requeue, preemption)
};

/// The answers of squeue, sacct and scontrol for one job, combined: squeue knows live jobs,
/// sacct (with accounting) finished ones, scontrol finished ones for MinJobAge seconds.
JobStatus parseSlurmStatus(const std::string& output);

struct MirrorResult {
  bool ok = true;
  std::string error;               ///< why the mirror stopped (a dropped connection...)
  std::vector<std::string> files;  ///< the files that changed locally
  uint64_t bytes = 0;              ///< bytes copied
};

class RemoteRun {
 public:
  /// A new run in local folder `localDir` (created) on `target`, trained with `trainArgs`
  /// (`foveal-cli train` options without --run). Throws Error when the folder already holds one.
  static RemoteRun create(const std::string& localDir, const RunTarget& target,
                          const std::vector<std::string>& trainArgs);
  /// The run of `localDir`. Throws Error naming the file when it is missing or not readable.
  static RemoteRun open(const std::string& localDir);
  static bool isRemoteRun(const std::string& localDir);

  /// Starts the run (or, with `resume`, starts it again from its checkpoint with `resumeArgs`
  /// such as --iterations N). Returns the Slurm job id or the remote pid.
  std::string submit(bool resume = false, const std::vector<std::string>& resumeArgs = {});
  JobStatus status() const;
  /// Copies what changed since the last call. Never throws: a failure is in the result, and the
  /// next call goes on from what arrived.
  MirrorResult mirror();
  /// SIGTERM to the trainer(s): they write a checkpoint and stop. A pending job is cancelled.
  void stop();
  /// True when the run folder holds a checkpoint to resume from (latest.state): there, as the
  /// last mirror() saw it, for a mirrored run; here for a Slurm run in this folder.
  bool resumable() const;
  /// The batch script a Slurm target submits (or would submit).
  std::string batchScript() const;

  const std::string& localDir() const { return m_localDir; }
  const RunTarget& target() const { return m_target; }
  const std::string& jobId() const { return m_jobId; }
  /// The run folder that RunLog reads: the local folder (the mirror, or the run itself).
  std::string runDir() const { return m_localDir; }

 private:
  void save() const;
  std::string mirrorAppend(const std::string& name, uint64_t remoteSize, MirrorResult& r);

  std::string m_localDir;
  RunTarget m_target;
  std::vector<std::string> m_trainArgs;
  std::vector<std::string> m_resumeArgs;
  std::string m_jobId;
  /// File name -> "size mtime inode" of the copy the local file holds.
  std::map<std::string, std::string> m_mirrored;
  /// "size mtime inode" of latest.state there as the last mirror saw it; "" when there is none.
  std::string m_remoteState;
};

}  // namespace foveal::core
