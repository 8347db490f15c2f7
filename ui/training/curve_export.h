#pragma once
// Training curves written to a file without a window: the run folders are read (core::RunLog,
// through RunListModel so runs get the colours the Training page gives them), a MetricsPlot is
// built with the chosen panels and exported as PNG, PDF or SVG. `foveal --export-curves` uses it.
#include <QSize>
#include <QString>
#include <QStringList>

namespace foveal::ui {

struct CurveExportOptions {
  QString output;          ///< .png, .pdf or .svg
  QStringList runs;        ///< run folders (config.json + metrics.jsonl)
  QStringList metrics;     ///< keys of metricDefs(); empty: the page's default panels
  double smoothing = 0.6;  ///< exponential moving average weight in [0, 1)
  QSize size{1200, 700};
  bool logScale = false;
};

/// "1200x700" (also "1200X700", "1200*700"). False with a message when it is not a size.
bool parsePlotSize(const QString& text, QSize* size, QString* error);
/// A comma-separated list of metric keys ("loss,accuracy"). False with a message listing the
/// valid keys when one is unknown.
bool parseMetricKeys(const QString& text, QStringList* keys, QString* error);
/// The valid metric keys, comma-separated, for messages and --help.
QString metricKeyList();

/// Reads the runs and writes the plot. Returns an error message naming the file at fault (empty
/// on success); `warnings` receives what was skipped (corrupt lines).
QString exportCurves(const CurveExportOptions& options, QStringList* warnings = nullptr);

}  // namespace foveal::ui
