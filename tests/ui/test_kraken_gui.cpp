// A kraken line in the window (issue 62): `foveal --model overfit.mlmodel 000236.png` opens the
// line in the Inspector, which steps through kraken's characters, each with its cut (the step's
// box on the line) and its confidence, and shows the reading kraken gives. kraken's fixtures are
// in ../shared/fixtures/kraken (never copied here). The accuracy kraken stores in the file shows
// as a curve in the Models dock. With FOVEAL_SCREENSHOT_DIR set it saves
// inspector-kraken.png at 1366x768.
#include <QSlider>
#include <QtTest/QtTest>

#include "inspector_page.h"
#include "main_window.h"
#include "model_list_model.h"
#include "models_dock.h"
#include "qcustomplot_include.h"
#include "step_bar.h"
#include "trace/trace.h"

using namespace foveal;

namespace {
const QString kKraken = QStringLiteral(FOVEAL_SOURCE_DIR "/../shared/fixtures/kraken/");
}

class TestKrakenGui : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() {
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTest"));
    QSettings().clear();
  }

  void krakenLineOpensInTheInspector() {
    if (!QFileInfo::exists(kKraken + "models/overfit.mlmodel")) QSKIP("no kraken fixtures");
    ui::MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openModel(kKraken + "models/overfit.mlmodel"));
    QVERIFY(w.openImage(kKraken + "lines/000236.png"));
    QTRY_VERIFY_WITH_TIMEOUT(w.stepCount() > 0 && !w.isTracing(), 60000);
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    const auto trace = w.trace();
    QVERIFY(trace);
    QCOMPARE(QString::fromStdString(trace->focusRule), QString("kraken-cut"));
    QCOMPARE(QString::fromStdString(trace->decoder), QString("ctc"));
    QCOMPARE(w.stepCount(), int(trace->steps.size()));
    // Every character has its cut on the line (kraken's cuts may be one pixel wide: x1 >= x0)
    // within the line image, and its frames.
    for (const auto& st : trace->steps) {
      QVERIFY(st.box.x >= 0 && st.box.x + st.box.w <= trace->imageW && st.box.w >= 0);
      QVERIFY(!st.columns.empty());
      QVERIFY(st.prob > 0 && st.prob <= 1);
    }
    // Stepping moves along the line: the cuts go left to right as the frames do.
    for (size_t i = 1; i < trace->steps.size(); ++i)
      QVERIFY(trace->steps[i].box.x >= trace->steps[i - 1].box.x);
    w.setStep(3);
    QCOMPARE(w.stepBar()->slider()->value(), 3);
    // The accuracy kraken stored in the file after each of its 162 evaluations, as a curve in
    // the Models dock when the model is the current one.
    auto* dock = w.findChild<ui::ModelsDock*>();
    QVERIFY(dock);
    dock->view()->setCurrentIndex(w.models()->index(0, 0));
    QTRY_VERIFY(dock->storedHistoryPlot()->isVisible());
    QVERIFY(dock->storedHistoryPlot()->graphCount() >= 1);
    QCOMPARE(dock->storedHistoryPlot()->graph(0)->dataCount(), 162);
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) {
      QTest::qWait(400);
      QVERIFY(
          w.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/inspector-kraken.png"));
    }
  }
};

QTEST_MAIN(TestKrakenGui)
#include "test_kraken_gui.moc"
