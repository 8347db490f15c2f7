#include "trace_runner.h"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>

namespace foveal::ui {

TraceRunner::TraceRunner(QObject* parent) : QObject(parent) {}

TraceRunner::~TraceRunner() {
  ++m_latest;  // supersede the task in flight: it stops after its current model
  m_task.waitForFinished();
  // Its queued notifications are discarded with this object.
}

void TraceRunner::start(const core::GreyImage& image, const QString& source,
                        std::vector<std::shared_ptr<core::ModelSession>> sessions,
                        const core::TraceOptions& options) {
  Request r;
  r.generation = ++m_latest;
  r.image = image;
  r.source = source.toStdString();
  r.sessions = std::move(sessions);
  r.options = options;
  if (m_running) {  // runs when the current task ends; a later request replaces it
    m_pending = std::move(r);
    return;
  }
  launch(std::move(r));
}

void TraceRunner::startLine(std::shared_ptr<const core::GreyImage> page,
                            const core::KrakenLineSpec& line, const QString& source,
                            std::vector<std::shared_ptr<core::ModelSession>> sessions,
                            const core::TraceOptions& options) {
  Request r;
  r.generation = ++m_latest;
  r.page = std::move(page);
  r.line = line;
  r.source = source.toStdString();
  r.sessions = std::move(sessions);
  r.options = options;
  if (m_running) {
    m_pending = std::move(r);
    return;
  }
  launch(std::move(r));
}

void TraceRunner::launch(Request request) {
  m_running = true;
  const int n = static_cast<int>(request.sessions.size());
  Q_EMIT started(n);
  m_task = QtConcurrent::run([this, r = std::move(request), n] {
    std::vector<TraceOutcome> out;
    for (int i = 0; i < n; ++i) {
      if (m_latest.load() != r.generation) break;  // superseded: stop early
      try {
        core::TraceOptions options = r.options;
        if (i > 0) options.beamHypothesis = 0;  // the chosen hypothesis is the first model's
        const auto& session = *r.sessions[static_cast<size_t>(i)];
        out.push_back({std::make_shared<const core::Trace>(
                           r.page ? session.traceLine(*r.page, r.line, r.source, options).trace
                                  : session.trace(r.image, r.source, options)),
                       {}});
      } catch (const std::exception& e) {
        out.push_back({nullptr, QString::fromStdString(e.what())});
      }
      const quint64 gen = r.generation;
      QMetaObject::invokeMethod(
          this,
          [this, gen, done = i + 1, n] {
            if (gen == m_latest.load()) Q_EMIT progress(done, n);
          },
          Qt::QueuedConnection);
    }
    const quint64 gen = r.generation;
    QMetaObject::invokeMethod(
        this, [this, gen, out = std::move(out)]() mutable { onTaskDone(gen, std::move(out)); },
        Qt::QueuedConnection);
  });
}

void TraceRunner::onTaskDone(quint64 generation, std::vector<TraceOutcome> outcomes) {
  m_running = false;
  if (m_pending) {  // a newer request arrived meanwhile: this task's results are stale
    Request next = std::move(*m_pending);
    m_pending.reset();
    launch(std::move(next));
    return;
  }
  if (generation != m_latest.load()) return;  // superseded (its successor is already pending)
  Q_EMIT finished(outcomes);
}

}  // namespace foveal::ui
