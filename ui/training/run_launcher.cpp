#include "run_launcher.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <algorithm>

#include "run/run_folder.h"

namespace foveal::ui {

namespace {
constexpr int kOutputLines = 400;
constexpr int kStopWaitMs = 15000;
}  // namespace

QString fovealCliPath() {
  const QString dir = QCoreApplication::applicationDirPath();
  for (const QString& candidate :
       {dir + QStringLiteral("/foveal-cli"), dir + QStringLiteral("/../app/foveal-cli")}) {
    const QFileInfo f(candidate);
    if (f.isFile() && f.isExecutable()) return QDir::cleanPath(f.absoluteFilePath());
  }
  return {};
}

QString shellQuote(const QString& argument) {
  static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_@%+=:,./-]+$"));
  if (!argument.isEmpty() && safe.match(argument).hasMatch()) return argument;
  QString quoted = argument;
  quoted.replace(QLatin1Char('\''), QStringLiteral("'\\''"));
  return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

QStringList LaunchSpec::arguments(int rank) const {
  QStringList a{QStringLiteral("train"), QStringLiteral("--run"), runDir};
  if (resume) {
    a << QStringLiteral("--resume");
    if (iterations > 0) a << QStringLiteral("--iterations") << QString::number(iterations);
  } else {
    a << QStringLiteral("--preset") << preset << QStringLiteral("--width")
      << QString::number(width, 'g', 6);
    if (iterations > 0) a << QStringLiteral("--iterations") << QString::number(iterations);
    if (batch > 0) a << QStringLiteral("--batch") << QString::number(batch);
    if (!data.trimmed().isEmpty()) a << QStringLiteral("--data") << data.trimmed();
    if (!evalData.trimmed().isEmpty()) a << QStringLiteral("--eval-data") << evalData.trimmed();
    if (evalInterval > 0) a << QStringLiteral("--eval-interval") << QString::number(evalInterval);
    if (evalLimit > 0) a << QStringLiteral("--eval-limit") << QString::number(evalLimit);
    if (logInterval > 0) a << QStringLiteral("--log-interval") << QString::number(logInterval);
    a << QStringLiteral("--seed") << QString::number(seed);
    const std::pair<const char*, const QString*> stages[] = {{"--transformation", &transformation},
                                                             {"--features", &features},
                                                             {"--sequence", &sequence},
                                                             {"--prediction", &prediction},
                                                             {"--cell", &cell},
                                                             {"--attention", &attention}};
    for (const auto& [flag, value] : stages)
      if (!value->isEmpty()) a << QString::fromLatin1(flag) << *value;
    if (projection == 1) a << QStringLiteral("--projection");
    if (projection == 0) a << QStringLiteral("--no-projection");
    if (skipEndedRows) a << QStringLiteral("--skip-ended-rows");
  }
  switch (device) {
    case Device::Cpu:
      a << QStringLiteral("--device") << QStringLiteral("cpu");
      break;
    case Device::Cuda:
      a << QStringLiteral("--device") << QStringLiteral("cuda:%1").arg(cudaIndex);
      break;
    case Device::MultiGpu:
      a << QStringLiteral("--device") << QStringLiteral("cuda:%1").arg(rank);
      break;
  }
  if (threads > 0) a << QStringLiteral("--threads") << QString::number(threads);
  if (!resume) a << targetArguments;
  return a;
}

std::vector<std::pair<QString, QString>> LaunchSpec::environment(int rank) const {
  if (processes() <= 1) return {};
  return {{QStringLiteral("WORLD_SIZE"), QString::number(processes())},
          {QStringLiteral("RANK"), QString::number(rank)},
          {QStringLiteral("LOCAL_RANK"), QString::number(rank)},
          {QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1")},
          {QStringLiteral("MASTER_PORT"), QString::number(masterPort)}};
}

QString LaunchSpec::commandLine(const QString& cli) const {
  QStringList args;
  for (const QString& a : arguments(0)) args << shellQuote(a);
  if (processes() <= 1) return shellQuote(cli) + QLatin1Char(' ') + args.join(QLatin1Char(' '));
  // One process per GPU: the rank-dependent values come from the loop variable.
  QStringList looped;
  const QStringList raw = arguments(0);
  for (int i = 0; i < raw.size(); ++i) {
    if (i > 0 && raw[i - 1] == QLatin1String("--device"))
      looped << QStringLiteral("cuda:$r");
    else
      looped << shellQuote(raw[i]);
  }
  QStringList env;
  for (const auto& [k, v] : environment(0))
    env << (k == QLatin1String("RANK") || k == QLatin1String("LOCAL_RANK")
                ? k + QStringLiteral("=$r")
                : k + QLatin1Char('=') + shellQuote(v));
  return QStringLiteral("for r in $(seq 0 %1); do %2 %3 %4 & done; wait")
      .arg(processes() - 1)
      .arg(env.join(QLatin1Char(' ')), shellQuote(cli), looped.join(QLatin1Char(' ')));
}

RunLauncher::RunLauncher(QObject* parent) : QObject(parent), m_program(fovealCliPath()) {}

RunLauncher::~RunLauncher() {
  for (auto& [dir, job] : m_jobs)
    for (QProcess* p : job.processes) {
      p->disconnect(this);
      if (p->state() != QProcess::NotRunning) p->terminate();
    }
  for (auto& [dir, job] : m_jobs)
    for (QProcess* p : job.processes)
      if (p->state() != QProcess::NotRunning && !p->waitForFinished(kStopWaitMs)) p->kill();
}

bool RunLauncher::start(const LaunchSpec& spec, QString* error) {
  auto fail = [&](const QString& message) {
    if (error) *error = message;
    return false;
  };
  if (m_program.isEmpty() || !QFileInfo(m_program).isExecutable())
    return fail(tr("foveal-cli was not found next to this program (%1); build it or copy the "
                   "command line and run it in a terminal.")
                    .arg(QCoreApplication::applicationDirPath()));
  if (spec.runDir.trimmed().isEmpty()) return fail(tr("Choose a run folder."));
  const QString dir = QDir::cleanPath(QFileInfo(spec.runDir).absoluteFilePath());
  if (isRunning(dir)) return fail(tr("%1 is already being trained here.").arg(dir));
  if (!spec.resume && QFileInfo::exists(dir + QStringLiteral("/config.json")))
    return fail(tr("%1 already holds a run; resume it or choose another folder.").arg(dir));
  // A run on another machine keeps its latest.state there (the mirror copies what monitors read).
  const bool remoteRun =
      QFileInfo::exists(dir + QLatin1Char('/') + QString::fromLatin1(core::run_folder::kRemote));
  if (spec.resume && !remoteRun && !QFileInfo::exists(dir + QStringLiteral("/latest.state")))
    return fail(tr("%1 has no checkpoint (latest.state) to resume from.").arg(dir));
  if (!QDir().mkpath(dir)) return fail(tr("%1: cannot create the folder.").arg(dir));

  LaunchSpec s = spec;
  s.runDir = dir;
  Job& job = m_jobs[dir];
  for (QProcess* p : job.processes) p->deleteLater();
  job = Job{};
  job.facts.state = core::ProcessFacts::Running;
  if (s.remote() || (s.resume && remoteRun)) {
    // Submit (or resubmit from the checkpoint), then follow: the follower mirrors the folder
    // that this page reads and prints the job's state.
    QStringList args = s.arguments(0);
    if (s.resume) {
      args = {QStringLiteral("runs"), QStringLiteral("resume"), dir};
      if (s.iterations > 0) args << QStringLiteral("--iterations") << QString::number(s.iterations);
    }
    job.followAfter = true;
    job.output << QStringLiteral("$ ") + shellQuote(m_program) + QLatin1Char(' ') + [&] {
      QStringList q;
      for (const QString& a : args) q << shellQuote(a);
      return q.join(QLatin1Char(' '));
    }();
    startProcess(dir, args, QProcessEnvironment::systemEnvironment());
    Q_EMIT processChanged(dir);
    return true;
  }
  for (int rank = 0; rank < s.processes(); ++rank) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const auto& [k, v] : s.environment(rank)) env.insert(k, v);
    job.output << QStringLiteral("$ ") +
                      (rank == 0 ? s.commandLine(m_program) : tr("(rank %1 started)").arg(rank));
    startProcess(dir, s.arguments(rank), env);
  }
  Q_EMIT processChanged(dir);
  return true;
}

void RunLauncher::startFollower(const QString& dir) {
  const QStringList args{QStringLiteral("runs"), QStringLiteral("follow"), dir,
                         QStringLiteral("--interval"), QString::number(m_followInterval)};
  m_jobs[dir].output << QStringLiteral("$ ") + shellQuote(m_program) + QLatin1Char(' ') + [&] {
    QStringList q;
    for (const QString& a : args) q << shellQuote(a);
    return q.join(QLatin1Char(' '));
  }();
  QProcess* follower = startProcess(dir, args, QProcessEnvironment::systemEnvironment());
  // The follower is the run's process for the page: it decides running and exited.
  auto& procs = m_jobs[dir].processes;
  procs.erase(std::remove(procs.begin(), procs.end(), follower), procs.end());
  procs.insert(procs.begin(), follower);
}

bool RunLauncher::follow(const QString& runDir, QString* error) {
  const QString dir = QDir::cleanPath(QFileInfo(runDir).absoluteFilePath());
  if (m_program.isEmpty() || !QFileInfo(m_program).isExecutable()) {
    if (error)
      *error = tr("foveal-cli was not found next to this program: cannot follow %1.").arg(dir);
    return false;
  }
  if (!QFileInfo::exists(dir + QLatin1Char('/') + QString::fromLatin1(core::run_folder::kRemote))) {
    if (error) *error = tr("%1 is not a run on another machine (no remote.json).").arg(dir);
    return false;
  }
  if (isRunning(dir)) return true;  // already followed (or being submitted) here
  Job& job = m_jobs[dir];
  for (QProcess* p : job.processes) p->deleteLater();
  job = Job{};
  job.facts.state = core::ProcessFacts::Running;
  startFollower(dir);
  Q_EMIT processChanged(dir);
  return true;
}

QProcess* RunLauncher::startProcess(const QString& dir, const QStringList& arguments,
                                    const QProcessEnvironment& env) {
  auto* p = new QProcess(this);
  p->setProcessEnvironment(env);
  p->setProgram(m_program);
  p->setArguments(arguments);
  p->setWorkingDirectory(dir);
  connect(p, &QProcess::readyReadStandardOutput, this, [this, dir, p] { readOutput(dir, p); });
  connect(p, &QProcess::readyReadStandardError, this, [this, dir, p] { readOutput(dir, p); });
  connect(p, &QProcess::finished, this, [this, dir, p] { onFinished(dir, p); });
  connect(p, &QProcess::errorOccurred, this, [this, dir, p](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) onFinished(dir, p);
  });
  m_jobs[dir].processes.push_back(p);
  p->start();
  return p;
}

QString RunLauncher::jobState(const QString& runDir) const {
  const auto it = m_jobs.find(QDir::cleanPath(QFileInfo(runDir).absoluteFilePath()));
  return it == m_jobs.end() ? QString() : it->second.jobState;
}

bool RunLauncher::stop(const QString& runDir) {
  const QString dir = QDir::cleanPath(QFileInfo(runDir).absoluteFilePath());
  const auto it = m_jobs.find(dir);
  if (it == m_jobs.end() || !isRunning(dir)) return false;
  if (QFileInfo::exists(dir + QLatin1Char('/') + QString::fromLatin1(core::run_folder::kRemote))) {
    // The trainer is on another machine: SIGTERM reaches it through `runs stop` (scancel or
    // ssh); the follower keeps mirroring until the job has written its checkpoint and ended.
    it->second.output << QStringLiteral("$ ") + shellQuote(m_program) +
                             QStringLiteral(" runs stop ") + shellQuote(dir);
    startProcess(dir, {QStringLiteral("runs"), QStringLiteral("stop"), dir},
                 QProcessEnvironment::systemEnvironment());
    Q_EMIT outputChanged(dir);
    return true;
  }
  for (QProcess* p : it->second.processes)
    if (p->state() != QProcess::NotRunning) p->terminate();
  it->second.output << tr("(stop requested: the trainer writes a checkpoint, then exits)");
  Q_EMIT outputChanged(dir);
  return true;
}

bool RunLauncher::isRunning(const QString& runDir) const {
  const auto it = m_jobs.find(QDir::cleanPath(QFileInfo(runDir).absoluteFilePath()));
  if (it == m_jobs.end()) return false;
  for (const QProcess* p : it->second.processes)
    if (p->state() != QProcess::NotRunning) return true;
  return false;
}

core::ProcessFacts RunLauncher::facts(const QString& runDir) const {
  const auto it = m_jobs.find(QDir::cleanPath(QFileInfo(runDir).absoluteFilePath()));
  return it == m_jobs.end() ? core::ProcessFacts{} : it->second.facts;
}

QString RunLauncher::output(const QString& runDir) const {
  const auto it = m_jobs.find(QDir::cleanPath(QFileInfo(runDir).absoluteFilePath()));
  return it == m_jobs.end() ? QString() : it->second.output.join(QLatin1Char('\n'));
}

void RunLauncher::readOutput(const QString& dir, QProcess* process) {
  auto& job = m_jobs[dir];
  const QByteArray bytes = process->readAllStandardOutput() + process->readAllStandardError();
  for (const QString& line : QString::fromLocal8Bit(bytes).split(QLatin1Char('\n'))) {
    const QString l = line.trimmed();
    if (!l.isEmpty()) job.output << l;
    // The follower's state lines: "job 42: running".
    static const QRegularExpression state(QStringLiteral("^job \\S+: .+$"));
    if (state.match(l).hasMatch()) job.jobState = l;
  }
  while (job.output.size() > kOutputLines) job.output.removeFirst();
  Q_EMIT outputChanged(dir);
}

void RunLauncher::onFinished(const QString& dir, QProcess* process) {
  auto& job = m_jobs[dir];
  readOutput(dir, process);
  if (job.followAfter && !job.processes.empty() && job.processes.front() == process) {
    job.followAfter = false;
    if (process->error() != QProcess::FailedToStart && process->exitCode() == 0) {
      job.processes.erase(job.processes.begin());
      process->deleteLater();
      startFollower(dir);
      Q_EMIT processChanged(dir);
      return;
    }
  }
  const bool rank0 = !job.processes.empty() && job.processes.front() == process;
  const bool started = process->error() != QProcess::FailedToStart;
  if (rank0 || !started || process->exitCode() != 0) {
    // Rank 0 decides the run's outcome; another rank failing fails the run.
    core::ProcessFacts f;
    f.state = core::ProcessFacts::Exited;
    f.crashed = !started || process->exitStatus() == QProcess::CrashExit;
    f.exitCode = started ? process->exitCode() : -1;
    // The trainer's messages end with the reason; keep the last line that is not the command.
    for (auto it = job.output.crbegin(); it != job.output.crend(); ++it)
      if (!it->startsWith(QStringLiteral("$ ")) && !it->startsWith(QLatin1Char('('))) {
        f.message = it->toStdString();
        break;
      }
    if (!started) f.message = process->errorString().toStdString();
    if (job.facts.state != core::ProcessFacts::Exited || rank0) job.facts = f;
  }
  if (!isRunning(dir)) {
    job.output << tr("(exited with code %1)").arg(job.facts.exitCode);
    if (job.facts.state != core::ProcessFacts::Exited) {
      job.facts.state = core::ProcessFacts::Exited;
      job.facts.exitCode = process->exitCode();
    }
  }
  Q_EMIT processChanged(dir);
}

}  // namespace foveal::ui
