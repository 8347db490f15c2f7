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
//
// Another trainer's run folder there (deep-text-recognition-benchmark, strhub, MMOCR, PaddleOCR,
// kraken...; attach()) is mirrored the same way, for what core/run/trainer_logs.h reads: its logs
// and event files by their appended bytes, and each checkpoint copied once, when it is complete
// (its size, time and inode unchanged across two listings at least settleSeconds() apart; a
// 300 MB file is never copied half-written, nor copied again until the trainer replaces it).
//
// The listing is NUL-separated (find -print0, stat --printf '...\0'), so any byte but NUL may be
// in a name there; only the names the trainer writes are copied (mirrorKind()), onto the same
// name here. A file whose name is not one (a space, a newline, a path that leaves the folder) or
// that cannot be read there or written here is left out and named in MirrorResult::skipped; the
// pass goes on with the others.
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
  /// What the pass left out, one "NAME: why" each (the name with its control characters
  /// escaped): not a name the trainer writes, unreadable there, not writable here.
  std::vector<std::string> skipped;
};

/// What the mirror does with a file of the run folder (its path relative to the folder).
enum class MirrorKind {
  Skip,        ///< not a file the trainer writes: never copied
  Append,      ///< a log that only grows: the bytes after the local copy's size
  Whole,       ///< a small file that is rewritten: copied whole when it changes
  Checkpoint,  ///< a model another trainer writes in place: copied whole once complete
  Note,        ///< Foveal's latest.state: only whether it exists there (resumable())
};
/// Foveal's run folder (`foreign` false): config.json, metrics.jsonl, train.log, latest.fvm,
/// best.fvm, latest.state, history/iter-NNNNNNNNN.fvm and top-level event files. Another
/// trainer's (`foreign`): its logs (log_train.txt, opt.txt, train.log, *.log, scalars.json,
/// metrics.csv, hparams.yaml, events.out.tfevents.*) and checkpoints (*.pth, *.ckpt, *.pdparams,
/// *.mlmodel, *.safetensors, *.pt, *.pth.tar), at most four folders deep, every part of the path
/// plain (letters, digits, . _ - = + , @; not starting with '.' or '-').
MirrorKind mirrorKind(const std::string& name, bool foreign);

/// One file of the remote listing: its path relative to the run folder, its size, and its
/// signature ("size mtime inode").
struct RemoteFileEntry {
  std::string name;
  uint64_t size = 0;
  std::string signature;
};
/// Parses the NUL-separated listing "SIZE MTIME INODE NAME\0..." (a leading "./" on NAME is
/// dropped); a record that does not parse is named in `bad` and left out.
std::vector<RemoteFileEntry> parseRemoteListing(const std::string& listing,
                                                std::vector<std::string>* bad = nullptr);
/// A name as messages show it: control characters (a newline) escaped, e.g. "a\nb".
std::string printableName(const std::string& name);

class RemoteRun {
 public:
  /// A new run in local folder `localDir` (created) on `target`, trained with `trainArgs`
  /// (`foveal-cli train` options without --run). Throws Error when the folder already holds one.
  static RemoteRun create(const std::string& localDir, const RunTarget& target,
                          const std::vector<std::string>& trainArgs);
  /// The run of `localDir`. Throws Error naming the file when it is missing or not readable.
  static RemoteRun open(const std::string& localDir);
  static bool isRemoteRun(const std::string& localDir);
  /// Follows another trainer's run folder `target.remoteDir` on `target`'s host (DTRB, strhub...)
  /// from local folder `localDir` (created), which mirrors it: nothing is submitted and jobId()
  /// stays empty. Throws Error when the target is not on another host or the folder already
  /// holds a run.
  static RemoteRun attach(const std::string& localDir, const RunTarget& target);
  /// A folder of another trainer's (attach()), not one of Foveal's trainer.
  bool foreign() const { return m_foreign; }
  /// Seconds a foreign checkpoint must keep its size, time and inode before it is copied
  /// (default 2).
  void setSettleSeconds(double seconds) { m_settleSeconds = seconds; }
  double settleSeconds() const { return m_settleSeconds; }

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
  /// Mirrors one file of the listing as its kind says (appended, copied once settled, or left);
  /// whether the bookkeeping (what is mirrored, what waits to settle) changed.
  bool mirrorFile(const RemoteShell& sh, const std::string& name, uint64_t size,
                  const std::string& signature, double now, MirrorResult& r);
  /// The listing of the remote folder's files that mirrorKind() may accept.
  std::string listingCommand() const;

  std::string m_localDir;
  RunTarget m_target;
  std::vector<std::string> m_trainArgs;
  std::vector<std::string> m_resumeArgs;
  std::string m_jobId;
  /// File name -> "size mtime inode" of the copy the local file holds.
  std::map<std::string, std::string> m_mirrored;
  /// "size mtime inode" of latest.state there as the last mirror saw it; "" when there is none.
  std::string m_remoteState;
  bool m_foreign = false;
  double m_settleSeconds = 2;
  /// A foreign checkpoint seen but not yet settled: name -> "signature|unix seconds first seen".
  std::map<std::string, std::string> m_pending;
};

}  // namespace foveal::core
