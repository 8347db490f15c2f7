#include "curve_export.h"

#include <QDir>
#include <QObject>
#include <QRegularExpression>

#include "metrics_plot.h"
#include "run_list_model.h"

namespace foveal::ui {

QString metricKeyList() {
  QStringList keys;
  for (const auto& d : metricDefs()) keys << d.key;
  return keys.join(QStringLiteral(", "));
}

bool parsePlotSize(const QString& text, QSize* size, QString* error) {
  static const QRegularExpression re(QStringLiteral("^\\s*(\\d{1,5})\\s*[xX*]\\s*(\\d{1,5})\\s*$"));
  const auto m = re.match(text);
  const int w = m.hasMatch() ? m.captured(1).toInt() : 0;
  const int h = m.hasMatch() ? m.captured(2).toInt() : 0;
  if (w < 16 || h < 16 || w > 20000 || h > 20000) {
    if (error)
      *error = QObject::tr(
                   "--size %1: expected WIDTHxHEIGHT in pixels, 16 to 20000 each "
                   "(e.g. 1200x700)")
                   .arg(text);
    return false;
  }
  *size = QSize(w, h);
  return true;
}

bool parseMetricKeys(const QString& text, QStringList* keys, QString* error) {
  QStringList out, unknown;
  for (QString key : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    key = key.trimmed();
    if (key.isEmpty()) continue;
    bool known = false;
    for (const auto& d : metricDefs()) known = known || d.key == key;
    if (!known)
      unknown << key;
    else if (!out.contains(key))
      out << key;
  }
  if (!unknown.isEmpty() || out.isEmpty()) {
    if (error)
      *error =
          (unknown.isEmpty() ? QObject::tr("--metrics: no metric given")
                             : QObject::tr("--metrics: unknown metric %1")
                                   .arg(QStringLiteral("'") + unknown.join(QStringLiteral("', '")) +
                                        QStringLiteral("'"))) +
          QObject::tr(" (valid: %1)").arg(metricKeyList());
    return false;
  }
  *keys = out;
  return true;
}

QString exportCurves(const CurveExportOptions& options, QStringList* warnings) {
  if (options.output.isEmpty()) return QObject::tr("no output file given");
  if (options.runs.isEmpty()) return QObject::tr("no run folder given (--run DIR)");
  if (!(options.smoothing >= 0 && options.smoothing < 1))
    return QObject::tr("smoothing %1 is out of range [0, 1)").arg(options.smoothing);
  for (const QString& key : options.metrics) {
    bool known = false;
    for (const auto& d : metricDefs()) known = known || d.key == key;
    if (!known) return QObject::tr("unknown metric '%1' (valid: %2)").arg(key, metricKeyList());
  }
  RunListModel model;
  std::vector<PlotRun> runs;
  for (const QString& dir : options.runs) {
    const int row = model.addRun(dir);
    if (int(runs.size()) > row) continue;  // listed twice
    const QString shown = QDir::toNativeSeparators(model.dir(row));
    const auto log = model.log(row);
    const auto status = model.status(row);
    if (!log->folderExists()) return QObject::tr("%1: the run folder does not exist").arg(shown);
    if (log->records().empty()) {
      const QString metrics = QDir::toNativeSeparators(QString::fromStdString(log->metricsPath()));
      return log->corruptLines().empty()
                 ? QObject::tr("%1: no metrics to plot (%2 is missing or empty)")
                       .arg(shown, metrics)
                 : QObject::tr("%1: %2").arg(metrics, QString::fromStdString(status.detail));
    }
    if (!log->corruptLines().empty() && warnings)
      *warnings << QObject::tr("%1: %n corrupt line(s) skipped, the first: %2", nullptr,
                               int(log->corruptLines().size()))
                       .arg(QDir::toNativeSeparators(QString::fromStdString(log->metricsPath())),
                            QString::fromStdString(log->corruptLines().front().message));
    runs.push_back({model.name(row), model.colour(row), log});
  }
  MetricsPlot plot;
  if (!options.metrics.isEmpty()) plot.setMetrics(options.metrics);
  plot.setSmoothing(options.smoothing);
  plot.setLogScale(options.logScale);
  plot.setRuns(std::move(runs));
  plot.resize(options.size);
  QString error;
  if (!plot.exportTo(options.output, options.size.width(), options.size.height(), &error))
    return error;
  return {};
}

}  // namespace foveal::ui
