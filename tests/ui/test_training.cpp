// The Training page under the offscreen platform: a fake run directory that the test appends to
// while the page watches (curves grow, a partial line waits until complete, NaN/Inf become
// markers, updates are coalesced), corrupt and vanishing run folders, the item models, the
// command line the launch dialog shows, and a tiny real CPU run launched from the page, stopped,
// resumed, finished, previewed and evaluated, with a failure opened in the inspector.
#include <QAbstractItemModelTester>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QTabWidget>
#include <QTableView>
#include <QtTest/QtTest>
#include <cmath>

#include "curve_export.h"
#include "eval_models.h"
#include "evaluation_panel.h"
#include "inspector_page.h"
#include "live_preview.h"
#include "main_window.h"
#include "metrics_plot.h"
#include "patch_strip.h"
#include "qcustomplot_include.h"
#include "run_launcher.h"
#include "run_list_model.h"
#include "run_settings_model.h"
#include "run_target_box.h"
#include "test_models.h"
#include "trace/model_session.h"
#include "training_launch_dialog.h"
#include "training_page.h"

using namespace foveal;

namespace {

const char* kConfig =
    "{\"preset\":\"digits-soft\",\"model\":{\"attention\":\"soft\",\"width\":0.125},\"iterations\":"
    "200,"
    "\"batch_size\":8,\"max_non_finite\":20,\"device\":\"cpu\",\"train_data\":[\"digits:len=5\"],"
    "\"eval_data\":[\"digits:len=5,split=test,seed=1\"]}";

void append(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::Append));
  QCOMPARE(f.write(bytes), bytes.size());
}

QByteArray trainLine(int it, double loss, double seconds) {
  return QStringLiteral(
             "{\"kind\":\"train\",\"iteration\":%1,\"loss\":%2,\"nll\":%2,\"reward\":%3,"
             "\"grad_norm\":%4,\"train_accuracy\":%5,\"lr\":1.0,\"images_per_s\":90,"
             "\"elapsed_s\":%6}\n")
      .arg(it)
      .arg(loss)
      .arg(-loss / 5)
      .arg(1.0 + 0.01 * it)
      .arg(std::min(1.0, it / 200.0))
      .arg(seconds)
      .toUtf8();
}

QByteArray evalLine(int it, double accuracy, double entropy) {
  return QStringLiteral(
             "{\"kind\":\"eval\",\"iteration\":%1,\"count\":100,\"accuracy\":%2,\"ned\":%3,"
             "\"entropy\":%4,\"datasets\":[],\"best\":true}\n")
      .arg(it)
      .arg(accuracy)
      .arg(1 - accuracy)
      .arg(entropy)
      .toUtf8();
}

}  // namespace

class TestTraining : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;

  QString makeRun(const QString& name, bool config = true) {
    const QString dir = m_tmp.filePath(name);
    [&] { QVERIFY(QDir().mkpath(dir)); }();
    if (config) append(dir + "/config.json", kConfig);
    return dir;
  }

  /// A finished run of `n` logged steps with an evaluation every 50 iterations.
  QString makeFinishedRun(const QString& name, double floor, int n = 40) {
    const QString dir = makeRun(name);
    QByteArray lines;
    for (int i = 1; i <= n; ++i) {
      const int it = i * 5;
      lines += trainLine(it, floor + 2.5 * std::exp(-it / 60.0) + 0.05 * std::sin(it), it);
      if (it % 50 == 0) lines += evalLine(it, 0.9 - 0.8 * std::exp(-it / 80.0), 2.0 - it / 200.0);
    }
    lines += QStringLiteral("{\"kind\":\"checkpoint\",\"iteration\":%1,\"reason\":\"end\"}\n")
                 .arg(n * 5)
                 .toUtf8();
    append(dir + "/metrics.jsonl", lines);
    return dir;
  }

  /// Distinct colours in an image (sampled), to tell a plot from a blank page.
  static int colourCount(const QImage& image) {
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 3)
      for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
    return colours.size();
  }

  static QString gui() {
    const QString path = QStringLiteral(FOVEAL_GUI_PATH);
    return QFileInfo(path).isExecutable() ? path : QString();
  }

  static QString cli() {
    const QString path = QStringLiteral(FOVEAL_CLI_PATH);
    return QFileInfo(path).isExecutable() ? path : QString();
  }

  /// True when this foveal-cli can train (the training engine may not be built yet).
  static bool cliTrains() {
    if (cli().isEmpty()) return false;
    QProcess p;
    p.start(cli(), {"train", "--list-presets"});
    return p.waitForFinished(20000) && p.exitCode() == 0 &&
           p.readAllStandardOutput().contains("digits-soft");
  }

  // A run on an SSH host or a Slurm cluster (through the same sshd as its login host) from the
  // page, against the real programs: tests/e2e/cluster_gui.sh starts them (cluster_fixture.sh)
  // and runs these cases with their address; the plain suite has none. The page submits,
  // follows (the mirror fills the local folder) and stops through 'runs stop'; Resume is offered
  // although latest.state stays on the host (issue 64: "this folder holds no checkpoint"), and
  // clicking it submits and follows the new job; stopped again, a 'runs resume' typed in a
  // terminal is followed by the window to the end. The Where column shows target, job, state.
  void remoteRunFromThePage(const QString& kind) {
    const QString host = qEnvironmentVariable("FOVEAL_TEST_SSH_HOST");
    if (host.isEmpty()) QSKIP("needs an sshd: the cluster_gui_ssh/slurm tests run this case");
    ui::MainWindow w;
    w.resize(1400, 900);
    w.show();
    auto* page = w.trainingPage();
    w.tabs()->setCurrentWidget(page);
    page->setProgram(cli());
    page->setPollInterval(100);
    page->launcher()->setFollowInterval(0.5);
    ui::LaunchSpec spec;
    spec.preset = "digits-soft";
    spec.width = 0.125;
    // Never over before it is stopped twice (3000 iterations ended unstopped in 95 s on two
    // busy cores); the last resume sets a short end.
    spec.iterations = 100000;
    spec.batch = 4;
    spec.data = "digits:len=3,count=48";
    spec.evalData = "digits:len=3,split=test,seed=1,count=8";
    spec.evalInterval = 100;
    spec.logInterval = 1;
    spec.threads = 1;
    spec.runDir = m_tmp.filePath(kind + " run");
    const QString remote = m_tmp.filePath("remote side/" + kind + " run");
    spec.targetArguments = {"--target",     kind + "://" + host + "/" + remote,
                            "--ssh-config", qEnvironmentVariable("FOVEAL_TEST_SSH_CONFIG"),
                            "--remote-cli", cli()};
    QVERIFY(page->launch(spec));
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    const int row = page->runs()->rowOf(spec.runDir);
    QVERIFY(row >= 0);
    page->selectRun(row);
    const auto where = [&] {
      return page->runs()->data(page->runs()->index(row, ui::RunListModel::Where)).toString();
    };
    const auto stopAndWait = [&](int64_t past) {
      // The mirror brings the records; the follower reports the state.
      QTRY_VERIFY_WITH_TIMEOUT(page->runs()->log(row)->iteration() >= past + 20, 120000);
      QTRY_VERIFY_WITH_TIMEOUT(where().contains(" · running"), 60000);
      QVERIFY(page->stopRun(row));
      QTRY_COMPARE_WITH_TIMEOUT(page->runs()->status(row).status, core::RunStatus::Stopped, 120000);
      QTRY_VERIFY_WITH_TIMEOUT(!page->launcher()->isRunning(spec.runDir), 30000);
      QVERIFY(page->runs()->log(row)->iteration() < spec.iterations);
      QVERIFY(!QFileInfo::exists(spec.runDir + "/latest.state"));  // it stays there
      // Resume is offered: the checkpoint is on the host.
      QTRY_VERIFY_WITH_TIMEOUT(page->resumeButton()->isEnabled(), 10000);
      QVERIFY2(!page->detailText().contains("no checkpoint"), qPrintable(page->detailText()));
    };
    const auto jobOf = [&] {
      QFile f(spec.runDir + "/remote.json");
      if (!f.open(QIODevice::ReadOnly)) return QString();
      return QJsonDocument::fromJson(f.readAll()).object().value("job").toString();
    };
    stopAndWait(0);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(where().startsWith(kind + "://" + host + "/" + remote + " · job "),
             qPrintable(where()));
    const QString firstJob = jobOf();
    // Resume from the window: a new job, followed.
    const int64_t stoppedAt = page->runs()->log(row)->iteration();
    page->resumeButton()->click();
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    QTRY_VERIFY_WITH_TIMEOUT(jobOf() != firstJob && !jobOf().isEmpty(), 60000);
    QVERIFY(page->launcher()->isRunning(spec.runDir));
    stopAndWait(stoppedAt);
    if (QTest::currentTestFailed()) return;
    const QString secondJob = jobOf();
    // Resumed in a terminal: the window follows the new job by itself.
    QProcess resume;
    const int64_t secondStop = page->runs()->log(row)->iteration();
    resume.start(
        cli(), {"runs", "resume", spec.runDir, "--iterations", QString::number(secondStop + 300)});
    QVERIFY(resume.waitForFinished(120000));
    QVERIFY2(resume.exitCode() == 0, resume.readAllStandardError().constData());
    QVERIFY(jobOf() != secondJob);
    QTRY_VERIFY_WITH_TIMEOUT(page->launcher()->isRunning(spec.runDir), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(page->runs()->status(row).status, core::RunStatus::Finished, 400000);
    QTRY_VERIFY_WITH_TIMEOUT(!page->launcher()->isRunning(spec.runDir), 30000);
    QVERIFY2(page->launcher()->jobState(spec.runDir).endsWith(": completed"),
             qPrintable(page->launcher()->jobState(spec.runDir)));
    QVERIFY(!page->resumeButton()->isEnabled());  // finished
    for (const char* f : {"metrics.jsonl", "latest.fvm", "config.json", "train.log"}) {
      QFile a(spec.runDir + "/" + f), b(remote + "/" + f);
      QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
      QVERIFY2(a.readAll() == b.readAll(), f);
    }
    QTRY_VERIFY(page->plot()->pointCount("loss", row) >= 300);
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) {  // at a laptop's 1366x768
      w.resize(1366, 768);
      QTest::qWait(300);
      const QString scale = qgetenv("QT_SCALE_FACTOR") == "2" ? "-scale2" : "";
      QVERIFY(w.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/training-" + kind +
                            scale + ".png"));
    }
  }
 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_tmp.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTrainingTest"));
    QSettings().clear();
  }
  // Each page starts with no remembered runs.
  void init() { QSettings().clear(); }

  void seriesAndSmoothing() {
    QCOMPARE(ui::smooth({1, 1, 1}, 0.9), (std::vector<double>{1, 1, 1}));  // debiased
    const auto s = ui::smooth({0, 10}, 0.5);
    QVERIFY(qAbs(s[1] - 10.0 * 0.5 / 0.75) < 1e-12);
    QCOMPARE(ui::smooth({3, 4}, 0.0), (std::vector<double>{3, 4}));
  }

  void fakeRunGrowsWhileWatched() {
    const QString dir = makeRun("growing");
    const QString metrics = dir + "/metrics.jsonl";
    for (int it = 10; it <= 50; it += 10) append(metrics, trainLine(it, 3.0 - it / 100.0, it));
    ui::TrainingPage page;
    page.resize(1300, 800);
    page.show();
    page.setPollInterval(100);
    const int row = page.addRunFolder(dir);
    QCOMPARE(row, 0);
    auto* plot = page.plot();
    QTRY_COMPARE(plot->pointCount("loss", 0), 5);
    QCOMPARE(page.runs()->data(page.runs()->index(0, ui::RunListModel::Progress)).toString(),
             QString("50 / 200"));
    QCOMPARE(page.runs()->status(0).status, core::RunStatus::Running);
    // 1 s per iteration: 150 to go.
    QCOMPARE(page.runs()->data(page.runs()->index(0, ui::RunListModel::Eta)).toString(),
             QString("2 min 30 s"));

    // The curve grows as lines arrive.
    append(metrics, trainLine(60, 2.4, 60) + evalLine(60, 0.25, 2.5));
    QTRY_COMPARE(plot->pointCount("loss", 0), 6);
    QTRY_COMPARE(plot->pointCount("accuracy", 0), 1);
    QCOMPARE(page.runs()->data(page.runs()->index(0, ui::RunListModel::Best)).toString(),
             QString("25.00%"));

    // A half-written line is left alone until its newline arrives.
    const QByteArray next = trainLine(70, 2.3, 70);
    append(metrics, next.left(40));
    const int refreshes = page.refreshCount();
    QTRY_VERIFY(page.refreshCount() >= refreshes + 3);
    QVERIFY(!plot->replotPending());
    QCOMPARE(plot->pointCount("loss", 0), 6);
    QVERIFY(page.runs()->log(0)->corruptLines().empty());
    QVERIFY(page.detailText().contains("being written"));
    append(metrics, next.mid(40));
    QTRY_COMPARE(plot->pointCount("loss", 0), 7);
    QVERIFY(page.runs()->log(0)->corruptLines().empty());

    // Non-finite values and skipped steps are markers; the axis keeps the finite range.
    append(metrics,
           "{\"kind\":\"train\",\"iteration\":80,\"loss\":null,\"grad_norm\":\"inf\","
           "\"elapsed_s\":80}\n"
           "{\"kind\":\"skip\",\"iteration\":81,\"loss\":null,\"grad_norm\":null,"
           "\"consecutive\":1}\n");
    QTRY_COMPARE(plot->markerCount("loss", 0), 2);
    QCOMPARE(plot->markerCount("grad_norm", 0), 2);
    QCOMPARE(plot->pointCount("loss", 0), 7);
    QTRY_VERIFY(!plot->replotPending());
    for (int i = 0; i < plot->plot()->axisRectCount(); ++i) {
      const QCPRange r = plot->plot()->axisRect(i)->axis(QCPAxis::atLeft)->range();
      QVERIFY(std::isfinite(r.lower) && std::isfinite(r.upper) && r.upper < 1e6);
    }
    QVERIFY(plot->valuesAt("loss", 81).contains("non-finite"));

    // Many writes in a burst: a handful of replots, not one per line.
    QTRY_VERIFY(!plot->replotPending());
    const int replots = plot->replotCount();
    for (int it = 90; it < 290; it += 10) {
      append(metrics, trainLine(it, 2.0, it));
      QTest::qWait(5);
    }
    QTRY_COMPARE(plot->pointCount("loss", 0), 27);
    QTRY_VERIFY(!plot->replotPending());
    QVERIFY2(plot->replotCount() - replots <= 6,
             qPrintable(QString::number(plot->replotCount() - replots)));

    // Hover values and the log-scale toggle.
    plot->hover("loss", 58);
    QVERIFY(plot->hoverText().contains("growing"));
    QVERIFY(plot->hoverText().contains("2.4"));
    plot->setLogScale(true);
    QTRY_VERIFY(!plot->replotPending());
    QCOMPARE(plot->plot()->axisRect(0)->axis(QCPAxis::atLeft)->scaleType(), QCPAxis::stLogarithmic);
  }

  void runListModelAndStatuses() {
    ui::RunListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setStaleAfter(3600);
    const QString finished = makeRun("finished");
    append(finished + "/metrics.jsonl",
           trainLine(100, 1.0, 10) + evalLine(200, 0.5, 1.0) +
               "{\"kind\":\"checkpoint\",\"iteration\":200,\"reason\":\"end\"}\n");
    const QString stopped = makeRun("stopped");
    append(stopped + "/metrics.jsonl",
           trainLine(10, 1.0, 1) + "{\"kind\":\"stop\",\"iteration\":12}\n");
    const QString corrupt = makeRun("corrupt", false);
    append(corrupt + "/config.json", "{ this is not json");
    append(corrupt + "/metrics.jsonl", "garbage\n\x01\x02\n");
    const QString mixed = makeRun("mixed");
    append(mixed + "/metrics.jsonl", trainLine(10, 1.0, 1) + "{broken\n" + trainLine(20, 0.9, 2));

    QCOMPARE(model.addRun(finished), 0);
    QCOMPARE(model.addRun(stopped), 1);
    QCOMPARE(model.addRun(corrupt), 2);
    QCOMPARE(model.addRun(mixed), 3);
    QCOMPARE(model.addRun(finished + "/"), 0);  // already listed
    QCOMPARE(model.rowCount(), 4);
    auto status = [&](int row) {
      return model.data(model.index(row, ui::RunListModel::Status)).toString();
    };
    QCOMPARE(status(0), QString("finished"));
    QCOMPARE(status(1), QString("stopped"));
    QCOMPARE(status(2), QString("corrupt (2 bad line(s))"));
    QCOMPARE(status(3), QString("running (1 bad line(s))"));
    QVERIFY(model.data(model.index(3, 0), Qt::ToolTipRole).toString().contains("line 2"));
    QCOMPARE(model.data(model.index(0, ui::RunListModel::Best)).toString(), QString("50.00%"));
    QCOMPARE(model.data(model.index(0, ui::RunListModel::Eta)).toString(), QString("—"));
    // Distinct colours, checkable names.
    QVERIFY(model.colour(0) != model.colour(1) && model.colour(1) != model.colour(2));
    QSignalSpy shown(&model, &ui::RunListModel::shownChanged);
    QVERIFY(model.setData(model.index(1, 0), Qt::Unchecked, Qt::CheckStateRole));
    QVERIFY(!model.isShown(1));
    QCOMPARE(shown.count(), 1);
    // A process the launcher saw fail.
    core::ProcessFacts failed;
    failed.state = core::ProcessFacts::Exited;
    failed.exitCode = 1;
    failed.message = "error: digits:len=oops: bad spec";
    model.setProcess(mixed, failed);
    QCOMPARE(status(3), QString("failed (1 bad line(s))"));
    QVERIFY(model.data(model.index(3, 0), ui::RunListModel::DetailRole)
                .toString()
                .contains("bad spec"));
    // A folder this window launched a trainer in that failed before writing anything (no
    // config.json): failed, and still failed after a refresh, not another trainer's run waiting
    // for its logs (CI saw "starting" there when the refresh came before the check).
    const QString empty = m_tmp.filePath("launched-empty");
    QVERIFY(QDir().mkpath(empty));
    const int emptyRow = model.addRun(empty);
    core::ProcessFacts running;
    running.state = core::ProcessFacts::Running;
    model.setProcess(empty, running);
    model.setProcess(empty, failed);
    QCOMPARE(model.status(emptyRow).status, core::RunStatus::Failed);
    model.refresh();
    QCOMPARE(model.status(emptyRow).status, core::RunStatus::Failed);
    QVERIFY(!model.isForeign(emptyRow));
    // Exited at once, before the page saw it running.
    const QString empty2 = m_tmp.filePath("launched-empty-2");
    QVERIFY(QDir().mkpath(empty2));
    const int empty2Row = model.addRun(empty2);
    model.setProcess(empty2, failed);
    model.refresh();
    QCOMPARE(model.status(empty2Row).status, core::RunStatus::Failed);
    model.removeRun(empty2Row);
    model.removeRun(emptyRow);
    // The folder disappears.
    QVERIFY(QDir(stopped).removeRecursively());
    model.refresh();
    QCOMPARE(status(1), QString("missing"));
    model.removeRun(1);
    QCOMPARE(model.rowCount(), 3);
  }

  // Issue 64: at 1366x768 the run list shows the runs' names whole, not colour swatches and "...".
  void runNamesReadableAt1366() {
    ui::TrainingPage page;
    page.resize(1366, 768 - 120);  // the window's menus, tool bar and status bar take the rest
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const QStringList names = {"digits-sharp-chain-2stn-w025", "text-sharp-weighting-2stn",
                               "digits-soft-seed3"};
    for (const QString& n : names) page.addRunFolder(makeFinishedRun("names/" + n, 0.5));
    QTest::qWait(100);
    QTableView* view = nullptr;
    for (auto* v : page.findChildren<QTableView*>())
      if (v->model() == page.runs()) view = v;
    QVERIFY(view);
    for (int row = 0; row < page.runs()->rowCount(); ++row) {
      const QString shown =
          page.runs()->data(page.runs()->index(row, ui::RunListModel::Name)).toString();
      QVERIFY2(names.contains(shown), qPrintable(shown));
      const int need = view->fontMetrics().horizontalAdvance(shown);
      const int have = view->columnWidth(ui::RunListModel::Name);
      QVERIFY2(have >= need, qPrintable(QString("%1: %2 px of %3").arg(shown).arg(have).arg(need)));
      const QRect cell = view->visualRect(page.runs()->index(row, ui::RunListModel::Name));
      QVERIFY2(view->viewport()->rect().contains(cell),
               qPrintable(QString("%1 is outside the list").arg(shown)));
    }
    // No y title longer than its panel ("gradient nor" was cut at the panel's edge).
    page.plot()->plot()->replot();
    QTest::qWait(50);
    int titles = 0;
    for (QCPAxisRect* rect : page.plot()->plot()->axisRects()) {
      QCPAxis* y = rect->axis(QCPAxis::atLeft);
      if (y->label().isEmpty()) continue;
      ++titles;
      const int need = QFontMetrics(y->labelFont()).horizontalAdvance(y->label());
      QVERIFY2(need <= rect->height(), qPrintable(QString("'%1': %2 px in a %3 px panel")
                                                      .arg(y->label())
                                                      .arg(need)
                                                      .arg(rect->height())));
    }
    QVERIFY(titles >= 4);
  }

  void corruptAndVanishingFoldersOnThePage() {
    ui::TrainingPage page;
    page.show();
    page.setPollInterval(50);
    QSignalSpy failed(&page, &ui::TrainingPage::failed);
    const QString corrupt = makeRun("page-corrupt", false);
    append(corrupt + "/config.json", "\x89PNG not a config");
    const int row = page.addRunFolder(corrupt);
    QCOMPARE(page.runs()->status(row).status, core::RunStatus::Corrupt);
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.last().at(0).toString().contains("config.json"));
    QVERIFY(page.detailText().contains("not a run folder"));

    const QString vanishing = makeRun("page-vanishing");
    append(vanishing + "/metrics.jsonl", trainLine(10, 2.0, 1) + trainLine(20, 1.8, 2));
    const int v = page.addRunFolder(vanishing);
    QTRY_COMPARE(page.plot()->pointCount("loss", 1), 2);
    QVERIFY(QDir(vanishing).removeRecursively());
    QTRY_COMPARE(page.runs()->status(v).status, core::RunStatus::Missing);
    QVERIFY(page.detailText().contains("does not exist"));
    QCOMPARE(page.plot()->pointCount("loss", 1), 2);  // what was read stays
    // Adding a folder that was never there says so.
    const int none = page.addRunFolder(m_tmp.filePath("never-there"));
    QCOMPARE(page.runs()->status(none).status, core::RunStatus::Missing);
    QVERIFY(failed.last().at(0).toString().contains("never-there"));
  }

  void exportCurvesToPngPdfAndSvg() {
    const QString a = makeFinishedRun("export-a", 0.6);
    const QString b = makeFinishedRun("export-b", 1.1, 30);
    core::RunLog logA(a.toStdString()), logB(b.toStdString());
    logA.refresh();
    logB.refresh();
    ui::MetricsPlot plot;  // never shown: exports do not need a window
    plot.setRuns({{"export-a", QColor(31, 119, 180), std::make_shared<core::RunLog>(logA)},
                  {"export-b", QColor(255, 127, 14), std::make_shared<core::RunLog>(logB)}});
    plot.setMetrics({"loss", "accuracy", "grad_norm"});
    QVERIFY(plot.replotPending());
    QString error;
    const QString png = m_tmp.filePath("curves.png");
    QVERIFY2(plot.exportTo(png, 900, 520, &error), qPrintable(error));
    QVERIFY(!plot.replotPending());  // the pending rebuild ran first
    QCOMPARE(plot.pointCount("loss", 1), 30);
    QVERIFY(QFileInfo(png).size() > 5000);
    QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(900, 520));
    QVERIFY2(colourCount(image) > 20, qPrintable(QString::number(colourCount(image))));
    // Both runs' colours are drawn.
    bool blue = false, orange = false;
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x) {
        const QColor c = image.pixelColor(x, y);
        blue = blue || (c.red() < 60 && c.green() > 100 && c.green() < 140 && c.blue() > 160);
        orange = orange || (c.red() > 235 && c.green() > 110 && c.green() < 145 && c.blue() < 40);
      }
    QVERIFY(blue && orange);

    const QString pdf = m_tmp.filePath("curves.pdf");
    QVERIFY2(plot.exportTo(pdf, 900, 520, &error), qPrintable(error));
    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    const QByteArray pdfBytes = pdfFile.readAll();
    QVERIFY(pdfBytes.startsWith("%PDF-"));
    QVERIFY(pdfBytes.size() > 5000);
    QVERIFY(QRegularExpression(R"(/MediaBox \[0 0 900(\.0*)? 520(\.0*)?\])")
                .match(QString::fromLatin1(pdfBytes))
                .hasMatch());  // 900 x 520 points

    const QString svg = m_tmp.filePath("curves.svg");
    QVERIFY2(plot.exportTo(svg, 900, 520, &error), qPrintable(error));
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    const QByteArray svgBytes = svgFile.readAll();
    QVERIFY(svgBytes.contains("<svg") && svgBytes.contains("viewBox=\"0 0 900 520\""));
    QVERIFY(svgBytes.contains("#1f77b4") && svgBytes.contains("#ff7f0e"));  // the run colours

    // Failures name the file and say why; nothing is left behind.
    const QString nowhere = m_tmp.filePath("no-such-folder/curves.png");
    QVERIFY(!plot.exportTo(nowhere, 900, 520, &error));
    QVERIFY2(error.contains(QDir::toNativeSeparators(nowhere)), qPrintable(error));
    QVERIFY2(error.contains("does not exist"), qPrintable(error));
    QVERIFY(!QFileInfo::exists(nowhere));
    QVERIFY(!plot.exportTo(m_tmp.filePath("curves.bmp"), 900, 520, &error));
    QVERIFY2(error.contains("curves.bmp") && error.contains(".png"), qPrintable(error));
    QVERIFY(!plot.exportTo(png, 0, 520, &error));
    QVERIFY(error.contains("out of range"));
  }

  void exportCurvesFromThePage() {
    const QString a = makeFinishedRun("page-export", 0.7);
    ui::TrainingPage page;
    page.resize(1300, 800);
    page.show();
    QSignalSpy failed(&page, &ui::TrainingPage::failed);
    page.addRunFolder(a);
    QVERIFY(page.exportCurvesAction());
    QCOMPARE(page.exportCurvesAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    const QString png = m_tmp.filePath("page-curves.png");
    QString error;
    QVERIFY2(page.exportCurves(png, QSize(800, 450), &error), qPrintable(error));
    QCOMPARE(QImage(png).size(), QSize(800, 450));
    QVERIFY(!page.exportCurves(m_tmp.filePath("missing/x.pdf"), {}, &error));
    QVERIFY(error.contains("missing"));
    QCOMPARE(failed.count(), 0);
  }

  void exportCurvesWithoutAWindow() {
    const QString a = makeFinishedRun("cli-a", 0.6);
    const QString b = makeFinishedRun("cli-b", 1.0);
    ui::CurveExportOptions options;
    options.output = m_tmp.filePath("cli.png");
    options.runs = {a, b};
    options.size = QSize(1000, 600);
    QString error;
    QVERIFY(ui::parseMetricKeys("loss, accuracy,entropy", &options.metrics, &error));
    QCOMPARE(options.metrics, QStringList({"loss", "accuracy", "entropy"}));
    QCOMPARE(ui::exportCurves(options), QString());
    QCOMPARE(QImage(options.output).size(), QSize(1000, 600));
    QVERIFY(colourCount(QImage(options.output)) > 20);

    QVERIFY(!ui::parseMetricKeys("loss,wer", &options.metrics, &error));
    QVERIFY2(error.contains("'wer'") && error.contains("images_per_s") && error.contains("ned"),
             qPrintable(error));
    QSize size;
    QVERIFY(ui::parsePlotSize("1200x700", &size, &error));
    QCOMPARE(size, QSize(1200, 700));
    QVERIFY(!ui::parsePlotSize("big", &size, &error));
    QVERIFY(error.contains("WIDTHxHEIGHT"));
    ui::CurveExportOptions missing = options;
    missing.runs = {a, m_tmp.filePath("no-run-here")};
    QVERIFY(ui::exportCurves(missing).contains("no-run-here"));
    const QString empty = makeRun("cli-empty");
    missing.runs = {empty};
    QVERIFY(ui::exportCurves(missing).contains("metrics.jsonl"));

    // The program itself: no display needed, exit status and messages.
    if (gui().isEmpty()) QSKIP("the foveal program is not built");
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("QT_QPA_PLATFORM");  // it chooses offscreen by itself
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    p.setProcessEnvironment(env);
    const QString out = m_tmp.filePath("program.pdf");
    p.start(gui(), {"--export-curves", out, "--run", a, "--run", b, "--metrics", "loss,accuracy",
                    "--smoothing", "0.3", "--size", "800x500"});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QVERIFY(QFileInfo(out).size() > 3000);
    p.start(gui(), {"--export-curves", m_tmp.filePath("x.png"), "--run", a, "--metrics", "bogus"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 1);
    const QString err = QString::fromLocal8Bit(p.readAllStandardError());
    QVERIFY2(err.contains("unknown metric 'bogus'") && err.contains("grad_norm"), qPrintable(err));
    const QString bad = m_tmp.filePath("nope/x.png");
    p.start(gui(), {"--export-curves", bad, "--run", a});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 1);
    QVERIFY(QString::fromLocal8Bit(p.readAllStandardError()).contains(bad));
  }

  void sampleRunsOnFirstStart() {
    // samples/runs as the repository ships it: logs only, no checkpoints.
    const QString root = m_tmp.filePath("samples/runs");
    const QString finished = makeFinishedRun("samples/runs/digits-sharp", 0.5);
    const QString stopped = makeRun("samples/runs/digits-soft");
    append(stopped + "/metrics.jsonl", trainLine(10, 2.0, 1) + trainLine(20, 1.7, 2) +
                                           evalLine(20, 0.3, 2.1) +
                                           "{\"kind\":\"stop\",\"iteration\":22}\n");
    makeRun("samples/runs/not-a-run");                // config.json only: not listed
    QVERIFY(!QSettings().contains("training/runs"));  // a first start
    {
      ui::MainWindow w;
      w.resize(1400, 900);
      w.show();
      auto* page = w.trainingPage();
      page->setProgram(cli());
      QCOMPARE(w.addSampleRuns(root), 2);
      QCOMPARE(page->runs()->rowCount(), 2);
      QCOMPARE(page->runs()->name(0), QString("digits-sharp"));
      QCOMPARE(page->runs()->status(0).status, core::RunStatus::Finished);
      QCOMPARE(page->runs()->status(1).status, core::RunStatus::Stopped);
      QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
      QCOMPARE(page->currentRun(), 0);
      QTRY_COMPARE(page->plot()->pointCount("loss", 0), 40);
      QCOMPARE(page->plot()->pointCount("accuracy", 1), 1);
      // What needs a checkpoint says there is none.
      QVERIFY2(page->detailText().contains("no checkpoint"), qPrintable(page->detailText()));
      QVERIFY2(page->preview()->statusText().contains("no checkpoint"),
               qPrintable(page->preview()->statusText()));
      QVERIFY2(page->evaluation()->statusText().contains("no checkpoint"),
               qPrintable(page->evaluation()->statusText()));
      // The shortcut reaches the export from the window (the dialog is closed unanswered).
      QSignalSpy triggered(page->exportCurvesAction(), &QAction::triggered);
      w.tabs()->setCurrentWidget(page);
      QVERIFY(QTest::qWaitForWindowActive(&w));
      QTimer::singleShot(300, [] {
        if (QWidget* dialog = QApplication::activeModalWidget()) dialog->close();
      });
      QTest::keyClick(&w, Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
      QCOMPARE(triggered.count(), 1);
      QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
      page->selectRun(1);
      QVERIFY2(page->detailText().contains("no checkpoint to resume"),
               qPrintable(page->detailText()));
      if (!cli().isEmpty()) {
        QVERIFY(!page->evaluation()->evaluate());
        QVERIFY2(
            w.errorText().contains("no such checkpoint") && w.errorText().contains("digits-soft"),
            qPrintable(w.errorText()));
      }
      if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) {
        page->selectRun(0);
        w.tabs()->setCurrentWidget(page);
        QTRY_VERIFY(!page->plot()->replotPending());
        QTest::qWait(200);
        const QString dir = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR");
        QVERIFY(w.grab().save(dir + "/training-samples.png"));
        QString error;
        QVERIFY2(page->exportCurves(dir + "/curves-export.png", {1200, 700}, &error),
                 qPrintable(error));
      }
    }
    // The list is remembered: a later start keeps it and adds no samples.
    QCOMPARE(QSettings().value("training/runs").toStringList().size(), 2);
    {
      ui::TrainingPage page;
      QCOMPARE(page.runs()->rowCount(), 2);
      QCOMPARE(page.addSampleRuns(root), 0);
      page.removeRun(1);
      QCOMPARE(page.addSampleRuns(root), 0);  // the user's choice (one run) stays
      page.removeRun(0);
    }
    // Everything removed: the samples come back next time.
    QVERIFY(QSettings().value("training/runs").toStringList().isEmpty());
    ui::TrainingPage page;
    QCOMPARE(page.addSampleRuns(root), 2);
  }

  void launchDialogShowsTheCommand() {
    ui::TrainingLaunchDialog dialog(QString(), m_tmp.path());
    ui::LaunchSpec spec;
    spec.preset = "digits-sharp-chain";
    spec.width = 0.25;
    spec.iterations = 5000;
    spec.batch = 64;
    spec.data = "digits:len=7,rotated,split=stream";
    spec.seed = 7;
    spec.runDir = m_tmp.filePath("my run");
    spec.device = ui::LaunchSpec::Device::Cuda;
    spec.cudaIndex = 1;
    dialog.setSpec(spec);
    QCOMPARE(dialog.commandLine(),
             QString("foveal-cli train --run '%1' --preset digits-sharp-chain --width 0.25 "
                     "--iterations 5000 --batch 64 --data digits:len=7,rotated,split=stream "
                     "--seed 7 --device cuda:1")
                 .arg(m_tmp.filePath("my run")));
    QCOMPARE(dialog.spec().arguments(), spec.arguments());
    spec.device = ui::LaunchSpec::Device::MultiGpu;
    spec.gpus = 4;
    dialog.setSpec(spec);
    const QString multi = dialog.commandLine();
    QVERIFY2(multi.startsWith("for r in $(seq 0 3); do WORLD_SIZE=4 RANK=$r LOCAL_RANK=$r "
                              "MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 foveal-cli train"),
             qPrintable(multi));
    QVERIFY(multi.contains("--device cuda:$r & done; wait"));
    QCOMPARE(spec.arguments(2).last(), QString("cuda:2"));
    QCOMPARE(spec.environment(3).at(1).second, QString("3"));
    QCOMPARE(ui::shellQuote("it's"), QString("'it'\\''s'"));
    // Any combination of the stages over the preset's model.
    spec.device = ui::LaunchSpec::Device::Cpu;
    spec.transformation = "tps";
    spec.features = "resnet";
    spec.prediction = "ctc";
    spec.projection = 1;
    dialog.setSpec(spec);
    QVERIFY2(dialog.commandLine().contains(
                 "--seed 7 --transformation tps --features resnet --prediction ctc --projection"),
             qPrintable(dialog.commandLine()));
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) {  // the dialog, for a look
      dialog.show();
      QTest::qWait(100);
      QVERIFY(dialog.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/new-run.png"));
    }
    QCOMPARE(dialog.spec().arguments(), spec.arguments());
    // Skipping the ended labels' glimpses: offered for sharp models (the preset's or chosen).
    spec.skipEndedRows = true;
    dialog.setSpec(spec);
    QVERIFY2(dialog.commandLine().endsWith("--projection --skip-ended-rows --device cpu"),
             qPrintable(dialog.commandLine()));
    spec.attention = "soft";
    dialog.setSpec(spec);
    QVERIFY(!dialog.commandLine().contains("--skip-ended-rows"));
    spec.attention.clear();
    spec.skipEndedRows = false;
    dialog.setSpec(spec);
    ui::LaunchSpec resume;
    resume.resume = true;
    resume.runDir = "/runs/a";
    QCOMPARE(resume.arguments(),
             QStringList({"train", "--run", "/runs/a", "--resume", "--device", "cpu"}));
  }

  // Hosts and their defaults kept in the settings: each host used is listed, most recent first,
  // and choosing it brings back the fields it was last used with; Forget removes it.
  void runTargetRemembersHosts() {
    {
      ui::RunTargetBox box;
      box.setKind(ui::RunTargetBox::Slurm);
      box.hostEdit()->setText("me@login.hpc:2222");
      box.remoteDirEdit()->setText("scratch/runs");
      box.partitionEdit()->setText("gpu");
      box.gpusBox()->setValue(4);
      box.saveSettings();
      box.setKind(ui::RunTargetBox::SshHost);
      box.hostEdit()->setText("ann@workstation");
      box.remoteDirEdit()->setText("runs");
      box.saveSettings();
      box.setKind(ui::RunTargetBox::ThisMachine);  // this machine adds no host
      box.hostEdit()->setText("ignored@host");
      box.saveSettings();
    }
    QCOMPARE(ui::RunTargetBox::knownHosts(), QStringList({"ann@workstation", "me@login.hpc:2222"}));
    ui::RunTargetBox box;
    QCOMPARE(box.hostBox()->count(), 2);
    QCOMPARE(box.hostBox()->itemText(1), QString("me@login.hpc:2222"));
    // Choose the cluster from the list: its kind and Slurm fields come back.
    box.hostBox()->setCurrentIndex(1);
    Q_EMIT box.hostBox()->activated(1);
    QCOMPARE(box.kind(), ui::RunTargetBox::Slurm);
    QCOMPARE(box.hostEdit()->text(), QString("me@login.hpc:2222"));
    QCOMPARE(box.remoteDirEdit()->text(), QString("scratch/runs"));
    QCOMPARE(box.partitionEdit()->text(), QString("gpu"));
    QCOMPARE(box.gpusBox()->value(), 4);
    // And the workstation: an SSH host with its own folder.
    box.hostBox()->setCurrentIndex(0);
    Q_EMIT box.hostBox()->activated(0);
    QCOMPARE(box.kind(), ui::RunTargetBox::SshHost);
    QCOMPARE(box.remoteDirEdit()->text(), QString("runs"));
    // Using the cluster again moves it first; Forget removes a host.
    box.setKind(ui::RunTargetBox::Slurm);
    box.hostEdit()->setText("me@login.hpc:2222");
    box.saveSettings();
    QCOMPARE(ui::RunTargetBox::knownHosts(), QStringList({"me@login.hpc:2222", "ann@workstation"}));
    box.forgetHost("me@login.hpc:2222");
    QCOMPARE(ui::RunTargetBox::knownHosts(), QStringList({"ann@workstation"}));
    QCOMPARE(box.hostBox()->count(), 1);
    QVERIFY(box.hostEdit()->text().isEmpty());
  }

  // Issue 64: an ssh_config file and an identity on the host entry (the CLI's --ssh-config and
  // --ssh-identity), remembered with each host; a Slurm job of a CPU run asks for no GPU.
  void runTargetKeepsSshConfigAndIdentityPerHost() {
    {
      ui::RunTargetBox box;
      box.setKind(ui::RunTargetBox::SshHost);
      box.hostEdit()->setText("ann@lab-gpu");
      box.sshConfigEdit()->setText("/home/ann/lab/ssh_config");
      box.identityEdit()->setText("/home/ann/.ssh/lab key");
      const QStringList args = box.arguments("/runs/a");
      QCOMPARE(args.mid(args.indexOf("--ssh-config"), 2),
               QStringList({"--ssh-config", "/home/ann/lab/ssh_config"}));
      QCOMPARE(args.mid(args.indexOf("--ssh-identity"), 2),
               QStringList({"--ssh-identity", "/home/ann/.ssh/lab key"}));
      box.saveSettings();
      box.setKind(ui::RunTargetBox::Slurm);
      box.hostEdit()->setText("me@login.hpc");
      box.sshConfigEdit()->clear();
      box.identityEdit()->clear();
      QVERIFY(!box.arguments("/runs/b").contains("--ssh-config"));
      QVERIFY(!box.arguments("/runs/b").contains("--ssh-identity"));
      box.saveSettings();
      // sbatch on this machine: no ssh, so no ssh options.
      box.hostEdit()->clear();
      box.identityEdit()->setText("/k");
      QVERIFY(!box.arguments("/runs/c").contains("--ssh-identity"));
    }
    ui::RunTargetBox box;
    QCOMPARE(ui::RunTargetBox::knownHosts(), QStringList({"me@login.hpc", "ann@lab-gpu"}));
    box.hostBox()->setCurrentIndex(1);
    Q_EMIT box.hostBox()->activated(1);
    QCOMPARE(box.sshConfigEdit()->text(), QString("/home/ann/lab/ssh_config"));
    QCOMPARE(box.identityEdit()->text(), QString("/home/ann/.ssh/lab key"));
    box.hostBox()->setCurrentIndex(0);
    Q_EMIT box.hostBox()->activated(0);
    QVERIFY(box.sshConfigEdit()->text().isEmpty());
    QVERIFY(box.identityEdit()->text().isEmpty());
    // Labels with a mnemonic have a buddy (the host row's "SSH config", "Identity").
    for (QLabel* label : box.findChildren<QLabel*>())
      if (label->text().contains('&')) QVERIFY2(label->buddy(), qPrintable(label->text()));

    // GPUs follow the device: none for a CPU run, which would wait for a GPU node for ever.
    ui::TrainingLaunchDialog dialog(QString(), m_tmp.path());
    ui::LaunchSpec spec;
    spec.runDir = m_tmp.filePath("cpu job");
    spec.device = ui::LaunchSpec::Device::Cpu;
    dialog.setSpec(spec);
    dialog.targetBox()->setKind(ui::RunTargetBox::Slurm);
    dialog.targetBox()->hostEdit()->setText("me@login.hpc");
    QCOMPARE(dialog.targetBox()->gpusBox()->value(), 0);
    QVERIFY2(!dialog.commandLine().contains("--slurm-gpus"), qPrintable(dialog.commandLine()));
    QVERIFY(!dialog.targetBox()->shownScript().contains("--gres=gpu"));
    spec.device = ui::LaunchSpec::Device::Cuda;
    dialog.setSpec(spec);
    QCOMPARE(dialog.targetBox()->gpusBox()->value(), 1);
    QVERIFY2(dialog.commandLine().contains("--slurm-gpus 1"), qPrintable(dialog.commandLine()));
    spec.device = ui::LaunchSpec::Device::MultiGpu;
    spec.gpus = 4;
    dialog.setSpec(spec);
    QCOMPARE(dialog.targetBox()->gpusBox()->value(), 4);
    // A new dialog with the CPU device (the default) asks for none, whatever was saved.
    dialog.targetBox()->saveSettings();
    QSettings().setValue("training/device", 0);
    ui::TrainingLaunchDialog again(QString(), m_tmp.path());
    QCOMPARE(again.targetBox()->gpusBox()->value(), 0);
  }

  // "Run on" a Slurm cluster: the command line gets --target and the job's options, the batch
  // script is shown (core writes it), a bad host says so instead of a script; this machine
  // adds nothing. The Where column names the target, the job and the follower's last state.
  void launchDialogRunsOnSlurm() {
    ui::TrainingLaunchDialog dialog(QString(), m_tmp.path());
    ui::LaunchSpec spec;
    spec.preset = "digits-soft";
    spec.width = 0.125;
    spec.iterations = 100;
    spec.runDir = m_tmp.filePath("slurm run");
    dialog.setSpec(spec);
    auto* box = dialog.targetBox();
    box->setKind(ui::RunTargetBox::Slurm);
    box->hostEdit()->setText("me@login.hpc:2222");
    box->remoteDirEdit()->setText("scratch/runs");
    box->partitionEdit()->setText("gpu");
    box->gpusBox()->setValue(2);
    const QString cmd = dialog.commandLine();
    QVERIFY2(cmd.contains("--target 'slurm://me@login.hpc:2222/scratch/runs/slurm run'"),
             qPrintable(cmd));
    QVERIFY2(cmd.contains("--slurm-partition gpu") && cmd.contains("--slurm-gpus 2"),
             qPrintable(cmd));
    QCOMPARE(dialog.spec().processes(), 1);
    const QString script = box->shownScript();
    for (const char* line : {"#SBATCH --gres=gpu:2\n", "#SBATCH --partition=gpu\n",
                             "#SBATCH --requeue\n", "#SBATCH --signal=B:TERM@120\n",
                             "run='scratch/runs/slurm run'\n", "'--preset' 'digits-soft'"})
      QVERIFY2(script.contains(line), qPrintable(script));
    QVERIFY2(!script.contains("--target"), qPrintable(script));
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) {  // the dialog, for a look
      dialog.show();
      QTest::qWait(100);
      QVERIFY(
          dialog.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/new-run-slurm.png"));
    }
    box->hostEdit()->setText("-oProxyCommand=x");
    QVERIFY2(box->shownScript().startsWith("# cannot write the script:") &&
                 box->shownScript().contains("starts with '-'"),
             qPrintable(box->shownScript()));
    box->setKind(ui::RunTargetBox::ThisMachine);
    QVERIFY(!dialog.commandLine().contains("--target"));
    QVERIFY(dialog.spec().targetArguments.isEmpty());

    // The Where column.
    const QString dir = m_tmp.filePath("cluster-run");
    QVERIFY(QDir().mkpath(dir));
    QFile f(dir + "/remote.json");
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"target": {"kind": "slurm", "host": "me@login", "remote_dir": "/s/r"},
                "job": "77", "train_args": []})");
    f.close();
    ui::RunListModel model;
    QAbstractItemModelTester tester(&model);
    const int row = model.addRun(dir);
    model.refresh();
    QCOMPARE(model.data(model.index(row, ui::RunListModel::Where)).toString(),
             QString("slurm://me@login//s/r · job 77"));
    model.setJobState(dir, "job 77: pending (Resources)");
    QCOMPARE(model.data(model.index(row, ui::RunListModel::Where)).toString(),
             QString("slurm://me@login//s/r · job 77 · pending (Resources)"));
    const int local = model.addRun(m_tmp.filePath("local-run"));
    QCOMPARE(model.data(model.index(local, ui::RunListModel::Where)).toString(),
             QString("this machine"));
  }

  // Issue 64: the New-run dialog fits a 1280x720 screen with every target, at scale 1 and 2
  // (test_training_scale2): Start, Cancel and the command line always in view, every setting
  // reachable by scrolling the settings, the batch script in a tab of its own. Measured from
  // the widgets' geometry; a Slurm target made it 742x1084 before.
  void launchDialogFitsALaptopScreen_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("device");
    QTest::newRow("this machine") << int(ui::RunTargetBox::ThisMachine) << 0;
    QTest::newRow("this machine, GPUs") << int(ui::RunTargetBox::ThisMachine) << 2;
    QTest::newRow("ssh") << int(ui::RunTargetBox::SshHost) << 1;
    QTest::newRow("slurm") << int(ui::RunTargetBox::Slurm) << 0;
  }
  void launchDialogFitsALaptopScreen() {
    QFETCH(int, kind);
    QFETCH(int, device);
    const QSize screen(1280, 720);
    constexpr int kTitleAndPanel = 64;  // a title bar and a panel take this much of the 720
    ui::TrainingLaunchDialog dialog(QString(), m_tmp.path());
    ui::LaunchSpec spec = dialog.spec();
    spec.device = static_cast<ui::LaunchSpec::Device>(device);
    dialog.setSpec(spec);
    auto* box = dialog.targetBox();
    box->setKind(static_cast<ui::RunTargetBox::Kind>(kind));
    box->hostEdit()->setText("me@login.hpc:2222");
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QTest::qWait(100);  // the dialog sizes itself once shown
    const QSize min = dialog.minimumSizeHint().expandedTo(dialog.minimumSize());
    QVERIFY2(min.width() <= screen.width() && min.height() <= screen.height() - kTitleAndPanel,
             qPrintable(QString("minimum %1x%2").arg(min.width()).arg(min.height())));
    // As it opens on a screen that fits it, and on a 1280x720 one.
    for (const QSize size :
         {dialog.size(), dialog.sizeHint().boundedTo(screen - QSize(0, kTitleAndPanel))}) {
      dialog.resize(size);
      QTest::qWait(50);
      const QString where = QString("%1x%2").arg(dialog.width()).arg(dialog.height());
      QVERIFY2(dialog.height() <= std::max(screen.height(), size.height()), qPrintable(where));
      // Start and Cancel whole and inside the dialog.
      for (QPushButton* b : dialog.findChildren<QPushButton*>()) {
        if (b != dialog.startButton() && b->text() != "Cancel" && b->text() != "&Cancel") continue;
        const QRect r(b->mapTo(&dialog, QPoint(0, 0)), b->size());
        QVERIFY2(b->isVisible() && dialog.rect().contains(r) &&
                     b->visibleRegion().boundingRect().size() == b->size(),
                 qPrintable(where + " " + b->text()));
      }
      // The command line shows at least three lines.
      auto* command = dialog.findChild<QPlainTextEdit*>("commandLine");
      QVERIFY(command);
      dialog.commandTabs()->setCurrentIndex(0);
      QVERIFY2(command->isVisible() && command->visibleRegion().boundingRect().height() >=
                                           3 * command->fontMetrics().height(),
               qPrintable(where));
      QVERIFY(
          dialog.rect().contains(QRect(command->mapTo(&dialog, QPoint(0, 0)), command->size())));
      // The batch script: a tab for Slurm, none otherwise.
      auto* script = dialog.findChild<QPlainTextEdit*>("batchScript");
      QVERIFY(script);
      QCOMPARE(dialog.commandTabs()->isTabVisible(1), kind == ui::RunTargetBox::Slurm);
      if (kind == ui::RunTargetBox::Slurm) {
        dialog.commandTabs()->setCurrentIndex(1);
        QTest::qWait(20);
        QVERIFY2(script->isVisible() && script->visibleRegion().boundingRect().height() >=
                                            3 * script->fontMetrics().height(),
                 qPrintable(where));
        QVERIFY(script->toPlainText().startsWith("#!/bin/bash"));
        dialog.commandTabs()->setCurrentIndex(0);
      }
      // Every setting can be scrolled into view, whole, without a horizontal scroll bar.
      QVERIFY(dialog.settingsArea()->horizontalScrollBar()->maximum() == 0 ||
              !dialog.settingsArea()->horizontalScrollBar()->isVisible());
      const auto inputs = dialog.settingsArea()->widget()->findChildren<QWidget*>();
      int checked = 0;
      for (QWidget* input : inputs) {
        if (!input->isVisible() ||
            !(qobject_cast<QLineEdit*>(input) || qobject_cast<QAbstractSpinBox*>(input) ||
              qobject_cast<QComboBox*>(input)))
          continue;
        if (qobject_cast<QComboBox*>(input->parentWidget()) ||
            qobject_cast<QAbstractSpinBox*>(input->parentWidget()))
          continue;  // a combo box's or spin box's own line edit
        // ensureWidgetVisible() shows a line edit's cursor, not all of it: the whole rectangle.
        const QPoint centre = input->mapTo(dialog.settingsArea()->widget(), input->rect().center());
        dialog.settingsArea()->ensureVisible(centre.x(), centre.y(), input->width() / 2 + 1,
                                             input->height() / 2 + 1);
        // Shown rows settle through posted layout requests (the settings' width follows its
        // rows): wait for them, a loaded machine takes longer.
        QTRY_VERIFY_WITH_TIMEOUT(input->visibleRegion().boundingRect().size() == input->size(),
                                 3000);
        const QRect seen = input->visibleRegion().boundingRect();
        QVERIFY2(seen.size() == input->size(),
                 qPrintable(QString("%1 %2 %3: %4x%5 of %6x%7 in view")
                                .arg(where, input->metaObject()->className(),
                                     input->objectName() + input->toolTip().left(40))
                                .arg(seen.width())
                                .arg(seen.height())
                                .arg(input->width())
                                .arg(input->height())));
        ++checked;
      }
      QVERIFY2(checked >= (kind == ui::RunTargetBox::Slurm ? 24 : 14),
               qPrintable(QString::number(checked)));
    }
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR") && kind == ui::RunTargetBox::Slurm &&
        device == 0) {
      dialog.resize(dialog.sizeHint().boundedTo(screen - QSize(0, kTitleAndPanel)));
      dialog.settingsArea()->verticalScrollBar()->setValue(0);
      QTest::qWait(50);
      const QString name = qgetenv("QT_SCALE_FACTOR") == "2" ? "/new-run-slurm-scale2.png"
                                                             : "/new-run-slurm-720.png";
      QVERIFY(dialog.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + name));
    }
  }

  void launchOnAnSshHost() { remoteRunFromThePage("ssh"); }
  void launchOnASlurmCluster() { remoteRunFromThePage("slurm"); }

  void evalModelsReadEvalJson() {
    ui::EvalResultModel results;
    QAbstractItemModelTester t1(&results, QAbstractItemModelTester::FailureReportingMode::QtTest);
    // The digit protocol, in Table 1's layout.
    QString json = "[{\"model\":\"/r/best.fvm\",\"datasets\":[";
    const QStringList cols = ui::EvalResultModel::protocolColumns();
    for (int i = 0; i < cols.size(); ++i) {
      const bool rotated = cols[i].startsWith('r');
      json += QString(
                  "%1{\"name\":\"digits:len=%2%3,split=test,seed=1\",\"count\":10,"
                  "\"accuracy\":%4}")
                  .arg(i ? "," : "")
                  .arg(cols[i].mid(1))
                  .arg(rotated ? ",rotated" : "")
                  .arg(0.5 + 0.04 * i);
    }
    json += "],\"overall\":{\"count\":100,\"pointing\":0.8125,\"mean_iou\":0.4321}}]";
    QCOMPARE(results.setJson(json.toUtf8(), true), QString());
    QCOMPARE(results.columnCount(), 14);
    QCOMPARE(results.headerData(12, Qt::Horizontal).toString(), QString("pointing %"));
    QCOMPARE(results.data(results.index(0, 12)).toString(), QString("81.3"));
    QCOMPARE(results.data(results.index(0, 13)).toString(), QString("0.432"));
    QCOMPARE(results.headerData(1, Qt::Horizontal).toString(), QString("n5"));
    QCOMPARE(results.headerData(10, Qt::Horizontal).toString(), QString("r13"));
    QCOMPARE(results.data(results.index(0, 0)).toString(), QString("best.fvm"));
    QCOMPARE(results.data(results.index(0, 7)).toString(), QString("74.0"));   // r5
    QCOMPARE(results.data(results.index(0, 11)).toString(), QString("68.0"));  // mean
    QCOMPARE(ui::EvalResultModel::protocolKey("digits:len=11,rotated,split=test"), QString("r11"));
    QCOMPARE(ui::EvalResultModel::protocolKey("words:count=3"), QString());
    QVERIFY(results.setJson("{oops", false).contains("cannot read"));

    ui::FailureModel failures;
    QAbstractItemModelTester t2(&failures, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(failures.setTsv("dataset\tindex\tentry\ttruth\tprediction\n"
                             "digits:len=5\t3\t#3\t12345\t12845\nbad line\n"),
             1);
    QCOMPARE(failures.failure(0).index, qint64(3));
    QCOMPARE(failures.data(failures.index(0, ui::FailureModel::Reading)).toString(),
             QString("12845"));
  }

  void launchTinyCpuRunFromThePage() {
    if (!cliTrains())
      QSKIP("foveal-cli train is not available in this build (the training engine is missing)");
    ui::MainWindow w;
    w.resize(1400, 900);
    w.show();
    auto* page = w.trainingPage();
    w.tabs()->setCurrentWidget(page);
    page->setProgram(cli());
    page->setPollInterval(100);

    // A run that is stopped, then resumed, then finishes.
    ui::LaunchSpec spec;
    spec.preset = "digits-soft";
    spec.width = 0.125;
    spec.iterations = 60;
    spec.batch = 8;
    spec.data = "digits:len=5,count=64";
    spec.evalData = "digits:len=5,split=test,seed=1,count=16";
    spec.evalInterval = 30;
    spec.logInterval = 2;
    spec.threads = 1;
    spec.runDir = m_tmp.filePath("real-run");
    QVERIFY(page->launch(spec));
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    const int row = page->runs()->rowOf(spec.runDir);
    QVERIFY(row >= 0);
    QCOMPARE(page->currentRun(), row);
    QVERIFY(!page->launch(spec));  // the folder is in use
    QVERIFY(w.errorText().contains("already"));
    QTRY_VERIFY_WITH_TIMEOUT(page->runs()->log(row)->iteration() >= 4, 60000);
    QVERIFY(page->stopRun(row));
    QTRY_COMPARE_WITH_TIMEOUT(page->runs()->status(row).status, core::RunStatus::Stopped, 60000);
    const int64_t stoppedAt = page->runs()->log(row)->iteration();
    QVERIFY2(stoppedAt < 60, qPrintable(QString::number(stoppedAt)));
    QVERIFY(QFileInfo::exists(spec.runDir + "/latest.state"));
    QVERIFY(page->resumeRun(row));
    QTRY_COMPARE_WITH_TIMEOUT(page->runs()->status(row).status, core::RunStatus::Finished, 90000);
    QCOMPARE(page->runs()->data(page->runs()->index(row, ui::RunListModel::Progress)).toString(),
             QString("60 / 60"));
    QTRY_VERIFY(page->plot()->pointCount("loss", row) >= 20);
    QTRY_VERIFY(page->plot()->pointCount("accuracy", row) >= 2);
    QVERIFY(QFileInfo::exists(spec.runDir + "/best.fvm"));
    QVERIFY(page->launcher()->output(spec.runDir).contains("finished at iteration 60"));

    // The live preview traced the latest checkpoint.
    QTRY_VERIFY_WITH_TIMEOUT(page->preview()->trace() != nullptr && !page->preview()->isBusy(),
                             30000);
    QVERIFY2(page->preview()->statusText().contains("Live preview"),
             qPrintable(page->preview()->statusText()));

    // Evaluate the checkpoint; open a misread image in the inspector at its first wrong step.
    auto* eval = page->evaluation();
    eval->setCheckpoint(spec.runDir + "/latest.fvm");
    eval->setDataset("digits:len=5,split=test,seed=1");
    eval->setLimit(12);
    QSignalSpy done(eval, &ui::EvaluationPanel::finished);
    QVERIFY(eval->evaluate());
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
    QVERIFY2(done.first().at(0).toBool(), qPrintable(eval->statusText()));
    QCOMPARE(eval->results()->data(eval->results()->index(0, 1)).toString(), QString("12"));
    // 60 iterations teach a width-0.125 model little: it misreads some of the 12 images.
    QVERIFY(eval->failures()->rowCount() > 0);
    const auto failure = eval->failures()->failure(0);
    eval->chooseFailure(0);
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.inspector()));
    QTRY_VERIFY_WITH_TIMEOUT(w.stepCount() > 0 && !w.isTracing(), 30000);
    QVERIFY(w.trace());
    QCOMPARE(QString::fromStdString(w.trace()->prediction), failure.prediction);
    const auto& correct = w.inspector()->patchStrip()->correct();
    const int firstWrong = int(std::find(correct.begin(), correct.end(), false) - correct.begin());
    QVERIFY(firstWrong < int(correct.size()));
    QCOMPARE(w.step(), firstWrong);

    // The same with a beam search: the panel passes --beam, the inspector decodes its failures
    // the same way (and shows the evaluation's reading).
    QCOMPARE(w.beamWidth(), 1);
    eval->setBeamWidth(3);
    QVERIFY(eval->evaluate());
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 60000);
    QVERIFY2(done.last().at(0).toBool(), qPrintable(eval->statusText()));
    QVERIFY(eval->failures()->rowCount() > 0);
    const auto beamFailure = eval->failures()->failure(0);
    eval->chooseFailure(0);
    QCOMPARE(w.beamWidth(), 3);
    QTRY_VERIFY_WITH_TIMEOUT(w.trace() && w.trace()->beamWidth == 3 && !w.isTracing(), 30000);
    QCOMPARE(QString::fromStdString(w.trace()->prediction), beamFailure.prediction);
    w.setBeamWidth(1);

    // A failing launch: a dataset spec the trainer rejects is reported in the window.
    ui::LaunchSpec bad = spec;
    bad.runDir = m_tmp.filePath("bad-run");
    bad.data = "digits:len=oops";
    QVERIFY(page->launch(bad));
    const int badRow = page->runs()->rowOf(bad.runDir);
    QTRY_COMPARE_WITH_TIMEOUT(page->runs()->status(badRow).status, core::RunStatus::Failed, 60000);
    QVERIFY2(w.errorText().contains("oops"), qPrintable(w.errorText()));
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) {  // the failed launch, for a look
      w.resize(1366, 768);
      w.tabs()->setCurrentWidget(page);
      page->selectRun(badRow);
      QTest::qWait(300);
      QVERIFY(w.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") +
                            "/training-failed-launch.png"));
    }
  }

  // The documentation's screenshots of a real run's checkpoint history and wall clock
  // (training-history*.png): only with FOVEAL_SCREENSHOT_DIR and FOVEAL_SCREENSHOT_RUN (a run
  // folder with a history/, e.g. foveal-cli train ... --history-interval 25), sized as
  // sampleModelScreenshots' (FOVEAL_SCREENSHOT_SIZE, FOVEAL_SCREENSHOT_SUFFIX).
  void historyScreenshot() {
    if (!qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR") ||
        !qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_RUN"))
      QSKIP("FOVEAL_SCREENSHOT_DIR or FOVEAL_SCREENSHOT_RUN not set");
    const QStringList size =
        qEnvironmentVariable("FOVEAL_SCREENSHOT_SIZE", QStringLiteral("1366x768")).split('x');
    QCOMPARE(size.size(), 2);
    ui::MainWindow w;
    w.setConfirmClose(false);
    auto* page = w.trainingPage();
    page->addRunFolder(qEnvironmentVariable("FOVEAL_SCREENSHOT_RUN"));
    page->selectRun(page->runs()->rowCount() - 1);
    for (auto* box : page->findChildren<QComboBox*>())
      if (box->findText(QStringLiteral("x: clock")) >= 0)
        box->setCurrentIndex(box->findText(QStringLiteral("x: clock")));
    w.tabs()->setCurrentWidget(page);
    w.resize(size[0].toInt(), size[1].toInt());
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* preview = page->preview();
    QTRY_VERIFY_WITH_TIMEOUT(preview->trace() != nullptr && !preview->isBusy(), 60000);
    QVERIFY(preview->historySize() > 2);
    preview->showHistory(1);  // early in the run
    QTRY_VERIFY_WITH_TIMEOUT(!preview->isBusy() && preview->statusText().contains("checkpoint 2"),
                             60000);
    page->plot()->replotNow();
    QTest::qWait(300);
    QVERIFY(w.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/training-history" +
                          qEnvironmentVariable("FOVEAL_SCREENSHOT_SUFFIX") + ".png"));
    QSettings().remove(QStringLiteral("training/runs"));
  }

  // The documentation's screenshot: the shipped sample runs (samples/runs) when there are any,
  // else three synthetic runs shaped like the paper's.
  void screenshotWithOverlaidRuns() {
    if (!qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) QSKIP("FOVEAL_SCREENSHOT_DIR not set");
    ui::MainWindow w;
    auto* page = w.trainingPage();
    // Selects `run`, shows the page, waits for the curves and the preview, saves training.png.
    auto shoot = [&](int run, const QString& hoverMetric) {
      page->selectRun(run);
      w.tabs()->setCurrentWidget(page);
      w.resize(1500, 940);
      w.show();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      QTRY_VERIFY(!page->plot()->replotPending());
      QTRY_VERIFY_WITH_TIMEOUT(page->preview()->trace() != nullptr, 30000);
      if (!hoverMetric.isEmpty()) page->plot()->hover(hoverMetric, 15000);
      QTest::qWait(300);
      QVERIFY(w.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/training.png"));
    };
    const QString samples = QStringLiteral(FOVEAL_SAMPLES_DIR);
    if (QFileInfo::exists(samples + "/runs/sharp-chain/metrics.jsonl")) {
      int chain = 0, row = 0;
      for (const char* name : {"soft", "hard", "sharp-pooling", "sharp-chain", "sharp-weighting",
                               "sharp-pooling-reference"}) {
        const QString dir = m_tmp.path() + "/samples-shot/" + name;
        QVERIFY(QDir().mkpath(dir));
        for (const char* file : {"config.json", "metrics.jsonl"})
          QVERIFY(QFile::copy(samples + "/runs/" + name + "/" + file, dir + "/" + file));
        if (QString(name) == "sharp-chain") {  // the live preview traces the run's model
          QVERIFY(QFile::copy(samples + "/models/sharp-chain.fvm", dir + "/latest.fvm"));
          chain = row;
        }
        page->addRunFolder(dir);
        ++row;
      }
      const QStringList shown = {"loss", "train_accuracy", "accuracy", "entropy"};
      for (auto* box : page->findChildren<QCheckBox*>())  // as a user ticks them
        if (box->objectName().startsWith("metric_"))
          box->setChecked(shown.contains(box->objectName().mid(7)));
      shoot(chain, {});
      return;
    }
    // Three runs of one experiment (soft, hard, sharp), written as the trainer writes them.
    struct Shape {
      const char* name;
      const char* attention;
      double floor, speed, acc, entropy;
    };
    const Shape shapes[] = {{"digits-soft", "soft", 0.9, 900, 0.916, 1.07},
                            {"digits-hard", "hard", 1.0, 1300, 0.914, 0.63},
                            {"digits-sharp-chain", "sharp", 0.6, 1100, 0.955, 0.39}};
    int k = 0;
    for (const auto& s : shapes) {
      const QString dir = makeRun(QString("shot/%1").arg(s.name), false);
      append(dir + "/config.json", QString(kConfig)
                                       .replace("digits-soft", s.name)
                                       .replace("\"soft\"", QString("\"%1\"").arg(s.attention))
                                       .replace("\"iterations\":200", "\"iterations\":30000")
                                       .toUtf8());
      QByteArray lines;
      const int last = k == 2 ? 21000 : 30000;
      for (int it = 100; it <= last; it += 100) {
        const double t = it / s.speed;
        const double noise = 0.08 * std::sin(it * 0.37 + k) * std::exp(-it / 20000.0);
        const double nll = s.floor + 12.0 * std::exp(-t) + noise;
        const double reinforce = k == 0 ? 0.0 : -0.3 * std::exp(-t / 2) + 0.05 * noise;
        lines += QString(
                     "{\"kind\":\"train\",\"iteration\":%1,\"epoch\":0,\"loss\":%2,"
                     "\"nll\":%3,\"reinforce\":%4,\"reference\":null,\"reward\":%5,"
                     "\"baseline\":%6,\"grad_norm\":%7,\"train_accuracy\":%8,\"lr\":1.0,"
                     "\"images_per_s\":%9,\"elapsed_s\":%10}\n")
                     .arg(it)
                     .arg(nll + reinforce)
                     .arg(nll)
                     .arg(reinforce)
                     .arg(-nll / 5)
                     .arg(k == 0 ? QString("null") : QString::number(-nll / 5 - 0.02))
                     .arg(2.0 + 3.0 * std::exp(-t / 3) + 0.3 * std::abs(noise) * 10)
                     .arg(s.acc * (1 - std::exp(-t / 1.5)))
                     .arg((k == 2 ? 410 : 930 - 40 * k) + 12 * std::sin(it / 2500.0 + k))
                     .arg(it / (k == 2 ? 410.0 : 930.0) * 192)
                     .toUtf8();
        if (k == 1 && it == 4000)  // a diverged step, shown as a marker
          lines +=
              "{\"kind\":\"skip\",\"iteration\":4001,\"loss\":null,\"grad_norm\":null,"
              "\"consecutive\":1}\n";
        if (it % 1000 == 0)
          lines += evalLine(it, s.acc * (1 - std::exp(-t / 1.4)) - 0.01,
                            s.entropy + 2.2 * std::exp(-t / 2));
      }
      if (k < 2) lines += "{\"kind\":\"checkpoint\",\"iteration\":30000,\"reason\":\"end\"}\n";
      append(dir + "/metrics.jsonl", lines);
      if (k == 2)  // the preview traces the run's latest.fvm (here untrained weights)
        core::ModelSession::create(test::tinyConfig("sharp", core::ContextKind::Chain), 3)
            ->save((dir + "/latest.fvm").toStdString());
      page->addRunFolder(dir);
      ++k;
    }
    page->plot()->setMetrics(
        {"loss", "reward", "grad_norm", "accuracy", "entropy", "images_per_s"});
    shoot(2, QStringLiteral("accuracy"));
  }

  // ---- Issue 18: the GUI for daily use ----

  // Defect 2: hovering a panel with many runs writes a long line; it is cut at the panel's width
  // and never widens the window.
  void hoverReadoutDoesNotWidenTheWindow() {
    ui::MainWindow w;
    w.resize(1280, 720);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* page = w.trainingPage();
    w.tabs()->setCurrentWidget(page);
    for (int i = 0; i < 8; ++i)
      page->addRunFolder(makeFinishedRun(
          QStringLiteral("a-rather-long-run-name-for-the-hover-line-%1").arg(i), 0.1 * i));
    page->plot()->replotNow();
    QTest::qWait(100);
    const int minBefore = w.minimumSizeHint().width();
    page->plot()->hover("loss", 100);
    QTest::qWait(100);  // the layout requests climb one level per pass of the event loop
    QVERIFY(page->plot()->hoverText().contains("hover-line-7"));
    if (qEnvironmentVariableIsSet("FOVEAL_LAYOUT_DEBUG"))
      qInfo() << minBefore << w.minimumSizeHint() << page->minimumSizeHint()
              << page->plot()->minimumSizeHint() << page->plot()->hoverText().size();
    QVERIFY2(w.minimumSizeHint().width() <= std::max(minBefore, 1280),
             qPrintable(QString::number(w.minimumSizeHint().width())));
    QCOMPARE(w.width(), 1280);
  }

  // Defect 9: the legend sits above the panels with whole names, axes are labelled, the sample
  // runs can be hidden and the plot zoomed to a short run.
  void curvesLegendAxesSamplesAndZoom() {
    const QString root = m_tmp.filePath("zoom-samples");
    makeFinishedRun("zoom-samples/sample-a", 0.2, 400);  // 2,000 iterations
    makeFinishedRun("zoom-samples/sample-b", 0.3, 400);
    ui::MainWindow w;
    w.resize(1280, 720);
    w.show();
    auto* page = w.trainingPage();
    w.tabs()->setCurrentWidget(page);
    QCOMPARE(w.addSampleRuns(root), 2);
    const int mine =
        page->addRunFolder(makeFinishedRun("a-new-run-with-a-long-descriptive-name", 0.5, 8));
    page->plot()->replotNow();
    QCoreApplication::processEvents();
    QTRY_VERIFY(!page->plot()->replotPending());
    page->plot()->plot()->replot();
    QVERIFY(page->plot()->legendText().contains("a-new-run-with-a-long-descriptive-name"));
    QVERIFY(!page->plot()->legendOverlapsPanels());
    QCOMPARE(page->plot()->axisLabel("loss", true), QStringLiteral("iteration"));
    QVERIFY(!page->plot()->axisLabel("loss", false).isEmpty());
    QVERIFY(page->isSampleRun(0) && page->isSampleRun(1) && !page->isSampleRun(mine));
    page->showSampleRuns(false);
    QVERIFY(!page->runs()->isShown(0) && !page->runs()->isShown(1) && page->runs()->isShown(mine));
    page->showSampleRuns(true);
    QVERIFY(page->runs()->isShown(0));
    QVERIFY(page->plot()->shownIterations() > 1900);
    page->zoomToRun(mine);
    page->plot()->replotNow();
    QVERIFY2(page->plot()->shownIterations() < 300,
             qPrintable(QString::number(page->plot()->shownIterations())));
  }

  // Defect 9: the evaluation stops saying "no checkpoint" once the run writes one.
  void evaluationSeesANewCheckpoint() {
    const QString dir = makeRun("checkpoint-later");
    append(dir + "/metrics.jsonl", trainLine(10, 2.0, 1) + trainLine(20, 1.8, 2));
    ui::TrainingPage page;
    page.addRunFolder(dir);
    page.refreshNow();
    QVERIFY(page.evaluation()->statusText().contains("no checkpoint"));
    QVERIFY(QFile::copy(QStringLiteral(FOVEAL_SAMPLES_DIR "/models/soft.fvm"), dir + "/best.fvm"));
    page.refreshNow();
    QVERIFY2(!page.evaluation()->statusText().contains("no checkpoint"),
             qPrintable(page.evaluation()->statusText()));
  }

  // Defect 9: the ETA counts the evaluations still due at their measured duration.
  void etaCountsTheEvaluations() {
    const QString dir = makeRun("eta");  // 200 iterations planned
    QByteArray lines;
    double t = 0;
    for (int it = 10; it <= 100; it += 10) {
      t += 1.0;  // 0.1 s per iteration
      lines += trainLine(it, 1.0, t);
      if (it % 50 == 0) {
        t += 5.0;  // each evaluation takes 5 s
        lines += QStringLiteral(
                     "{\"kind\":\"eval\",\"iteration\":%1,\"count\":10,\"accuracy\":0.5,"
                     "\"elapsed_s\":%2}\n")
                     .arg(it)
                     .arg(t)
                     .toUtf8();
      }
    }
    append(dir + "/metrics.jsonl", lines);
    core::RunLog log(dir.toStdString());
    log.refresh();
    // 100 iterations left at 0.1 s, and evaluations at 150 and 200 at 5 s each.
    QVERIFY2(std::abs(ui::RunListModel::estimateEta(log) - 20.0) < 0.5,
             qPrintable(QString::number(ui::RunListModel::estimateEta(log))));
  }

  // Defect 9: no label shows a literal '&'; closing with a run going asks first.
  void launchLabelsAndClosingWithARun() {
    {
      ui::TrainingLaunchDialog dialog(cli(), m_tmp.path());
      // The presets come from `train --list-presets --json`, the field's models among them.
      auto* presets = dialog.findChild<QComboBox*>("preset");
      QVERIFY(presets);
      QTRY_VERIFY_WITH_TIMEOUT(
          presets->findText("digits-crnn") >= 0 &&
              presets->itemData(presets->findText("digits-crnn"), Qt::ToolTipRole)
                  .toString()
                  .contains("none-vgg-bilstm-ctc"),
          10000);
      for (QLabel* label : dialog.findChildren<QLabel*>())
        if (label->text().contains('&') && !label->text().contains("&&"))
          QVERIFY2(label->buddy(), qPrintable(label->text()));
    }
    const QString fake = m_tmp.filePath("fake-cli.sh");
    {
      QFile f(fake);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("#!/bin/sh\nexec sleep 30\n");
    }
    QFile::setPermissions(fake, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    ui::MainWindow w;
    w.show();
    auto* page = w.trainingPage();
    page->setProgram(fake);
    ui::LaunchSpec spec;
    spec.runDir = m_tmp.filePath("fake-run");
    QVERIFY(page->launch(spec));
    bool asked = false;
    QTimer::singleShot(300, [&] {
      if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
        asked = box->text().contains("still running");
        box->button(QMessageBox::Cancel)->click();
      }
    });
    QVERIFY(!w.close());
    QVERIFY(asked);
    QVERIFY(w.isVisible());
    QVERIFY(page->stopRun(page->runs()->rowOf(spec.runDir)));
  }

  // Defect 10: entries the model cannot read are counted and explained, not reported as 0.00.
  void evaluationSaysWhatWasSkipped() {
    ui::EvalResultModel results;
    QCOMPARE(results.setJson("{\"model\":\"/r/best.fvm\",\"overall\":{\"count\":0,\"accuracy\":0},"
                             "\"datasets\":[{\"name\":\"words\",\"count\":0,\"accuracy\":0,"
                             "\"ned\":0,\"entropy\":0,\"skipped\":11}]}",
                             false),
             QString());
    QCOMPARE(results.skipped(), qint64(11));
    QCOMPARE(results.headerData(5, Qt::Horizontal).toString(), QString("skipped"));
    QCOMPARE(results.data(results.index(0, 5)).toString(), QString("11"));
    QVERIFY(results.data(results.index(0, 2)).toString() != QString("0.00"));
    // No character boxes: no localisation, shown as a dash rather than 0.
    QCOMPARE(results.headerData(6, Qt::Horizontal).toString(), QString("pointing %"));
    QCOMPARE(results.data(results.index(0, 6)).toString(), QString("—"));
    const QString text = results.summary("best.fvm", 0);
    QVERIFY2(text.contains("11") && text.contains("skipped") && text.contains("charset"),
             qPrintable(text));
    QVERIFY(!text.contains("0 misread"));
  }

  // The x axis as the time since each run started (TensorBoard's "relative"): points keep their
  // values, move to their elapsed_s, and the hover line speaks in seconds.
  void curvesOverTime() {
    const QString dir = makeRun("over-time");
    QByteArray lines;
    for (int it = 10; it <= 100; it += 10) lines += trainLine(it, 2.0 - it / 100.0, it * 3.0);
    lines += evalLine(100, 0.5, 1.0);  // no elapsed_s: placed by its iteration
    append(dir + "/metrics.jsonl", lines);
    ui::TrainingPage page;
    page.addRunFolder(dir);
    auto* plot = page.plot();
    plot->replotNow();
    QCOMPARE(plot->pointCount("loss", 0), 10);
    QVERIFY(plot->shownIterations() < 150);
    plot->setXAxis(ui::MetricsPlot::XAxis::Time);
    plot->replotNow();
    QCOMPARE(plot->pointCount("loss", 0), 10);
    QCOMPARE(plot->pointCount("accuracy", 0), 1);
    QVERIFY2(plot->shownIterations() > 290 && plot->shownIterations() < 320,
             qPrintable(QString::number(plot->shownIterations())));
    QVERIFY(plot->axisLabel("loss", true).contains("time"));
    plot->hover("loss", 150);
    QVERIFY2(plot->hoverText().contains("150 s") && plot->hoverText().contains("@ 150"),
             qPrintable(plot->hoverText()));
    page.zoomToRun(0);  // in seconds now
    plot->replotNow();
    QVERIFY(plot->shownIterations() > 290 && plot->shownIterations() < 800);
  }

  // The x axis as the wall clock: records carry the time they were written (run_folder kTimeKey);
  // points sit at their time, the axis ticks read dates and times of day, the hover line names
  // the moment, Zoom to run shows the moments it ran. An older run without time stamps is placed
  // from its config.json's time plus elapsed_s.
  void curvesOverWallClock() {
    const QString dir = makeRun("wall-clock");
    const double t0 = 1795000000.0;  // 2026-11-18, 05:46:40 UTC
    QByteArray lines;
    for (int it = 10; it <= 100; it += 10) {
      QByteArray line = trainLine(it, 2.0 - it / 100.0, it * 3.0);
      line.chop(2);  // "}\n"
      line += QStringLiteral(",\"time\":%1}\n").arg(t0 + it * 3.0, 0, 'f', 3).toUtf8();
      lines += line;
    }
    append(dir + "/metrics.jsonl", lines);
    ui::TrainingPage page;
    page.addRunFolder(dir);
    auto* plot = page.plot();
    QComboBox* axisBox = nullptr;
    for (auto* box : page.findChildren<QComboBox*>())
      if (box->findText(QStringLiteral("x: clock")) >= 0) axisBox = box;
    QVERIFY(axisBox);
    const int clock = axisBox->findText(QStringLiteral("x: clock"));
    axisBox->setCurrentIndex(clock);
    QCOMPARE(plot->xAxis(), ui::MetricsPlot::XAxis::WallClock);
    plot->replotNow();
    QCOMPARE(plot->pointCount("loss", 0), 10);
    const auto [lo, hi] = plot->xRange("loss");
    QVERIFY2(lo <= t0 + 30 && lo > t0 - 60 && hi >= t0 + 300 && hi < t0 + 400,
             qPrintable(QStringLiteral("%1 .. %2").arg(lo, 0, 'f', 0).arg(hi, 0, 'f', 0)));
    QVERIFY(plot->axisLabel("loss", true).startsWith("time of day"));
    plot->plot()->replot();  // the tick labels are made when it draws
    auto* axis = plot->plot()->axisRect(0)->axis(QCPAxis::atBottom);
    auto ticker = axis->ticker().dynamicCast<QCPAxisTickerDateTime>();
    QVERIFY(ticker);
    // Five minutes: the ticks read times of day to the second, the axis names the day.
    const QDateTime mid = QDateTime::fromSecsSinceEpoch(qint64(t0) + 150).toLocalTime();
    QVERIFY2(axis->tickVectorLabels().join(" ").contains(mid.toString("HH:")) &&
                 axis->tickVectorLabels().first().count(':') == 2,
             qPrintable(axis->tickVectorLabels().join(" | ")));
    QVERIFY2(plot->axisLabel("loss", true).contains(mid.toString("d MMM yyyy")),
             qPrintable(plot->axisLabel("loss", true)));
    plot->hover("loss", t0 + 150);
    const QString at = ui::wallClockText(t0 + 150);
    QVERIFY(at.startsWith(QDateTime::fromSecsSinceEpoch(qint64(t0) + 150)
                              .toLocalTime()
                              .toString("yyyy-MM-dd HH:mm")));
    QVERIFY2(plot->hoverText().contains(at), qPrintable(plot->hoverText()));
    // Three days: the day on every tick.
    plot->panTo(t0 - 86400, t0 + 2 * 86400);
    plot->plot()->replot();
    QVERIFY2(axis->tickVectorLabels().join(" ").contains(mid.toString("d MMM")),
             qPrintable(axis->tickVectorLabels().join(" | ")));
    QCOMPARE(plot->axisLabel("loss", true), QString("date and time (local)"));
    page.zoomToRun(0);
    plot->replotNow();
    const auto [zlo, zhi] = plot->xRange("loss");
    QVERIFY2(zlo < t0 + 30 && zhi > t0 + 300 && zhi - zlo < 1000,
             qPrintable(QStringLiteral("%1 .. %2").arg(zlo, 0, 'f', 0).arg(zhi, 0, 'f', 0)));

    // An older run: no time stamps; its config.json's time + elapsed_s.
    const QString old = makeRun("wall-clock-old");
    lines.clear();
    for (int it = 10; it <= 50; it += 10) lines += trainLine(it, 1.0, it * 2.0);
    append(old + "/metrics.jsonl", lines);
    QFile config(old + "/config.json");
    QVERIFY(config.open(QIODevice::ReadWrite));
    QVERIFY(config.setFileTime(QDateTime::fromSecsSinceEpoch(qint64(t0) + 1000),
                               QFileDevice::FileModificationTime));
    config.close();
    ui::MetricsPlot alone;
    alone.setMetrics({"loss"});
    const auto log = std::make_shared<foveal::core::RunLog>(old.toStdString());
    log->refresh();
    alone.setRuns({{"old", Qt::red, log, t0 + 1000}});
    alone.setXAxis(ui::MetricsPlot::XAxis::WallClock);
    alone.replotNow();
    QCOMPARE(alone.pointCount("loss", 0), 5);
    ui::MetricsPlot unknown;  // no start known: nothing to place
    unknown.setMetrics({"loss"});
    unknown.setRuns({{"old", Qt::red, log}});
    unknown.setXAxis(ui::MetricsPlot::XAxis::WallClock);
    unknown.replotNow();
    QCOMPARE(unknown.pointCount("loss", 0), 0);
  }

  // Long runs: a 300,000-iteration metrics.jsonl opens and is drawn in under 2 s on a quiet
  // machine, and a spike in it stays in the data the panel reads and in its y range (QCustomPlot's
  // adaptive sampling keeps each pixel column's minimum and maximum when drawing).
  void longRunOpensQuickly() {
    const QString dir = makeRun("long-run");
    {
      QFile f(dir + "/metrics.jsonl");
      QVERIFY(f.open(QIODevice::WriteOnly));
      QByteArray chunk;
      for (int it = 1; it <= 300000; ++it) {
        chunk += trainLine(it, it == 150000 ? 50.0 : 1.0 + 0.1 * std::sin(it * 0.01), it * 0.01);
        if (chunk.size() > (1 << 20)) {
          f.write(chunk);
          chunk.clear();
        }
      }
      f.write(chunk);
    }
    ui::MainWindow w;
    w.resize(1280, 720);
    w.show();
    auto* page = w.trainingPage();
    w.tabs()->setCurrentWidget(page);
    QElapsedTimer clock;
    clock.start();
    qint64 parse = 0;
    {
      core::RunLog alone(dir.toStdString());
      alone.refresh();
      parse = clock.elapsed();
      qInfo("the core's RunLog alone reads it in %lld ms", static_cast<long long>(parse));
    }
    clock.restart();
    page->addRunFolder(dir);
    const qint64 read = clock.elapsed();
    page->plot()->replotNow();
    const qint64 built = clock.elapsed();
    page->plot()->plot()->replot(QCustomPlot::rpImmediateRefresh);
    const qint64 ms = clock.elapsed();
    qInfo("read %lld ms, curves built %lld ms, drawn %lld ms", static_cast<long long>(read),
          static_cast<long long>(built - read), static_cast<long long>(ms - built));
    qInfo("300,000 iterations opened and drawn in %lld ms", static_cast<long long>(ms));
    QCOMPARE(page->plot()->pointCount("loss", 0), 300000);
    // What the page adds to the core's parsing (about 0.1 s on a quiet machine) stays under five
    // seconds even on a busy one: the two are timed apart; under `ctest -j2` beside the
    // packaging test the difference reached 1.07 s once and 2.27 s on a loaded VM (2026-11-28),
    // so this bound catches a page grown many times slower, not a busy machine. The whole under
    // 2 s is checked where timings mean something (FOVEAL_TIMING=1, a quiet machine).
    // Under a sanitizer (several times slower) the time says nothing; the rest still holds.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    QVERIFY2(ms - parse < 5000,
             qPrintable(QStringLiteral("%1 ms, of which parsing %2 ms").arg(ms).arg(parse)));
#endif
    if (qEnvironmentVariableIsSet("FOVEAL_TIMING"))
      QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
    // The spike is on screen: the loss panel's y range reaches it even with smoothing on.
    QVERIFY(page->plot()->valuesAt("loss", 150000).contains("50"));
    QVERIFY(page->plot()->yRange("loss").second >= 50);
    clock.restart();
    for (int i = 0; i < 5; ++i) page->plot()->plot()->replot(QCustomPlot::rpImmediateRefresh);
    qInfo("a redraw takes %lld ms", static_cast<long long>(clock.elapsed() / 5));
  }

  // Beside the runs list: the settings that differ between the ticked runs, sortable, with each
  // run's best accuracy; settings every run shares are left out.
  void settingsThatDifferBetweenRuns() {
    auto config = [](int batch, int seed) {
      return QStringLiteral(
                 "{\"preset\":\"digits-soft\",\"model\":{\"attention\":\"soft\","
                 "\"width\":0.125},\"iterations\":200,\"batch_size\":%1,\"seed\":%2}")
          .arg(batch)
          .arg(seed)
          .toUtf8();
    };
    const QString a = makeRun("settings-a", false), b = makeRun("settings-b", false),
                  c = makeRun("settings-c", false);
    append(a + "/config.json", config(64, 1));
    append(b + "/config.json", config(8, 1));
    append(c + "/config.json", config(192, 2));
    append(a + "/metrics.jsonl", evalLine(10, 0.7, 1));
    append(b + "/metrics.jsonl", evalLine(10, 0.9, 1));
    ui::TrainingPage page;
    for (const QString& dir : {a, b, c}) page.addRunFolder(dir);
    auto* settings = page.settings();
    QAbstractItemModelTester tester(settings,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(settings->settingKeys(), QStringList({"batch_size", "seed"}));
    QCOMPARE(settings->rowCount(), 3);
    QCOMPARE(settings->headerData(3, Qt::Horizontal).toString(), QString("Best acc."));
    QCOMPARE(settings->data(settings->index(1, 3)).toString(), QString("90.00%"));
    // Sorted by batch size: numerically (8, 64, 192), not as text.
    auto* view = page.settingsView();
    view->sortByColumn(1, Qt::AscendingOrder);
    QStringList order;
    for (int r = 0; r < 3; ++r) order << view->model()->index(r, 0).data().toString();
    QCOMPARE(order, QStringList({"settings-b", "settings-a", "settings-c"}));
    // Unticking the only run with seed 2 leaves batch size as the one difference.
    page.runs()->setData(page.runs()->index(2, ui::RunListModel::Name), Qt::Unchecked,
                         Qt::CheckStateRole);
    QCOMPARE(settings->settingKeys(), QStringList({"batch_size"}));
  }

  // Scrubbing a run's checkpoints: every latest.fvm the preview read while following the run is
  // kept, and the slider shows an earlier one (the newest is followed only while at the end).
  void previewKeepsEveryCheckpointRead() {
    const QString dir = makeRun("scrub");
    ui::LivePreview preview;
    preview.setRun(dir, QStringLiteral("digits:len=5,split=test,seed=1"));
    const QString models = QStringLiteral(FOVEAL_SAMPLES_DIR "/models/");
    const char* files[] = {"soft.fvm", "hard.fvm", "sharp-chain.fvm"};
    for (int k = 0; k < 3; ++k) {
      QFile::remove(dir + "/latest.fvm");
      QVERIFY(QFile::copy(models + files[k], dir + "/latest.fvm"));
      // A new time stamp even within the same second.
      QFile f(dir + "/latest.fvm");
      QVERIFY(f.open(QIODevice::ReadWrite));
      QVERIFY(f.setFileTime(QDateTime::currentDateTime().addSecs(k + 1),
                            QFileDevice::FileModificationTime));
      f.close();
      preview.checkForUpdate();
      QTRY_VERIFY_WITH_TIMEOUT(preview.historySize() == k + 1 && !preview.isBusy(), 60000);
      if (k == 1) preview.showHistory(0);  // scrubbed back: the next one does not jump ahead
    }
    QCOMPARE(preview.historyIndex(), 0);
    QVERIFY(preview.historySlider()->isVisibleTo(&preview));
    QCOMPARE(preview.historySlider()->maximum(), 2);
    QCOMPARE(preview.trace()->modelKind, std::string("soft"));
    preview.historySlider()->setValue(2);
    QCOMPARE(preview.trace()->modelKind, std::string("sharp"));
    QVERIFY(preview.statusText().contains("checkpoint 3 of 3"));
  }

  // A finished run's checkpoint history (history/iter-N.fvm, written by the trainer): the slider
  // lists every file, oldest first, before any is read; each is traced when shown; a latest.fvm
  // newer than the history's last file comes after it; a file the trainer thinned out leaves.
  void previewScrubsTheRunsHistory() {
    const QString dir = makeRun("history");
    QVERIFY(QDir(dir).mkpath("history"));
    const QString models = QStringLiteral(FOVEAL_SAMPLES_DIR "/models/");
    const QDateTime t0 = QDateTime::currentDateTime().addSecs(-100);
    auto place = [&](const QString& from, const QString& to, int secs) {
      QVERIFY(QFile::copy(models + from, dir + "/" + to));
      QFile f(dir + "/" + to);
      QVERIFY(f.open(QIODevice::ReadWrite));
      QVERIFY(f.setFileTime(t0.addSecs(secs), QFileDevice::FileModificationTime));
    };
    place("sharp-chain.fvm", "latest.fvm", 30);  // as old as the last history file: not listed
    place("soft.fvm", "history/iter-000001000.fvm", 10);
    place("hard.fvm", "history/iter-000002000.fvm", 20);
    place("sharp-chain.fvm", "history/iter-000003000.fvm", 30);
    QFile::copy(models + "soft.fvm", dir + "/history/notes.fvm");  // not a history name: ignored
    ui::LivePreview preview;
    preview.show();
    preview.setRun(dir, QStringLiteral("digits:len=5,split=test,seed=1"));
    QCOMPARE(preview.historySize(), 3);
    QCOMPARE(preview.historyLabels(),
             QStringList({"iteration 1000", "iteration 2000", "iteration 3000"}));
    QVERIFY(preview.historySlider()->isVisible());
    QCOMPARE(preview.historyIndex(), 2);  // the newest
    QTRY_VERIFY_WITH_TIMEOUT(preview.trace() != nullptr && !preview.isBusy(), 60000);
    QCOMPARE(preview.trace()->modelKind, std::string("sharp"));
    QVERIFY2(preview.statusText().contains("iteration 3000"), qPrintable(preview.statusText()));
    preview.historySlider()->setValue(0);  // scrubbed back: the soft model of iteration 1000
    QTRY_VERIFY_WITH_TIMEOUT(preview.trace()->modelKind == "soft" && !preview.isBusy(), 60000);
    QVERIFY2(preview.statusText().contains("iteration 1000") &&
                 preview.statusText().contains("checkpoint 1 of 3"),
             qPrintable(preview.statusText()));
    preview.showHistory(1);
    QTRY_VERIFY_WITH_TIMEOUT(preview.trace()->modelKind == "hard" && !preview.isBusy(), 60000);
    const int traced = preview.tracesDone();
    preview.showHistory(0);  // read before: shown at once, not traced again
    QCOMPARE(preview.trace()->modelKind, std::string("soft"));
    QCOMPARE(preview.tracesDone(), traced);
    // The trainer thins the history and writes a newer latest.fvm: the slider follows the folder
    // and stays on the checkpoint it showed.
    QVERIFY(QFile::remove(dir + "/history/iter-000002000.fvm"));
    QFile::remove(dir + "/latest.fvm");
    place("hard.fvm", "latest.fvm", 50);
    preview.checkForUpdate();
    QTRY_VERIFY_WITH_TIMEOUT(preview.historySize() == 3 && !preview.isBusy(), 60000);
    QCOMPARE(preview.historyLabels().mid(0, 2), QStringList({"iteration 1000", "iteration 3000"}));
    QVERIFY(preview.historyLabels().at(2).startsWith("latest.fvm"));
    QCOMPARE(preview.historyIndex(), 0);
    QCOMPARE(preview.trace()->modelKind, std::string("soft"));
    // A history file that cannot be read says so, naming it.
    {
      QFile f(dir + "/history/iter-000004000.fvm");
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("not a model");
      f.close();
      QVERIFY(f.open(QIODevice::ReadWrite));
      QVERIFY(f.setFileTime(t0.addSecs(45), QFileDevice::FileModificationTime));
    }
    preview.checkForUpdate();
    QTRY_COMPARE(preview.historySize(), 4);
    preview.showHistory(2);  // iteration 4000 sorts before the newer latest.fvm
    QTRY_VERIFY_WITH_TIMEOUT(preview.statusText().contains("iter-000004000.fvm"), 60000);
  }

  // Long runs are explored by dragging and zooming the shared x axis: every panel follows, the
  // view stays while records arrive, and a double-click (or All) shows every run again.
  void curvesPanAndZoomTogether() {
    const QString dir = makeFinishedRun("pan", 0.2, 200);  // 1,000 iterations
    ui::TrainingPage page;
    page.addRunFolder(dir);
    auto* plot = page.plot();
    plot->replotNow();
    QVERIFY(plot->metrics().size() >= 2);
    const QString first = plot->metrics()[0], second = plot->metrics()[1];
    QVERIFY(plot->xRange(first).second > 1000);
    plot->panTo(200, 400);
    QCOMPARE(plot->xRange(second), std::make_pair(200.0, 400.0));  // the other panel follows
    append(dir + "/metrics.jsonl", trainLine(1005, 0.3, 1005));
    page.refreshNow();
    plot->replotNow();
    QCOMPARE(plot->xRange(first), std::make_pair(200.0, 400.0));  // kept across the update
    plot->zoomTo(0);
    plot->replotNow();
    QVERIFY(plot->xRange(first).first == 0 && plot->xRange(first).second > 1000);
  }
};

QTEST_MAIN(TestTraining)
#include "test_training.moc"
