#pragma once
// Computes one step's explanation (core/trace/attribution.h) off the GUI thread, on demand, with
// progress and cancel. One request at a time: a new one (another step, method or reading) cancels
// the one in flight, whose result is dropped; only the newest request's result is emitted.
#include <QFuture>
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <vector>

#include "image/grey_image.h"
#include "trace/attribution.h"
#include "trace/model_session.h"
#include "trace/trace.h"

namespace foveal::ui {

struct ExplainResult {
  std::shared_ptr<const core::Trace> trace;  ///< the reading it explains (identity: the cache key)
  core::AttributionMethod method = core::AttributionMethod::IntegratedGradients;
  int step = 0;
  std::vector<double> map;  ///< imageW x imageH values
  core::StepAttribution figures;
};

class ExplainRunner : public QObject {
  Q_OBJECT
 public:
  explicit ExplainRunner(QObject* parent = nullptr);
  /// Cancels the request in flight and waits for it.
  ~ExplainRunner() override;

  /// Explains `step` of `trace` (read by `session` from `image`) with `method`. Integrated
  /// gradients on an attention decoder also attribute to the previous tokens (the image share).
  void start(std::shared_ptr<core::ModelSession> session, const core::GreyImage& image,
             std::shared_ptr<const core::Trace> trace, core::AttributionMethod method, int step);
  /// Stops the request in flight; nothing is emitted for it but cancelled().
  void cancel();
  bool isRunning() const { return m_running; }

 Q_SIGNALS:
  void progress(double fraction);
  void finished(const foveal::ui::ExplainResult& result);
  void failed(const QString& message);
  void cancelled();

 private:
  std::atomic<quint64> m_latest{0};
  bool m_running = false;
  std::vector<QFuture<void>> m_tasks;  ///< a superseded task ends at its next progress report
};

}  // namespace foveal::ui
