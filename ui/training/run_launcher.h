#pragma once
// Starts, stops and resumes `foveal-cli train` processes (QProcess), one per run folder (or one
// per GPU for a data-parallel run: the processes meet through the WORLD_SIZE / RANK /
// MASTER_ADDR / MASTER_PORT variables, as torchrun sets them). It reports what it knows about
// each process; the run's progress itself is read from its folder by RunLog. Stop sends SIGTERM:
// the trainer finishes the iteration and writes a checkpoint, so Resume continues from there.
#include <QObject>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <map>
#include <vector>

#include "run/run_log.h"

class QProcess;

namespace foveal::ui {

/// The foveal-cli next to the running executable ("" when there is none).
QString fovealCliPath();

/// Everything the launch dialog decides; turns into the exact command line.
struct LaunchSpec {
  enum class Device { Cpu, Cuda, MultiGpu };
  QString preset = QStringLiteral("digits-soft");
  double width = 0.25;
  QString data;          ///< training data spec(s), ";"-separated; empty: the preset's
  QString evalData;      ///< evaluation sets; empty: the preset's
  int iterations = 0;    ///< 0: the preset's
  int batch = 0;         ///< 0: the preset's
  int evalInterval = 0;  ///< 0: the preset's
  int logInterval = 0;   ///< a metrics record every N iterations; 0: the preset's
  int evalLimit = 0;     ///< images per evaluation set during training; 0: the preset's
  int seed = 1;
  Device device = Device::Cpu;
  int cudaIndex = 0;  ///< Device::Cuda
  int gpus = 2;       ///< Device::MultiGpu: processes, one per GPU (cuda:0 .. cuda:gpus-1)
  int threads = 0;    ///< CPU threads (0: the trainer's default)
  int masterPort = 29500;
  /// Stages over the preset's model, by registry name (empty: the preset's); projection: -1 the
  /// preset's, 0 off, 1 on.
  QString transformation, features, sequence, prediction, cell, attention;
  int projection = -1;
  /// train --skip-ended-rows: a sharp model's glimpse only for the labels not yet ended.
  bool skipEndedRows = false;
  QString runDir;
  bool resume = false;  ///< continue runDir (only runDir, device and threads are used)
  /// `train --target ...` options (RunTargetBox): the run trains on an SSH host or a Slurm
  /// cluster, runDir is its local description and mirror. Empty: this machine.
  QStringList targetArguments;

  bool remote() const { return !targetArguments.isEmpty(); }
  int processes() const { return device == Device::MultiGpu && !remote() ? std::max(1, gpus) : 1; }
  /// foveal-cli's arguments for process `rank`.
  QStringList arguments(int rank = 0) const;
  /// Variables process `rank` needs on top of the environment (empty for one process).
  std::vector<std::pair<QString, QString>> environment(int rank) const;
  /// The command as a POSIX shell line (a loop over ranks for several GPUs); `cli` is the
  /// program path to print.
  QString commandLine(const QString& cli) const;
};

/// Quotes an argument for a POSIX shell when it needs quoting.
QString shellQuote(const QString& argument);

class RunLauncher : public QObject {
  Q_OBJECT
 public:
  explicit RunLauncher(QObject* parent = nullptr);
  /// Stops every process it started (SIGTERM, so each writes a checkpoint) and waits a while.
  ~RunLauncher() override;

  /// The program to run (defaults to fovealCliPath()); tests may point it elsewhere.
  void setProgram(const QString& program) { m_program = program; }
  QString program() const { return m_program; }

  /// Starts the run; false with a message when it cannot (no foveal-cli, folder in use...).
  bool start(const LaunchSpec& spec, QString* error);
  /// Follows a run on another machine that was submitted elsewhere (`foveal-cli runs resume` in
  /// a terminal): `runs follow` mirrors its folder here and reports the job's state, as for a run
  /// started here. True when it is followed (already, or now); false with a message otherwise.
  bool follow(const QString& runDir, QString* error = nullptr);
  /// Seconds between the follower's looks at the job (`runs follow --interval`; default 5).
  void setFollowInterval(double seconds) { m_followInterval = seconds; }
  /// SIGTERM to every process of the run. False when none is running.
  bool stop(const QString& runDir);
  bool isRunning(const QString& runDir) const;
  core::ProcessFacts facts(const QString& runDir) const;
  /// The last lines the run's processes printed (stdout and stderr, rank 0 first).
  QString output(const QString& runDir) const;
  /// For a run on another machine: the job's state as its follower last reported it
  /// ("job 42: pending (Resources)"); "" for a local run.
  QString jobState(const QString& runDir) const;

 Q_SIGNALS:
  /// A process of the run started or ended.
  void processChanged(const QString& runDir);
  /// New output lines.
  void outputChanged(const QString& runDir);

 private:
  struct Job {
    std::vector<QProcess*> processes;
    QStringList output;
    core::ProcessFacts facts;
    /// A run on another machine: once the submission succeeds, `foveal-cli runs follow`
    /// mirrors its folder here and reports the job's state.
    bool followAfter = false;
    QString jobState;
  };
  QProcess* startProcess(const QString& dir, const QStringList& arguments,
                         const QProcessEnvironment& env);
  void onFinished(const QString& dir, QProcess* process);
  /// Starts `runs follow` for `dir` as the run's first process.
  void startFollower(const QString& dir);
  void readOutput(const QString& dir, QProcess* process);

  QString m_program;
  double m_followInterval = 5;
  std::map<QString, Job> m_jobs;
};

}  // namespace foveal::ui
