#pragma once
// Runs one image through several models off the GUI thread (QtConcurrent + QPromise), reporting
// progress per model. A new request supersedes the running one: its results are dropped.
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <memory>
#include <vector>

#include "grey_image.h"
#include "model_session.h"
#include "trace.h"

namespace foveal::ui {

struct TraceOutcome {
  std::shared_ptr<const core::Trace> trace;  ///< null on error
  QString error;
};

class TraceRunner : public QObject {
  Q_OBJECT
 public:
  explicit TraceRunner(QObject* parent = nullptr);
  ~TraceRunner() override;

  /// Traces `image` through every session (in order). Emits finished() with one outcome each.
  void start(const core::GreyImage& image, const QString& source,
             std::vector<std::shared_ptr<core::ModelSession>> sessions,
             const core::TraceOptions& options = {});
  bool isRunning() const { return m_watcher.isRunning(); }

 Q_SIGNALS:
  void started(int models);
  void progress(int done, int models);
  void finished(const std::vector<foveal::ui::TraceOutcome>& outcomes);

 private:
  void onFinished();

  QFutureWatcher<std::vector<TraceOutcome>> m_watcher;
  bool m_pending = false;
  core::GreyImage m_nextImage;
  QString m_nextSource;
  std::vector<std::shared_ptr<core::ModelSession>> m_nextSessions;
  core::TraceOptions m_nextOptions;
};

}  // namespace foveal::ui
