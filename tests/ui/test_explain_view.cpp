// The inspector's map selector (issue 32): the heat overlay and strip draw an attribution method
// computed for the shown step off the GUI thread, cached per step, cancellable; the step panel
// says how much of the step came from the image. With FOVEAL_SCREENSHOT_DIR set it saves
// explain-*.png there.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QScrollArea>
#include <QToolButton>
#include <QtTest/QtTest>
#include <cmath>

#include "attention_grid.h"
#include "compare_page.h"
#include "deletion_plot.h"
#include "explain_runner.h"
#include "inspector_page.h"
#include "main_window.h"
#include "model_list_model.h"
#include "overlay_painter.h"
#include "trace_view.h"

using namespace foveal;

class TestExplainView : public QObject {
  Q_OBJECT
  QString m_image = QStringLiteral(FOVEAL_SAMPLES_DIR "/images/digits-46214.png");
  QString m_model = QStringLiteral(FOVEAL_SAMPLES_DIR "/models/soft.fvm");

  static void choose(QComboBox* box, const QString& data) {
    const int i = box->findData(data);
    QVERIFY2(i >= 0, qPrintable(data));
    box->setCurrentIndex(i);
  }

 private Q_SLOTS:
  void initTestCase() { QSettings().remove(QStringLiteral("inspector/overlays")); }
  void cleanupTestCase() { QSettings().clear(); }

  void heatFollowsTheChosenMap() {
    ui::MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openModel(m_model));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 30000);
    QVERIFY(w.openImage(m_image));
    QTRY_VERIFY_WITH_TIMEOUT(w.trace() && !w.isTracing(), 60000);
    w.tabs()->setCurrentWidget(w.inspector());
    auto* page = w.inspector();
    auto* view = page->traceView();
    auto* source = page->heatSourceBox();
    QVERIFY(source);
    QCOMPARE(source->count(), 5);  // attention and the four methods
    QCOMPARE(source->itemText(0), QStringLiteral("Attention"));
    QVERIFY(view->pixelHeat().empty());

    // Integrated gradients for step 1: computed off the GUI thread, then drawn.
    w.setStep(1);
    choose(source, QStringLiteral("ig"));
    QCOMPARE(view->heatSource(), QStringLiteral("ig"));
    QTRY_VERIFY_WITH_TIMEOUT(!view->pixelHeat().empty(), 60000);
    const auto trace = view->trace();
    QVERIFY(trace->hasMap("ig"));
    QCOMPARE(view->pixelHeat().size(), size_t(trace->imageW) * size_t(trace->imageH));
    QCOMPARE(view->heatMap(), ui::pixelHeatImage(view->pixelHeat(), trace->imageW, trace->imageH));
    const auto info = page->findChildren<QLabel*>();
    bool said = false;
    for (auto* l : info) said = said || l->text().contains("from the image");
    QVERIFY2(said, "the step panel does not say how much came from the image");
    // The step's deletion curve in the map's order, computed with it: p(token) from the image's
    // own probability (teacher-forced, the reading's) down as its pixels turn grey, and its area.
    auto* deletion = page->deletionPlot();
    QVERIFY(deletion);
    QTRY_COMPARE_WITH_TIMEOUT(deletion->values().size(), size_t(11), 30000);
    const auto curve = deletion->values();
    QVERIFY2(std::abs(curve.front() - trace->steps[1].prob) < 2e-3,
             qPrintable(QString("curve starts at %1, the step's p is %2")
                            .arg(curve.front())
                            .arg(trace->steps[1].prob)));
    double area = 0;
    for (size_t i = 1; i < curve.size(); ++i) area += (curve[i - 1] + curve[i]) / 2 / 10;
    QVERIFY2(deletion->caption() == "Deletion in the integrated gradients order: AUC <b>" +
                                        QString::number(area, 'f', 3) + "</b>",
             qPrintable(deletion->caption()));
    for (double p : curve) QVERIFY(p >= 0 && p <= 1);
    // Another step is computed on demand; the first stays cached.
    w.setStep(2);
    QVERIFY(view->pixelHeat().empty());
    QTRY_VERIFY_WITH_TIMEOUT(!view->pixelHeat().empty(), 60000);
    w.setStep(1);
    QVERIFY(!view->pixelHeat().empty());
    QVERIFY(!page->explainRunner()->isRunning());

    // Occlusion, cancelled: nothing is drawn and the panel says so; back to attention.
    choose(source, QStringLiteral("occlusion"));
    QVERIFY(page->explainRunner()->isRunning());
    auto* cancel = page->findChild<QToolButton*>(QStringLiteral("explain-cancel"));
    QVERIFY(cancel);
    cancel->click();
    QVERIFY(!page->explainRunner()->isRunning());
    QVERIFY(view->pixelHeat().empty());
    QTest::qWait(200);
    said = false;
    for (auto* l : page->findChildren<QLabel*>()) said = said || l->text().contains("cancelled");
    QVERIFY(said);
    choose(source, QString::fromLatin1(core::kAttentionMap));
    QVERIFY(view->pixelHeat().empty());
    // The attention map has its curve too, computed on its own; another order, another curve.
    QTRY_VERIFY_WITH_TIMEOUT(deletion->caption().startsWith("Deletion in the attention order: AUC"),
                             30000);
    QCOMPARE(deletion->values().size(), size_t(11));
    QVERIFY(std::abs(deletion->values().front() - curve.front()) < 1e-9);  // the same image
    QVERIFY(deletion->values() != curve);
    // The compare page has its own selector: every column computes the chosen map.
    w.tabs()->setCurrentWidget(w.comparePage());
    QTRY_VERIFY_WITH_TIMEOUT(w.comparePage()->columnCount() == 1, 30000);
    choose(w.comparePage()->heatSourceBox(), QStringLiteral("grad-input"));
    QTRY_VERIFY_WITH_TIMEOUT(!w.comparePage()->traceView(0)->pixelHeat().empty(), 60000);
    QVERIFY(w.comparePage()->traceView(0)->trace()->hasMap("grad-input"));
    w.tabs()->setCurrentWidget(w.inspector());
    QCOMPARE(view->heatMap(), ui::heatMapImage(*view->trace(), view->trace()->attention(1),
                                               ui::heatMapSize(*view->trace())));
  }

  // Screenshots to look at: a step's integrated gradients beside its attention, and saliency.
  void screenshots() {
    if (!qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) QSKIP("FOVEAL_SCREENSHOT_DIR not set");
    const QString dir = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR");
    const QString model = qEnvironmentVariable("FOVEAL_SCREENSHOT_MODEL", m_model);
    const QString image = qEnvironmentVariable("FOVEAL_SCREENSHOT_IMAGE", m_image);
    const int step = qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_STEP")
                         ? qEnvironmentVariableIntValue("FOVEAL_SCREENSHOT_STEP")
                         : 1;
    ui::MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openModel(model));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 30000);
    QVERIFY(w.openImage(image));
    QTRY_VERIFY_WITH_TIMEOUT(w.trace() && !w.isTracing(), 60000);
    w.tabs()->setCurrentWidget(w.inspector());
    auto* heat =
        w.inspector()->findChild<QCheckBox*>(QStringLiteral("overlay-") + ui::overlay::kHeatImage);
    QVERIFY(heat);
    if (!heat->isChecked()) heat->click();
    w.setStep(std::min(step, w.stepCount() - 1));
    QTest::qWait(300);
    QVERIFY(w.grab().save(dir + "/explain-attention.png"));
    // FOVEAL_SCREENSHOT_SOURCES: the map sources to grab, comma-separated (a PARSeq head is
    // "attention-head-N": shown as it is, nothing computed).
    const QStringList sources =
        qEnvironmentVariable("FOVEAL_SCREENSHOT_SOURCES", QStringLiteral("ig,saliency,occlusion"))
            .split(QLatin1Char(','), Qt::SkipEmptyParts);
    for (const QString& method : sources) {
      choose(w.inspector()->heatSourceBox(), method);
      if (method.startsWith(QLatin1String("attention"))) {
        QTest::qWait(300);
        QVERIFY(w.grab().save(dir + "/explain-" + method + ".png"));
        continue;
      }
      QTRY_VERIFY_WITH_TIMEOUT(!w.inspector()->traceView()->pixelHeat().empty(), 120000);
      QTRY_VERIFY_WITH_TIMEOUT(!w.inspector()->deletionPlot()->values().empty(), 120000);
      w.inspector()->stepPanel()->ensureWidgetVisible(w.inspector()->deletionPlot());
      QTest::qWait(300);
      QVERIFY(w.grab().save(dir + "/explain-" + method + ".png"));
    }
  }
};

QTEST_MAIN(TestExplainView)
#include "test_explain_view.moc"
