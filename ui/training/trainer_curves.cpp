#include "trainer_curves.h"

#include <QObject>
#include <algorithm>
#include <cmath>
#include <set>

#include "run/trainer_logs.h"

namespace foveal::ui {

namespace {

bool inCatalogue(const QString& key) {
  for (const auto& d : metricDefs())
    if (d.key == key) return true;
  return false;
}

// A validation or test curve: drawn as points, unsmoothed, as Foveal's evaluations are.
bool looksEvaluated(const QString& name) {
  const QString n = name.toLower();
  return n.contains(QLatin1String("val")) || n.contains(QLatin1String("test")) ||
         n.contains(QLatin1String("eval")) || n.contains(QLatin1String("acc")) ||
         n.contains(QLatin1String("ned")) || n.contains(QLatin1String("norm_ed"));
}

}  // namespace

bool percentAccuracy(const core::TrainerRun& run, const core::ScalarSeries& s) {
  // Foveal's accuracies are fractions; one above 1 in the catalogue's units is a percentage that
  // the conversion does not know (strhub's val_accuracy is 100 x accuracy).
  if (!run.format() || (s.catalogue != "accuracy" && s.catalogue != "train_accuracy")) return false;
  for (const auto& p : s.points)
    if (core::catalogueValue(run.format()->name(), s.tag, p.value) > 1.0) return true;
  return false;
}

QString panelKeyOf(const core::ScalarSeries& series) {
  const QString cat = QString::fromStdString(series.catalogue);
  if (!cat.isEmpty() && inCatalogue(cat)) return cat;
  return trainerTagKey(cat.isEmpty() ? QString::fromStdString(series.tag) : cat);
}

std::map<QString, PlotPoints> plotPointsOf(const core::TrainerRun& run) {
  std::map<QString, PlotPoints> out;
  for (const auto& s : run.series()) {
    QString key = panelKeyOf(s);
    if (out.count(key)) key = trainerTagKey(QString::fromStdString(s.tag));  // a second "loss"
    if (out.count(key)) continue;
    PlotPoints& p = out[key];
    // In the catalogue's units where the panel is the catalogue's (DTRB's percent accuracy a
    // fraction, its norm_ED a distance), so that the runs compare; the trainer's own otherwise.
    const bool convert = inCatalogue(key) && run.format();
    const double scale = convert && percentAccuracy(run, s) ? 0.01 : 1.0;
    for (const auto& pt : s.points) {
      const double v =
          (convert ? core::catalogueValue(run.format()->name(), s.tag, pt.value) : pt.value) *
          scale;
      if (std::isfinite(v)) {
        p.series.keys.push_back(double(pt.step));
        p.series.values.push_back(v);
        p.wallTimes.push_back(pt.wallTime);
      } else {  // NaN and infinities are markers on the panel's edge, as for Foveal's runs
        p.series.markerKeys.push_back(double(pt.step));
        p.series.markerSigns.push_back(v > 0 ? 1 : -1);
      }
    }
  }
  return out;
}

std::vector<MetricDef> extraMetricDefsOf(
    const std::vector<std::shared_ptr<const core::TrainerRun>>& runs) {
  std::vector<MetricDef> defs;
  std::set<QString> seen;
  for (const auto& run : runs) {
    if (!run) continue;
    for (const auto& [key, points] : plotPointsOf(*run)) {
      if (inCatalogue(key) || !seen.insert(key).second) continue;
      const QString label = key.mid(4);  // after "tag:"
      bool positive = true;
      for (double v : points.series.values) positive = positive && v > 0;
      defs.push_back({key, looksEvaluated(label) ? QStringLiteral("eval") : QStringLiteral("train"),
                      label, positive});
    }
  }
  std::sort(defs.begin(), defs.end(),
            [](const MetricDef& a, const MetricDef& b) { return a.label < b.label; });
  defs.insert(defs.begin(), probeAccuracyDef());
  return defs;
}

MetricDef probeAccuracyDef() {
  return {kProbeAccuracyKey, QStringLiteral("eval"), QObject::tr("probe acc."), false};
}

PlotPoints probeAccuracyPoints(const std::vector<ProbeColumn>& columns,
                               const std::vector<ProbeImage>& probes) {
  PlotPoints p;
  const std::vector<double> acc = probeAccuracy(columns, probes);
  for (size_t i = 0; i < columns.size() && i < acc.size(); ++i) {
    if (!std::isfinite(acc[i]) || columns[i].step < 0) continue;
    p.series.keys.push_back(double(columns[i].step));
    p.series.values.push_back(acc[i]);
    p.wallTimes.push_back(double(columns[i].mtimeNs) / 1e9);
  }
  // In step order: a column's step may repeat (a file rewritten at one step).
  return p;
}

}  // namespace foveal::ui
