#pragma once
// Computes one step's explanation (core/trace/attribution.h) and the deletion curve of its map
// (core/trace/faithfulness.h) off the GUI thread, on demand, with progress and cancel. One request
// at a time: a new one (another step, method or reading) cancels the one in flight, whose result is
// dropped; only the newest request's result is emitted.
#include <QFuture>
#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "image/grey_image.h"
#include "trace/attribution.h"
#include "trace/faithfulness.h"
#include "trace/model_session.h"
#include "trace/trace.h"

namespace foveal::ui {

struct ExplainResult {
  std::shared_ptr<const core::Trace> trace;  ///< the reading it explains (identity: the cache key)
  core::AttributionMethod method = core::AttributionMethod::IntegratedGradients;
  /// The map's name: core::toString(method), or core::kAttentionMap for the attention's curve.
  std::string mapName;
  int step = 0;
  std::vector<double> map;  ///< imageW x imageH values (empty for the attention's curve)
  core::StepAttribution figures;
  /// The deletion (and insertion) curve of the map at this step, kCurvePoints fractions.
  core::FaithfulnessCurves curves;
  bool hasCurves = false;  ///< false where the curve could not be computed
};

class ExplainRunner : public QObject {
  Q_OBJECT
 public:
  explicit ExplainRunner(QObject* parent = nullptr);
  /// Cancels the request in flight and waits for it.
  ~ExplainRunner() override;

  /// Explains `step` of `trace` (read by `session` from `image`) with `method`. Integrated
  /// gradients on an attention decoder also attribute to the previous tokens (the image share).
  /// With `curves` (the inspector's step panel shows them) the map's deletion curve too; a view
  /// that does not show it (Compare) passes false and spares the extra readings.
  void start(std::shared_ptr<core::ModelSession> session, const core::GreyImage& image,
             std::shared_ptr<const core::Trace> trace, core::AttributionMethod method, int step,
             bool curves = true);
  /// The deletion curve of the attention map of `step` alone (it needs no attribution): emits
  /// finished() with mapName core::kAttentionMap.
  void startAttentionCurve(std::shared_ptr<core::ModelSession> session,
                           const core::GreyImage& image, std::shared_ptr<const core::Trace> trace,
                           int step);
  /// The fractions of the step panel's curves.
  static constexpr int kCurvePoints = 11;
  /// Stops the request in flight; nothing is emitted for it but cancelled().
  void cancel();
  bool isRunning() const { return m_running; }

 Q_SIGNALS:
  void progress(double fraction);
  void finished(const foveal::ui::ExplainResult& result);
  void failed(const QString& message);
  void cancelled();

 private:
  /// Runs `work` (which fills a result or throws) as the newest request.
  void run(std::function<ExplainResult(const std::function<bool(double)>& progress)> work);

  std::atomic<quint64> m_latest{0};
  bool m_running = false;
  std::vector<QFuture<void>> m_tasks;  ///< a superseded task ends at its next progress report
};

}  // namespace foveal::ui
