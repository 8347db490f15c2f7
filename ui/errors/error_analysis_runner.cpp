#include "error_analysis_runner.h"

#include <QElapsedTimer>
#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

namespace foveal::ui {

ErrorAnalysisRunner::ErrorAnalysisRunner(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const foveal::core::train::ErrorAnalysis>>();
}

ErrorAnalysisRunner::~ErrorAnalysisRunner() {
  ++m_generation;  // the worker stops at its next batch and posts to nobody
  m_task.waitForFinished();
}

void ErrorAnalysisRunner::wait() { m_task.waitForFinished(); }

void ErrorAnalysisRunner::cancel() {
  if (!m_running) return;
  ++m_generation;
  m_task.waitForFinished();  // at most one batch of every model's work
  m_running = false;
  Q_EMIT cancelled();
}

void ErrorAnalysisRunner::start(const QStringList& models, const QString& dataset,
                                const core::train::ErrorRunOptions& options) {
  if (m_running) cancel();
  const quint64 generation = ++m_generation;
  m_running = true;
  std::vector<std::string> paths;
  for (const QString& m : models) paths.push_back(m.toStdString());
  const std::string spec = dataset.toStdString();
  m_task = QtConcurrent::run([this, generation, paths, spec, options] {
    std::shared_ptr<const core::train::ErrorAnalysis> result;
    QString error;
    bool stopped = false;
    QElapsedTimer sinceReport;
    sinceReport.start();
    try {
      result = std::make_shared<const core::train::ErrorAnalysis>(
          core::train::runErrorAnalysis(paths, spec, options, [&](int64_t done, int64_t total) {
            if (m_generation.load() != generation) return false;
            if (sinceReport.elapsed() >= 100 || done == total) {  // the event loop is not flooded
              sinceReport.restart();
              QMetaObject::invokeMethod(
                  this,
                  [this, generation, done, total] {
                    if (m_generation.load() == generation) Q_EMIT progress(done, total);
                  },
                  Qt::QueuedConnection);
            }
            return true;
          }));
    } catch (const core::train::EvalCancelled&) {
      stopped = true;
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    if (m_generation.load() != generation) return;  // cancelled or superseded: nothing to say
    QMetaObject::invokeMethod(
        this,
        [this, generation, result, error, stopped] { onDone(generation, result, error, stopped); },
        Qt::QueuedConnection);
  });
}

void ErrorAnalysisRunner::onDone(quint64 generation,
                                 std::shared_ptr<const core::train::ErrorAnalysis> analysis,
                                 const QString& error, bool wasCancelled) {
  if (generation != m_generation.load()) return;
  m_running = false;
  if (wasCancelled)
    Q_EMIT cancelled();
  else if (analysis)
    Q_EMIT finished(std::move(analysis));
  else
    Q_EMIT failed(error);
}

}  // namespace foveal::ui
