#pragma once
// Another trainer's curves on the Training page's plot (issue 72, item 2): each series of a
// core::TrainerRun becomes points of a MetricsPlot panel. A tag whose catalogue name is one of
// Foveal's metrics ("loss", "accuracy", "lr"...) shares that metric's panel with Foveal's runs, so
// the runs compare on one axis (in the catalogue's units: core::catalogueValue turns DTRB's
// percent accuracy into a fraction and its norm_ED into a distance); every other tag has a panel
// of its own, offered by name. The probe set's accuracy at
// each checkpoint (probe_reader.h) is a panel too.
#include <map>
#include <memory>
#include <vector>

#include "metrics_plot.h"
#include "probe_reader.h"

namespace foveal::core {
class TrainerRun;
struct ScalarSeries;
}  // namespace foveal::core

namespace foveal::ui {

/// True when an accuracy series is in percent even in the catalogue's units (a value above 1:
/// strhub's val_accuracy), so that it is divided by 100 to be Foveal's fraction.
bool percentAccuracy(const core::TrainerRun& run, const core::ScalarSeries& series);
/// The panel a series goes to: its catalogue name when Foveal's catalogue has the metric, else
/// trainerTagKey() of its catalogue name (shared by trainers that log the same thing) or its tag.
QString panelKeyOf(const core::ScalarSeries& series);
/// The run's points per panel key (the first series of a key wins; others keep their tags).
std::map<QString, PlotPoints> plotPointsOf(const core::TrainerRun& run);
/// The panels beyond the catalogue that `runs` bring, in a stable order (validation tags drawn as
/// points, as Foveal's evaluations are), and the probe accuracy's.
std::vector<MetricDef> extraMetricDefsOf(
    const std::vector<std::shared_ptr<const core::TrainerRun>>& runs);
/// The probe set's accuracy per checkpoint, on the checkpoints' steps (wall time: their files').
PlotPoints probeAccuracyPoints(const std::vector<ProbeColumn>& columns,
                               const std::vector<ProbeImage>& probes);
/// The probe accuracy panel's definition.
MetricDef probeAccuracyDef();

}  // namespace foveal::ui
