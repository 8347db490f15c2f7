// Hostile input in the window (issue 35): every view that turns a number into an index or a
// colour survives NaN, infinity and empty traces; a truncated JPEG opened from the command line
// is shown (and said), not a crash in the Compare page; every committed image and model file of
// the fuzz corpora opens in the window with every page shown (run under ASan by the asan-ubsan
// preset).
#include <QDir>
#include <QTabWidget>
#include <QtTest/QtTest>
#include <cmath>
#include <limits>

#include "alignment_view.h"
#include "attention_grid.h"
#include "attention_plot.h"
#include "compare_page.h"
#include "inspector_page.h"
#include "main_window.h"
#include "model_list_model.h"
#include "overlay_painter.h"
#include "page_view.h"
#include "patch_strip.h"
#include "step_cursor.h"
#include "topk_model.h"
#include "trace_view.h"

using namespace foveal;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A 1-D trace over `regions` columns of a 100x32 image, one step per alpha vector; every number
// a view reads comes from `value` (NaN, infinity or an ordinary number).
std::shared_ptr<core::Trace> makeTrace(const std::vector<std::vector<double>>& alphas, double value,
                                       int regions = 8, bool grid = false) {
  auto t = std::make_shared<core::Trace>();
  t->source = "hostile";
  t->modelKind = "soft";
  t->prediction = std::string(alphas.size(), '7');
  t->confidence = value;
  t->meanEntropy = value;
  t->imageW = 100;
  t->imageH = 32;
  if (grid) {
    t->gridRows = 2;
    t->gridColumns = regions / 2;
  }
  for (int i = 0; i < regions; ++i) {
    const int c = grid ? i % (regions / 2) : i;
    const int r = grid ? i / (regions / 2) : 0;
    t->regions.push_back({c * 12.0, r * 16.0, 16.0, grid ? 16.0 : 32.0});
    t->regionCentres.push_back({c * 12.0 + 8.0, grid ? r * 16.0 + 8.0 : 16.0});
  }
  auto& map = t->addMap(core::kAttentionMap, "α");
  for (size_t s = 0; s < alphas.size(); ++s) {
    core::TraceStep st;
    st.token = "7";
    st.tokenIndex = 8;
    st.prob = value;
    st.entropy = value;
    st.region = s == 0 ? 3 : (s == 1 ? -5 : 999);  // in range, negative, past the end
    st.topk = {{"7", 8, value}, {"1", 2, value}};
    st.focus = {value, value};
    st.box = {value, value, value, value};
    t->steps.push_back(st);
    map.steps.push_back(alphas[s]);
  }
  return t;
}

QImage testImage() {
  QImage img(100, 32, QImage::Format_Grayscale8);
  img.fill(200);
  return img;
}

// Every view of one trace, drawn at every step and beyond both ends, hovered and exported.
void drawEveryView(const std::shared_ptr<const core::Trace>& trace) {
  ui::TraceView view;
  view.resize(400, 200);
  view.setImage(testImage());
  QStringList all;
  for (const auto& p : ui::overlayPainters()) all << p->name();
  view.setOverlays(all);
  view.setTrace(trace);
  ui::AttentionGridView grid;
  grid.resize(200, 100);
  grid.setTrace(trace);
  ui::AlignmentView alignment;
  alignment.resize(300, 200);
  alignment.setTrace(trace);
  ui::AttentionPlot plot;
  plot.resize(300, 150);
  plot.setTrace(trace);
  ui::PatchStrip strip;
  strip.resize(300, 60);
  strip.setTrace(trace);
  strip.setTruth(QStringLiteral("123"));
  strip.setTruthBoxes({{1, 1, 5, 5}, {kNaN, kNaN, kNaN, kNaN}});
  ui::TopkModel topk;
  topk.setTrace(trace);
  const int steps = static_cast<int>(trace->steps.size());
  for (int s : {-1, 0, 1, 2, steps, steps + 5}) {
    view.setStep(s);
    grid.setStep(s);
    alignment.setStep(s);
    plot.setStep(s);
    strip.setStep(s);
    topk.setStep(s);
    QVERIFY(!view.grab().isNull());
    QVERIFY(!grid.grab().isNull());
    QVERIFY(!alignment.grab().isNull());
    QVERIFY(!plot.grab().isNull());
    QVERIFY(!strip.grab().isNull());
    for (int r = 0; r < topk.rowCount(); ++r)
      for (int c = 0; c < topk.columnCount(); ++c) topk.data(topk.index(r, c));
    (void)view.heatMap();
    for (const QPointF p : {QPointF(10, 10), QPointF(200, 100), QPointF(390, 190)}) {
      (void)view.hoverText(p);
      (void)grid.cellText(grid.regionAt(p));
      (void)grid.cellColour(grid.regionAt(p));
      (void)alignment.hoverText(p.toPoint());
    }
  }
  (void)strip.render(1.0);
}

}  // namespace

class TestHostileGui : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTestHostile"));
    QSettings().clear();
  }

  // NaN crashed heatColour (std::clamp passes NaN; the stop index became INT_MIN); the heat map
  // image indexed its ramp with lround(NaN).
  void heatColourOfEveryNumber() {
    const QColor low = ui::heatColour(0.0), high = ui::heatColour(1.0);
    QCOMPARE(ui::heatColour(kNaN), low);
    QCOMPARE(ui::heatColour(-kNaN), low);
    QCOMPARE(ui::heatColour(-kInf), low);
    QCOMPARE(ui::heatColour(kInf), high);
    QCOMPARE(ui::heatColour(1e308), high);
    QCOMPARE(ui::heatColour(-1e308), low);
    QVERIFY(ui::heatColour(0.5).isValid());
    auto t = makeTrace({{kNaN, 0.5, kInf, -kInf, 0, 0, 0, 0}}, 0.5);
    const QImage heat = ui::heatMapImage(*t, t->attention(0), QSize(100, 32));
    QCOMPARE(heat.size(), QSize(100, 32));
    const auto all = makeTrace({std::vector<double>(8, kNaN)}, kNaN);
    QCOMPARE(ui::heatMapImage(*all, all->attention(0), QSize(50, 16)).size(), QSize(50, 16));
  }

  void viewsSurviveBrokenNumbers_data() {
    QTest::addColumn<double>("value");
    QTest::addColumn<bool>("grid");
    for (bool grid : {false, true}) {
      const char* g = grid ? " (2-D)" : "";
      QTest::newRow(qPrintable(QStringLiteral("NaN%1").arg(g))) << kNaN << grid;
      QTest::newRow(qPrintable(QStringLiteral("+inf%1").arg(g))) << kInf << grid;
      QTest::newRow(qPrintable(QStringLiteral("-inf%1").arg(g))) << -kInf << grid;
      QTest::newRow(qPrintable(QStringLiteral("1e308%1").arg(g))) << 1e308 << grid;
    }
  }

  void viewsSurviveBrokenNumbers() {
    QFETCH(double, value);
    QFETCH(bool, grid);
    const std::vector<double> a(8, value);
    std::vector<double> mixed(8, 0.1);
    mixed[2] = value;
    const std::vector<double> shortRow = {value};  // fewer weights than regions
    drawEveryView(makeTrace({a, mixed, shortRow, {}}, value, 8, grid));
  }

  // A reading of no step (a CTC model that emitted nothing), and a trace without regions.
  void viewsSurviveEmptyTraces() {
    drawEveryView(makeTrace({}, 0.5));
    drawEveryView(makeTrace({}, kNaN, 0));
    drawEveryView(makeTrace({{}, {}}, 0.5, 0));
  }

  // The Compare page indexed steps[-1] of a reading with no step (std::clamp(step, 0, -1)).
  void compareShowsAReadingWithNoStep() {
    ui::StepCursor cursor;
    ui::ComparePage page(&cursor);
    page.resize(900, 500);
    page.show();
    page.setImage(testImage());
    std::vector<ui::CompareSummaryModel::Row> rows;
    rows.push_back({QStringLiteral("empty"), makeTrace({}, 0.5), {}});
    rows.push_back({QStringLiteral("nan"), makeTrace({std::vector<double>(8, kNaN)}, kNaN), {}});
    rows.push_back({QStringLiteral("failed"), nullptr, QStringLiteral("no model")});
    page.setRows(std::move(rows));
    QCOMPARE(page.columnCount(), 3);
    cursor.setCount(page.stepCount());
    for (int s : {0, 1, -3, 7}) {
      cursor.setStep(s);
      QVERIFY(!page.grab().isNull());
    }
  }

  // The crash: a truncated JPEG opened from the command line (restored models ticked
  // for Compare), with a CTC model that reads nothing in it. Every page is shown, and the banner
  // says the file is truncated. The file ends right after its scan header, so that every
  // libjpeg fills the whole image in grey and CRNN reads nothing (cut to its first third, the
  // rows libjpeg-turbo 2.1.5 of Debian 13 decodes and fills read "7").
  void truncatedJpegFromTheCommandLine() {
    QFile whole(QStringLiteral(FOVEAL_SOURCE_DIR "/tests/data/dtrb/img05_400x50_rgb.jpg"));
    QVERIFY(whole.open(QIODevice::ReadOnly));
    const QByteArray bytes = whole.readAll();
    const int sos = bytes.indexOf(QByteArray("\xFF\xDA", 2));
    QVERIFY(sos > 0 && sos + 4 < bytes.size());
    const int scanData = sos + 2 + ((uchar(bytes[sos + 2]) << 8) | uchar(bytes[sos + 3]));
    const QString cut = m_dir.filePath(QStringLiteral("cut.jpg"));
    QFile out(cut);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(bytes.left(scanData + 16));  // a few bytes of the scan: a decoder starts it
    out.close();
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    for (const char* m : {"crnn.fvm", "soft.fvm"})
      QVERIFY(w.openModel(QStringLiteral(FOVEAL_SAMPLES_DIR "/models/") + m));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 60000);
    w.tabs()->setCurrentWidget(w.comparePage());
    QVERIFY(w.openImage(cut));
    QTRY_VERIFY_WITH_TIMEOUT(w.comparePage()->columnCount() == 2 && !w.isTracing(), 60000);
    // The case that crashed: one compared reading has no step at all (CRNN emits nothing).
    bool noStep = false;
    for (int c = 0; c < w.comparePage()->columnCount(); ++c)
      if (const auto t = w.comparePage()->traceView(c)->trace(); t && t->steps.empty())
        noStep = true;
    QVERIFY(noStep);
    QTRY_VERIFY_WITH_TIMEOUT(w.errorText().contains(QStringLiteral("truncated JPEG")), 10000);
    QVERIFY(w.errorText().contains(QStringLiteral("cut.jpg")));
    for (int i = 0; i < w.tabs()->count(); ++i) {
      w.tabs()->setCurrentIndex(i);
      for (int s : {0, 1, 100}) {
        w.setStep(s);
        QVERIFY(!w.grab().isNull());
      }
    }
    if (const QByteArray shots = qgetenv("FOVEAL_SCREENSHOT_DIR"); !shots.isEmpty()) {
      w.tabs()->setCurrentWidget(w.comparePage());
      w.grab().save(QString::fromLocal8Bit(shots) + "/hostile-truncated-jpeg-compare.png");
    }
  }

  // Issue 65, 9: a JPEG cut short and closed again by an end-of-image marker (round three's check
  // saw the marker and passed it): the window reads it and its banner says it is damaged.
  void jpegClosedAfterItsCutIsSaid() {
    QFile whole(QStringLiteral(FOVEAL_SOURCE_DIR "/tests/data/dtrb/img05_400x50_rgb.jpg"));
    QVERIFY(whole.open(QIODevice::ReadOnly));
    const QString closed = m_dir.filePath(QStringLiteral("closed.jpg"));
    QFile out(closed);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(whole.read(2900) + QByteArray("\xFF\xD9", 2));
    out.close();
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    QVERIFY(w.openModel(QStringLiteral(FOVEAL_SAMPLES_DIR "/models/soft.fvm")));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 60000);
    QVERIFY(w.openImage(closed));
    QTRY_VERIFY_WITH_TIMEOUT(w.errorText().contains(QStringLiteral("truncated or damaged JPEG")),
                             10000);
    QVERIFY(w.errorText().contains(QStringLiteral("closed.jpg")));
    QVERIFY(w.errorText().contains(QStringLiteral("premature end of data segment")));
  }

  // Item 11 of issue 35: every committed file of the image and model fuzz corpora (and their
  // regressions) opened in the window, every page shown: refused with a message or shown, never
  // a crash (under the asan-ubsan preset, never a sanitizer report).
  void everyFuzzCorpusFileOpens() {
    const QString src = QStringLiteral(FOVEAL_SOURCE_DIR "/tests/");
    QStringList images, models;
    auto collect = [&](const QString& folder, const QStringList& patterns, QStringList& into) {
      for (const QFileInfo& f : QDir(src + folder).entryInfoList(patterns, QDir::Files, QDir::Name))
        into << f.absoluteFilePath();
    };
    collect(QStringLiteral("fuzz/corpus/fuzz_image"), {QStringLiteral("*")}, images);
    collect(QStringLiteral("data/fuzz-regressions"), {QStringLiteral("image-*")}, images);
    collect(QStringLiteral("fuzz/corpus/fuzz_checkpoint"), {QStringLiteral("*")}, models);
    collect(QStringLiteral("fuzz/corpus/fuzz_torch_pickle"), {QStringLiteral("*")}, models);
    collect(QStringLiteral("data/fuzz-regressions"),
            {QStringLiteral("checkpoint-*"), QStringLiteral("torch-*")}, models);
    collect(QStringLiteral("fuzz/corpus/fuzz_kraken_file"), {QStringLiteral("*")}, models);
    QStringList layouts;
    collect(QStringLiteral("fuzz/corpus/fuzz_page_layout"), {QStringLiteral("*")}, layouts);
    QVERIFY2(images.size() >= 6, qPrintable(images.join(' ')));
    QVERIFY2(models.size() >= 10, qPrintable(models.join(' ')));
    QVERIFY2(layouts.size() >= 3, qPrintable(layouts.join(' ')));
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    QVERIFY(w.openModel(QStringLiteral(FOVEAL_SAMPLES_DIR "/models/soft.fvm")));
    for (const QString& m : models) w.openModel(m);  // refused ones leave a message
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 120000);
    auto showEveryPage = [&] {
      for (int i = 0; i < w.tabs()->count(); ++i) {
        w.tabs()->setCurrentIndex(i);
        w.lastStep();
        QVERIFY(!w.grab().isNull());
        w.firstStep();
        QVERIFY(!w.grab().isNull());
      }
    };
    for (const QString& image : images) {
      if (!w.openImage(image)) continue;                // refused at once, with a message
      QTRY_VERIFY_WITH_TIMEOUT(!w.isTracing(), 60000);  // read (or refused) and traced
      showEveryPage();
    }
    // The page layouts, each in a fresh window with the inspected model (no earlier message or
    // page to hide behind): on a sample image, shown in the Page view with its lines read, or
    // refused naming the file; on the image the layout names, which the corpus does not hold,
    // refused naming the layout.
    const QString pageImage = QStringLiteral(FOVEAL_SAMPLES_DIR "/images/digits-46214.pgm");
    for (const QString& layout : layouts)
      for (const QString& image : {pageImage, QString()}) {
        const QString name = QFileInfo(layout).fileName();
        ui::MainWindow pw;
        pw.setConfirmClose(false);
        pw.show();
        QVERIFY(pw.openModel(QStringLiteral(FOVEAL_SAMPLES_DIR "/models/soft.fvm")));
        QTRY_VERIFY_WITH_TIMEOUT(pw.models()->loadingCount() == 0, 60000);
        if (pw.openPage(image, layout))
          QTRY_VERIFY_WITH_TIMEOUT(!pw.pageView()->isOpening() && !pw.pageView()->isReading() &&
                                       (pw.pageView()->hasPage() || !pw.errorText().isEmpty()),
                                   60000);
        QVERIFY2(image.isEmpty() ? !pw.pageView()->hasPage() && pw.errorText().contains(name)
                                 : pw.pageView()->hasPage() || pw.errorText().contains(name),
                 qPrintable(layout + ": " + pw.errorText()));
        qInfo("%s on %s: %s", qPrintable(name), image.isEmpty() ? "its own image" : "a sample",
              qPrintable(pw.pageView()->hasPage() ? "shown. " + pw.errorText()
                                                  : "refused: " + pw.errorText()));
        for (int i = 0; i < pw.tabs()->count(); ++i) {
          pw.tabs()->setCurrentIndex(i);
          QVERIFY(!pw.grab().isNull());
        }
      }
    qInfo("opened %lld images, %lld model files and %lld page layouts",
          static_cast<long long>(images.size()), static_cast<long long>(models.size()),
          static_cast<long long>(layouts.size()));
  }
};

QTEST_MAIN(TestHostileGui)
#include "test_hostile_gui.moc"
