#include "explain_runner.h"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "trace/pixel_maps.h"

namespace foveal::ui {

namespace {

// The deletion curve of a step's map (empty map: none, `ok` false).
core::FaithfulnessCurves curvesOf(const core::ModelSession& session, const core::GreyImage& image,
                                  const core::Trace& trace, int step,
                                  const std::vector<double>& map, bool* ok) {
  *ok = false;
  if (map.empty()) return {};
  core::CurveOptions o;
  o.points = ExplainRunner::kCurvePoints;
  auto curves = session.curves(image, trace, {{step, map}}, o);
  *ok = curves.size() == 1;
  return *ok ? curves.front() : core::FaithfulnessCurves{};
}

}  // namespace

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
                          int step, bool curves) {
  run([session = std::move(session), image, trace = std::move(trace), method, step,
       curves](const std::function<bool(double)>& progress) {
    core::AttributionOptions o;
    o.method = method;
    o.steps = {step};
    o.tokens = method == core::AttributionMethod::IntegratedGradients && !trace->isCtc();
    o.progress = progress;
    const auto e = session->explain(image, *trace, o);
    ExplainResult r;
    r.trace = trace;
    r.method = method;
    r.mapName = core::toString(method);
    r.step = step;
    r.map = e.maps[static_cast<size_t>(step)];
    r.figures = e.steps.front();
    if (!progress(1.0)) throw core::AttributionCancelled();
    if (curves) r.curves = curvesOf(*session, image, *trace, step, r.map, &r.hasCurves);
    return r;
  });
}

void ExplainRunner::startAttentionCurve(std::shared_ptr<core::ModelSession> session,
                                        const core::GreyImage& image,
                                        std::shared_ptr<const core::Trace> trace, int step) {
  run([session = std::move(session), image, trace = std::move(trace),
       step](const std::function<bool(double)>&) {
    ExplainResult r;
    r.trace = trace;
    r.mapName = core::kAttentionMap;
    r.step = step;
    r.curves = curvesOf(*session, image, *trace, step,
                        core::stepPixelMap(*trace, core::kAttentionMap, static_cast<size_t>(step)),
                        &r.hasCurves);
    return r;
  });
}

void ExplainRunner::run(
    std::function<ExplainResult(const std::function<bool(double)>& progress)> work) {
  const quint64 generation = ++m_latest;
  m_running = true;
  // The previous task sees the generation move on at its next progress report and stops; the
  // pool runs this one beside it meanwhile.
  m_tasks.erase(std::remove_if(m_tasks.begin(), m_tasks.end(),
                               [](const QFuture<void>& t) { return t.isFinished(); }),
                m_tasks.end());
  m_tasks.push_back(QtConcurrent::run([this, generation, work = std::move(work)] {
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
      const ExplainResult r = work([this, generation, post](double f) {
        if (generation != m_latest.load()) return false;
        post([this, f] { Q_EMIT progress(f); });
        return true;
      });
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
