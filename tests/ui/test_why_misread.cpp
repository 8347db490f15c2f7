// The "why misread" view (issue 63, item 2): for the shipped CRNN and a digit sequence it
// misreads, the panel shows the forced alignment core computes (the same path, frames and boxes,
// drawn where the boxes are), both paths frame by frame, the posteriorgram's exact truth rows,
// and a character's attribution on click; the Inspector offers it for a CTC reading with a truth
// and not for an attention model. With FOVEAL_SCREENSHOT_DIR set it saves why-misread.png.
#include <QComboBox>
#include <QLabel>
#include <QToolButton>
#include <QtTest/QtTest>
#include <cmath>

#include "data/dataset_factory.h"
#include "explain_runner.h"
#include "inspector_page.h"
#include "main_window.h"
#include "model_list_model.h"
#include "qt_convert.h"
#include "reading_document.h"
#include "trace/model_session.h"
#include "why_misread_dialog.h"
#include "why_misread_panel.h"
#include "why_misread_view.h"

using namespace foveal;
using Row = ui::WhyMisreadView::Row;

namespace {

const std::string kCrnn = FOVEAL_SAMPLES_DIR "/models/crnn.fvm";
// Long rotated digit sequences: the shipped CRNN misreads some of the first few.
const std::string kData = "digits:len=13,rotated,split=test,seed=1,count=80";

struct Misread {
  core::GreyImage image;
  std::string truth;
  std::string source;
};

// The first entry the CRNN reads wrong with a truth it can align (as long as its frames allow).
Misread firstMisread(const core::ModelSession& session) {
  const auto ds = core::data::openDataset(kData);
  for (size_t i = 0; i < ds->size(); ++i) {
    const auto s = ds->get(i);
    core::TraceOptions o;
    o.truth = s.label;
    const auto tr = session.trace(s.image, ds->entryName(i), o);
    if (tr.prediction != s.label && tr.alignment.ok()) return {s.image, s.label, ds->entryName(i)};
  }
  return {};
}

}  // namespace

class TestWhyMisread : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init() {
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTest"));
    QSettings().clear();
  }

  void panelShowsCoresAlignment() {
    auto session = core::ModelSession::open(kCrnn);
    const Misread m = firstMisread(*session);
    QVERIFY2(!m.truth.empty(), "the CRNN read every entry right: no misread line to show");
    core::TraceOptions o;
    o.truth = m.truth;
    const core::Trace expected = session->trace(m.image, m.source, o);
    const auto& a = expected.alignment;
    QVERIFY(a.ok());

    ui::WhyMisreadPanel panel;
    panel.resize(1100, 600);
    panel.show();
    QSignalSpy ready(&panel, &ui::WhyMisreadPanel::ready);
    QSignalSpy explained(&panel, &ui::WhyMisreadPanel::explained);
    panel.setReading(session, m.image, ui::toQImage(m.image), QString::fromStdString(m.source),
                     QString::fromStdString(m.truth));
    QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 30000);
    auto* view = panel.view();
    const auto shown = view->trace();
    QVERIFY(shown);
    // The alignment the view draws is core's: path, frames, boxes, scores.
    const auto& b = shown->alignment;
    QCOMPARE(b.path, a.path);
    QCOMPARE(b.shownPath, a.shownPath);
    QCOMPARE(b.chars.size(), a.chars.size());
    QCOMPARE(b.logProb, a.logProb);
    QCOMPARE(shown->prediction, expected.prediction);
    QCOMPARE(view->frameCount(), a.frames);
    for (size_t c = 0; c < a.chars.size(); ++c) {
      QCOMPARE(b.chars[c].frames, a.chars[c].frames);
      QCOMPARE(b.chars[c].box, a.chars[c].box);
      // Drawn where the box is: the image's rectangle scaled by the line's.
      const QRectF r = view->boxRect(Row::Truth, static_cast<int>(c));
      const QRectF img = view->imageRect();
      const double scale = img.width() / expected.imageW;
      QVERIFY(std::abs(r.left() - (img.left() + a.chars[c].box.x * scale)) < 1e-6);
      QVERIFY(std::abs(r.width() - a.chars[c].box.w * scale) < 1e-6);
    }
    // Both paths frame by frame, and the truth's rows of the posteriorgram exact.
    int differ = 0;
    for (int f = 0; f < a.frames; ++f) {
      const int c = a.pathChar[static_cast<size_t>(f)];
      QCOMPARE(view->forcedAt(f),
               c < 0 ? QStringLiteral("\u00b7") : QString::fromStdString(a.chars[c].text));
      differ += a.path[static_cast<size_t>(f)] != a.shownPath[static_cast<size_t>(f)];
    }
    QVERIFY(differ > 0);  // a misread line: the paths part somewhere
    const auto& rows = view->posteriorRows();
    QVERIFY(!rows.empty());
    QCOMPARE(rows.front(), QString());  // the blank first
    for (size_t c = 0; c < a.chars.size(); ++c) {
      const auto it = std::find(rows.begin(), rows.end(), QString::fromStdString(a.chars[c].text));
      QVERIFY(it != rows.end());
      const int row = static_cast<int>(it - rows.begin());
      for (int f = 0; f < a.frames; ++f)
        QCOMPARE(view->posteriorAt(row, f), a.charProbs[c][static_cast<size_t>(f)]);
    }
    QVERIFY2(panel.summaryText().contains("Misread"), qPrintable(panel.summaryText()));
    // The first misread true character is selected and explained (saliency by default).
    QTRY_VERIFY_WITH_TIMEOUT(explained.count() == 1, 60000);
    QCOMPARE(view->selectedRow(), Row::Truth);
    const auto& first = a.chars[static_cast<size_t>(view->selectedIndex())];
    QVERIFY(first.readText != first.text);
    QVERIFY2(panel.attributionText().contains("true") && panel.attributionText().contains("% in"),
             qPrintable(panel.attributionText()));
    // A click on a read character's label explains that one.
    const QRectF label = view->labelRect(Row::Read, 0);
    QTest::mouseClick(view, Qt::LeftButton, {}, label.center().toPoint());
    QCOMPARE(view->selectedRow(), Row::Read);
    QCOMPARE(view->selectedIndex(), 0);
    QTRY_VERIFY_WITH_TIMEOUT(explained.count() == 2, 60000);
    QVERIFY(panel.attributionText().contains("read"));
    QVERIFY(!view->hoverText(view->frameColumn(3).center()).isEmpty());
  }

  // kraken's own model on kraken's own Syriac line (right to left, 2544 px, hundreds of frames):
  // the truth aligned through the codec and kraken's reordering, every box on the line.
  void krakenLine() {
    const QString dir = QStringLiteral(FOVEAL_SOURCE_DIR "/../shared/fixtures/kraken/");
    if (!QFileInfo::exists(dir + "models/overfit.mlmodel")) QSKIP("no kraken fixtures");
    auto session = core::ModelSession::open((dir + "models/overfit.mlmodel").toStdString());
    const auto image = core::readImage((dir + "lines/000236.png").toStdString(), true);
    QFile gt(dir + "lines/000236.gt.txt");
    QVERIFY(gt.open(QIODevice::ReadOnly));
    const QString truth = QString::fromUtf8(gt.readAll()).trimmed();
    ui::WhyMisreadPanel panel;
    panel.resize(1100, 560);
    panel.show();
    QSignalSpy ready(&panel, &ui::WhyMisreadPanel::ready);
    QSignalSpy explained(&panel, &ui::WhyMisreadPanel::explained);
    QSignalSpy failed(panel.explainRunner(), &ui::ExplainRunner::failed);
    panel.setReading(session, image, ui::toQImage(image), "000236", truth);
    QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 60000);
    const auto trace = panel.view()->trace();
    QVERIFY(trace && trace->alignment.ok());
    QCOMPARE(panel.view()->frameCount(), trace->alignment.frames);
    const QRectF img = panel.view()->imageRect();
    for (int c = 0; c < static_cast<int>(trace->alignment.chars.size()); ++c) {
      const QRectF r = panel.view()->boxRect(ui::WhyMisreadView::Row::Truth, c);
      QVERIFY(r.left() >= img.left() - 1e-6 && r.right() <= img.right() + 1e-6);
    }
    // kraken models take no explanations yet: the attribution says so instead of drawing.
    QTRY_VERIFY_WITH_TIMEOUT(explained.count() + failed.count() >= 1, 60000);
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR"))
      QVERIFY(panel.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") +
                                "/why-misread-kraken.png"));
  }

  void impossibleTruthIsSaid() {
    auto session = core::ModelSession::open(kCrnn);
    ui::WhyMisreadPanel panel;
    QSignalSpy ready(&panel, &ui::WhyMisreadPanel::ready);
    core::GreyImage image(100, 32, std::vector<uint8_t>(3200, 255));
    panel.setReading(session, image, ui::toQImage(image), "blank", "12x");
    QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 30000);
    QVERIFY2(panel.summaryText().contains("outside the model's charset: 'x'"),
             qPrintable(panel.summaryText()));
    QVERIFY(!panel.view()->trace()->alignment.ok());
  }

  void inspectorOffersItForCtcWithATruth() {
    auto session = core::ModelSession::open(kCrnn);
    const Misread m = firstMisread(*session);
    QVERIFY(!m.truth.empty());
    ui::MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openModel(QString::fromStdString(kCrnn)));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 30000);
    w.document()->setImage(ui::toQImage(m.image), QString::fromStdString(m.source),
                           QString::fromStdString(m.truth));
    QTRY_VERIFY_WITH_TIMEOUT(w.trace() && !w.isTracing(), 60000);
    w.tabs()->setCurrentWidget(w.inspector());
    auto* button = w.inspector()->whyMisreadButton();
    QVERIFY(button);
    QTRY_VERIFY(button->isVisible());
    button->click();
    auto* dialog = w.inspector()->whyMisreadDialog();
    QVERIFY(dialog && dialog->isVisible());
    auto* panel = dialog->panel();
    QTRY_VERIFY_WITH_TIMEOUT(!panel->isBusy() && panel->trace(), 30000);
    QCOMPARE(panel->trace()->prediction, w.trace()->prediction);
    QVERIFY(panel->trace()->alignment.ok());
    QTRY_VERIFY_WITH_TIMEOUT(!panel->explainRunner()->isRunning(), 60000);
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) {
      QTest::qWait(300);
      QVERIFY(
          dialog->grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/why-misread.png"));
    }
    dialog->close();
    // Without a truth the button goes.
    w.setTruth(QString());
    QTRY_VERIFY(!button->isVisible());
    // An attention model reads by attention: nothing to align.
    QVERIFY(w.openModel(QStringLiteral(FOVEAL_SAMPLES_DIR "/models/soft.fvm")));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 30000);
    w.setTruth(QString::fromStdString(m.truth));
    QTRY_VERIFY_WITH_TIMEOUT(w.trace() && !w.isTracing() && !w.trace()->isCtc(), 60000);
    QVERIFY(!button->isVisible());
  }
};

QTEST_MAIN(TestWhyMisread)
#include "test_why_misread.moc"
