#include "trace_runner.h"

#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>

#include "model_session.h"

namespace foveal::ui {

TraceRunner::TraceRunner(QObject* parent) : QObject(parent) {
  connect(&m_watcher, &QFutureWatcher<std::vector<TraceOutcome>>::finished, this,
          &TraceRunner::onFinished);
  connect(&m_watcher, &QFutureWatcher<std::vector<TraceOutcome>>::progressValueChanged, this,
          [this](int v) { Q_EMIT progress(v, m_watcher.progressMaximum()); });
}

TraceRunner::~TraceRunner() {
  m_watcher.cancel();
  m_watcher.waitForFinished();
}

void TraceRunner::start(const core::GreyImage& image, const QString& source,
                        std::vector<std::shared_ptr<core::ModelSession>> sessions,
                        const core::TraceOptions& options) {
  if (m_watcher.isRunning()) {  // run the latest request when the current one ends
    m_pending = true;
    m_nextImage = image;
    m_nextSource = source;
    m_nextSessions = std::move(sessions);
    m_nextOptions = options;
    m_watcher.cancel();
    return;
  }
  const int n = static_cast<int>(sessions.size());
  Q_EMIT started(n);
  const std::string src = source.toStdString();
  m_watcher.setFuture(QtConcurrent::run(
      [image, src, sessions, options](QPromise<std::vector<TraceOutcome>>& promise) {
        promise.setProgressRange(0, static_cast<int>(sessions.size()));
        std::vector<TraceOutcome> out;
        for (size_t i = 0; i < sessions.size(); ++i) {
          if (promise.isCanceled()) return;
          try {
            out.push_back(
                {std::make_shared<const core::Trace>(sessions[i]->trace(image, src, options)), {}});
          } catch (const std::exception& e) {
            out.push_back({nullptr, QString::fromStdString(e.what())});
          }
          promise.setProgressValue(static_cast<int>(i + 1));
        }
        promise.addResult(std::move(out));
      }));
}

void TraceRunner::onFinished() {
  if (m_pending) {
    m_pending = false;
    start(m_nextImage, m_nextSource, std::move(m_nextSessions), m_nextOptions);
    return;
  }
  if (m_watcher.isCanceled() || m_watcher.future().resultCount() == 0) return;
  Q_EMIT finished(m_watcher.result());
}

}  // namespace foveal::ui
