#include "explain_runner.h"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace foveal::ui {

ExplainRunner::ExplainRunner(QObject* parent) : QObject(parent) {}

ExplainRunner::~ExplainRunner() {
  ++m_latest;
  for (auto& t : m_tasks) t.waitForFinished();
}

void ExplainRunner::cancel() {
  if (!m_running) return;
  ++m_latest;
  m_running = false;
  Q_EMIT cancelled();
}

void ExplainRunner::start(std::shared_ptr<core::ModelSession> session, const core::GreyImage& image,
                          std::shared_ptr<const core::Trace> trace, core::AttributionMethod method,
                          int step) {
  const quint64 generation = ++m_latest;
  m_running = true;
  // The previous task sees the generation move on at its next progress report and stops; the
  // pool runs this one beside it meanwhile.
  m_tasks.erase(std::remove_if(m_tasks.begin(), m_tasks.end(),
                               [](const QFuture<void>& t) { return t.isFinished(); }),
                m_tasks.end());
  m_tasks.push_back(QtConcurrent::run([this, generation, session = std::move(session), image,
                                       trace = std::move(trace), method, step] {
    auto post = [this, generation](auto f) {
      QMetaObject::invokeMethod(
          this,
          [this, generation, f] {
            if (generation != m_latest.load()) return;  // superseded or cancelled
            f();
          },
          Qt::QueuedConnection);
    };
    try {
      core::AttributionOptions o;
      o.method = method;
      o.steps = {step};
      o.tokens = method == core::AttributionMethod::IntegratedGradients && !trace->isCtc();
      o.progress = [this, generation, post](double f) {
        if (generation != m_latest.load()) return false;
        post([this, f] { Q_EMIT progress(f); });
        return true;
      };
      const auto e = session->explain(image, *trace, o);
      ExplainResult r;
      r.trace = trace;
      r.method = method;
      r.step = step;
      r.map = e.maps[static_cast<size_t>(step)];
      r.figures = e.steps.front();
      post([this, r] {
        m_running = false;
        Q_EMIT finished(r);
      });
    } catch (const core::AttributionCancelled&) {
      // Nothing: cancel() already said so, or a newer request took over.
    } catch (const std::exception& e) {
      const QString message = QString::fromStdString(e.what());
      post([this, message] {
        m_running = false;
        Q_EMIT failed(message);
      });
    }
  }));
}

}  // namespace foveal::ui
