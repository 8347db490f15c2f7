// foveal: the GUI. `foveal [--model FILE]... [--truth TEXT] [IMAGE]` opens the inspector; the
// bundled sample models are listed in the Models dock by default.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>

#include "main_window.h"
#include "model_session.h"

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
}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("Foveal"));
  QApplication::setOrganizationName(QStringLiteral("Foveal"));
  QApplication::setApplicationVersion(QStringLiteral(FOVEAL_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Attention-based image-to-sequence recognition lab"));
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption model(QStringLiteral("model"),
                           QStringLiteral("Model file to open (repeatable)."),
                           QStringLiteral("FILE"));
  QCommandLineOption truth(QStringLiteral("truth"), QStringLiteral("Expected text of the image."),
                           QStringLiteral("TEXT"));
  parser.addOption(model);
  parser.addOption(truth);
  parser.addPositionalArgument(QStringLiteral("image"), QStringLiteral("Image to read."));
  parser.process(app);

  foveal::core::setComputeThreads(0);
  foveal::ui::MainWindow window;
  const QString models = samplesFolder() + QStringLiteral("/models");
  if (QFileInfo::exists(models)) window.addModelFolder(models);
  for (const QString& m : parser.values(model)) window.openModel(m);
  if (parser.isSet(truth)) window.setTruth(parser.value(truth));
  if (!parser.positionalArguments().isEmpty())
    window.openImage(parser.positionalArguments().first());
  window.show();
  return app.exec();
}
