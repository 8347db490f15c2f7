// Doubtful steps in the window (issue 67): the doubt setting flags the steps on the doubtful side
// of its threshold, by a single signal or by the combined score of an `eval --doubt --json`
// report; the Inspector's strip and image and every Compare card mark them, the summaries count
// them, and the Errors page sorts its rows by their worst step's doubt. With FOVEAL_SCREENSHOT_DIR
// set: inspector-doubt.png, compare-doubt.png and errors-doubt.png at 1366x768 on the shipped
// models.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QtTest/QtTest>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "compare_page.h"
#include "compare_summary_model.h"
#include "data/dataset_factory.h"
#include "doubt_marks.h"
#include "error_filter_model.h"
#include "error_table_model.h"
#include "errors_page.h"
#include "inspector_page.h"
#include "main_window.h"
#include "model_list_model.h"
#include "patch_strip.h"
#include "qt_convert.h"
#include "reading_document.h"
#include "test_models.h"
#include "trace/doubt_signals.h"
#include "trace/model_session.h"
#include "trace_view.h"
#include "train/doubt_eval.h"
#include "train/error_analysis.h"

using namespace foveal;

namespace {

// Four steps whose tokens' probabilities are 0.99, 0.55, 0.8 and 0.3, each with a top-2.
core::Trace handTrace() {
  core::Trace t;
  t.modelKind = "soft";
  t.prediction = "1234";
  const double probs[] = {0.99, 0.55, 0.8, 0.3};
  for (int i = 0; i < 4; ++i) {
    core::TraceStep s;
    s.token = std::string(1, char('1' + i));
    s.prob = probs[i];
    s.topk = {{s.token, 1 + i, probs[i]}, {"x", 0, (1 - probs[i]) / 2}};
    t.steps.push_back(s);
  }
  return t;
}

std::vector<bool> expectedBelow(const core::Trace& t, double threshold) {
  std::vector<bool> v;
  for (const auto& s : t.steps) v.push_back(s.prob <= threshold);
  return v;
}

void writeText(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text);
}

}  // namespace

class TestDoubtMarks : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_models[2];
  QString m_image = QStringLiteral(FOVEAL_SAMPLES_DIR) + "/images/digits-46214.png";

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTestDoubt"));
    QSettings().clear();
    const char* kinds[] = {"soft", "hard"};
    for (int i = 0; i < 2; ++i) {
      m_models[i] = m_dir.filePath(QString("%1.fvm").arg(kinds[i]));
      core::ModelSession::create(test::tinyConfig(kinds[i]), 11 + i)
          ->save(m_models[i].toStdString());
    }
  }
  void init() { ui::DoubtMarks::instance().setMarking({}); }

  // A low-is-doubtful signal flags at or below the threshold, a high-is-doubtful one at or above;
  // no marks while off, and none (with the reason) for a signal the reading lacks.
  void stepsAreFlaggedOnTheDoubtfulSide() {
    const core::Trace t = handTrace();
    QString why;
    QVERIFY(ui::doubtfulSteps(t, {}, nullptr, &why).empty());
    std::vector<double> values;
    QCOMPARE(ui::doubtfulSteps(t, {QStringLiteral("probability"), 0.8}, nullptr, &why, &values),
             expectedBelow(t, 0.8));
    QCOMPARE(values.size(), size_t(4));
    QCOMPARE(values[3], 0.3);
    QCOMPARE(ui::doubtfulSteps(t, {QStringLiteral("probability"), 0.2}, nullptr),
             std::vector<bool>(4, false));
    // Output entropy: high is doubtful, and the 0.3 step is the most uncertain one.
    const auto entropy = core::doubtSignals(t);
    const int h = entropy.indexOf("output_entropy");
    QVERIFY(h >= 0);
    const double h3 = entropy.values[size_t(h)][3];
    const auto flags = ui::doubtfulSteps(t, {QStringLiteral("output_entropy"), h3}, nullptr);
    QCOMPARE(flags, (std::vector<bool>{false, false, false, true}));
    QVERIFY(
        ui::doubtfulSteps(t, {QStringLiteral("attention_entropy"), 1.0}, nullptr, &why).empty());
    QVERIFY2(why.contains(QStringLiteral("attention_entropy")), qPrintable(why));
    QVERIFY(ui::lowIsDoubtful(QStringLiteral("margin")));
    QVERIFY(!ui::lowIsDoubtful(QStringLiteral("output_entropy")));
    QVERIFY(ui::doubtSignalChoices().front().first.isEmpty());
  }

  // The combined score of a report: P(wrong) = sigmoid(b + w (logit(p) - mean) / sd), computed
  // here by hand; the report's model is matched by its file name; bad files are named.
  void combinedScoreFromAnEvalReport() {
    const QString report = m_dir.filePath(QStringLiteral("doubt.json"));
    writeText(report, R"([{"model": "runs/soft.fvm", "dataset": "digits:len=7",
      "signals": [], "combined": {"fitted": true, "bias": -1.5, "iterations": 5,
      "weights": [{"signal": "probability", "feature": "logit", "weight": -2.0,
                   "mean": 3.0, "sd": 2.0}]}},
      {"model": "other.fvm", "dataset": "d", "signals": [],
       "combined": {"fitted": false, "why": "no wrong step"}}])");
    const auto combined = core::train::readCombinedDoubt(report.toStdString());
    QCOMPARE(combined.size(), size_t(1));  // the unfitted one is left out
    QCOMPARE(combined[0].signals, std::vector<std::string>{"probability"});
    const core::Trace t = handTrace();
    const auto p = core::train::combinedDoubt(combined[0], core::doubtSignals(t));
    QCOMPARE(p.size(), size_t(4));
    for (size_t i = 0; i < 4; ++i) {
      const double x = std::log(t.steps[i].prob / (1 - t.steps[i].prob));
      const double want = 1 / (1 + std::exp(-(-1.5 - 2.0 * (x - 3.0) / 2.0)));
      QVERIFY2(std::abs(p[i] - want) < 1e-9, qPrintable(QString::number(p[i])));
    }
    auto& marks = ui::DoubtMarks::instance();
    marks.loadCombined(report);
    QVERIFY(marks.combinedFor(m_dir.filePath(QStringLiteral("soft.fvm"))));
    QVERIFY(!marks.combinedFor(m_dir.filePath(QStringLiteral("hard.fvm"))));
    marks.setMarking({ui::kCombinedDoubt, 0.5});
    std::vector<bool> want;
    for (double v : p) want.push_back(v >= 0.5);
    QCOMPARE(marks.flags(t, m_dir.filePath(QStringLiteral("soft.fvm"))), want);
    QString why;
    QVERIFY(marks.flags(t, m_dir.filePath(QStringLiteral("hard.fvm")), &why).empty());
    QVERIFY2(why.contains(QStringLiteral("combined")), qPrintable(why));

    // Files that are not such a report: named, with what is wrong, and the scores held stay.
    const QString notJson = m_dir.filePath(QStringLiteral("bad.json"));
    writeText(notJson, "{\"model\": ");
    const QString noWeights = m_dir.filePath(QStringLiteral("weights.json"));
    writeText(noWeights, R"([{"model": "a", "signals": [], "combined": {"fitted": true,
      "bias": 1, "weights": [{"signal": "margin", "weight": "x", "mean": 0, "sd": 1}]}}])");
    for (const QString& bad : {notJson, noWeights, m_dir.filePath(QStringLiteral("gone.json"))}) {
      try {
        marks.loadCombined(bad);
        QFAIL(qPrintable(bad + " was accepted"));
      } catch (const core::Error& e) {
        QVERIFY2(QString::fromStdString(e.what()).contains(bad), e.what());
      }
    }
    QVERIFY(marks.combinedFor(m_dir.filePath(QStringLiteral("soft.fvm"))));
    QCOMPARE(marks.combinedFile(), report);
  }

  // The Inspector marks on its strip and image the steps the setting flags, says so in the step's
  // text and the summary, and follows the setting; Compare marks every card and counts them.
  void inspectorAndCompareMarkTheFlaggedSteps() {
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    for (const auto& m : m_models) QVERIFY(w.openModel(m));
    QVERIFY(w.openImage(m_image));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0 && w.trace() && !w.isTracing() &&
                                 w.comparePage()->columnCount() == 2,
                             60000);
    const auto trace = w.trace();
    QVERIFY(!trace->steps.empty());
    auto* strip = w.inspector()->patchStrip();
    QVERIFY(strip->doubtful().empty());
    const QImage plain = strip->render();
    // A threshold between the steps' probabilities: those at or below it are marked.
    std::vector<double> probs;
    for (const auto& s : trace->steps) probs.push_back(s.prob);
    std::sort(probs.begin(), probs.end());
    const double threshold = probs[probs.size() / 2];
    // The toolbar's Doubt box: the Inspector's controls are in the window's toolbar.
    auto* box = w.findChild<QComboBox*>(QStringLiteral("doubtSignal"));
    QVERIFY(box);
    QVERIFY(box->isVisible());
    ui::DoubtMarks::instance().setMarking({QStringLiteral("probability"), threshold});
    QCOMPARE(box->currentData().toString(), QStringLiteral("probability"));
    QCOMPARE(strip->doubtful(), expectedBelow(*trace, threshold));
    QCOMPARE(w.traceView()->doubtful(), strip->doubtful());
    QVERIFY(strip->render() != plain);
    const auto& flags = strip->doubtful();
    const int flagged = int(std::find(flags.begin(), flags.end(), true) - flags.begin());
    QVERIFY(flagged < int(flags.size()));
    w.setStep(flagged);
    QVERIFY2(w.inspector()->stepText().contains(QStringLiteral("doubtful")),
             qPrintable(w.inspector()->stepText()));
    const int n = int(std::count(flags.begin(), flags.end(), true));
    const auto* summary = w.inspector()->findChild<QLabel*>(QStringLiteral("readingSummary"));
    QVERIFY2(summary->text().contains(QStringLiteral("%1 doubtful").arg(n)),
             qPrintable(summary->text()));

    // Compare: each card marks its own reading's steps, the summary counts them.
    auto* compare = w.comparePage();
    auto* rows = compare->summary();
    for (int c = 0; c < compare->columnCount(); ++c) {
      const auto& marked = compare->traceView(c)->doubtful();
      const QString count =
          rows->data(rows->index(c, ui::CompareSummaryModel::Doubtful)).toString();
      QCOMPARE(count, QStringLiteral("%1 of %2")
                          .arg(std::count(marked.begin(), marked.end(), true))
                          .arg(marked.size()));
      auto* cardStrip = compare->card(c)->findChild<ui::PatchStrip*>();
      QCOMPARE(cardStrip->doubtful(), marked);
    }
    // Off again: no marks anywhere.
    ui::DoubtMarks::instance().setMarking({});
    QVERIFY(strip->doubtful().empty());
    QVERIFY(compare->traceView(0)->doubtful().empty());
    QCOMPARE(rows->data(rows->index(0, ui::CompareSummaryModel::Doubtful)).toString(),
             QStringLiteral("–"));
    QCOMPARE(strip->render(), plain);
  }

  // The Errors page's "lowest p" column is the lowest probability any step of the reading gave
  // its token (the same as the reading's trace says), and "Doubtful first" puts the lowest on top.
  void errorsRowsSortByTheirWorstStep() {
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    // An attention model and a CTC one (whose characters are their runs' best frames).
    const QString crnn = QStringLiteral(FOVEAL_SAMPLES_DIR) + "/models/crnn.fvm";
    QVERIFY(w.openModel(m_models[0]));
    QVERIFY(w.openModel(crnn));
    QTRY_VERIFY_WITH_TIMEOUT(
        w.models()->loadingCount() == 0 && w.errorsPage()->models().size() == 2, 30000);
    auto* page = w.errorsPage();
    QSignalSpy analysed(page, &ui::ErrorsPage::analysed);
    page->setDataset(QStringLiteral("digits:len=4,split=test,seed=3"));
    page->setLimit(24);
    QVERIFY(page->analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1, 120000);
    const auto* analysis = page->table()->analysis();
    QVERIFY(analysis);
    QCOMPARE(analysis->models.size(), size_t(2));
    // Against the trace of the same image: the batched reading's worst step is the trace's.
    auto data = core::data::openDataset("digits:len=4,split=test,seed=3");
    for (size_t m = 0; m < 2; ++m) {
      const auto& readings = analysis->models[m].readings;
      QCOMPARE(readings.size(), size_t(24));
      auto session = core::ModelSession::open(analysis->models[m].model);
      for (size_t k = 0; k < 6; ++k) {
        const auto sample = data->get(readings[k].index);
        const core::Trace t = session->trace(sample.image, "test");
        double lowest = std::numeric_limits<double>::quiet_NaN();
        for (const auto& s : t.steps)
          if (s.token != "<end>" || !t.isCtc())
            lowest = std::isnan(lowest) ? s.prob : std::min(lowest, s.prob);
        if (std::isnan(lowest)) {
          QVERIFY(std::isnan(readings[k].lowestStepProbability));
          continue;
        }
        QVERIFY2(std::abs(readings[k].lowestStepProbability - lowest) < 1e-4,
                 qPrintable(QStringLiteral("%1, image %2: %3 against %4")
                                .arg(QString::fromStdString(analysis->models[m].model))
                                .arg(k)
                                .arg(readings[k].lowestStepProbability)
                                .arg(lowest)));
      }
    }
    const auto& readings = analysis->models[0].readings;
    page->sortByDoubt();
    auto* view = page->view();
    const int column = page->table()->column(0, ui::ErrorTableModel::Doubt);
    double previous = -1;
    for (int r = 0; r < view->model()->rowCount(); ++r) {
      const double v = view->model()
                           ->data(view->model()->index(r, column), ui::ErrorTableModel::SortRole)
                           .toDouble();
      QVERIFY(v >= previous);
      previous = v;
    }
    double lowest = 2;
    for (const auto& r : readings) lowest = std::min(lowest, r.lowestStepProbability);
    QCOMPARE(view->model()
                 ->data(view->model()->index(0, column), ui::ErrorTableModel::SortRole)
                 .toDouble(),
             lowest);
  }

  // The documentation's screenshots with the shipped models at 1366x768.
  void doubtScreenshots() {
    if (!qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) QSKIP("FOVEAL_SCREENSHOT_DIR not set");
    const QString dir = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR");
    const QString models = QStringLiteral(FOVEAL_SAMPLES_DIR) + "/models/";
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.resize(1366, 768);
    w.show();
    for (const char* name : {"soft", "sharp-chain", "crnn"})
      QVERIFY(w.openModel(models + name + ".fvm"));
    // The first rotated 13-digit test image on which soft (inspected) has a doubtful step and
    // reads wrong: what the marks are for.
    ui::DoubtMarks::instance().setMarking({QStringLiteral("margin"), 0.8});
    auto data = core::data::openDataset("digits:len=13,rotated,split=test,seed=1");
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 60000);
    w.document()->inspect(w.models()->idAt(0));
    for (size_t k = 0; k < 60; ++k) {
      const auto sample = data->get(k);
      const QString image = m_dir.filePath(QStringLiteral("rotated-%1.png").arg(k));
      QVERIFY(ui::toQImage(sample.image).save(image));
      QVERIFY(w.openImage(image));
      w.setTruth(QString::fromStdString(sample.label));
      QTRY_VERIFY_WITH_TIMEOUT(w.trace() && !w.isTracing() && w.comparePage()->columnCount() == 3,
                               60000);
      const auto& flags = w.inspector()->patchStrip()->doubtful();
      if (w.trace()->prediction != sample.label && std::count(flags.begin(), flags.end(), true) > 0)
        break;
    }
    const auto& flags = w.inspector()->patchStrip()->doubtful();
    const auto first = std::find(flags.begin(), flags.end(), true);
    w.setStep(first == flags.end() ? 0 : int(first - flags.begin()));
    QTest::qWait(300);
    QVERIFY(w.grab().save(dir + "/inspector-doubt.png"));
    w.tabs()->setCurrentWidget(w.comparePage());
    QTest::qWait(300);
    QVERIFY(w.grab().save(dir + "/compare-doubt.png"));
    w.tabs()->setCurrentWidget(w.errorsPage());
    auto* page = w.errorsPage();
    QSignalSpy analysed(page, &ui::ErrorsPage::analysed);
    page->setDataset(QStringLiteral("digits:len=13,rotated,split=test,seed=1"));
    page->setLimit(300);
    QVERIFY(page->analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1, 300000);
    page->setFocusModel(0);
    page->sortByDoubt();
    QTest::qWait(300);
    QVERIFY(w.grab().save(dir + "/errors-doubt.png"));
  }

  // Issue 64's look at an EasyOCR reading in the Inspector (its patch strip): the fixture's
  // english_g2-shaped recogniser on a 260x64 line.
  void easyocrScreenshot() {
    if (!qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) QSKIP("FOVEAL_SCREENSHOT_DIR not set");
    const QString dir = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR");
    const QString data = QStringLiteral(FOVEAL_SOURCE_DIR "/tests/data/easyocr/");
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openModel(data + "english_g2.pth"));
    QVERIFY(w.openImage(data + "img02_260x64.png"));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0 && w.trace() && !w.isTracing(), 60000);
    w.setStep(1);
    QTest::qWait(300);
    QVERIFY(w.grab().save(dir + "/inspector-easyocr.png"));
  }
};

QTEST_MAIN(TestDoubtMarks)
#include "test_doubt_marks.moc"
