// foveal: the GUI. `foveal [--model FILE]... [--truth TEXT] [IMAGE]` opens the inspector; the
// bundled sample models are listed in the Models dock and, on first start, the bundled sample
// runs on the Training page. Without a model or an image named, the last session comes back.
// `foveal [--model FILE]... --page IMAGE --layout FILE.xml` opens a page with its PAGE-XML or
// ALTO layout in the Page view (without --page: the image the layout names).
// `foveal --export-curves OUT.png --run DIR [--run DIR]... [--metrics K,K] [--smoothing W]
// [--size WxH] [--log-scale]` writes the runs' training curves without opening a window.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <cstdio>
#include <cstring>

#include "base/blas_kernels.h"
#include "base/heap_tuning.h"
#include "curve_export.h"
#include "main_window.h"
#include "trace/model_session.h"

namespace {
// Installed: <prefix>/share/foveal/samples; in a build tree: the source samples/ folder.
QString samplesFolder() {
  const QString env = qEnvironmentVariable("FOVEAL_SAMPLES_DIR");
  if (!env.isEmpty()) return env;
  const QDir exe(QCoreApplication::applicationDirPath());
  const QString installed = exe.absoluteFilePath(QStringLiteral("../share/foveal/samples"));
  if (QFileInfo::exists(installed)) return installed;
  return QStringLiteral(FOVEAL_SOURCE_SAMPLES_DIR);
}

bool wantsExport(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--export-curves", 15) == 0) return true;
  return false;
}

int fail(const QString& message) {
  std::fprintf(stderr, "foveal: %s\n", qPrintable(message));
  return 1;
}

// The command line's options, in the order --help lists them.
struct GuiOptions {
  QCommandLineOption model{QStringLiteral("model"),
                           QStringLiteral("Model file to open (repeatable)."),
                           QStringLiteral("FILE")};
  QCommandLineOption truth{QStringLiteral("truth"), QStringLiteral("Expected text of the image."),
                           QStringLiteral("TEXT")};
  QCommandLineOption exportCurves{
      QStringLiteral("export-curves"),
      QStringLiteral("Write the training curves of the --run folders to FILE (.png, .pdf or "
                     ".svg) and exit, without a window."),
      QStringLiteral("FILE")};
  QCommandLineOption run{QStringLiteral("run"),
                         QStringLiteral("Run folder to plot with --export-curves (repeatable)."),
                         QStringLiteral("DIR")};
  QCommandLineOption metrics{QStringLiteral("metrics"),
                             QStringLiteral("Comma-separated panels for --export-curves, of: %1.")
                                 .arg(foveal::ui::metricKeyList()),
                             QStringLiteral("KEYS")};
  QCommandLineOption smoothing{QStringLiteral("smoothing"),
                               QStringLiteral("Smoothing weight in [0, 1) (default 0.6)."),
                               QStringLiteral("W")};
  QCommandLineOption size{QStringLiteral("size"),
                          QStringLiteral("Size of the exported plot (default 1200x700)."),
                          QStringLiteral("WxH")};
  QCommandLineOption logScale{QStringLiteral("log-scale"),
                              QStringLiteral("Logarithmic y axes where values are positive.")};
  QCommandLineOption page{QStringLiteral("page"),
                          QStringLiteral("Page image to open with --layout in the Page view."),
                          QStringLiteral("IMAGE")};
  QCommandLineOption layout{
      QStringLiteral("layout"),
      QStringLiteral("PAGE-XML or ALTO layout of the page (its lines are read with the model)."),
      QStringLiteral("FILE.xml")};
};

// Reads the command line into `parser` (--help and --version end the process there).
void parseCommandLine(QApplication& app, QCommandLineParser& parser, const GuiOptions& o) {
  parser.setApplicationDescription(
      QStringLiteral("Attention-based image-to-sequence recognition lab"));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addOptions({o.model, o.truth, o.exportCurves, o.run, o.metrics, o.smoothing, o.size,
                     o.logScale, o.page, o.layout});
  parser.addPositionalArgument(QStringLiteral("image"), QStringLiteral("Image to read."));
  parser.process(app);
}

// --export-curves: the runs' curves written to a file, without a window.
int exportCurvesFromCommandLine(const QCommandLineParser& parser, const GuiOptions& o) {
  foveal::ui::CurveExportOptions options;
  options.output = parser.value(o.exportCurves);
  options.runs = parser.values(o.run);
  QString error;
  if (options.runs.isEmpty()) return fail(QStringLiteral("--export-curves needs --run DIR"));
  if (parser.isSet(o.metrics) &&
      !foveal::ui::parseMetricKeys(parser.value(o.metrics), &options.metrics, &error))
    return fail(error);
  if (parser.isSet(o.smoothing)) {
    bool ok = false;
    options.smoothing = parser.value(o.smoothing).toDouble(&ok);
    if (!ok || !(options.smoothing >= 0 && options.smoothing < 1))
      return fail(QStringLiteral("--smoothing %1: expected a number in [0, 1)")
                      .arg(parser.value(o.smoothing)));
  }
  if (parser.isSet(o.size) &&
      !foveal::ui::parsePlotSize(parser.value(o.size), &options.size, &error))
    return fail(error);
  options.logScale = parser.isSet(o.logScale);
  QStringList warnings;
  error = foveal::ui::exportCurves(options, &warnings);
  for (const QString& w : warnings) std::fprintf(stderr, "foveal: warning: %s\n", qPrintable(w));
  if (!error.isEmpty()) return fail(error);
  std::printf("wrote %s (%dx%d, %lld run(s))\n", qPrintable(options.output), options.size.width(),
              options.size.height(), static_cast<long long>(options.runs.size()));
  return 0;
}

// The window: the samples, then the last session or what the command line names.
int runWindow(QApplication& app, const QCommandLineParser& parser, const GuiOptions& o) {
  foveal::core::setComputeThreads(0);
  foveal::ui::MainWindow window;
  // The README beside the samples: the source tree's, or one installed with them.
  window.setDocumentation(QDir(samplesFolder()).absoluteFilePath(QStringLiteral("../README.md")));
  const QString models = samplesFolder() + QStringLiteral("/models");
  if (QFileInfo::exists(models)) window.addModelFolder(models);
  const QString runs = samplesFolder() + QStringLiteral("/runs");
  if (QFileInfo::exists(runs)) window.addSampleRuns(runs);
  // The last session (geometry, docks, ticked models, last image) unless the command line
  // names what to open.
  const bool named = !parser.values(o.model).isEmpty() || !parser.positionalArguments().isEmpty();
  // A first start (no session saved) opens what `scripts/foveal-dev run` opens: the sample
  // image read by the README's sharp-chain, and the sample dataset in its dock (issue 64).
  if (!named && !window.restoreSession()) window.openFirstStart(samplesFolder());
  // The models named are the ones ticked for Compare (not the samples listed before them).
  window.openModels(parser.values(o.model));
  if (!parser.positionalArguments().isEmpty())
    window.openImage(parser.positionalArguments().first());
  if (parser.isSet(o.truth)) window.setTruth(parser.value(o.truth));  // over the file name's
  if (parser.isSet(o.layout)) window.openPage(parser.value(o.page), parser.value(o.layout));
  window.show();
  return app.exec();
}
}  // namespace

int main(int argc, char** argv) {
  foveal::core::chooseBlasKernels(argv);  // first: it may start the process again
  foveal::core::tuneHeapForTensors();     // before the first tensor: base/heap_tuning.h
  // Exporting needs no display: without one (or with none chosen) render offscreen.
  const bool exporting = wantsExport(argc, argv);
  if (exporting && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("Foveal"));
  QApplication::setOrganizationName(QStringLiteral("Foveal"));
  QApplication::setApplicationVersion(QStringLiteral(FOVEAL_VERSION));

  const GuiOptions options;
  QCommandLineParser parser;
  parseCommandLine(app, parser, options);
  if (parser.isSet(options.exportCurves)) return exportCurvesFromCommandLine(parser, options);
  for (const auto* o :
       {&options.run, &options.metrics, &options.smoothing, &options.size, &options.logScale})
    if (parser.isSet(*o))
      return fail(QStringLiteral("--%1 is used with --export-curves").arg(o->names().first()));

  if (parser.isSet(options.page) && !parser.isSet(options.layout))
    return fail(QStringLiteral("--page IMAGE needs its layout: --layout FILE.xml"));
  return runWindow(app, parser, options);
}
