#pragma once
// Live curves of a run directory's metrics.jsonl (QCustomPlot): one panel per selected metric,
// the runs overlaid in their colours. Smoothing is an exponential moving average drawn over the
// faint raw curve; the y axes can be logarithmic; hovering shows every run's value at the
// iteration under the mouse. Non-finite values (null, "nan", "inf") and skipped steps never
// enter a curve: they are drawn as red markers on the panel's bottom edge (+inf on its top), so
// the axes keep the finite range. Updates are coalesced: setRuns() and every option schedule
// one replot ~40 ms later, however many arrive in between.
//
// A run may also bring points of its own (PlotRun::points): another trainer's curves
// (core/run/trainer_logs.h), whose tags that map onto the catalogue share its panels ("loss",
// "accuracy"...) and whose other tags are panels of their own ("tag:NAME", offered through
// setExtraMetrics()), and the probe set's accuracy at each checkpoint ("probe_accuracy").
#include <QColor>
#include <QString>
#include <QTimer>
#include <QWidget>
#include <limits>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "run/run_log.h"

class QCustomPlot;
class QCPAxis;
class QCPAxisRect;
class QCPGraph;
class QCPLayoutGrid;
class QCPLegend;
class QCPRange;
class QLabel;
class QMouseEvent;

namespace foveal::ui {

struct MetricDef {
  QString key;    ///< field of the record
  QString kind;   ///< record kind it comes from ("train" or "eval")
  QString label;  ///< axis label
  bool positive;  ///< strictly positive in practice: log scale makes sense
};

/// Every metric the trainer logs, in display order.
const std::vector<MetricDef>& metricDefs();
/// The panel of the probe set's accuracy at each checkpoint (probe_filmstrip.h).
inline const QString kProbeAccuracyKey = QStringLiteral("probe_accuracy");
/// The panel key of another trainer's tag that maps onto no metric of the catalogue.
inline QString trainerTagKey(const QString& tag) { return QStringLiteral("tag:") + tag; }

/// One run's points of one metric: finite points in `keys`/`values`, the rest as markers.
struct MetricSeries {
  std::vector<double> keys, values;
  std::vector<double> markerKeys;
  std::vector<int> markerSigns;  ///< +1: +inf (top edge); -1: NaN, -inf or a skipped step
};
/// Extracts `metric` from a run's records (skip records mark loss and gradient norm).
MetricSeries extractSeries(const core::RunLog& log, const MetricDef& metric);
/// Moves a series onto the time axis: each iteration becomes the seconds since the run's start,
/// interpolated between the records that carry elapsed_s (points outside them are dropped).
void toElapsedTime(const core::RunLog& log, MetricSeries& series);
/// Moves a series onto the wall clock (Unix seconds): each iteration becomes the time its records
/// were written (run_folder::kTimeKey), interpolated; a run whose records carry no time (written
/// before they did) uses `startedAt` + elapsed_s instead (NaN: such a run has no points).
void toWallClock(const core::RunLog& log, MetricSeries& series, double startedAt);
/// A run's first and last moment on the wall clock (Unix seconds; NaN when unknown).
std::pair<double, double> wallClockSpan(const core::RunLog& log, double startedAt);
/// The wall-clock axis's tick label format for a range of `seconds`: "HH:mm:ss" under ten
/// minutes, "HH:mm" under half a day, the day and the time beyond.
QString wallClockTickFormat(double seconds);
/// The wall-clock axis's label: it names the day when the ticks do not.
QString wallClockAxisLabel(double lower, double upper);
/// A moment of the wall clock as the hover line names it: "2026-11-23 08:15:02" (local time).
QString wallClockText(double unixSeconds);
/// Exponential moving average with TensorBoard's debiasing; weight in [0, 1).
std::vector<double> smooth(const std::vector<double>& values, double weight);

/// Points a run brings besides its records: step keys, and the wall-clock time of each (Unix
/// seconds, NaN unknown) for the time axes.
struct PlotPoints {
  MetricSeries series;
  std::vector<double> wallTimes;  ///< parallel to series.keys
};

struct PlotRun {
  QString name;
  QColor colour;
  std::shared_ptr<const core::RunLog> log;
  /// When the run started (Unix seconds; NaN unknown): places a run whose records carry no time
  /// on the wall clock (the training page passes its config.json's modification time).
  double startedAt = std::numeric_limits<double>::quiet_NaN();
  /// Panel key -> points that replace what the log has for it (another trainer's run has no
  /// records: everything it shows is here).
  std::map<QString, PlotPoints> points;
};

class MetricsPlot : public QWidget {
  Q_OBJECT
 public:
  explicit MetricsPlot(QWidget* parent = nullptr);

  void setRuns(std::vector<PlotRun> runs);
  /// Metric keys shown as panels, in metricDefs() order (then setExtraMetrics()' order).
  void setMetrics(const QStringList& keys);
  /// Panels beyond the catalogue that runs bring points for (another trainer's tags, the probe
  /// accuracy); a chosen key that is not offered (yet) waits and is shown once it is.
  void setExtraMetrics(std::vector<MetricDef> defs);
  const std::vector<MetricDef>& extraMetrics() const { return m_extraDefs; }
  /// Draws a line at `step` on every panel (the checkpoint chosen in the probe filmstrip);
  /// NaN: none. Iteration axis only.
  void setMarkedStep(double step);
  double markedStep() const { return m_markedStep; }
  QStringList metrics() const { return m_metrics; }
  void setSmoothing(double weight);
  void setLogScale(bool on);
  /// Marks new data: the plot is rebuilt at the next coalesced replot.
  void scheduleReplot();
  /// Rebuilds now when a coalesced replot is pending (before an export or a grab).
  void replotNow();
  /// Writes the panels (without the hover line) at `width` x `height` pixels (points for PDF
  /// and SVG) to `path`: PNG, PDF or SVG by its extension, replacing the file atomically. On
  /// failure returns false and sets `error` to a message naming the file and the reason.
  bool exportTo(const QString& path, int width, int height, QString* error = nullptr);

  QCustomPlot* plot() const { return m_plot; }
  int replotCount() const { return m_replots; }
  bool replotPending() const { return m_timer.isActive(); }
  /// Finite points and non-finite markers drawn for run `run` in the panel of `key` (tests).
  int pointCount(const QString& key, int run) const;
  int markerCount(const QString& key, int run) const;
  /// Values at `iteration` (the hover text); empty when no panel is under the mouse.
  QString hoverText() const;
  QString valuesAt(const QString& key, double iteration) const;
  /// Simulates hovering at iteration `iteration` over the panel of `key`.
  void hover(const QString& key, double iteration);
  /// Shows 0 .. `last` on the x axis (iterations or seconds; a short run beside long ones);
  /// 0 shows every run whole. On the wall clock: `first` .. `last` (Unix seconds).
  void zoomTo(double last, double first = 0);
  double zoomedTo() const { return m_zoomTo; }
  /// What the x axis counts: iterations, the time since the run started (its elapsed_s), or the
  /// wall-clock time (date and time tick labels, local time).
  enum class XAxis { Iteration, Time, WallClock };
  void setXAxis(XAxis axis);
  XAxis xAxis() const { return m_xAxis; }
  /// The upper end of the x axis as drawn.
  double shownIterations() const;
  /// The legend's run names, one a line; whether the legend covers a panel.
  QString legendText() const;
  bool legendOverlapsPanels() const;
  /// The runs whose legend entry is narrower than its name needs or lies outside the plot.
  QStringList clippedLegendNames() const;
  /// A panel's y range as drawn (lower, upper).
  std::pair<double, double> yRange(const QString& key) const;
  /// Moves the shared x axis as a drag or a wheel zoom does (kept across updates until a
  /// double-click or zoomTo()); the range a panel shows.
  void panTo(double lower, double upper);
  std::pair<double, double> xRange(const QString& key) const;
  /// The label of a panel's x or y axis.
  QString axisLabel(const QString& key, bool xAxis) const;

 Q_SIGNALS:
  /// The mouse is over panel `key` at `x` (iterations, seconds or Unix seconds as the axis says).
  void hovered(const QString& key, double x);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  /// Rebuilds the plot from the runs: the legend, then a panel per metric, then the marked step.
  void rebuild();
  /// The x range that shows every run whole (or the one zoomed to).
  QCPRange wholeXRange() const;
  /// The legend's row above the panels' grid (no legend, and no row, without runs).
  QCPLegend* buildLegendRow(QCPLayoutGrid* panels, const QFont& small);
  /// Panel `index` of `def` in the grid: its axes, the runs' graphs (in `legend` unless null),
  /// the y range, the non-finite markers and the hover line.
  void buildPanel(QCPLayoutGrid* panels, int index, int cols, const MetricDef& def,
                  const QCPRange& shown, bool narrowed, const QFont& small, QCPLegend* legend);
  QCPAxisRect* buildPanelAxes(QCPLayoutGrid* panels, int index, int cols, const MetricDef& def,
                              const QCPRange& shown, const QFont& small);
  /// Each run's curve (smoothed over its faint raw one) and markers graph; `series` gets the
  /// runs' series, `lo` .. `hi` the range of the finite values drawn.
  void addRunGraphs(QCPAxis* x, QCPAxis* y, const MetricDef& def, bool logScale, QCPLegend* legend,
                    std::vector<MetricSeries>& series, std::vector<QCPGraph*>& markerGraphs,
                    std::vector<size_t>& markerSeries, double& lo, double& hi);
  /// The line at the step chosen in the filmstrip, on every panel (iteration axis only).
  void addMarkedStepLines();
  void onMouseMove(QMouseEvent* event);
  void onXRangeChanged(const QCPRange& range);
  /// Legend entries per row that fit the plot's width with the longest run name (1-4).
  int legendColumns() const;
  /// The readout line: `text`, or the hint when it is empty.
  void showHoverText(const QString& text);
  /// The definition of a panel key: the catalogue's, then the extra ones; null when unknown.
  const MetricDef* defOf(const QString& key) const;
  /// The series of `run` for panel `def` on the current x axis.
  MetricSeries seriesOf(const PlotRun& run, const MetricDef& def) const;

  QCustomPlot* m_plot;
  QLabel* m_hover;
  QString m_hoverKey;  ///< the panel last hovered ("" none): its readout follows the runs
  double m_hoverIteration = 0;
  int m_legendColumns = 0;  ///< the legend's entries per row at the last rebuild
  QTimer m_timer;
  std::vector<PlotRun> m_runs;
  QStringList m_metrics;
  QStringList m_wanted;  ///< every key chosen, also extra ones not offered yet
  std::vector<MetricDef> m_extraDefs;
  double m_markedStep = std::numeric_limits<double>::quiet_NaN();
  double m_smoothing = 0.6;
  bool m_log = false;
  double m_zoomTo = 0;
  double m_zoomFrom = 0;                    ///< wall clock: the zoom's first moment
  double m_viewLower = 0, m_viewUpper = 1;  ///< the x range the user dragged or zoomed to
  bool m_panned = false;                    ///< m_view applies
  bool m_rebuilding = false;
  bool m_syncing = false;
  XAxis m_xAxis = XAxis::Iteration;
  int m_replots = 0;
  struct Panel {
    QString key;
    QCPAxisRect* rect = nullptr;
    std::vector<MetricSeries> series;  ///< per run in m_runs
  };
  std::vector<Panel> m_panels;
};

}  // namespace foveal::ui
