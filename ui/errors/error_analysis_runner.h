#pragma once
// Runs an error analysis (core::train::runErrorAnalysis) off the GUI thread, one at a time, with
// progress and cancel. Each run is numbered: a cancelled or superseded run's result is never
// emitted, so the page shows a complete analysis or none.
#include <QFuture>
#include <QObject>
#include <QString>
#include <QStringList>
#include <atomic>
#include <memory>

#include "train/error_analysis.h"

namespace foveal::ui {

class ErrorAnalysisRunner : public QObject {
  Q_OBJECT
 public:
  explicit ErrorAnalysisRunner(QObject* parent = nullptr);
  /// Cancels the run in flight and waits for it.
  ~ErrorAnalysisRunner() override;

  /// Starts reading `dataset` with every model file; a run in flight is cancelled first.
  void start(const QStringList& models, const QString& dataset,
             const core::train::ErrorRunOptions& options);
  /// Stops the run in flight after its current batch; emits cancelled() when it has stopped.
  void cancel();
  bool isRunning() const { return m_running; }
  /// Blocks until the run in flight has stopped (tests, shutdown).
  void wait();

 Q_SIGNALS:
  void progress(qint64 done, qint64 total);
  void finished(std::shared_ptr<const foveal::core::train::ErrorAnalysis> analysis);
  void failed(const QString& message);
  void cancelled();

 private:
  void onDone(quint64 generation, std::shared_ptr<const core::train::ErrorAnalysis> analysis,
              const QString& error, bool wasCancelled);

  std::atomic<quint64> m_generation{0};  ///< the newest run; older ones stop at their next batch
  bool m_running = false;
  QFuture<void> m_task;
};

}  // namespace foveal::ui
