// The Page view (issue 63, item 1): a page image with its PAGE-XML or ALTO layout in the window
// at 1366x768, every line drawn (as many as the XML holds: kraken's own eScriptorium, Transkribus
// and BSB files from ../shared/fixtures/kraken/pages, never copied here), every line read with
// kraken's overfit model off the GUI thread, a click on a line opening it in the Inspector with
// the reading ModelSession::traceLine gives for it, Up/Down and Enter, the page exported as
// PAGE-XML and ALTO and validated with xmllint against the published schemas
// (../shared/fixtures/schemas), cancel, and a malformed or refused layout named in the error.
// The page read is kraken's binarised test page (lines/bw.png) with the layout of
// tests/data/pages/bw.page.xml (make_bw_layout.py: its 28 lines, their baselines and
// transcriptions). With FOVEAL_SCREENSHOT_DIR set it saves page-view.png at 1366x768.
#include <QAbstractItemModelTester>
#include <QFile>
#include <QProcess>
#include <QTableView>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest/QtTest>
#include <cmath>
#include <memory>

#include "compare_page.h"
#include "confidence_scale.h"
#include "formats/page_layout.h"
#include "image/grey_image.h"
#include "inspector_page.h"
#include "line_strip.h"
#include "main_window.h"
#include "model_list_model.h"
#include "page_canvas.h"
#include "page_line_model.h"
#include "page_reading_runner.h"
#include "page_view.h"
#include "reading_document.h"
#include "trace/kraken_lines.h"
#include "trace/model_session.h"
#include "trace_view.h"

using namespace foveal;

namespace {
const QString kFixtures = QStringLiteral(FOVEAL_SOURCE_DIR "/../shared/fixtures/");
const QString kKraken = kFixtures + "kraken/";
const QString kSchemas = kFixtures + "schemas/";
const QString kModel = kKraken + "models/overfit.mlmodel";
const QString kBwImage = kKraken + "lines/bw.png";
const QString kBwLayout = QStringLiteral(FOVEAL_SOURCE_DIR "/tests/data/pages/bw.page.xml");
constexpr int kBwLines = 28;
constexpr int kReadTimeout = 240000;

// The TextLine elements of a layout file, counted by a plain XML reader (not the layout parser):
// in kraken's fixture pages every one of them is a line kraken reads.
int textLinesIn(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return -1;
  QXmlStreamReader xml(&f);
  int n = 0;
  while (!xml.atEnd())
    if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("TextLine"))
      ++n;
  return xml.hasError() ? -1 : n;
}

// xmllint's verdict on `file` against `schema` ("" when valid).
QString xmllint(const QString& schema, const QString& file) {
  QProcess p;
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(QStringLiteral("xmllint"), {QStringLiteral("--noout"), QStringLiteral("--nonet"),
                                      QStringLiteral("--schema"), kSchemas + schema, file});
  if (!p.waitForFinished(60000)) return QStringLiteral("xmllint did not finish");
  const QString out = QString::fromUtf8(p.readAll());
  return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0 ? QString() : out;
}

bool haveXmllint() {
  QProcess p;
  p.start(QStringLiteral("xmllint"), {QStringLiteral("--version")});
  return p.waitForFinished(10000) && p.exitStatus() == QProcess::NormalExit;
}
}  // namespace

class TestPageView : public QObject {
  Q_OBJECT

  std::unique_ptr<ui::MainWindow> m_w;  ///< the bw page read once, for the cases that follow
  QTemporaryDir m_tmp;

  ui::PageView* view() const { return m_w->pageView(); }

 private Q_SLOTS:
  void initTestCase() {
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTest"));
    QSettings().clear();
    QVERIFY(m_tmp.isValid());
  }

  void cleanupTestCase() { m_w.reset(); }

  // kraken's own page files (PAGE from eScriptorium and Transkribus, ALTO from the BSB) open with
  // every line drawn, on a blank page of the size they state (their scans are not in kraken's
  // repository); without a model the view says so and reads nothing.
  void fixturePagesOpenWithEveryLine_data() {
    QTest::addColumn<QString>("file");
    for (const char* f :
         {"page/cPAS-2000.xml", "page/explicit_ro.xml", "page/explicit_ro_unordered.xml",
          "page/missing_coords_ro.xml", "page/missing_coords_transkribus.xml",
          "alto/bsb00084914_00007.xml", "alto/missing_coords_ro.xml"})
      QTest::newRow(f) << kKraken + "pages/" + f;
  }
  void fixturePagesOpenWithEveryLine() {
    QFETCH(QString, file);
    if (!QFileInfo::exists(file)) QSKIP("no kraken fixtures");
    const int want = textLinesIn(file);
    QVERIFY(want > 0);
    const auto layout = core::readPageLayout(file.toStdString());
    QImage blank(layout.imageWidth, layout.imageHeight, QImage::Format_Grayscale8);
    blank.fill(255);
    const QString image = m_tmp.filePath(QFileInfo(file).completeBaseName() + ".png");
    QVERIFY(blank.save(image));

    ui::MainWindow w;
    w.setConfirmClose(false);
    w.resize(1366, 768);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.openPage(image, file));
    QTRY_VERIFY_WITH_TIMEOUT(w.pageView()->hasPage(), 30000);
    QCOMPARE(w.tabs()->currentWidget(), static_cast<QWidget*>(w.pageView()));
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    QCOMPARE(w.pageView()->lineModel()->lineCount(), want);
    QCOMPARE(w.pageView()->lineModel()->rowCount(), want);
    QVERIFY(!w.grab().isNull());  // paints
    QCOMPARE(w.pageView()->canvas()->drawnLineCount(), want);
    QVERIFY(!w.pageView()->isReading());
    QVERIFY2(w.pageView()->statusText().contains("Open a model"),
             qPrintable(w.pageView()->statusText()));
    // Each line is where the canvas says it is: a click at its centre finds it.
    for (int l = 0; l < want; l += std::max(1, want / 7)) {
      const int found = w.pageView()->canvas()->lineAt(w.pageView()->canvas()->lineCentre(l));
      QVERIFY2(found >= 0, qPrintable(QString::number(l)));
    }
  }

  // The bw page read with kraken's overfit model: every line drawn, read off the GUI thread
  // (the window answers meanwhile), its mean confidence that of the reading's characters.
  void pageIsReadWithTheModel() {
    if (!QFileInfo::exists(kModel)) QSKIP("no kraken fixtures");
    m_w = std::make_unique<ui::MainWindow>();
    m_w->setConfirmClose(false);
    m_w->resize(1366, 768);
    m_w->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_w.get()));
    QVERIFY(m_w->openModel(kModel));
    QVERIFY(m_w->openPage(kBwImage, kBwLayout));
    QTRY_VERIFY_WITH_TIMEOUT(view()->hasPage(), 30000);
    QCOMPARE(textLinesIn(kBwLayout), kBwLines);
    QCOMPARE(view()->lineModel()->lineCount(), kBwLines);
    QVERIFY(!m_w->grab().isNull());
    QCOMPARE(view()->canvas()->drawnLineCount(), kBwLines);
    // Read once the model has loaded, off the GUI thread: the window paints meanwhile.
    QElapsedTimer clock;
    clock.start();
    QTRY_VERIFY_WITH_TIMEOUT(view()->lineModel()->readCount() > 0, kReadTimeout);
    if (view()->isReading()) QVERIFY(!m_w->grab().isNull());
    QTRY_VERIFY_WITH_TIMEOUT(!view()->isReading() && view()->lineModel()->readCount() == kBwLines,
                             kReadTimeout);
    qInfo("model loaded and %d lines read in %.1f s", kBwLines, clock.elapsed() / 1000.0);
    QVERIFY2(m_w->errorText().isEmpty(), qPrintable(m_w->errorText()));
    const auto* lines = view()->lineModel();
    QCOMPARE(lines->readCount(), kBwLines);
    QCOMPARE(view()->modelsRead(), QStringList{"overfit"});
    for (int l = 0; l < kBwLines; ++l) {
      const auto r = lines->reading(l);
      QVERIFY(r);
      QVERIFY2(!r->empty, r->why.c_str());
      double sum = 0;
      int n = 0;
      for (const auto& s : r->trace.steps) {
        sum += s.prob;
        ++n;
      }
      QVERIFY(n > 0);
      QVERIFY(std::abs(lines->confidence(l) - sum / n) < 1e-12);
      QCOMPARE(r->cuts.size(), r->trace.steps.size());
      QCOMPARE(lines->transcription(l).isEmpty(), false);
      QVERIFY(std::isfinite(lines->cer(l)));
    }
    QVERIFY(std::isfinite(lines->pageCer()));
    // The threshold flags the lines under it (at 1 every line, at 0 none) and is remembered.
    view()->setThreshold(1.0);
    QCOMPARE(lines->flaggedCount(), kBwLines);
    view()->setThreshold(0.0);
    QCOMPARE(lines->flaggedCount(), 0);
    double median = 0;
    {
      std::vector<double> c;
      for (int l = 0; l < kBwLines; ++l) c.push_back(lines->confidence(l));
      std::sort(c.begin(), c.end());
      median = c[c.size() / 2];
    }
    view()->setThreshold(median);
    int under = 0;
    for (int l = 0; l < kBwLines; ++l) under += lines->confidence(l) < median;
    QCOMPARE(lines->flaggedCount(), under);
    QVERIFY(under > 0 && under < kBwLines);
    QCOMPARE(QSettings().value("page/threshold").toDouble(), median);
    // A flagged line's reading is drawn red in the table, on the colour scale's red side.
    for (int l = 0; l < kBwLines; ++l)
      if (lines->isFlagged(l)) {
        const QColor c = ui::confidenceColour(lines->confidence(l), median);
        QVERIFY2(c.hue() <= 30, qPrintable(c.name()));
        QCOMPARE(lines->data(lines->index(l, ui::PageLineModel::Reading), Qt::ForegroundRole)
                     .value<QBrush>()
                     .color(),
                 QColor(198, 40, 40));
        break;
      }
  }

  // A click on a line makes it the document's image, cut out as kraken cuts it: the Inspector
  // then shows the very reading ModelSession::traceLine gives for that line of the page, with
  // its transcription as the truth; Enter opens the Inspector; Down goes to the next line.
  void clickingALineOpensItInTheInspector() {
    if (!m_w) QSKIP("needs pageIsReadWithTheModel");
    auto* canvas = view()->canvas();
    const int line = 4;
    QTest::mouseClick(canvas, Qt::LeftButton, {}, canvas->lineCentre(line).toPoint());
    QCOMPARE(view()->currentLine(), line);
    QTRY_VERIFY_WITH_TIMEOUT(m_w->document()->isPageLine() && !m_w->isTracing() && m_w->trace(),
                             60000);

    // What core reads for that line, on its own: the same file, the same page.
    const auto layout = core::readPageLayout(kBwLayout.toStdString());
    const auto page = core::readImage(kBwImage.toStdString(), /*keepColour=*/true);
    const auto session = core::ModelSession::open(kModel.toStdString());
    auto expectLine = [&](int l) {
      const auto& ll = layout.lines[static_cast<size_t>(l)];
      const std::string source = kBwImage.toStdString() + "#" + ll.id;
      const auto want =
          session->traceLine(page, core::krakenLineOf(ll, layout.textDirection), source);
      const auto got = m_w->trace();
      QVERIFY(got);
      QCOMPARE(QString::fromStdString(got->source), QString::fromStdString(source));
      QCOMPARE(QString::fromStdString(got->prediction),
               QString::fromStdString(want.trace.prediction));
      QCOMPARE(got->steps.size(), want.trace.steps.size());
      for (size_t k = 0; k < got->steps.size(); ++k) {
        QCOMPARE(QString::fromStdString(got->steps[k].token),
                 QString::fromStdString(want.trace.steps[k].token));
        QVERIFY(std::abs(got->steps[k].prob - want.trace.steps[k].prob) < 1e-6);
        QCOMPARE(got->steps[k].box.x, want.trace.steps[k].box.x);
        QCOMPARE(got->steps[k].box.w, want.trace.steps[k].box.w);
      }
      QCOMPARE(got->imageW, want.line.width);
      QCOMPARE(got->imageH, want.line.height);
      QCOMPARE(m_w->document()->image().width, want.line.width);
      QCOMPARE(m_w->document()->image().pixels, want.line.pixels);
      QCOMPARE(m_w->truth(), QString::fromStdString(ll.text));
      // The page view read it the same way.
      QCOMPARE(view()->lineModel()->readingText(l), QString::fromStdString(want.trace.prediction));
    };
    expectLine(line);
    if (QTest::currentTestFailed()) return;
    // The reading beside its transcription, the misread characters marked.
    QVERIFY(view()->lineText().contains("Transcription"));
    if (view()->lineModel()->readingText(line) != view()->lineModel()->transcription(line))
      QVERIFY(view()->lineText().contains("#ffcdd2"));
    QVERIFY(!view()->lineStrip()->image().isNull());

    // Enter opens the Inspector on it.
    QCOMPARE(m_w->tabs()->currentWidget(), static_cast<QWidget*>(view()));
    canvas->setFocus();
    QTest::keyClick(canvas, Qt::Key_Return);
    QCOMPARE(m_w->tabs()->currentWidget(), static_cast<QWidget*>(m_w->inspector()));
    QVERIFY(m_w->trace());  // the same reading: Enter on the line shown reads nothing again
    QCOMPARE(m_w->inspector()->trace(), m_w->trace());
    QCOMPARE(m_w->stepCount(), int(m_w->trace()->steps.size()));  // the step bar drives it
    m_w->setStep(2);
    QCOMPARE(m_w->step(), 2);

    // Back on the page, Down reads the next line into the Inspector.
    m_w->tabs()->setCurrentWidget(view());
    canvas->setFocus();
    QTest::keyClick(canvas, Qt::Key_Down);
    QCOMPARE(view()->currentLine(), line + 1);
    QTRY_VERIFY_WITH_TIMEOUT(
        m_w->trace() &&
            QString::fromStdString(m_w->trace()->source)
                .endsWith(QString::fromStdString("#" + layout.lines[line + 1].id)) &&
            !m_w->isTracing(),
        60000);
    expectLine(line + 1);
    // The table follows the canvas (one selection), and Up goes back.
    QCOMPARE(view()->lineTable()->currentIndex().row(), line + 1);
    QTest::keyClick(canvas, Qt::Key_Up);
    QCOMPARE(view()->currentLine(), line);
    // Another image ends the page line: the document reads it whole again.
    QImage other(40, 20, QImage::Format_Grayscale8);
    other.fill(200);
    m_w->setImage(other, QStringLiteral("other"));
    QVERIFY(!m_w->document()->isPageLine());
    view()->inspectLine(line);  // the same line again: shown again
    QVERIFY(m_w->document()->isPageLine());
    QCOMPARE(m_w->tabs()->currentWidget(), static_cast<QWidget*>(m_w->inspector()));
    QTRY_VERIFY_WITH_TIMEOUT(m_w->trace() && !m_w->isTracing() &&
                                 QString::fromStdString(m_w->trace()->source)
                                     .endsWith(QString::fromStdString("#" + layout.lines[line].id)),
                             60000);
    expectLine(line);
  }

  // The page written back with the readings validates against PAGE 2019 and ALTO 4.3 and 4.4,
  // and reads back with the same lines and the readings as their text.
  void exportValidatesAgainstTheSchemas() {
    if (!m_w) QSKIP("needs pageIsReadWithTheModel");
    if (!haveXmllint()) QSKIP("no xmllint (Debian: libxml2-utils)");
    const QString pagePath = m_tmp.filePath("bw.foveal.page.xml");
    const QString altoPath = m_tmp.filePath("bw.foveal.alto.xml");
    QCOMPARE(view()->exportPage(pagePath, ui::PageView::ExportFormat::PageXml), QString());
    QCOMPARE(view()->exportPage(altoPath, ui::PageView::ExportFormat::Alto), QString());
    QCOMPARE(xmllint("pagecontent-2019-07-15.xsd", pagePath), QString());
    QCOMPARE(xmllint("alto-4-3.xsd", altoPath), QString());
    QCOMPARE(xmllint("alto-4-4.xsd", altoPath), QString());
    const auto back = core::readPageLayout(pagePath.toStdString());
    QCOMPARE(int(back.lines.size()), kBwLines);
    for (int l = 0; l < kBwLines; ++l) {
      QCOMPARE(QString::fromStdString(back.lines[static_cast<size_t>(l)].text),
               view()->lineModel()->readingText(l));
      QVERIFY(!back.lines[static_cast<size_t>(l)].baseline.empty());
    }
    QCOMPARE(int(core::readPageLayout(altoPath.toStdString()).lines.size()), kBwLines);
    for (const auto* a : view()->exportActions()) QVERIFY(a->isEnabled());
    // The page's own files are never overwritten.
    QVERIFY(view()
                ->exportPage(kBwLayout, ui::PageView::ExportFormat::PageXml)
                .contains("the page's own file"));
  }

  // Cancel stops the reading: nothing more arrives, the status says so, an export is refused
  // until every line is read; reading again reads every line.
  void cancelStopsTheReading() {
    if (!m_w) QSKIP("needs pageIsReadWithTheModel");
    QVERIFY(view()->readLines());
    QVERIFY(view()->isReading());
    QCOMPARE(view()->lineModel()->readCount(), 0);  // a reading starts afresh
    QVERIFY(view()->cancelAction()->isEnabled());
    view()->cancelReading();
    QVERIFY(!view()->isReading());
    view()->waitForReading();
    QTest::qWait(300);  // whatever the task posted before it stopped is delivered (and dropped)
    QCOMPARE(view()->lineModel()->readCount(), 0);
    QVERIFY2(view()->statusText().contains("cancelled"), qPrintable(view()->statusText()));
    QVERIFY(!view()->cancelAction()->isEnabled());
    QVERIFY(view()
                ->exportPage(m_tmp.filePath("partial.xml"), ui::PageView::ExportFormat::PageXml)
                .contains("Not every line"));
    QVERIFY(!QFileInfo::exists(m_tmp.filePath("partial.xml")));
    // Cancelled half way: the lines read so far stay, no more come.
    QVERIFY(view()->readLines());
    QTRY_VERIFY_WITH_TIMEOUT(view()->lineModel()->readCount() >= 1, 60000);
    view()->cancelReading();
    const int kept = view()->lineModel()->readCount();
    view()->waitForReading();
    QTest::qWait(300);
    QCOMPARE(view()->lineModel()->readCount(), kept);
    // Read again: every line.
    QVERIFY(view()->readLines());
    QTRY_VERIFY_WITH_TIMEOUT(!view()->isReading(), kReadTimeout);
    QCOMPARE(view()->lineModel()->readCount(), kBwLines);
  }

  void screenshot() {
    if (!m_w) QSKIP("needs pageIsReadWithTheModel");
    if (!qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) QSKIP("FOVEAL_SCREENSHOT_DIR not set");
    m_w->tabs()->setCurrentWidget(view());
    view()->setThreshold(0.65);  // the overfit model's lines lie around it: both sides of the scale
    view()->chooseLine(13);
    QTRY_VERIFY_WITH_TIMEOUT(!m_w->isTracing(), 60000);
    QTest::qWait(400);
    QCOMPARE(m_w->size(), QSize(1366, 768));
    QVERIFY(m_w->grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/page-view.png"));
  }

  // With a second model ticked, Compare reads the chosen line with both, each as traceLine reads
  // it; with "With Ticked Models" the page is read by both, and the model box chooses whose
  // readings it shows.
  void compareAndTickedModelsReadThePageLine() {
    if (!m_w) QSKIP("needs pageIsReadWithTheModel");
    const QString second = kKraken + "models/overfit_newpoly.mlmodel";
    if (!QFileInfo::exists(second)) QSKIP("no overfit_newpoly.mlmodel");
    QVERIFY(m_w->openModel(second));
    QTRY_VERIFY_WITH_TIMEOUT(m_w->models()->loadingCount() == 0, 60000);
    m_w->models()->setCompared({kModel, second});
    // The inspected model changed (the one opened last): the page is read again with it.
    QTRY_VERIFY_WITH_TIMEOUT(view()->modelsRead() == QStringList{"overfit_newpoly"} &&
                                 !view()->isReading() &&
                                 view()->lineModel()->readCount() == kBwLines,
                             kReadTimeout);
    view()->withTickedAction()->setChecked(true);
    QTRY_VERIFY_WITH_TIMEOUT(view()->modelsRead().size() == 2 && !view()->isReading() &&
                                 view()->reading(1, kBwLines - 1) != nullptr,
                             kReadTimeout);
    const QString first = view()->lineModel()->readingText(7);
    view()->showModel(1);
    QCOMPARE(view()->lineModel()->readingText(7),
             QString::fromStdString(view()->reading(1, 7)->trace.prediction));
    view()->showModel(0);
    QCOMPARE(view()->lineModel()->readingText(7), first);

    m_w->tabs()->setCurrentWidget(m_w->comparePage());
    view()->chooseLine(7);
    QTRY_VERIFY_WITH_TIMEOUT(m_w->comparePage()->columnCount() == 2 && !m_w->isTracing(), 60000);
    const auto layout = core::readPageLayout(kBwLayout.toStdString());
    const auto page = core::readImage(kBwImage.toStdString(), /*keepColour=*/true);
    const auto& ll = layout.lines[7];
    const std::string source = kBwImage.toStdString() + "#" + ll.id;
    QStringList want, got;
    for (const QString& m : {kModel, second})
      want << QString::fromStdString(
          core::ModelSession::open(m.toStdString())
              ->traceLine(page, core::krakenLineOf(ll, layout.textDirection), source)
              .trace.prediction);
    for (int c = 0; c < 2; ++c) {
      const auto t = m_w->comparePage()->traceView(c)->trace();
      QVERIFY(t);
      QCOMPARE(QString::fromStdString(t->source), QString::fromStdString(source));
      got << QString::fromStdString(t->prediction);
    }
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    QCOMPARE(got, want);
  }

  // A layout that is not well-formed XML, one kraken refuses, and files that are not there are
  // shown in the banner naming the file; the page shown before stays.
  void badLayoutsNameTheFile() {
    ui::MainWindow w;
    w.setConfirmClose(false);
    w.show();
    const QString bad = m_tmp.filePath("malformed-page.xml");
    {
      QFile f(bad);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("<?xml version=\"1.0\"?>\n<PcGts><Page imageFilename=\"bw.png\" imageWidth=\"9\"");
    }
    QVERIFY(w.openPage(kBwImage, bad));  // read off the GUI thread: the error comes later
    QTRY_VERIFY_WITH_TIMEOUT(w.errorText().contains("malformed-page.xml"), 30000);
    QVERIFY(!w.pageView()->hasPage());
    QVERIFY(w.pageView()->statusText().contains("malformed-page.xml"));

    if (QFileInfo::exists(kKraken + "pages/alto/invalid/mu.xml")) {
      QVERIFY(w.openPage(kBwImage, kKraken + "pages/alto/invalid/mu.xml"));
      QTRY_VERIFY_WITH_TIMEOUT(w.errorText().contains("mu.xml"), 30000);
      QVERIFY2(w.errorText().contains("MeasurementUnit"), qPrintable(w.errorText()));
    }
    // Files that are not there: refused at once.
    QVERIFY(!w.openPage(kBwImage, m_tmp.filePath("no-such-layout.xml")));
    QVERIFY(w.errorText().contains("no-such-layout.xml"));
    QVERIFY(!w.openPage(m_tmp.filePath("no-such-image.png"), kBwLayout));
    QVERIFY(w.errorText().contains("no-such-image.png"));
    // A layout whose image is missing, opened without one named: says which image it wants.
    const QString orphan = m_tmp.filePath("orphan.xml");
    QVERIFY(QFile::copy(kBwLayout, orphan));
    QVERIFY(w.openPage({}, orphan));
    QTRY_VERIFY_WITH_TIMEOUT(
        w.errorText().contains("orphan.xml") && w.errorText().contains("bw.png"), 30000);
    // An image of another size than the layout states: opened, with a warning naming both.
    QImage small(462, 812, QImage::Format_Grayscale8);
    small.fill(255);
    QVERIFY(small.save(m_tmp.filePath("small.png")));
    QVERIFY(w.openPage(m_tmp.filePath("small.png"), kBwLayout));
    QTRY_VERIFY_WITH_TIMEOUT(w.pageView()->hasPage(), 30000);
    QTRY_VERIFY(w.errorText().contains("924x1624") && w.errorText().contains("small.png"));
  }

  // The line table is a well-behaved item model (QAbstractItemModelTester), empty, with a page,
  // and as readings arrive.
  void lineModelIsAGoodModel() {
    ui::PageLineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    auto layout =
        std::make_shared<const core::PageLayout>(core::readPageLayout(kBwLayout.toStdString()));
    model.setLayout(layout);
    QCOMPARE(model.rowCount(), kBwLines);
    QCOMPARE(model.columnCount(), int(ui::PageLineModel::ColumnCount));
    auto r = std::make_shared<core::LineReading>();
    r->trace.prediction = "214 HISTOIRF";
    for (const char* t : {"2", "1", "4"}) {
      core::TraceStep s;
      s.token = t;
      s.prob = 0.5;
      r->trace.steps.push_back(s);
    }
    model.setReading(0, r);
    QCOMPARE(model.readCount(), 1);
    QCOMPARE(model.confidence(0), 0.5);
    QVERIFY(model.isFlagged(0));  // the default threshold is 0.8
    // dinglehopper's CER: one substitution in the 12 characters of "214 HISTOIRE".
    QVERIFY(std::abs(model.cer(0) - 1.0 / 12) < 1e-12);
    QCOMPARE(model.data(model.index(0, ui::PageLineModel::Cer)).toString(), QString("8.3%"));
    QCOMPARE(model.data(model.index(1, ui::PageLineModel::Reading)).toString(),
             QString("(not read)"));
    model.setThreshold(0.4);
    QVERIFY(!model.isFlagged(0));
  }

  // `foveal --page IMAGE` without its layout is refused before any window opens.
  void commandLineNeedsTheLayout() {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(FOVEAL_GUI_PATH), {QStringLiteral("--page"), kBwImage});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(QString::fromUtf8(p.readAll()).contains("--layout"), "no word of --layout");
  }
};

QTEST_MAIN(TestPageView)
#include "test_page_view.moc"
