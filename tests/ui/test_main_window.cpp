// The main window under the offscreen platform: loading fills every view, stepping moves every
// view together, bad files leave the window usable, image <-> widget mapping is exact, the item
// models are well-behaved, exports are written, and the compare page reads with several models.
#include <QAbstractItemModelTester>
#include <QLabel>
#include <QSlider>
#include <QStatusBar>
#include <QTabWidget>
#include <QtTest/QtTest>
#include <random>

#include "alignment_view.h"
#include "attention_plot.h"
#include "compare_page.h"
#include "compare_summary_model.h"
#include "dataset_browser.h"
#include "dataset_model.h"
#include "exporter.h"
#include "grey_image.h"
#include "inspector_page.h"
#include "main_window.h"
#include "model_list_model.h"
#include "model_session.h"
#include "patch_strip.h"
#include "step_bar.h"
#include "step_cursor.h"
#include "test_models.h"
#include "topk_model.h"
#include "trace_runner.h"
#include "trace_view.h"

using namespace foveal;

class TestMainWindow : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_models[3];
  QString m_image = QStringLiteral(FOVEAL_SAMPLES_DIR "/images/digits-46214.png");

  void loadBoth(ui::MainWindow& w, int model = 2) {
    QVERIFY(w.openModel(m_models[model]));
    QVERIFY(w.openImage(m_image));
    QTRY_VERIFY_WITH_TIMEOUT(w.stepCount() > 0 && !w.isTracing(), 30000);
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTest"));
    QSettings().clear();
    const std::pair<const char*, core::ModelConfig> configs[] = {
        {"soft", test::tinyConfig("soft")},
        {"hard", test::tinyConfig("hard")},
        {"sharp", test::tinyConfig("sharp", core::ContextKind::Chain, 2)}};
    for (int i = 0; i < 3; ++i) {
      m_models[i] = m_dir.filePath(QString("%1.fvm").arg(configs[i].first));
      core::ModelSession::create(configs[i].second, 1 + i)->save(m_models[i].toStdString());
    }
  }

  void emptyWindowIsUsable() {
    ui::MainWindow w;
    w.show();
    QCOMPARE(w.stepCount(), 0);
    w.nextStep();
    QCOMPARE(w.stepCount(), 0);
    QVERIFY(w.errorText().isEmpty());
  }

  void loadingFillsEveryView() {
    ui::MainWindow w;
    w.show();
    loadBoth(w);
    const auto trace = w.trace();
    QVERIFY(trace);
    QCOMPARE(w.stepCount(), int(trace->steps.size()));
    auto* insp = w.inspector();
    QCOMPARE(insp->topkModel()->rowCount(), 5);
    QCOMPARE(int(insp->attentionPlot()->values().size()), 24);
    QCOMPARE(insp->attentionPlot()->values()[3], trace->steps[0].alpha[3]);
    QCOMPARE(int(insp->patchStrip()->correct().size()), int(trace->steps.size()));
    QCOMPARE(insp->alignmentView()->stepAt(QPoint(100, 18)), 0);
    QCOMPARE(w.stepBar()->slider()->maximum(), w.stepCount() - 1);
    QVERIFY(w.errorText().isEmpty());
  }

  void keysSliderAndClicksMoveEveryView() {
    ui::MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    loadBoth(w);
    auto* insp = w.inspector();
    auto check = [&](int step) {
      QCOMPARE(w.step(), step);
      QCOMPARE(w.traceView()->step(), step);
      QCOMPARE(w.stepBar()->slider()->value(), step);
      QCOMPARE(insp->topkModel()->data(insp->topkModel()->index(0, 0), Qt::UserRole).toInt(),
               w.trace()->steps[size_t(step)].topk[0].index);
      QCOMPARE(insp->attentionPlot()->values()[0], w.trace()->steps[size_t(step)].alpha[0]);
    };
    QSignalSpy spy(&w, &ui::MainWindow::stepChanged);
    QTest::keyClick(&w, Qt::Key_Right);
    check(1);
    QTest::keyClick(&w, Qt::Key_End);
    check(w.stepCount() - 1);
    QTest::keyClick(&w, Qt::Key_Right);  // stays at the last step
    check(w.stepCount() - 1);
    QTest::keyClick(&w, Qt::Key_Home);
    check(0);
    w.stepBar()->slider()->setValue(2);
    check(2);
    QTest::keyClick(&w, Qt::Key_Left);
    check(1);
    // Clicking a row of the alignment matrix and a patch of the strip select their steps.
    auto* align = insp->alignmentView();
    const int rows = w.stepCount();
    const int y = 16 + int((align->height() - 20) * (2.5 / rows));
    QTest::mouseClick(align, Qt::LeftButton, {}, QPoint(align->width() / 2, y));
    check(2);
    QTest::mouseClick(insp->patchStrip(), Qt::LeftButton, {}, QPoint(4 + 10, 20));
    check(0);
    QCOMPARE(spy.count(), 7);
  }

  void playAdvancesAndStopsAtTheEnd() {
    ui::MainWindow w;
    w.show();
    loadBoth(w);
    w.cursor()->setSpeed(30);
    QTest::keyClick(&w, Qt::Key_Space);
    QVERIFY(w.cursor()->isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(!w.cursor()->isPlaying(), 5000);
    QCOMPARE(w.step(), w.stepCount() - 1);
  }

  void badFilesShowAnErrorAndKeepTheWindowUsable() {
    ui::MainWindow w;
    w.show();
    loadBoth(w);
    const int steps = w.stepCount();
    const QString badModel = m_dir.filePath("bad.fvm");
    QFile f(badModel);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("definitely not a model");
    f.close();
    const int rows = w.models()->rowCount();
    QVERIFY(w.openModel(badModel));  // loads off the GUI thread; the failure arrives later
    QTRY_VERIFY_WITH_TIMEOUT(w.errorText().contains(badModel), 30000);
    QVERIFY(w.errorText().contains("not a Foveal model file"));
    QCOMPARE(w.models()->rowCount(), rows);             // a file that failed to open is not listed
    QVERIFY(!w.openModel(m_dir.filePath("nope.fvm")));  // a missing file fails at once
    QVERIFY(w.errorText().contains(m_dir.filePath("nope.fvm")));
    QVERIFY(!w.openImage(QStringLiteral(FOVEAL_SAMPLES_DIR "/../tests/data/corrupt.png")));
    QVERIFY(w.errorText().contains("corrupt.png: cannot decode image"));
    QCOMPARE(w.stepCount(), steps);  // the previous trace is still shown
    w.nextStep();
    QCOMPARE(w.step(), 1);
    QVERIFY(w.openImage(m_image));  // a good file clears the error
    QVERIFY(w.errorText().isEmpty());
  }

  void truthMarksFailures() {
    ui::MainWindow w;
    w.show();
    loadBoth(w);
    const QString read = QString::fromStdString(w.trace()->prediction);
    w.setTruth(read);
    for (bool ok : w.inspector()->patchStrip()->correct()) QVERIFY(ok);
    // A truth that differs in the first character (or is longer than an empty reading).
    QString other = read.isEmpty() ? QStringLiteral("1") : read;
    if (!read.isEmpty())
      other[0] = read[0] == QLatin1Char('1') ? QLatin1Char('2') : QLatin1Char('1');
    w.setTruth(other);
    const auto& c = w.inspector()->patchStrip()->correct();
    QVERIFY(std::find(c.begin(), c.end(), false) != c.end());
  }

  void comparePageReadsWithEveryTickedModel() {
    ui::MainWindow w;
    w.show();
    for (const auto& m : m_models) QVERIFY(w.openModel(m));
    // Models load in the background; this test is about comparing, so it starts once they are in.
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 30000);
    QVERIFY(w.openImage(m_image));
    QTRY_VERIFY_WITH_TIMEOUT(w.comparePage()->columnCount() == 3 && !w.isTracing(), 60000);
    w.tabs()->setCurrentWidget(w.comparePage());
    auto* summary = w.comparePage()->summary();
    QAbstractItemModelTester tester(summary,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(summary->rowCount(), 3);
    w.setTruth(QStringLiteral("46214"));
    for (int r = 0; r < 3; ++r) {
      const QString read =
          summary->data(summary->index(r, ui::CompareSummaryModel::Prediction)).toString();
      const QString verdict =
          summary->data(summary->index(r, ui::CompareSummaryModel::Correct)).toString();
      QVERIFY(verdict.contains(read == "46214" ? "right" : "wrong"));
    }
    w.setStep(1);
    for (int c = 0; c < 3; ++c) QCOMPARE(w.comparePage()->traceView(c)->step(), 1);
    // Unticking a model drops its column.
    QVERIFY(w.models()->setData(w.models()->index(0), Qt::Unchecked, Qt::CheckStateRole));
    QTRY_VERIFY_WITH_TIMEOUT(w.comparePage()->columnCount() == 2 && !w.isTracing(), 30000);
  }

  // The image is opened while the models are still loading: every load that ends re-reads, and
  // the last reading has every ticked model (the interleaving a user gets by opening a folder of
  // models and an image at once). Several rounds, as the order of events varies.
  void compareFillsWhileModelsLoad() {
    for (int round = 0; round < 4; ++round) {
      ui::MainWindow w;
      w.show();
      if (round % 2) QVERIFY(w.openImage(m_image));
      for (const auto& m : m_models) QVERIFY(w.openModel(m));
      if (round % 2 == 0) QVERIFY(w.openImage(m_image));
      QTRY_VERIFY_WITH_TIMEOUT(
          w.models()->loadingCount() == 0 && w.comparePage()->columnCount() == 3 && !w.isTracing(),
          60000);
      QVERIFY(w.trace());
      QVERIFY(w.errorText().isEmpty());
    }
  }

  // Requests arriving faster than traces end, with the event loop run at random moments: the
  // runner reports the newest request and nothing after it, and is idle once it has.
  void traceRunnerDeliversTheNewestRequest() {
    std::vector<std::shared_ptr<core::ModelSession>> sessions;
    for (const auto& m : m_models) sessions.push_back(core::ModelSession::open(m.toStdString()));
    const auto image = core::readImage(m_image.toStdString());
    ui::TraceRunner runner;
    std::vector<size_t> got;
    connect(&runner, &ui::TraceRunner::finished, this,
            [&](const std::vector<ui::TraceOutcome>& o) { got.push_back(o.size()); });
    std::mt19937 rng(7);
    size_t last = 0;
    for (int i = 0; i < 60; ++i) {
      last = 1 + rng() % 3;
      runner.start(image, QStringLiteral("x"), {sessions.begin(), sessions.begin() + last});
      QVERIFY(runner.isRunning());
      switch (rng() % 4) {
        case 0:
          break;
        case 1:
          QCoreApplication::processEvents();
          break;
        case 2:
          QTest::qWait(static_cast<int>(rng() % 15));
          break;
        default:  // let this one finish
          QTRY_VERIFY_WITH_TIMEOUT(!runner.isRunning(), 30000);
          QCOMPARE(got.back(), last);
      }
    }
    QTRY_VERIFY_WITH_TIMEOUT(!runner.isRunning(), 30000);
    QVERIFY(!got.empty());
    QCOMPARE(got.back(), last);
    const size_t count = got.size();
    QTest::qWait(100);
    QCOMPARE(got.size(), count);  // nothing after the newest
  }

  // The Beam box decodes every trace by beam search of that width, the same reading as the
  // engine's, and is remembered.
  void beamWidthDecodesEveryTrace() {
    {
      ui::MainWindow w;
      w.show();
      QCOMPARE(w.beamWidth(), 1);
      loadBoth(w, 0);
      QCOMPARE(w.trace()->beamWidth, 1);
      w.setBeamWidth(3);
      QTRY_VERIFY_WITH_TIMEOUT(w.trace() && w.trace()->beamWidth == 3 && !w.isTracing(), 30000);
      auto session = core::ModelSession::open(m_models[0].toStdString());
      core::TraceOptions opt;
      opt.beamWidth = 3;
      const auto expected = session->trace(core::readImage(m_image.toStdString()), "x", opt);
      QCOMPARE(w.trace()->prediction, expected.prediction);
      QCOMPARE(w.stepCount(), int(expected.steps.size()));
      QTRY_VERIFY2_WITH_TIMEOUT(
          w.statusBar()->currentMessage().contains(QStringLiteral("beam search, width 3")),
          qPrintable(w.statusBar()->currentMessage()), 5000);
    }
    ui::MainWindow again;
    QCOMPARE(again.beamWidth(), 3);
    again.setBeamWidth(1);
  }

  // Documentation screenshots with the shipped trained models (docs/screenshots): only when
  // FOVEAL_SCREENSHOT_DIR is set.
  void sampleModelScreenshots() {
    if (!qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) QSKIP("FOVEAL_SCREENSHOT_DIR not set");
    const QString models = QStringLiteral(FOVEAL_SAMPLES_DIR) + "/models/";
    if (!QFileInfo::exists(models + "sharp-chain.fvm")) QSKIP("no sample models");
    const QString dir = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR");
    ui::MainWindow w;
    w.resize(1400, 900);
    w.show();
    for (const char* name : {"soft", "hard", "sharp-chain"})
      QVERIFY(w.openModel(models + name + ".fvm"));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->rowCount() == 3 && w.errorText().isEmpty(), 30000);
    QVERIFY(
        w.datasetBrowser()->openDataset(QStringLiteral("digits:len=7,rotated,split=test,seed=1")));
    const int entry = qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_ENTRY")
                          ? qEnvironmentVariableIntValue("FOVEAL_SCREENSHOT_ENTRY")
                          : 3;
    w.datasetBrowser()->chooseEntry(entry);
    QTRY_VERIFY_WITH_TIMEOUT(w.comparePage()->columnCount() == 3 && !w.isTracing(), 60000);
    QTest::qWait(300);
    w.tabs()->setCurrentWidget(w.comparePage());
    w.setStep(3);
    QTest::qWait(400);  // the columns lay themselves out once shown
    QVERIFY(w.grab().save(dir + "/compare.png"));
    w.tabs()->setCurrentWidget(w.inspector());
    w.setStep(3);
    QTest::qWait(100);
    QVERIFY(w.grab().save(dir + "/inspector.png"));
  }

  void itemModelsPassTheTester() {
    ui::ModelListModel models;
    QAbstractItemModelTester t1(&models, QAbstractItemModelTester::FailureReportingMode::QtTest);
    for (const auto& m : m_models) models.addModel(m);
    QString error;
    models.addModel(m_dir.filePath("missing.fvm"), &error);
    QVERIFY(error.contains("missing.fvm"));
    QCOMPARE(models.rowCount(), 4);
    QCOMPARE(int(models.comparedRows().size()), 3);
    QVERIFY(!(models.flags(models.index(3)) & Qt::ItemIsUserCheckable));  // failed load
    models.removeModel(3);
    QCOMPARE(models.rowCount(), 3);

    ui::TopkModel topk;
    QAbstractItemModelTester t2(&topk, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto session = core::ModelSession::open(m_models[0].toStdString());
    auto trace = std::make_shared<const core::Trace>(
        session->trace(core::readImage(m_image.toStdString()), "x"));
    topk.setTrace(trace);
    topk.setStep(1);
    QCOMPARE(topk.rowCount(), 5);
    QCOMPARE(topk.data(topk.index(0, 1), Qt::UserRole).toDouble(), trace->steps[1].topk[0].prob);
  }

  void modelFolderLoadsOffTheGuiThread() {
    // A folder with a valid model and a corrupt one (a truncated copy: right header, cut off).
    const QString folder = m_dir.filePath("folder");
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(QFile::copy(m_models[2], folder + "/a-sharp.fvm"));
    QFile whole(m_models[2]);
    QVERIFY(whole.open(QIODevice::ReadOnly));
    QFile cut(folder + "/b-corrupt.fvm");
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write(whole.read(whole.size() / 2));
    cut.close();

    ui::MainWindow w;
    w.show();
    auto* models = w.models();
    QAbstractItemModelTester tester(models, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy loaded(models, &ui::ModelListModel::modelLoaded);
    QSignalSpy failed(models, &ui::ModelListModel::loadFailed);
    QElapsedTimer clock;
    clock.start();
    w.addModelFolder(folder);
    const qint64 returnedAfter = clock.elapsed();
    // The call returned before anything was loaded: results only arrive through the event loop.
    QCOMPARE(models->rowCount(), 2);
    QCOMPARE(models->loadingCount(), 2);
    for (int r = 0; r < 2; ++r) {
      QVERIFY(models->isLoading(r));
      QVERIFY(!models->session(r));
      QVERIFY(models->data(models->index(r), Qt::DisplayRole).toString().contains("loading"));
      QVERIFY(!(models->flags(models->index(r)) & Qt::ItemIsUserCheckable));
    }
    QCOMPARE(loaded.count() + failed.count(), 0);
    QVERIFY(w.errorText().isEmpty());
    QVERIFY(w.openImage(m_image));  // the window stays usable meanwhile

    QTRY_COMPARE_WITH_TIMEOUT(models->loadingCount(), 0, 30000);
    QCOMPARE(loaded.count(), 1);
    QCOMPARE(failed.count(), 1);
    QVERIFY(models->session(0));
    QVERIFY(models->data(models->index(0), ui::ModelListModel::LoadedRole).toBool());
    QCOMPARE(models->data(models->index(0), Qt::DisplayRole).toString(), QString("a-sharp"));
    QVERIFY(!models->session(1));
    QVERIFY(models->data(models->index(1), ui::ModelListModel::ErrorRole)
                .toString()
                .contains("b-corrupt.fvm"));
    QVERIFY2(w.errorText().contains(folder + "/b-corrupt.fvm"), qPrintable(w.errorText()));
    QCOMPARE(failed.first().at(1).toString(),
             models->data(models->index(1), ui::ModelListModel::ErrorRole).toString());
    // The valid one is usable: it is the inspected model and reads the image.
    QTRY_VERIFY_WITH_TIMEOUT(w.stepCount() > 0 && !w.isTracing(), 30000);
    QVERIFY(w.trace());
    QCOMPARE(int(models->comparedRows().size()), 1);
    qInfo("addModelFolder returned after %lld ms", static_cast<long long>(returnedAfter));
  }

  void datasetBrowserShowsEntriesWithTruth() {
    ui::MainWindow w;
    w.show();
    QVERIFY(w.openModel(m_models[0]));
    auto* browser = w.datasetBrowser();
    QSignalSpy failed(browser, &ui::DatasetBrowser::failed);
    QVERIFY(!browser->openDataset(QStringLiteral("digits:len=oops")));
    QCOMPARE(failed.count(), 1);
    QVERIFY(!browser->openDataset(m_dir.filePath("no-such-dataset")));
    QVERIFY(failed.last().at(0).toString().contains("no-such-dataset"));

    QVERIFY(browser->openDataset(QStringLiteral("digits:len=5,split=test,seed=3,count=600")));
    auto* model = browser->model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model->total(), 600);
    QVERIFY(model->rowCount() >= int(ui::DatasetModel::kChunk));
    {
      ui::DatasetModel lazy;  // without a view, only the first chunk is read
      lazy.setDataset(model->dataset());
      QCOMPARE(lazy.rowCount(), int(ui::DatasetModel::kChunk));
    }
    while (model->canFetchMore({})) model->fetchMore({});
    QCOMPARE(model->rowCount(), 600);
    const QString label = model->data(model->index(7), ui::DatasetModel::LabelRole).toString();
    QCOMPARE(label.size(), 5);
    browser->chooseEntry(7);
    QTRY_VERIFY_WITH_TIMEOUT(w.stepCount() > 0 && !w.isTracing(), 30000);
    QCOMPARE(w.inspector()->traceView()->step(), 0);
    QCOMPARE(int(w.inspector()->patchStrip()->correct().size()), w.stepCount());
    QVERIFY(w.trace()->imageW == 160);  // five 32 px digits
    QVERIFY(w.errorText().isEmpty());
  }

  void differencesDescribeEdits_data() {
    QTest::addColumn<QString>("read");
    QTest::addColumn<QString>("truth");
    QTest::addColumn<QString>("edits");
    QTest::newRow("same") << "46214"
                          << "46214"
                          << "46214";
    QTest::newRow("substitution") << "46814"
                                  << "46214"
                                  << "46[2→8]14";
    QTest::newRow("missing") << "4614"
                             << "46214"
                             << "46[-2]14";
    QTest::newRow("extra") << "462714"
                           << "46214"
                           << "462[+7]14";
  }
  void differencesDescribeEdits() {
    QFETCH(QString, read);
    QFETCH(QString, truth);
    QFETCH(QString, edits);
    QCOMPARE(ui::CompareSummaryModel::differences(read, truth), edits);
  }

  void exportsAreWritten() {
    ui::MainWindow w;
    w.show();
    loadBoth(w);
    for (const char* ext : {"png", "svg", "pdf"}) {
      const QString path = m_dir.filePath(QString("view.%1").arg(ext));
      QCOMPARE(ui::exportWidget(w.inspector(), path), QString());
      QVERIFY(QFileInfo(path).size() > 100);
      const QString strip = m_dir.filePath(QString("strip.%1").arg(ext));
      QCOMPARE(ui::exportImage(w.inspector()->patchStrip()->render(2.0), strip), QString());
      QVERIFY(QFileInfo(strip).size() > 100);
    }
    const QString csv = m_dir.filePath("trace.csv");
    QCOMPARE(ui::exportTrace(*w.trace(), csv), QString());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), w.stepCount() + 1);
    QVERIFY(lines[0].startsWith("step,token,prob,entropy,region,topk,alpha_0"));
    QVERIFY(lines[0].contains("stn2_y3"));
    const QString json = m_dir.filePath("trace.json");
    QCOMPARE(ui::exportTrace(*w.trace(), json), QString());
    QVERIFY(ui::exportTrace(*w.trace(), m_dir.filePath("trace.txt")).contains("unknown format"));
    QVERIFY(ui::exportWidget(w.inspector(), "/nonexistent-dir/x.png").contains("cannot write"));
  }

  void zoomKeepsTheAnchorPoint() {
    ui::TraceView view;
    view.resize(800, 300);
    QImage img(160, 32, QImage::Format_Grayscale8);
    img.fill(0);
    view.setImage(img);
    const QPointF anchor(300, 120);
    const QPointF before = view.imageToWidget().inverted().map(anchor);
    view.setZoom(3.0, anchor);
    QCOMPARE(view.zoom(), 3.0);
    const QPointF after = view.imageToWidget().inverted().map(anchor);
    QVERIFY(qAbs(before.x() - after.x()) < 1e-6 && qAbs(before.y() - after.y()) < 1e-6);
    view.resetView();
    QCOMPARE(view.zoom(), 1.0);
  }

  void imageWidgetMapping_data() {
    QTest::addColumn<QSize>("widget");
    QTest::addColumn<QSize>("image");
    QTest::newRow("wide widget") << QSize(900, 300) << QSize(160, 32);
    QTest::newRow("tall widget") << QSize(400, 600) << QSize(160, 32);
    QTest::newRow("square image") << QSize(700, 400) << QSize(64, 64);
    QTest::newRow("long text line") << QSize(1200, 300) << QSize(416, 32);
  }
  void imageWidgetMapping() {
    QFETCH(QSize, widget);
    QFETCH(QSize, image);
    ui::TraceView view;
    view.resize(widget);
    QImage img(image, QImage::Format_Grayscale8);
    img.fill(0);
    view.setImage(img);
    const QTransform t = view.imageToWidget();
    const QRectF r = t.mapRect(QRectF(QPointF(0, 0), QSizeF(image)));
    QVERIFY(r.left() >= 0 && r.right() <= widget.width());
    QVERIFY(r.top() >= 0 &&
            r.bottom() + ui::TraceView::kStripHeight + ui::TraceView::kTokenHeight <=
                widget.height());
    QVERIFY(qAbs(r.width() / r.height() - double(image.width()) / image.height()) < 1e-9);
    QVERIFY(qAbs((r.left() + r.right()) / 2 - widget.width() / 2.0) < 1e-9);
    QVERIFY(r.width() >= widget.width() - 48 - 1e-9 ||
            r.height() >= widget.height() - 48 - ui::TraceView::kStripHeight -
                              ui::TraceView::kTokenHeight - 1e-9);
    const QPointF p(image.width() * 0.3, image.height() * 0.7);
    const QPointF back = t.inverted().map(t.map(p));
    QVERIFY(qAbs(back.x() - p.x()) < 1e-9 && qAbs(back.y() - p.y()) < 1e-9);
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
