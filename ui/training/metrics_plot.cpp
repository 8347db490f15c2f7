#include "metrics_plot.h"
#include "run/run_folder.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QFontMetrics>
#include <QLabel>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "qcustomplot_include.h"

namespace foveal::ui {

namespace {
constexpr int kCoalesceMs = 40;
const QColor kMarker(211, 47, 47);
}  // namespace

namespace {
const char* const kFullLabel = "fovealFullLabel";  ///< an axis's title before it is elided
}  // namespace

const std::vector<MetricDef>& metricDefs() {
  // The catalogue is core's (run_folder.h), shared with the trainer that writes the records.
  static const std::vector<MetricDef> defs = [] {
    std::vector<MetricDef> d;
    for (const auto& m : core::run_folder::metricCatalogue())
      d.push_back({QString::fromLatin1(m.key), QString::fromLatin1(m.kind), QObject::tr(m.label),
                   m.nonNegative});
    return d;
  }();
  return defs;
}

MetricSeries extractSeries(const core::RunLog& log, const MetricDef& metric) {
  MetricSeries s;
  const std::string key = metric.key.toStdString();
  const std::string kind = metric.kind.toStdString();
  // A field that is null in every record of its kind does not apply to this run (the baseline
  // of a soft model, the reference term without references): no markers for it.
  bool anyFinite = false;
  for (const auto& r : log.records())
    if (r.kind == kind && std::isfinite(r.value(key))) {
      anyFinite = true;
      break;
    }
  const bool marksSkips =
      metric.key == QLatin1String("loss") || metric.key == QLatin1String("grad_norm");
  for (const auto& r : log.records()) {
    const int64_t it = r.iteration();
    if (it < 0) continue;
    if (r.kind == "skip" && marksSkips) {
      s.markerKeys.push_back(double(it));
      s.markerSigns.push_back(-1);
      continue;
    }
    if (r.kind != kind || !r.has(key)) continue;
    const double v = r.value(key);
    if (std::isfinite(v)) {
      s.keys.push_back(double(it));
      s.values.push_back(v);
    } else if (anyFinite || !std::isnan(v)) {
      s.markerKeys.push_back(double(it));
      s.markerSigns.push_back(v > 0 ? 1 : -1);
    }
  }
  return s;
}

namespace {

// (iteration, clock) pairs with iterations rising: the records that carry `key`, plus `offset`.
std::vector<std::pair<double, double>> clockOf(const core::RunLog& log, const char* key,
                                               double offset) {
  std::vector<std::pair<double, double>> clock;
  for (const auto& r : log.records()) {
    const double t = r.value(key);
    if (r.iteration() < 0 || !std::isfinite(t)) continue;
    if (!clock.empty() && double(r.iteration()) <= clock.back().first) {
      if (double(r.iteration()) == clock.back().first) clock.back().second = t + offset;
      continue;
    }
    clock.emplace_back(double(r.iteration()), t + offset);
  }
  return clock;
}

// Moves every point of `series` to its clock value, interpolated between the clock's records
// (points outside them are dropped).
void mapKeys(const std::vector<std::pair<double, double>>& clock, MetricSeries& series) {
  auto at = [&](double it, double* out) {
    if (clock.empty() || it < clock.front().first || it > clock.back().first) return false;
    const auto hi = std::lower_bound(clock.begin(), clock.end(), std::make_pair(it, -1e300));
    if (hi->first == it || hi == clock.begin()) {
      *out = hi->second;
      return true;
    }
    const auto lo = hi - 1;
    *out = lo->second + (hi->second - lo->second) * (it - lo->first) / (hi->first - lo->first);
    return true;
  };
  MetricSeries out;
  for (size_t i = 0; i < series.keys.size(); ++i) {
    double t = 0;
    if (!at(series.keys[i], &t)) continue;
    out.keys.push_back(t);
    out.values.push_back(series.values[i]);
  }
  for (size_t i = 0; i < series.markerKeys.size(); ++i) {
    double t = 0;
    if (!at(series.markerKeys[i], &t)) continue;
    out.markerKeys.push_back(t);
    out.markerSigns.push_back(series.markerSigns[i]);
  }
  series = std::move(out);
}

// The wall clock of a run: its records' time stamps, or (older runs) its start plus elapsed_s.
std::vector<std::pair<double, double>> wallClockOf(const core::RunLog& log, double startedAt) {
  auto clock = clockOf(log, core::run_folder::kTimeKey, 0.0);
  if (clock.empty() && std::isfinite(startedAt)) clock = clockOf(log, "elapsed_s", startedAt);
  return clock;
}

// Date and time tick labels whose detail follows the span shown: seconds for minutes, hours and
// minutes within half a day, the day on every tick beyond (so overnight runs read right).
class WallClockTicker : public QCPAxisTickerDateTime {
 public:
  WallClockTicker() { setDateTimeSpec(Qt::LocalTime); }
  void generate(const QCPRange& range, const QLocale& locale, QChar formatChar, int precision,
                QVector<double>& ticks, QVector<double>* subTicks,
                QVector<QString>* tickLabels) override {
    setDateTimeFormat(wallClockTickFormat(range.size()));
    QCPAxisTickerDateTime::generate(range, locale, formatChar, precision, ticks, subTicks,
                                    tickLabels);
  }
};

}  // namespace

QString wallClockTickFormat(double seconds) {
  if (seconds < 600) return QStringLiteral("HH:mm:ss");
  if (seconds < 12 * 3600) return QStringLiteral("HH:mm");
  return QStringLiteral("d MMM\nHH:mm");
}

QString wallClockAxisLabel(double lower, double upper) {
  // Ticks without the day name it here: the day the range starts.
  if (wallClockTickFormat(upper - lower).contains(QLatin1Char('d')))
    return QObject::tr("date and time (local)");
  const QDateTime start = QDateTime::fromMSecsSinceEpoch(qint64(std::llround(lower * 1000.0)));
  return QObject::tr("time of day, %1")
      .arg(start.toLocalTime().toString(QStringLiteral("d MMM yyyy")));
}

void toElapsedTime(const core::RunLog& log, MetricSeries& series) {
  mapKeys(clockOf(log, "elapsed_s", 0.0), series);
}

void toWallClock(const core::RunLog& log, MetricSeries& series, double startedAt) {
  mapKeys(wallClockOf(log, startedAt), series);
}

std::pair<double, double> wallClockSpan(const core::RunLog& log, double startedAt) {
  const auto clock = wallClockOf(log, startedAt);
  if (clock.empty()) return {std::nan(""), std::nan("")};
  // The start: the first record's time less the seconds it had trained by then.
  double start = clock.front().second;
  for (const auto& r : log.records())
    if (std::isfinite(r.value(core::run_folder::kTimeKey)) && std::isfinite(r.value("elapsed_s"))) {
      start = std::min(start, r.value(core::run_folder::kTimeKey) - r.value("elapsed_s"));
      break;
    }
  if (std::isfinite(startedAt)) start = std::min(start, startedAt);
  return {start, clock.back().second};
}

std::vector<double> smooth(const std::vector<double>& values, double weight) {
  std::vector<double> out(values.size());
  double last = 0, debias = 1;
  for (size_t i = 0; i < values.size(); ++i) {
    last = last * weight + (1 - weight) * values[i];
    debias *= weight;
    out[i] = weight > 0 ? last / (1 - debias) : values[i];
  }
  return out;
}

MetricsPlot::MetricsPlot(QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this)), m_hover(new QLabel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(m_plot, 1);
  m_hover->setTextFormat(Qt::RichText);
  m_hover->setMinimumHeight(m_hover->fontMetrics().height() + 4);
  // One line of values as long as the runs are many: it is cut at the panel's width (the whole
  // line is its tooltip), never setting the window's minimum width.
  m_hover->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
  m_hover->setMinimumWidth(0);
  showHoverText({});
  // A panel shorter than its y title ("gradient norm" on a 1366x768 screen) shows the title
  // elided, not cut at the panel's edge (issue 64): measured once the panels are laid out.
  connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
    for (QCPAxisRect* rect : m_plot->axisRects()) {
      QCPAxis* y = rect->axis(QCPAxis::atLeft);
      const QString full = y->property(kFullLabel).toString();
      if (full.isEmpty()) continue;
      const QString shown = QFontMetrics(y->labelFont())
                                .elidedText(full, Qt::ElideRight, std::max(8, rect->height()));
      if (y->label() != shown) y->setLabel(shown);
    }
  });
  layout->addWidget(m_hover);
  m_plot->setMinimumSize(320, 200);
  m_plot->setMouseTracking(true);
  // Drag pans and the wheel zooms the shared x axis; a double-click shows every run whole.
  m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { zoomTo(0); });
  m_plot->setNoAntialiasingOnDrag(true);
  m_plot->setAutoAddPlottableToLegend(false);  // one legend entry per run, added explicitly
  m_timer.setSingleShot(true);
  m_timer.setInterval(kCoalesceMs);
  connect(&m_timer, &QTimer::timeout, this, &MetricsPlot::rebuild);
  connect(m_plot, &QCustomPlot::mouseMove, this, &MetricsPlot::onMouseMove);
  for (const auto& d : metricDefs())
    if (d.key == QLatin1String("loss") || d.key == QLatin1String("accuracy") ||
        d.key == QLatin1String("grad_norm") || d.key == QLatin1String("reward") ||
        d.key == QLatin1String("entropy") || d.key == QLatin1String("images_per_s"))
      m_metrics << d.key;
  rebuild();
}

void MetricsPlot::setRuns(std::vector<PlotRun> runs) {
  m_runs = std::move(runs);
  scheduleReplot();
}

void MetricsPlot::setMetrics(const QStringList& keys) {
  m_wanted = keys;
  m_metrics.clear();
  for (const auto& d : metricDefs())
    if (keys.contains(d.key)) m_metrics << d.key;
  for (const auto& d : m_extraDefs)
    if (keys.contains(d.key) && !m_metrics.contains(d.key)) m_metrics << d.key;
  scheduleReplot();
}

void MetricsPlot::setExtraMetrics(std::vector<MetricDef> defs) {
  bool same = defs.size() == m_extraDefs.size();
  for (size_t i = 0; same && i < defs.size(); ++i)
    same = defs[i].key == m_extraDefs[i].key && defs[i].label == m_extraDefs[i].label &&
           defs[i].kind == m_extraDefs[i].kind;
  if (same) return;
  m_extraDefs = std::move(defs);
  setMetrics(m_wanted);
}

void MetricsPlot::setMarkedStep(double step) {
  if (std::isnan(step) && std::isnan(m_markedStep)) return;
  if (step == m_markedStep) return;
  m_markedStep = step;
  scheduleReplot();
}

const MetricDef* MetricsPlot::defOf(const QString& key) const {
  for (const auto& d : metricDefs())
    if (d.key == key) return &d;
  for (const auto& d : m_extraDefs)
    if (d.key == key) return &d;
  return nullptr;
}

MetricSeries MetricsPlot::seriesOf(const PlotRun& run, const MetricDef& def) const {
  const bool time = m_xAxis == XAxis::Time;
  const bool wall = m_xAxis == XAxis::WallClock;
  const bool hasRecords = run.log && !run.log->records().empty();
  const auto p = run.points.find(def.key);
  if (p == run.points.end()) {
    if (!run.log) return {};
    MetricSeries s = extractSeries(*run.log, def);
    if (time) toElapsedTime(*run.log, s);
    if (wall) toWallClock(*run.log, s, run.startedAt);
    return s;
  }
  MetricSeries s = p->second.series;
  if (!time && !wall) return s;
  if (hasRecords) {  // a Foveal run's own clock places its steps
    if (time) toElapsedTime(*run.log, s);
    if (wall) toWallClock(*run.log, s, run.startedAt);
    return s;
  }
  // Another trainer's: each point at its own wall time (time axis: since the run's first one).
  double first = std::numeric_limits<double>::infinity();
  for (const auto& [key, pts] : run.points)
    for (double w : pts.wallTimes)
      if (std::isfinite(w)) first = std::min(first, w);
  MetricSeries out;
  for (size_t i = 0; i < s.keys.size() && i < p->second.wallTimes.size(); ++i) {
    const double w = p->second.wallTimes[i];
    if (!std::isfinite(w)) continue;
    out.keys.push_back(wall ? w : w - first);
    out.values.push_back(s.values[i]);
  }
  return out;
}

void MetricsPlot::setSmoothing(double weight) {
  m_smoothing = std::clamp(weight, 0.0, 0.99);
  scheduleReplot();
}

void MetricsPlot::setLogScale(bool on) {
  m_log = on;
  scheduleReplot();
}

void MetricsPlot::scheduleReplot() {
  if (!m_timer.isActive()) m_timer.start();
}

void MetricsPlot::replotNow() {
  if (!m_timer.isActive()) return;
  m_timer.stop();
  rebuild();
}

bool MetricsPlot::exportTo(const QString& path, int width, int height, QString* error) {
  auto fail = [&](const QString& why) {
    if (error) *error = tr("%1: %2").arg(QDir::toNativeSeparators(path), why);
    return false;
  };
  const QFileInfo info(path);
  const QString ext = info.suffix().toLower();
  if (ext != QLatin1String("png") && ext != QLatin1String("pdf") && ext != QLatin1String("svg"))
    return fail(tr("unknown format %1 (name the file .png, .pdf or .svg)")
                    .arg(ext.isEmpty() ? tr("(no extension)") : QStringLiteral("'.%1'").arg(ext)));
  if (width < 16 || height < 16 || width > 20000 || height > 20000)
    return fail(tr("size %1x%2 is out of range (16 to 20000 per side)").arg(width).arg(height));
  if (!info.absoluteDir().exists())
    return fail(tr("cannot write: the folder %1 does not exist")
                    .arg(QDir::toNativeSeparators(info.absolutePath())));
  if (info.isDir()) return fail(tr("cannot write: it is a folder"));
  replotNow();
  QSaveFile file(path);  // written beside, renamed over the target on success
  if (!file.open(QIODevice::WriteOnly))
    return fail(tr("cannot write (%1)").arg(file.errorString()));

  // The hover line belongs to the screen, not to the figure.
  std::vector<std::pair<QCPAbstractItem*, bool>> items;
  for (int i = 0; i < m_plot->itemCount(); ++i) {
    items.emplace_back(m_plot->item(i), m_plot->item(i)->visible());
    m_plot->item(i)->setVisible(false);
  }
  bool painted = false;
  if (ext == QLatin1String("png")) {
    const QPixmap pixmap = m_plot->toPixmap(width, height, 1.0);
    painted = !pixmap.isNull() && pixmap.save(&file, "PNG");
  } else {
    auto paint = [&](QPaintDevice* device) {
      QCPPainter painter;
      if (!painter.begin(device)) return false;
      painter.setMode(QCPPainter::pmVectorized);
      m_plot->toPainter(&painter, width, height);
      return painter.end();
    };
    if (ext == QLatin1String("pdf")) {
      QPdfWriter pdf(&file);
      pdf.setCreator(QStringLiteral("Foveal"));
      pdf.setTitle(tr("Training curves"));
      pdf.setPageSize(QPageSize(QSizeF(width, height), QPageSize::Point));
      pdf.setPageMargins({});
      pdf.setResolution(72);  // one point per plot pixel
      painted = paint(&pdf);
    } else {
      QSvgGenerator svg;
      svg.setOutputDevice(&file);
      svg.setSize(QSize(width, height));
      svg.setViewBox(QRect(0, 0, width, height));
      svg.setTitle(tr("Training curves"));
      painted = paint(&svg);
    }
  }
  for (const auto& [item, visible] : items) item->setVisible(visible);
  m_plot->replot(QCustomPlot::rpQueuedReplot);  // back to the widget's own size
  if (!painted) {
    file.cancelWriting();
    return fail(tr("cannot render the %1 image (%2x%3)").arg(ext.toUpper()).arg(width).arg(height));
  }
  if (!file.commit()) return fail(tr("write failed (%1)").arg(file.errorString()));
  return true;
}

namespace {

// How far the runs reach on the x axis: iterations or seconds (maxKey), or the wall clock.
struct XExtent {
  double maxKey = 1;
  double wallFirst = std::numeric_limits<double>::infinity();
  double wallLast = -std::numeric_limits<double>::infinity();
};

void extendByRun(const PlotRun& run, bool time, bool wall, XExtent& e) {
  if (!run.points.empty() && !(run.log && !run.log->records().empty())) {
    // Another trainer's run: its own points say how far it went.
    double first = std::numeric_limits<double>::infinity(), lastWall = -first;
    double lastStep = 0;
    for (const auto& [key, pts] : run.points) {
      for (double k : pts.series.keys) lastStep = std::max(lastStep, k);
      for (double w : pts.wallTimes)
        if (std::isfinite(w)) {
          first = std::min(first, w);
          lastWall = std::max(lastWall, w);
        }
    }
    if (wall && std::isfinite(first)) {
      e.wallFirst = std::min(e.wallFirst, first);
      e.wallLast = std::max(e.wallLast, lastWall);
    } else if (time && std::isfinite(first)) {
      e.maxKey = std::max(e.maxKey, lastWall - first);
    } else if (!time && !wall) {
      e.maxKey = std::max(e.maxKey, lastStep);
    }
    return;
  }
  if (!run.log) return;
  if (wall) {
    const auto [first, last] = wallClockSpan(*run.log, run.startedAt);
    if (std::isfinite(first)) e.wallFirst = std::min(e.wallFirst, first);
    if (std::isfinite(last)) e.wallLast = std::max(e.wallLast, last);
    return;
  }
  if (!time) {
    e.maxKey = std::max(e.maxKey, double(run.log->iteration()));
    return;
  }
  for (auto r = run.log->records().rbegin(); r != run.log->records().rend(); ++r)
    if (std::isfinite(r->value("elapsed_s"))) {
      e.maxKey = std::max(e.maxKey, r->value("elapsed_s"));
      break;
    }
}

// A panel's y range: the finite values drawn (`lo` .. `hi`), or with the x axis narrowed, those
// in view (not the long runs' early values), padded.
void fitYRange(QCPAxis* y, const std::vector<MetricSeries>& series, const QCPRange& shown,
               bool narrowed, bool logScale, double lo, double hi) {
  if (narrowed) {  // the y range of what is in view, not of the long runs' early values
    lo = std::numeric_limits<double>::infinity();
    hi = -lo;
    for (const auto& s : series)
      for (size_t i = 0; i < s.keys.size(); ++i)
        if (shown.contains(s.keys[i]) && (!logScale || s.values[i] > 0)) {
          lo = std::min(lo, s.values[i]);
          hi = std::max(hi, s.values[i]);
        }
  }
  if (!(lo <= hi)) {
    lo = logScale ? 0.1 : 0;
    hi = 1;
  }
  if (logScale) {
    const double l0 = std::log10(lo), l1 = std::log10(hi);
    const double pad = std::max(0.05, (l1 - l0) * 0.08);
    y->setRange(std::pow(10, l0 - pad), std::pow(10, l1 + pad));
  } else {
    const double pad = hi > lo ? (hi - lo) * 0.08 : std::max(1e-3, std::abs(hi) * 0.1);
    y->setRange(lo - pad, hi + pad);
  }
}

// Non-finite markers sit on the edges of the finite range: visible, and the axes stay put.
void placeMarkers(const QCPAxis* y, bool logScale, const std::vector<MetricSeries>& series,
                  const std::vector<QCPGraph*>& markerGraphs,
                  const std::vector<size_t>& markerSeries) {
  auto edge = [&](int sign) {
    const QCPRange r = y->range();
    if (logScale) {
      const double a = std::log10(r.lower), b = std::log10(r.upper);
      return std::pow(10, sign > 0 ? b - (b - a) * 0.04 : a + (b - a) * 0.04);
    }
    return sign > 0 ? r.upper - r.size() * 0.04 : r.lower + r.size() * 0.04;
  };
  for (size_t g = 0; g < markerGraphs.size(); ++g) {
    QVector<double> keys, values;
    const MetricSeries& s = series[markerSeries[g]];
    for (size_t i = 0; i < s.markerKeys.size(); ++i) {
      keys << s.markerKeys[i];
      values << edge(s.markerSigns[i]);
    }
    markerGraphs[g]->setData(keys, values, true);
  }
}

}  // namespace

QCPRange MetricsPlot::wholeXRange() const {
  const bool time = m_xAxis == XAxis::Time;
  const bool wall = m_xAxis == XAxis::WallClock;
  XExtent e;
  for (const auto& run : m_runs) extendByRun(run, time, wall, e);
  if (m_zoomTo > 0) e.maxKey = m_zoomTo;
  // The x range shown: every run, a zoom to one run, or where the user dragged and zoomed (kept
  // as new records arrive).
  QCPRange whole(0, e.maxKey * 1.02);
  if (wall) {
    if (m_zoomTo > 0) {
      e.wallFirst = m_zoomFrom;
      e.wallLast = m_zoomTo;
    }
    if (!std::isfinite(e.wallFirst) || !std::isfinite(e.wallLast)) {  // nothing on the clock
      e.wallLast = QDateTime::currentSecsSinceEpoch();
      e.wallFirst = e.wallLast - 3600;
    }
    const double span = std::max(10.0, e.wallLast - e.wallFirst);
    whole = QCPRange(e.wallFirst - span * 0.01, e.wallFirst + span * 1.02);
  }
  return whole;
}

void MetricsPlot::rebuild() {
  ++m_replots;
  m_plot->clearItems();
  m_plot->clearGraphs();
  m_plot->plotLayout()->clear();  // deletes the axis rects (and a legend inside them)
  m_plot->plotLayout()->simplify();
  m_panels.clear();
  if (m_metrics.isEmpty()) {
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  const int n = static_cast<int>(m_metrics.size());
  const int cols = n <= 2 ? n : (n <= 4 ? 2 : 3);
  const QCPRange shown = m_panned ? QCPRange(m_viewLower, m_viewUpper) : wholeXRange();
  const bool narrowed = m_panned || m_zoomTo > 0;
  m_rebuilding = true;
  auto* panels = new QCPLayoutGrid;
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  QCPLegend* legend = buildLegendRow(panels, small);
  for (int m = 0; m < n; ++m) {
    const MetricDef* def = defOf(m_metrics[m]);
    if (!def) continue;
    buildPanel(panels, m, cols, *def, shown, narrowed, small, m == 0 ? legend : nullptr);
  }
  addMarkedStepLines();
  m_rebuilding = false;
  // The readout follows the runs shown: one unticked since the mouse moved is no longer listed.
  if (!m_hoverKey.isEmpty()) showHoverText(valuesAt(m_hoverKey, m_hoverIteration));
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QCPLegend* MetricsPlot::buildLegendRow(QCPLayoutGrid* panels, const QFont& small) {
  // The legend has a row of its own above the panels: inside a panel it hid the curves and cut
  // long run names.
  if (m_runs.empty()) {
    m_plot->plotLayout()->addElement(0, 0, panels);
    return nullptr;
  }
  auto* legend = new QCPLegend;
  m_plot->plotLayout()->addElement(0, 0, legend);
  legend->setLayer(QStringLiteral("legend"));
  legend->setFont(small);
  legend->setBorderPen(Qt::NoPen);
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  m_legendColumns = legendColumns();
  legend->setWrap(m_legendColumns);
  legend->setRowSpacing(0);
  legend->setColumnSpacing(12);
  m_plot->plotLayout()->addElement(1, 0, panels);
  m_plot->plotLayout()->setRowStretchFactor(0, 0.001);
  return legend;
}

void MetricsPlot::buildPanel(QCPLayoutGrid* panels, int index, int cols, const MetricDef& def,
                             const QCPRange& shown, bool narrowed, const QFont& small,
                             QCPLegend* legend) {
  QCPAxisRect* rect = buildPanelAxes(panels, index, cols, def, shown, small);
  QCPAxis* x = rect->axis(QCPAxis::atBottom);
  QCPAxis* y = rect->axis(QCPAxis::atLeft);
  const bool logScale = m_log && def.positive;
  Panel panel;
  panel.key = def.key;
  panel.rect = rect;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  std::vector<QCPGraph*> markerGraphs;
  std::vector<size_t> markerSeries;  // index into panel.series (which grows: no pointers)
  addRunGraphs(x, y, def, logScale, legend, panel.series, markerGraphs, markerSeries, lo, hi);
  x->setRange(shown);
  rect->setRangeDrag(Qt::Horizontal);
  rect->setRangeZoom(Qt::Horizontal);
  connect(x, QOverload<const QCPRange&>::of(&QCPAxis::rangeChanged), this,
          &MetricsPlot::onXRangeChanged);
  fitYRange(y, panel.series, shown, narrowed, logScale, lo, hi);
  placeMarkers(y, logScale, panel.series, markerGraphs, markerSeries);
  auto* cursor = new QCPItemStraightLine(m_plot);
  cursor->setClipAxisRect(rect);
  cursor->point1->setAxes(x, y);
  cursor->point2->setAxes(x, y);
  cursor->setPen(QPen(QColor(0, 0, 0, 90), 1, Qt::DashLine));
  cursor->setVisible(false);
  m_panels.push_back(std::move(panel));
}

QCPAxisRect* MetricsPlot::buildPanelAxes(QCPLayoutGrid* panels, int index, int cols,
                                         const MetricDef& def, const QCPRange& shown,
                                         const QFont& small) {
  const bool time = m_xAxis == XAxis::Time;
  const bool wall = m_xAxis == XAxis::WallClock;
  auto* rect = new QCPAxisRect(m_plot);
  panels->addElement(index / cols, index % cols, rect);
  rect->setMinimumMargins(QMargins(4, 4, 4, 4));
  QCPAxis* x = rect->axis(QCPAxis::atBottom);
  QCPAxis* y = rect->axis(QCPAxis::atLeft);
  y->setLabel(def.label);
  y->setProperty(kFullLabel, def.label);  // fitAxisLabels() shortens it to the panel's height
  x->setLabel(time ? tr("time since start (h:mm)")
                   : (wall ? wallClockAxisLabel(shown.lower, shown.upper) : tr("iteration")));
  if (time) {
    QSharedPointer<QCPAxisTickerTime> ticker(new QCPAxisTickerTime);
    ticker->setTimeFormat(QStringLiteral("%h:%m"));
    x->setTicker(ticker);
  } else if (wall) {
    x->setTicker(QSharedPointer<QCPAxisTickerDateTime>(new WallClockTicker));
  }
  x->setLabelFont(small);
  x->setTickLabelFont(small);
  y->setTickLabelFont(small);
  y->setLabelFont(font());
  if (m_log && def.positive) {
    y->setScaleType(QCPAxis::stLogarithmic);
    y->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    y->setNumberFormat(QStringLiteral("eb"));
    y->setNumberPrecision(0);
  }
  for (QCPAxis* a : {x, y}) a->grid()->setSubGridVisible(false);
  // Panels sit side by side: keep their labels apart (times of day are wider than numbers).
  x->ticker()->setTickCount(wall ? 3 : 4);
  return rect;
}

void MetricsPlot::addRunGraphs(QCPAxis* x, QCPAxis* y, const MetricDef& def, bool logScale,
                               QCPLegend* legend, std::vector<MetricSeries>& series,
                               std::vector<QCPGraph*>& markerGraphs,
                               std::vector<size_t>& markerSeries, double& lo, double& hi) {
  for (const auto& run : m_runs) {
    series.push_back(seriesOf(run, def));
    const MetricSeries& s = series.back();
    QVector<double> keys, values;
    for (size_t i = 0; i < s.keys.size(); ++i) {
      if (logScale && s.values[i] <= 0) continue;
      keys << s.keys[i];
      values << s.values[i];
      lo = std::min(lo, s.values[i]);
      hi = std::max(hi, s.values[i]);
    }
    const bool sparse = def.kind == QLatin1String("eval");
    const bool smoothed = m_smoothing > 0 && !sparse;
    QCPGraph* main = m_plot->addGraph(x, y);
    main->setName(run.name);
    if (smoothed) {
      QCPGraph* raw = m_plot->addGraph(x, y);
      QColor faint = run.colour;
      faint.setAlpha(70);
      raw->setPen(QPen(faint, 1));
      raw->setData(keys, values, true);
      const std::vector<double> sm =
          smooth(std::vector<double>(values.begin(), values.end()), m_smoothing);
      main->setData(keys, QVector<double>(sm.begin(), sm.end()), true);
    } else {
      main->setData(keys, values, true);
    }
    main->setPen(QPen(run.colour, 1.8));
    if (sparse) main->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, run.colour, 5));
    if (legend) main->addToLegend(legend);
    if (!s.markerKeys.empty()) {
      QCPGraph* marks = m_plot->addGraph(x, y);
      marks->setLineStyle(QCPGraph::lsNone);
      QColor edge = run.colour;
      marks->setScatterStyle(
          QCPScatterStyle(QCPScatterStyle::ssCrossSquare, QPen(kMarker, 1.5), edge, 8));
      markerGraphs.push_back(marks);
      markerSeries.push_back(series.size() - 1);
    }
  }
}

void MetricsPlot::addMarkedStepLines() {
  // The checkpoint chosen in the filmstrip, on every panel (after the hover lines: hover()
  // finds panel i's at item i).
  if (!std::isfinite(m_markedStep) || m_xAxis != XAxis::Iteration) return;
  for (const auto& p : m_panels) {
    auto* mark = new QCPItemStraightLine(m_plot);
    mark->setClipAxisRect(p.rect);
    mark->point1->setAxes(p.rect->axis(QCPAxis::atBottom), p.rect->axis(QCPAxis::atLeft));
    mark->point2->setAxes(p.rect->axis(QCPAxis::atBottom), p.rect->axis(QCPAxis::atLeft));
    mark->point1->setCoords(m_markedStep, 0);
    mark->point2->setCoords(m_markedStep, 1);
    mark->setPen(QPen(QColor(21, 101, 192, 160), 1.5));
  }
}

void MetricsPlot::showHoverText(const QString& text) {
  const QString shown = text.isEmpty() ? tr("<i>Hover a panel to read the values.</i>") : text;
  m_hover->setText(shown);
  m_hover->setToolTip(text);
}

void MetricsPlot::onXRangeChanged(const QCPRange& range) {
  if (m_rebuilding || m_syncing) return;
  // Panels share the x axis: a drag or a zoom in one moves them all, and stays.
  m_viewLower = range.lower;
  m_viewUpper = range.upper;
  m_panned = true;
  m_syncing = true;
  for (const auto& p : m_panels) {
    QCPAxis* x = p.rect->axis(QCPAxis::atBottom);
    x->setRange(range);
    if (m_xAxis == XAxis::WallClock) x->setLabel(wallClockAxisLabel(range.lower, range.upper));
  }
  m_syncing = false;
  m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void MetricsPlot::panTo(double lower, double upper) {
  if (m_panels.empty()) return;
  m_panels.front().rect->axis(QCPAxis::atBottom)->setRange(lower, upper);  // as a drag does
}

std::pair<double, double> MetricsPlot::xRange(const QString& key) const {
  for (const auto& p : m_panels)
    if (p.key == key) {
      const QCPRange r = p.rect->axis(QCPAxis::atBottom)->range();
      return {r.lower, r.upper};
    }
  return {0, 0};
}

void MetricsPlot::setXAxis(XAxis axis) {
  if (axis != m_xAxis) {  // a zoom in the other unit means nothing here
    m_zoomTo = 0;
    m_panned = false;
  }
  m_xAxis = axis;
  scheduleReplot();
}

void MetricsPlot::zoomTo(double last, double first) {
  m_zoomTo = last > 0 ? last : 0;
  m_zoomFrom = first;
  m_panned = false;
  scheduleReplot();
}

double MetricsPlot::shownIterations() const {
  return m_panels.empty() ? 0 : m_panels.front().rect->axis(QCPAxis::atBottom)->range().upper;
}

QString MetricsPlot::legendText() const {
  QStringList names;
  for (int i = 0; i < m_plot->plotLayout()->elementCount(); ++i)
    if (auto* legend = qobject_cast<QCPLegend*>(m_plot->plotLayout()->elementAt(i)))
      for (int k = 0; k < legend->itemCount(); ++k)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(k)))
          names << item->plottable()->name();
  return names.join(QLatin1Char('\n'));
}

int MetricsPlot::legendColumns() const {
  // As many entries per row as their longest name allows at this width (at most four): a fixed
  // four cut long names on a laptop screen.
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  const QFontMetrics fm(small);
  int widest = 0;
  for (const auto& r : m_runs) widest = std::max(widest, fm.horizontalAdvance(r.name));
  const int entry = widest + 32 + 12 + 10;  // icon, its padding, column spacing, margins
  const int fit = std::max(1, (m_plot->width() - 20) / std::max(1, entry));
  return std::max(1, std::min({int(m_runs.size()), 4, fit}));
}

QStringList MetricsPlot::clippedLegendNames() const {
  QStringList clipped;
  for (int i = 0; i < m_plot->plotLayout()->elementCount(); ++i)
    if (auto* legend = qobject_cast<QCPLegend*>(m_plot->plotLayout()->elementAt(i)))
      for (int k = 0; k < legend->itemCount(); ++k)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(legend->item(k))) {
          const QRect r = item->outerRect();
          const QCPLayoutElement* element = item;  // the hint is public there
          if (r.width() < element->minimumOuterSizeHint().width() || r.right() > m_plot->width() ||
              r.left() < 0)
            clipped << item->plottable()->name();
        }
  return clipped;
}

void MetricsPlot::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  if (!m_runs.empty() && legendColumns() != m_legendColumns) scheduleReplot();
}

bool MetricsPlot::legendOverlapsPanels() const {
  for (int i = 0; i < m_plot->plotLayout()->elementCount(); ++i)
    if (auto* legend = qobject_cast<QCPLegend*>(m_plot->plotLayout()->elementAt(i)))
      for (const auto& p : m_panels)
        if (legend->outerRect().intersects(p.rect->rect())) return true;
  for (const auto& p : m_panels)
    if (p.rect->insetLayout()->elementCount() > 0) return true;
  return false;
}

std::pair<double, double> MetricsPlot::yRange(const QString& key) const {
  for (const auto& p : m_panels)
    if (p.key == key) {
      const QCPRange r = p.rect->axis(QCPAxis::atLeft)->range();
      return {r.lower, r.upper};
    }
  return {0, 0};
}

QString MetricsPlot::axisLabel(const QString& key, bool xAxis) const {
  for (const auto& p : m_panels)
    if (p.key == key) return p.rect->axis(xAxis ? QCPAxis::atBottom : QCPAxis::atLeft)->label();
  return {};
}

int MetricsPlot::pointCount(const QString& key, int run) const {
  for (const auto& p : m_panels)
    if (p.key == key && run >= 0 && run < int(p.series.size()))
      return static_cast<int>(p.series[size_t(run)].keys.size());
  return -1;
}

int MetricsPlot::markerCount(const QString& key, int run) const {
  for (const auto& p : m_panels)
    if (p.key == key && run >= 0 && run < int(p.series.size()))
      return static_cast<int>(p.series[size_t(run)].markerKeys.size());
  return -1;
}

QString wallClockText(double unixSeconds) {
  return QDateTime::fromMSecsSinceEpoch(qint64(std::llround(unixSeconds * 1000.0)))
      .toLocalTime()
      .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString MetricsPlot::hoverText() const { return m_hover->text(); }

QString MetricsPlot::valuesAt(const QString& key, double iteration) const {
  const Panel* panel = nullptr;
  for (const auto& p : m_panels)
    if (p.key == key) panel = &p;
  if (!panel) return {};
  QString label = key;
  if (const MetricDef* d = defOf(key)) label = d->label;
  QStringList parts;
  for (size_t r = 0; r < panel->series.size() && r < m_runs.size(); ++r) {
    const MetricSeries& s = panel->series[r];
    // The nearest logged iteration, finite or not.
    double bestKey = -1, bestDist = std::numeric_limits<double>::infinity();
    QString value;
    for (size_t i = 0; i < s.keys.size(); ++i)
      if (std::abs(s.keys[i] - iteration) < bestDist) {
        bestDist = std::abs(s.keys[i] - iteration);
        bestKey = s.keys[i];
        value = QString::number(s.values[i], 'g', 4);
      }
    for (size_t i = 0; i < s.markerKeys.size(); ++i)
      if (std::abs(s.markerKeys[i] - iteration) < bestDist) {
        bestDist = std::abs(s.markerKeys[i] - iteration);
        bestKey = s.markerKeys[i];
        value = s.markerSigns[i] > 0 ? QStringLiteral("+inf") : tr("non-finite / skipped");
      }
    if (bestKey < 0) continue;
    const QString at =
        m_xAxis == XAxis::WallClock ? wallClockText(bestKey) : QString::number(qint64(bestKey));
    parts << QStringLiteral("<span style='color:%1'>■</span> %2: <b>%3</b> @ %4")
                 .arg(m_runs[r].colour.name(), m_runs[r].name.toHtmlEscaped(), value, at);
  }
  if (parts.isEmpty()) return {};
  if (m_xAxis == XAxis::WallClock)
    return tr("<b>%1</b> near %2 — ").arg(label.toHtmlEscaped(), wallClockText(iteration)) +
           parts.join(QStringLiteral("; "));
  if (m_xAxis == XAxis::Time)
    return tr("<b>%1</b> near %2 s — ").arg(label.toHtmlEscaped()).arg(qint64(iteration)) +
           parts.join(QStringLiteral("; "));
  return QStringLiteral("<b>%1</b> near iteration %2 — ")
             .arg(label.toHtmlEscaped())
             .arg(qint64(iteration)) +
         parts.join(QStringLiteral("; "));
}

void MetricsPlot::hover(const QString& key, double iteration) {
  for (size_t i = 0; i < m_panels.size(); ++i) {
    auto* line = qobject_cast<QCPItemStraightLine*>(m_plot->item(int(i)));
    if (!line) continue;
    const bool here = m_panels[i].key == key;
    line->setVisible(here);
    if (here) {
      const QCPRange r = m_panels[i].rect->axis(QCPAxis::atLeft)->range();
      line->point1->setCoords(iteration, r.lower);
      line->point2->setCoords(iteration, r.upper);
    }
  }
  m_hoverKey = key;
  m_hoverIteration = iteration;
  showHoverText(valuesAt(key, iteration));
  m_plot->replot(QCustomPlot::rpQueuedReplot);
  Q_EMIT hovered(key, iteration);
}

void MetricsPlot::onMouseMove(QMouseEvent* event) {
  const QPointF pos = event->position();
  for (const auto& p : m_panels)
    if (p.rect->rect().contains(pos.toPoint())) {
      hover(p.key, p.rect->axis(QCPAxis::atBottom)->pixelToCoord(pos.x()));
      return;
    }
}

}  // namespace foveal::ui
