#pragma once
// Runs one image through several models off the GUI thread, one request at a time, reporting
// progress per model. A new request supersedes the one in flight: that one stops after its
// current model and its results are dropped; the newest request then runs. Every request is
// numbered and only the newest one's results are ever emitted, so nothing depends on the order in
// which a thread pool and the event loop deliver their notifications.
#include <QFuture>
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "image/grey_image.h"
#include "trace/model_session.h"
#include "trace/trace.h"

namespace foveal::ui {

struct TraceOutcome {
  std::shared_ptr<const core::Trace> trace;  ///< null on error
  QString error;
};

class TraceRunner : public QObject {
  Q_OBJECT
 public:
  explicit TraceRunner(QObject* parent = nullptr);
  /// Stops the request in flight after its current model and waits for it.
  ~TraceRunner() override;

  /// Traces `image` through every session (in order). Emits finished() with one outcome each,
  /// unless a newer request supersedes this one first. `options.beamHypothesis` is the first
  /// session's (the inspected model's); the others show their best reading.
  void start(const core::GreyImage& image, const QString& source,
             std::vector<std::shared_ptr<core::ModelSession>> sessions,
             const core::TraceOptions& options = {});
  /// The same for one line of a page: every session reads it with ModelSession::traceLine (a
  /// kraken model as kraken reads the line on the page); the traces are the line's.
  void startLine(std::shared_ptr<const core::GreyImage> page, const core::KrakenLineSpec& line,
                 const QString& source, std::vector<std::shared_ptr<core::ModelSession>> sessions,
                 const core::TraceOptions& options = {});
  /// True from start() until the newest request's finished() has been emitted.
  bool isRunning() const { return m_running || m_pending.has_value(); }

 Q_SIGNALS:
  void started(int models);
  void progress(int done, int models);
  void finished(const std::vector<foveal::ui::TraceOutcome>& outcomes);

 private:
  struct Request {
    quint64 generation = 0;
    core::GreyImage image;
    std::string source;
    std::vector<std::shared_ptr<core::ModelSession>> sessions;
    core::TraceOptions options;
    std::shared_ptr<const core::GreyImage> page;  ///< startLine(): the page `line` is read from
    core::KrakenLineSpec line;
  };
  void launch(Request request);
  void onTaskDone(quint64 generation, std::vector<TraceOutcome> outcomes);

  std::atomic<quint64> m_latest{0};  ///< the newest request; workers stop when it moves on
  bool m_running = false;            ///< a task is in the pool (GUI thread only)
  std::optional<Request> m_pending;  ///< the newest request, waiting for the task to end
  QFuture<void> m_task;
};

}  // namespace foveal::ui
