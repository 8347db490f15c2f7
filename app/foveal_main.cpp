// foveal: the GUI. `foveal [--model FILE] [IMAGE]` opens the inspector on them.
#include <QApplication>
#include <QCommandLineParser>

#include "main_window.h"
#include "model_session.h"

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
  QCommandLineOption model(QStringLiteral("model"), QStringLiteral("Model file to open."),
                           QStringLiteral("FILE"));
  parser.addOption(model);
  parser.addPositionalArgument(QStringLiteral("image"), QStringLiteral("Image to read."));
  parser.process(app);

  foveal::core::setComputeThreads(0);
  foveal::ui::MainWindow window;
  if (parser.isSet(model)) window.openModel(parser.value(model));
  if (!parser.positionalArguments().isEmpty())
    window.openImage(parser.positionalArguments().first());
  window.show();
  return app.exec();
}
