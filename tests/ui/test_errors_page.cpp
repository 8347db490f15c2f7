// The Errors page under the offscreen platform: its item models pass QAbstractItemModelTester
// and filter and sort as the figures say; a cancelled analysis leaves no row; clicking a
// confusion-matrix cell shows the images behind it; double-clicking a row opens the inspector
// (compare with several models); exports are written; the page's screenshots on the shipped
// models when FOVEAL_SCREENSHOT_DIR is set.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QtTest/QtTest>
#include <cmath>
#include <set>

#include "compare_page.h"
#include "compare_summary_model.h"
#include "confusion_view.h"
#include "data/dataset_factory.h"
#include "dataset_browser.h"
#include "error_filter_model.h"
#include "error_table_model.h"
#include "errors_page.h"
#include "inspector_page.h"
#include "main_window.h"
#include "model_list_model.h"
#include "model_names.h"
#include "patch_strip.h"
#include "test_models.h"
#include "trace/attribution.h"
#include "trace/model_session.h"
#include "train/error_analysis.h"

using namespace foveal;
using core::train::ImageReading;

namespace {

ImageReading reading(size_t index, const std::string& truth, const std::string& read,
                     double confidence) {
  ImageReading r;
  r.index = index;
  r.entry = "entry " + std::to_string(index);
  r.truth = truth;
  r.reading = read;
  r.confidence = confidence;
  r.entropy = 1.0 - confidence;
  return r;
}

// Two models over six entries; model b skipped entry 5.
std::shared_ptr<const core::train::ErrorAnalysis> handAnalysis() {
  auto a = std::make_shared<core::train::ErrorAnalysis>();
  a->dataset = "hand";
  a->description = "hand-built";
  a->models.push_back(
      core::train::analyseReadings("/m/a.fvm",
                                   {reading(0, "123", "123", 0.9), reading(1, "173", "113", 0.4),
                                    reading(2, "7777", "1111", 0.2), reading(3, "45", "45", 0.8),
                                    reading(4, "12", "172", 0.5), reading(5, "99", "9", 0.1)},
                                   false));
  a->models.push_back(core::train::analyseReadings(
      "/m/b.fvm",
      {reading(0, "123", "123", 0.95), reading(1, "173", "173", 0.7),
       reading(2, "7777", "7771", 0.3), reading(3, "45", "46", 0.6), reading(4, "12", "12", 0.9)},
      false));
  return a;
}

}  // namespace

class TestErrorsPage : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_models[2];

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTestErrors"));
    QSettings().clear();
    const char* kinds[] = {"soft", "hard"};
    for (int i = 0; i < 2; ++i) {
      m_models[i] = m_dir.filePath(QString("%1.fvm").arg(kinds[i]));
      core::ModelSession::create(test::tinyConfig(kinds[i]), 7 + i)
          ->save(m_models[i].toStdString());
    }
  }

  void modelsFilterAndSort() {
    ui::ErrorTableModel table;
    ui::ErrorFilterModel filter;
    QAbstractItemModelTester t1(&table, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(&filter, QAbstractItemModelTester::FailureReportingMode::QtTest);
    filter.setTable(&table);
    table.setAnalysis(handAnalysis(), nullptr);
    QCOMPARE(table.rowCount(), 6);
    QCOMPARE(table.modelCount(), 2);
    QCOMPARE(table.columnCount(), 4 + 2 * 7 + 1);
    QCOMPARE(table.rightColumn(), 6);  // after the two readings
    QCOMPARE(table.column(1, ui::ErrorTableModel::Reading), 5);
    QCOMPARE(table.column(0, ui::ErrorTableModel::Confidence), 7);
    QCOMPARE(table.column(1, ui::ErrorTableModel::Doubt), 10);  // beside the confidence
    QCOMPARE(table.column(1, ui::ErrorTableModel::Entropy), 16);
    for (int c = 4; c < table.columnCount(); ++c)  // every column named, none twice
      for (int d = c + 1; d < table.columnCount(); ++d)
        QVERIFY(table.headerData(c, Qt::Horizontal) != table.headerData(d, Qt::Horizontal));
    QCOMPARE(table.data(table.index(5, table.column(1, ui::ErrorTableModel::Reading))).toString(),
             QStringLiteral("—"));  // b skipped it
    QCOMPARE(table.data(table.index(1, table.rightColumn())).toString(), QStringLiteral("1/2"));
    QCOMPARE(table.data(table.index(5, table.rightColumn())).toString(), QStringLiteral("0/1"));
    QCOMPARE(table.data(table.index(2, table.column(0, ui::ErrorTableModel::Cer))).toString(),
             QStringLiteral("1.000"));
    QCOMPARE(table.data(table.index(2, ui::ErrorTableModel::Length)).toInt(), 4);
    QVERIFY(table.headerData(table.column(1, ui::ErrorTableModel::Confidence), Qt::Horizontal)
                .toString()
                .contains("b"));

    QCOMPARE(filter.rowCount(), 6);
    filter.setStatus(ui::ErrorFilterModel::Wrong);  // by a: entries 1, 2, 4, 5
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{1, 2, 4, 5}));
    filter.setFocusModel(1);  // by b: 2, 3 (5 was skipped, not misread)
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{2, 3}));
    filter.setStatus(ui::ErrorFilterModel::Right);
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{0, 1, 4}));
    filter.setStatus(ui::ErrorFilterModel::WrongByAll);
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{2, 5}));
    filter.setStatus(ui::ErrorFilterModel::Disagree);
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{1, 3, 4}));
    filter.setStatus(ui::ErrorFilterModel::WrongByAny);
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{1, 2, 3, 4, 5}));
    filter.setLengthRange(3, 0);  // at least 3 characters
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{1, 2}));
    filter.setLengthRange(0, 2);
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{3, 4, 5}));
    filter.setLengthRange(0, 0);
    filter.setText(QStringLiteral("17"));  // in a's reading of entry 4 or the truth of 1
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{1, 4}));
    filter.setText({});

    // Confusions are the focus model's: a read 7 as 1 in entries 1 and 2, b in entry 2.
    filter.setStatus(ui::ErrorFilterModel::All);
    filter.setFocusModel(0);
    QVERIFY(filter.setConfusion("7", "1"));
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{1, 2}));
    QCOMPARE(filter.confusionText(), QStringLiteral("truth \"7\" read as \"1\""));
    QVERIFY(filter.setConfusion("", "7"));  // a inserted a 7 in entry 4
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{4}));
    QVERIFY(filter.setConfusion("9", ""));  // and dropped a 9 in entry 5
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{5}));
    QVERIFY(!filter.setConfusion("4", "7"));  // never happens: the filter stays
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{5}));
    filter.setFocusModel(1);  // another model's matrix: the cell filter goes
    QVERIFY(!filter.hasConfusion());
    QVERIFY(filter.setConfusion("7", "1"));
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{2}));
    filter.clearConfusion();
    QCOMPARE(filter.rowCount(), 6);

    // Sorting by numbers, not by their text; skipped cells sort below every value.
    filter.setFocusModel(0);
    filter.sort(table.column(0, ui::ErrorTableModel::Confidence), Qt::DescendingOrder);
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{0, 3, 4, 1, 2, 5}));
    filter.sort(table.column(1, ui::ErrorTableModel::Edits), Qt::AscendingOrder);
    QCOMPARE(filter.shownEntries().front(), size_t(5));  // skipped (-1) first
    const auto byEdits = filter.shownEntries();
    QCOMPARE(std::set<size_t>(byEdits.end() - 2, byEdits.end()), (std::set<size_t>{2, 3}));
    filter.sort(table.column(0, ui::ErrorTableModel::Cer), Qt::DescendingOrder);
    QCOMPARE(filter.shownEntries().front(), size_t(2));  // CER 1.0
    filter.sort(table.rightColumn(), Qt::AscendingOrder);
    QCOMPARE(filter.shownEntries().front(), size_t(2));  // 0/2 (or 5's 0/1)
    filter.sort(ui::ErrorTableModel::Truth, Qt::AscendingOrder);
    QCOMPARE(filter.shownEntries(), (std::vector<size_t>{4, 0, 1, 3, 2, 5}));

    // A new analysis resets the rows and forgets the confusion filter.
    QVERIFY(filter.setConfusion("7", "1"));
    table.setAnalysis(handAnalysis(), nullptr);
    QVERIFY(!filter.hasConfusion());
    QCOMPARE(filter.rowCount(), 6);
    table.clear();
    QCOMPARE(filter.rowCount(), 0);
  }

  // A cancelled analysis shows no row, not even those of the batches it had read, and the page
  // runs the next analysis to the end.
  void cancelledAnalysisLeavesNoRows() {
    ui::ErrorsPage page;
    page.resize(1100, 650);
    page.show();
    QAbstractItemModelTester tester(page.filter(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy analysed(&page, &ui::ErrorsPage::analysed);
    page.setModels({m_models[0]});
    page.setDataset(QStringLiteral("digits:len=5,split=test,seed=2"));
    page.setLimit(60);
    QVERIFY(page.analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1, 60000);
    QCOMPARE(page.table()->rowCount(), 60);

    page.setLimit(20000);
    QVERIFY(page.analyse());
    QCOMPARE(page.table()->rowCount(), 0);  // the old rows go at once
    QTRY_VERIFY_WITH_TIMEOUT(page.findChild<QProgressBar*>()->value() > 0, 60000);
    page.cancel();
    QVERIFY(!page.isRunning());
    QTest::qWait(300);  // anything the worker posted arrives now, and must be dropped
    QCOMPARE(page.table()->rowCount(), 0);
    QCOMPARE(page.filter()->rowCount(), 0);
    QCOMPARE(analysed.count(), 1);
    QVERIFY(page.statusText().contains("cancelled"));
    QVERIFY(page.confusionView()->matrix().symbols().empty());
    QCOMPARE(page.lengthTable()->rowCount(), 0);

    page.setLimit(30);
    QVERIFY(page.analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 2, 60000);
    QCOMPARE(page.table()->rowCount(), 30);
  }

  // A dataset that cannot be opened is named; entries a model cannot read are counted, with the
  // reason, in the status line.
  void failuresAreNamed() {
    ui::ErrorsPage page;
    QSignalSpy failed(&page, &ui::ErrorsPage::failed);
    QSignalSpy analysed(&page, &ui::ErrorsPage::analysed);
    QVERIFY(!page.analyse());  // no model yet
    QVERIFY(failed.last().at(0).toString().contains("No model"));
    page.setModels({m_models[0]});
    page.setDataset(m_dir.filePath("no-such-dataset"));
    QVERIFY(page.analyse());
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 2, 30000);
    QVERIFY2(failed.last().at(0).toString().contains("no-such-dataset"),
             qPrintable(failed.last().at(0).toString()));
    QVERIFY(page.statusText().contains("no-such-dataset"));
    QVERIFY(!page.isRunning());
    QCOMPARE(page.table()->rowCount(), 0);

    // Three labels: one readable, one outside the digits, one longer than the model reads.
    const QString folder = m_dir.filePath("mixed");
    QVERIFY(QDir().mkpath(folder));
    QImage img(100, 32, QImage::Format_Grayscale8);
    img.fill(180);
    QFile gt(folder + "/gt.txt");
    QVERIFY(gt.open(QIODevice::WriteOnly));
    const char* labels[] = {"123", "12b", "12345678"};
    for (int i = 0; i < 3; ++i) {
      QVERIFY(img.save(folder + QStringLiteral("/%1.png").arg(i)));
      gt.write(QStringLiteral("%1.png\t%2\n").arg(i).arg(labels[i]).toUtf8());
    }
    gt.close();
    page.setDataset(folder);
    QVERIFY(page.analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1, 30000);
    QCOMPARE(page.table()->rowCount(), 1);
    QVERIFY2(page.statusText().contains("skipped 2 entries"), qPrintable(page.statusText()));
    QVERIFY2(page.statusText().contains("outside the charset"), qPrintable(page.statusText()));
  }

  // Issue 64: the banner of a failed analysis goes when the next analysis succeeds; another
  // topic's message (an image that could not be read) stays.
  void analysisBannerEndsWithTheNextSuccess() {
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    QVERIFY(w.openModel(m_models[0]));
    QTRY_VERIFY_WITH_TIMEOUT(
        w.models()->loadingCount() == 0 && w.errorsPage()->models().size() == 1, 30000);
    auto* page = w.errorsPage();
    QSignalSpy failed(page, &ui::ErrorsPage::failed);
    QSignalSpy analysed(page, &ui::ErrorsPage::analysed);
    page->setDataset(m_dir.filePath("no-such-dataset"));
    QVERIFY(page->analyse());
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 30000);
    QVERIFY2(w.errorText().contains("no-such-dataset"), qPrintable(w.errorText()));
    page->setDataset(QStringLiteral("digits:len=3,split=test,seed=2"));
    page->setLimit(8);
    QVERIFY(page->analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1, 60000);
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    // A message of another topic is not cleared by an analysis.
    w.showError(QStringLiteral("the image cannot be read"), ui::MainWindow::ErrorTopic::Image);
    QVERIFY(page->analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 2, 60000);
    QCOMPARE(w.errorText(), QStringLiteral("the image cannot be read"));
  }

  // Issue 64: a model that can read no entry (every label outside its charset) is set aside and
  // named once with why; the models that can read are analysed. Two files with one stem in two
  // folders are told apart wherever the page names them.
  void aModelThatReadsNothingIsSetAside() {
    const QString letters = m_dir.filePath("letters/model.fvm");
    const QString digitsA = m_dir.filePath("exp1/model.fvm");
    const QString digitsB = m_dir.filePath("exp2/model.fvm");
    for (const QString& p : {letters, digitsA, digitsB})
      QVERIFY(QDir().mkpath(QFileInfo(p).path()));
    auto lettersConfig = test::tinyConfig("soft");
    lettersConfig.charset = "abcdef";
    core::ModelSession::create(lettersConfig, 3)->save(letters.toStdString());
    core::ModelSession::create(test::tinyConfig("soft"), 4)->save(digitsA.toStdString());
    core::ModelSession::create(test::tinyConfig("hard"), 5)->save(digitsB.toStdString());
    const QString folder = m_dir.filePath("digits-only");
    QVERIFY(QDir().mkpath(folder));
    QImage img(100, 32, QImage::Format_Grayscale8);
    img.fill(200);
    QFile gt(folder + "/gt.txt");
    QVERIFY(gt.open(QIODevice::WriteOnly));
    for (int i = 0; i < 4; ++i) {
      QVERIFY(img.save(folder + QStringLiteral("/%1.png").arg(i)));
      gt.write(QStringLiteral("%1.png\t%2\n").arg(i).arg(1234 + i).toUtf8());
    }
    gt.close();
    ui::ErrorsPage page;
    QSignalSpy failed(&page, &ui::ErrorsPage::failed);
    QSignalSpy analysed(&page, &ui::ErrorsPage::analysed);
    page.setModels({letters, digitsA, digitsB});
    page.setDataset(folder);
    QVERIFY(page.analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1 || failed.count() == 1, 60000);
    QCOMPARE(failed.count(), 0);
    const auto* a = page.table()->analysis();
    QVERIFY(a);
    QCOMPARE(int(a->models.size()), 2);
    QCOMPARE(int(a->unread.size()), 1);
    QCOMPARE(QString::fromStdString(a->unread[0].model), letters);
    QCOMPARE(page.table()->rowCount(), 4);
    const QString status = page.statusText();
    QVERIFY2(status.contains("letters/model") &&
                 status.contains("can read no entry: 4 entries skipped") &&
                 status.contains("outside the charset"),
             qPrintable(status));
    QCOMPARE(status.count("outside the charset"), 1);  // once
    QVERIFY2(status.contains("exp1/model") && status.contains("exp2/model"), qPrintable(status));
    auto* by = page.findChild<QComboBox*>("focusModel");
    QVERIFY(by);
    QCOMPARE(by->count(), 2);
    QCOMPARE(by->itemText(0), QString("exp1/model"));
    QCOMPARE(by->itemText(1), QString("exp2/model"));
    QVERIFY(QString::fromStdString(a->summary()).contains("none read"));
    // No model able to read: then it fails, naming each.
    page.setModels({letters});
    QVERIFY(page.analyse());
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 60000);
    QVERIFY2(failed.last().at(0).toString().contains("no model can read"),
             qPrintable(failed.last().at(0).toString()));
  }

  // Compare scores a reading as eval does (issue 64): a text model or an engine case-folded,
  // a digits model exactly.
  void compareScoresAsEvalDoes() {
    ui::CompareSummaryModel model;
    auto trace = std::make_shared<core::Trace>();
    trace->prediction = "Available";
    model.setRows({{"tesseract:eng", trace, {}, true}, {"digits", trace, {}, false}});
    model.setTruth("available");
    const int correct = ui::CompareSummaryModel::Correct;
    QCOMPARE(model.data(model.index(0, correct)).toString(), QString("✔ right"));
    QCOMPARE(model.data(model.index(1, correct)).toString(), QString("✘ wrong"));
  }

  void displayNamesTellFilesApart() {
    using ui::modelDisplayNames;
    QCOMPARE(modelDisplayNames({"/a/soft.fvm", "/b/hard.fvm"}), QStringList({"soft", "hard"}));
    QCOMPARE(modelDisplayNames({"/runs/x/model.pth", "/runs/x/model.ckpt"}),
             QStringList({"model.pth", "model.ckpt"}));
    QCOMPARE(modelDisplayNames({"/r/exp1/best_accuracy.pth", "/r/exp2/best_accuracy.pth"}),
             QStringList({"exp1/best_accuracy", "exp2/best_accuracy"}));
    QCOMPARE(modelDisplayNames({"/r/a/run/best.fvm", "/r/b/run/best.fvm"}),
             QStringList({"a/run/best", "b/run/best"}));
    QCOMPARE(modelDisplayNames({"/r/run1/latest.fvm"}), QStringList({"run1/latest"}));
    QCOMPARE(modelDisplayNames({"tesseract:eng,psm=7", "/m/soft.fvm"}),
             QStringList({"tesseract:eng,psm=7", "soft"}));
    QCOMPARE(ui::modelDisplayName("/x/model.pth", {"/y/model.pth"}), QString("x/model"));
  }

  // Several models; clicking a matrix cell filters the rows; double-click opens compare; the
  // exports are written.
  // Read or guessed: with "From the image %" ticked, each wrong reading gets the image share of
  // its least-read character (integrated gradients over the image and the previous tokens, the
  // image read again on its own), right readings none; the view sorts by it, lowest first.
  void wrongReadingsSortByTheirImageShare() {
    ui::ErrorsPage page;
    page.resize(1200, 700);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QSignalSpy analysed(&page, &ui::ErrorsPage::analysed);
    page.setModels({m_models[0]});
    page.setDataset(QStringLiteral("digits:len=3,split=test,seed=2"));
    page.setLimit(6);
    page.setMeasureImageShare(true);
    QVERIFY(page.analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1, 120000);
    const auto& m = page.table()->analysis()->models[0];
    int wrong = 0;
    for (size_t i = 0; i < m.readings.size(); ++i) {
      if (m.errors[i].correct) {
        QVERIFY(std::isnan(m.errors[i].imageShare));
        continue;
      }
      ++wrong;
      QVERIFY2(m.errors[i].imageShare >= 0 && m.errors[i].imageShare <= 1,
               qPrintable(QString::number(m.errors[i].imageShare)));
    }
    QVERIFY(wrong >= 2);  // random weights: hardly anything is read right
    // The first wrong reading's share, computed here on its own.
    size_t first = 0;
    while (m.errors[first].correct) ++first;
    auto session = core::ModelSession::open(m_models[0].toStdString());
    auto ds = core::data::openDataset("digits:len=3,split=test,seed=2");
    const auto image = ds->get(m.readings[first].index).image;
    const auto trace = session->trace(image, "x");
    core::AttributionOptions o;
    o.igSteps = 16;
    o.tokens = true;
    const int end = session->config().makeCharset().endIndex();
    for (size_t t = 0; t < trace.steps.size(); ++t)
      if (trace.steps[t].tokenIndex != end) o.steps.push_back(static_cast<int>(t));
    double lowest = 1;
    for (const auto& st : session->explain(image, trace, o).steps)
      lowest = std::min(lowest, st.imageShare);
    QVERIFY2(std::abs(lowest - m.errors[first].imageShare) < 1e-6,
             qPrintable(QString("%1 against %2").arg(lowest).arg(m.errors[first].imageShare)));
    // Sorted by it, ascending: the most guessed first, the unmeasured (right) ones last.
    const int column = page.table()->column(0, ui::ErrorTableModel::ImageShare);
    QCOMPARE(page.view()->horizontalHeader()->sortIndicatorSection(), column);
    QCOMPARE(page.view()->horizontalHeader()->sortIndicatorOrder(), Qt::AscendingOrder);
    // The column in view, not hidden off to the right (issue 64).
    QTest::qWait(50);
    const int x = page.view()->columnViewportPosition(column);
    QVERIFY2(
        x >= 0 && x + page.view()->columnWidth(column) <= page.view()->viewport()->width(),
        qPrintable(QString("column at %1 of %2").arg(x).arg(page.view()->viewport()->width())));
    auto* view = page.view()->model();
    double previous = -1;
    for (int r = 0; r < view->rowCount(); ++r) {
      const double v = view->data(view->index(r, column), ui::ErrorTableModel::SortRole).toDouble();
      QVERIFY(v >= previous);
      previous = v;
    }
    const QString shown = view->data(view->index(0, column)).toString();
    QVERIFY2(shown.endsWith(" %"), qPrintable(shown));
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR"))
      QVERIFY(page.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") +
                               "/errors-image-share.png"));
  }

  void matrixClicksDoubleClicksAndExports() {
    ui::ErrorsPage page;
    page.resize(1200, 700);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    QSignalSpy analysed(&page, &ui::ErrorsPage::analysed);
    page.setModels({m_models[0], m_models[1]});
    page.setDataset(QStringLiteral("digits:len=5,split=test,seed=2"));
    page.setLimit(40);
    QVERIFY(page.analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1, 60000);
    QCOMPARE(page.table()->modelCount(), 2);
    QVERIFY(page.lengthTable()->rowCount() == 1);  // every label has 5 digits
    QCOMPARE(page.lengthTable()->item(0, 1)->text(), QStringLiteral("40"));
    // Per character: in character order, and sorted by numbers, not by their text.
    auto* chars = page.characterTable();
    QVERIFY(chars->rowCount() >= 2);
    for (int r = 1; r < chars->rowCount(); ++r)
      QVERIFY(chars->item(r - 1, 0)->text() < chars->item(r, 0)->text());
    chars->sortItems(1, Qt::AscendingOrder);
    for (int r = 1; r < chars->rowCount(); ++r)
      QVERIFY(chars->item(r - 1, 1)->text().toInt() <= chars->item(r, 1)->text().toInt());

    // The busiest cell of the first model's matrix.
    const auto& c = page.table()->analysis()->models[0].confusion;
    int bt = -1, br = -1;
    for (int t = 0; t < c.size(); ++t)
      for (int r = 0; r < c.size(); ++r)
        if (c.count(t, r) > 0 && (bt < 0 || c.count(t, r) > c.count(bt, br))) bt = t, br = r;
    QVERIFY(bt >= 0);
    QSignalSpy clicked(page.confusionView(), &ui::ConfusionView::cellClicked);
    QTest::mouseClick(page.confusionView(), Qt::LeftButton, {},
                      page.confusionView()->cellCenter(bt, br));
    QCOMPARE(clicked.count(), 1);
    QCOMPARE(clicked.first().at(0).toInt(), bt);
    QCOMPARE(clicked.first().at(1).toInt(), br);
    QVERIFY(page.filter()->hasConfusion());
    // Rows shown: the images behind the cell (among the status filter's).
    std::set<size_t> behind;
    for (size_t p : c.images(bt, br))
      behind.insert(page.table()->analysis()->models[0].readings[p].index);
    for (size_t e : page.filter()->shownEntries()) QVERIFY(behind.count(e));
    QVERIFY(page.filter()->rowCount() > 0);

    QSignalSpy compare(&page, &ui::ErrorsPage::compareRequested);
    const size_t entry = page.filter()->shownEntries().front();
    page.chooseRow(0);
    QCOMPARE(compare.count(), 1);
    QVERIFY(compare.first().at(1).toString().endsWith(QStringLiteral("#%1").arg(entry)));
    QCOMPARE(compare.first().at(3).toStringList(), (QStringList{m_models[0], m_models[1]}));
    QCOMPARE(compare.first().at(2).toString(),
             QString::fromStdString(
                 page.table()
                     ->analysis()
                     ->models[0]
                     .readings[size_t(page.table()->analysis()->models[0].positionOf(entry))]
                     .truth));

    const QString csv = m_dir.filePath("rows.csv");
    QCOMPARE(page.exportTable(csv), QString());
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll().count('\n'), page.filter()->rowCount() + 1);  // the rows shown
    for (const char* ext : {"png", "svg", "csv"}) {
      const QString path = m_dir.filePath(QStringLiteral("confusion.%1").arg(ext));
      QCOMPARE(page.exportConfusion(path), QString());
      QVERIFY(QFileInfo(path).size() > 100);
    }
    QImage png(m_dir.filePath("confusion.png"));
    QVERIFY(png.width() >= 200);
    QVERIFY(!page.exportConfusion(m_dir.filePath("confusion.bmp")).isEmpty());
  }

  // In the window: Ctrl+4 shows the page, it reads with the ticked models, and a double-click
  // opens the image in the inspector (one model) at its first wrong step.
  void windowOpensTheInspectorAtTheFirstWrongStep() {
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.resize(1366, 768);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openModel(m_models[1]));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->rowCount() == 1 && w.models()->session(0), 30000);
    QTest::keyClick(&w, Qt::Key_4, Qt::ControlModifier);
    QCOMPARE(w.tabs()->currentWidget(), w.errorsPage());
    auto* page = w.errorsPage();
    QCOMPARE(page->models(), QStringList{QFileInfo(m_models[1]).absoluteFilePath()});
    QSignalSpy analysed(page, &ui::ErrorsPage::analysed);
    page->setDataset(QStringLiteral("digits:len=5,split=test,seed=2"));
    page->setLimit(30);
    QVERIFY(page->analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1, 60000);
    QVERIFY(w.errorText().isEmpty());
    // A random model misreads them all: the first row shown is misread.
    QVERIFY(page->filter()->rowCount() > 0);
    QSignalSpy inspect(page, &ui::ErrorsPage::inspectRequested);
    // A double-click opens the row once (QTest's double-click needs the press before it, as a
    // real one has).
    page->view()->scrollToTop();
    const QPoint cell = page->view()->visualRect(page->filter()->index(0, 2)).center();
    QTest::mousePress(page->view()->viewport(), Qt::LeftButton, {}, cell);
    QTest::mouseRelease(page->view()->viewport(), Qt::LeftButton, {}, cell);
    QTest::mouseDClick(page->view()->viewport(), Qt::LeftButton, {}, cell);
    QCOMPARE(inspect.count(), 1);
    QCOMPARE(w.tabs()->currentWidget(), w.inspector());
    QTRY_VERIFY_WITH_TIMEOUT(w.trace() && !w.isTracing(), 30000);
    QVERIFY(!w.truth().isEmpty());
    const auto& correct = w.inspector()->patchStrip()->correct();
    const auto wrong = std::find(correct.begin(), correct.end(), false);
    if (wrong != correct.end()) QCOMPARE(w.step(), int(wrong - correct.begin()));
  }

  // Documentation screenshots with the shipped models (docs/screenshots): only when
  // FOVEAL_SCREENSHOT_DIR is set; FOVEAL_SCREENSHOT_SUFFIX names the set ("-scale2" under
  // QT_SCALE_FACTOR=2).
  void errorsPageScreenshots() {
    if (!qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) QSKIP("FOVEAL_SCREENSHOT_DIR not set");
    const QString models = QStringLiteral(FOVEAL_SAMPLES_DIR) + "/models/";
    const QString dir = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR");
    const QString suffix = qEnvironmentVariable("FOVEAL_SCREENSHOT_SUFFIX");  // "-scale2"
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.resize(1366, 768);
    w.show();
    for (const char* name : {"soft", "hard", "sharp-chain"})
      QVERIFY(w.openModel(models + name + ".fvm"));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->rowCount() == 3 && w.errorText().isEmpty() &&
                                 w.errorsPage()->models().size() == 3,
                             30000);
    w.tabs()->setCurrentWidget(w.errorsPage());
    auto* page = w.errorsPage();
    QSignalSpy analysed(page, &ui::ErrorsPage::analysed);
    page->setDataset(QStringLiteral("digits:len=7,rotated,split=test,seed=1"));
    page->setLimit(1000);
    QVERIFY(page->analyse());
    QTRY_VERIFY_WITH_TIMEOUT(analysed.count() == 1, 300000);
    page->setFocusModel(2);
    auto* show = page->findChild<QComboBox*>();
    show->setCurrentIndex(show->findData(ui::ErrorFilterModel::Wrong));
    page->view()->sortByColumn(page->table()->column(2, ui::ErrorTableModel::Confidence),
                               Qt::AscendingOrder);
    QTest::qWait(300);
    QCOMPARE(w.size(), QSize(1366, 768));
    QVERIFY(w.grab().save(dir + "/errors-page" + suffix + ".png"));
    // The most frequent confusion of sharp chain, clicked.
    const auto& c = page->table()->analysis()->models[2].confusion;
    int bt = -1, br = -1;
    for (int t = 0; t < c.size(); ++t)
      for (int r = 0; r < c.size(); ++r)
        if (t != r && c.count(t, r) > 0 && (bt < 0 || c.count(t, r) > c.count(bt, br)))
          bt = t, br = r;
    QTest::mouseClick(page->confusionView(), Qt::LeftButton, {},
                      page->confusionView()->cellCenter(bt, br));
    page->findChild<QTabWidget*>()->setCurrentWidget(page->characterTable());
    QTest::qWait(300);
    QVERIFY(w.grab().save(dir + "/errors-confusion" + suffix + ".png"));
  }
};

QTEST_MAIN(TestErrorsPage)
#include "test_errors_page.moc"
