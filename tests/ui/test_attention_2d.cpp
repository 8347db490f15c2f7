// 2-D attention in the GUI (issue 16): the heat map over the image follows each cell's alpha at
// the cell's centre (1-D and 2-D traces, one code path), the per-step grid's cells, the alignment
// matrix with R*M columns and its row starts, cells named (row, column) in the readouts, and the
// compare page with a 1-D and a 2-D model side by side. Traces are built by hand where the
// geometry matters; real (tiny, untrained) models where the whole window is exercised. With
// FOVEAL_SCREENSHOT_DIR set, the documentation's 2-D screenshots are taken (see
// screenshots2d below).
#include <QCheckBox>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QRegularExpression>
#include <QSplitter>
#include <QtTest/QtTest>

#include "alignment_view.h"
#include "attention_grid.h"
#include "attention_plot.h"
#include "compare_page.h"
#include "dataset_browser.h"
#include "inspector_page.h"
#include "main_window.h"
#include "model_list_model.h"
#include "overlay_painter.h"
#include "step_cursor.h"
#include "test_models.h"
#include "trace/model_session.h"
#include "trace_view.h"

using namespace foveal;

namespace {

constexpr int kRows = 4, kColumns = 25;
constexpr int kHotRow = 2, kHotColumn = 10;
constexpr int kHot = kHotRow * kColumns + kHotColumn;

/// vgg2d's geometry at 100x32: cell (r, c) is centred at x = 4c, y = 8r + 4; its receptive field
/// is 46 px wide and taller than the image (so every box spans the image's height).
std::shared_ptr<core::Trace> gridTrace(int hot = kHot) {
  auto t = std::make_shared<core::Trace>();
  t->modelKind = "soft";
  t->patch = core::StepPatch::AlphaWeighted;
  t->imageW = 100;
  t->imageH = 32;
  t->gridRows = kRows;
  t->gridColumns = kColumns;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kColumns; ++c) t->regions.push_back({4.0 * c - 23, 0, 46, 32});
  auto& attention = t->addMap(core::kAttentionMap, "α");
  for (int s = 0; s < 3; ++s) {
    core::TraceStep st;
    st.token = std::to_string(s);
    st.prob = 0.9;
    // Step 0 looks at `hot`; the others elsewhere.
    st.region = s == 0 ? hot : s;
    auto& alpha = attention.steps.emplace_back(kRows * kColumns, 0.0);
    alpha[static_cast<size_t>(st.region)] = 1.0;
    st.focus = {4.0 * (st.region % kColumns), 16};
    st.box = t->regions[static_cast<size_t>(st.region)];
    t->steps.push_back(st);
  }
  t->prediction = "012";
  return t;
}

/// The paper's VGG at 100x32: 24 columns, column i covers x = 4i-19 .. 4i+26 (centre 4i + 4).
std::shared_ptr<core::Trace> columnTrace(int hot) {
  auto t = std::make_shared<core::Trace>();
  t->modelKind = "soft";
  t->patch = core::StepPatch::AlphaWeighted;
  t->imageW = 100;
  t->imageH = 32;
  t->gridRows = 1;
  t->gridColumns = 24;
  for (int i = 0; i < 24; ++i) t->regions.push_back({4.0 * i - 19, 0, 46, 32});
  core::TraceStep st;
  st.token = "7";
  t->addMap(core::kAttentionMap, "α").steps.emplace_back(24, 0.0)[static_cast<size_t>(hot)] = 1.0;
  st.region = hot;
  t->steps.push_back(st);
  t->prediction = "7";
  return t;
}

/// The weight a heat-map pixel shows: its colour without the premultiplication, matched to the
/// nearest colour of the ramp (heatColour).
double heatValue(QRgb premultiplied) {
  const QColor c(qUnpremultiply(premultiplied));
  double best = 0, bestDistance = 1e9;
  for (int k = 0; k <= 200; ++k) {
    const QColor h = ui::heatColour(k / 200.0);
    const double d = std::pow(h.red() - c.red(), 2) + std::pow(h.green() - c.green(), 2) +
                     std::pow(h.blue() - c.blue(), 2);
    if (d < bestDistance) {
      bestDistance = d;
      best = k / 200.0;
    }
  }
  return best;
}
bool isHot(QRgb premultiplied) { return heatValue(premultiplied) > 0.7; }
/// Cold: the ramp's bottom, and mostly transparent (the image shows through).
bool isCold(QRgb premultiplied) {
  return heatValue(premultiplied) < 0.1 && qAlpha(premultiplied) < 60;
}

QImage greyImage() {
  QImage img(100, 32, QImage::Format_RGB32);
  img.fill(qRgb(128, 128, 128));
  return img;
}

}  // namespace

class TestAttention2d : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_model1d, m_model2d;
  QString m_image = QStringLiteral(FOVEAL_SAMPLES_DIR "/images/digits-46214.png");

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    QCoreApplication::setOrganizationName(QStringLiteral("FovealTest2d"));
    QSettings().clear();
    auto flat = test::tinyConfig("soft");
    auto grid = test::tinyConfig("soft");
    grid.features = "vgg2d";
    grid.positions = "sine2d";
    m_model1d = m_dir.filePath("soft-1d.fvm");
    m_model2d = m_dir.filePath("soft-2d.fvm");
    core::ModelSession::create(flat, 1)->save(m_model1d.toStdString());
    core::ModelSession::create(grid, 2)->save(m_model2d.toStdString());
  }

  void cleanupTestCase() { QSettings().clear(); }
  // Each test starts from the default overlays (the inspector remembers its toggles).
  void init() { QSettings().remove(QStringLiteral("inspector/overlays")); }

  void gridLayoutAndNames() {
    const auto t = gridTrace();
    const auto g = ui::gridShape(*t);
    QCOMPARE(g.rows, kRows);
    QCOMPARE(g.columns, kColumns);
    QCOMPARE(g.cell(kHot), std::make_pair(kHotRow, kHotColumn));
    QCOMPARE(ui::regionName(*t, kHot), QStringLiteral("cell (2, 10)"));
    QCOMPARE(ui::cellCentre(*t, kHot), QPointF(40, 20));
    QCOMPARE(ui::cellCentre(*t, 0), QPointF(0, 4));
    const auto flat = columnTrace(12);
    QCOMPARE(ui::gridShape(*flat).rows, 1);
    QCOMPARE(ui::regionName(*flat, 12), QStringLiteral("region 12"));
    QCOMPARE(ui::cellCentre(*flat, 12), QPointF(52, 16));
    // A trace that states no grid (an older JSON trace) is one row of its regions.
    auto old = *t;
    old.gridRows = 1;
    old.gridColumns = 0;
    QCOMPARE(ui::gridShape(old).columns, kRows * kColumns);
    // The column marginal sums each column over the rows.
    std::vector<double> alpha(kRows * kColumns, 0.0);
    alpha[3] = 0.25;                // row 0, column 3
    alpha[2 * kColumns + 3] = 0.5;  // row 2, column 3
    alpha[kColumns + 7] = 0.25;     // row 1, column 7
    const auto m = ui::columnMarginal(*t, alpha);
    QCOMPARE(int(m.size()), kColumns);
    QCOMPARE(m[3], 0.75);
    QCOMPARE(m[7], 0.25);
  }

  // A one-hot alpha on cell (2, 10): the map's pixel at that cell's centre is hot, a far pixel
  // and the centres of the neighbouring cells are not; the peak lies at the cell's centre (40, 20),
  // not where a map stretched edge to edge would put it (42, 20).
  void heatMapFollowsTheCellAlpha2d() {
    const auto t = gridTrace();
    const QImage map = ui::heatMapImage(*t, t->attention(0), QSize(100, 32));
    QCOMPARE(map.size(), QSize(100, 32));
    QVERIFY(isHot(map.pixel(40, 20)));
    QVERIFY(isHot(map.pixel(39, 19)));
    QVERIFY(isCold(map.pixel(90, 4)));
    QVERIFY(isCold(map.pixel(5, 28)));
    QVERIFY(!isHot(map.pixel(40, 12)));  // cell (1, 10)'s centre
    QVERIFY(!isHot(map.pixel(48, 20)));  // cell (2, 12)'s centre
    int peak = 0;
    for (int x = 1; x < 100; ++x)
      if (qGreen(qUnpremultiply(map.pixel(x, 20))) > qGreen(qUnpremultiply(map.pixel(peak, 20))))
        peak = x;
    QVERIFY2(std::abs(peak + 0.5 - 40) <= 1, qPrintable(QString::number(peak)));
    int peakY = 0;
    for (int y = 1; y < 32; ++y)
      if (qGreen(qUnpremultiply(map.pixel(40, y))) > qGreen(qUnpremultiply(map.pixel(40, peakY))))
        peakY = y;
    QVERIFY2(std::abs(peakY + 0.5 - 20) <= 1, qPrintable(QString::number(peakY)));
    // Another cell moves the heat with it: cell (0, 20) at (80, 4).
    const auto other = gridTrace(20);
    const QImage moved = ui::heatMapImage(*other, other->attention(0), QSize(100, 32));
    QVERIFY(isHot(moved.pixel(80, 4)));
    QVERIFY(!isHot(moved.pixel(40, 20)));
    // A map at another resolution is the same field: the centre lies at (40, 20) of the image.
    const QImage large = ui::heatMapImage(*t, t->attention(0), QSize(400, 128));
    QVERIFY(isHot(large.pixel(160, 80)));
    QVERIFY(isCold(large.pixel(360, 16)));
  }

  // 1-D: one row, so the heat is the column's over the image's whole height.
  void heatMapFollowsTheColumnAlpha1d() {
    const auto t = columnTrace(12);  // centre x = 52
    const QImage map = ui::heatMapImage(*t, t->attention(0), QSize(100, 32));
    QVERIFY(isHot(map.pixel(52, 3)));
    QVERIFY(isHot(map.pixel(52, 28)));
    QVERIFY(isCold(map.pixel(10, 16)));
    QVERIFY(isCold(map.pixel(95, 16)));
    QVERIFY(!isHot(map.pixel(60, 16)));  // column 14's centre
    // A near-uniform alpha stays dark (kHeatFloor): nothing is hot.
    auto flat = *t;
    flat.maps[0].steps[0].assign(24, 1.0 / 24);
    const QImage dim = ui::heatMapImage(flat, flat.attention(0), QSize(100, 32));
    for (int x = 0; x < 100; x += 7) QVERIFY(!isHot(dim.pixel(x, 16)));
    // Alpha that does not cover the regions draws nothing.
    QVERIFY(ui::heatMapImage(*t, {0.5, 0.5}, QSize(100, 32)).isNull());
  }

  // The view blends the map over the image: with HeatImage on, the widget pixel at the cell's
  // centre is hot and a far one is not; off, both are the image's grey. For 1-D and 2-D.
  void traceViewBlendsTheHeatMap() {
    const std::pair<std::shared_ptr<core::Trace>, QPointF> cases[] = {
        {gridTrace(), QPointF(40, 20)}, {columnTrace(12), QPointF(52, 16)}};
    for (const auto& [trace, centre] : cases) {
      ui::TraceView view;
      view.resize(700, 320);
      view.setImage(greyImage());
      view.setTrace(trace);
      view.setOverlays({ui::overlay::kHeatImage});
      view.show();
      QVERIFY(QTest::qWaitForWindowExposed(&view));
      const QImage shot = view.grab().toImage();
      const qreal dpr = view.devicePixelRatioF();
      auto pixel = [&](const QImage& img, QPointF imagePoint) {
        const QPointF w = view.imageToWidget().map(imagePoint) * dpr;
        return QColor(img.pixel(w.toPoint()));
      };
      const QColor hot = pixel(shot, centre);
      // Hot over grey: green well above the grey and the blue (the ramp's yellow-green end).
      QVERIFY2(hot.green() > 160 && hot.green() > hot.blue() + 50, qPrintable(hot.name()));
      // Cold: the grey tinted violet (green below red and blue).
      const QColor far = pixel(shot, QPointF(centre.x() > 50 ? 6 : 94, 28));
      QVERIFY2(
          far.green() < 125 && far.green() < far.blue() && std::abs(far.red() - far.blue()) < 20,
          qPrintable(far.name()));
      view.setOverlays({});
      const QImage plain = view.grab().toImage();
      QCOMPARE(pixel(plain, centre), QColor(128, 128, 128));
    }
  }

  // The strip under the image shows a grid's column marginal: column 5 holds 0.2 in each of the
  // four rows (0.8 in all), column 9 holds 0.2 in one row; cell by cell they would look alike.
  void heatStripShowsTheColumnMarginal() {
    auto t = gridTrace();
    auto& alpha = t->maps[0].steps[0];
    alpha.assign(kRows * kColumns, 0.0);
    for (int r = 0; r < kRows; ++r) alpha[size_t(r * kColumns + 5)] = 0.2;
    alpha[9] = 0.2;
    ui::TraceView view;
    view.resize(700, 320);
    view.setImage(greyImage());
    view.setTrace(t);
    view.setOverlays({ui::overlay::kHeatStrip});
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QImage shot = view.grab().toImage();
    const QRectF img = view.imageToWidget().mapRect(QRectF(0, 0, 100, 32));
    auto stripAt = [&](int column) {
      return QPointF(view.imageToWidget().map(QPointF(4.0 * column, 0)).x(),
                     img.bottom() + 4 + (ui::TraceView::kStripHeight - 4) / 2.0);
    };
    auto colour = [&](int column) {
      return QColor(shot.pixel((stripAt(column) * view.devicePixelRatioF()).toPoint()));
    };
    for (int c : {5, 9, 15}) QCOMPARE(view.stripColumnAt(stripAt(c)), c);
    QCOMPARE(colour(5), ui::heatColour(1.0));
    QCOMPARE(colour(9), ui::heatColour(0.25));
    QCOMPARE(colour(15), ui::heatColour(0.0));
  }

  // The readouts name cells: hovering the image at a cell's centre, the strip's column marginal,
  // and the selected cell's label on the region box.
  void hoverNamesTheCell() {
    ui::TraceView view;
    view.resize(700, 320);
    view.setImage(greyImage());
    view.setTrace(gridTrace());
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const QPointF at = view.imageToWidget().map(QPointF(40, 20));
    QCOMPARE(view.regionAtImagePoint(at), kHot);
    const QString text = view.hoverText(at);
    QVERIFY2(text.contains("cell (2, 10)") && text.contains("1.0000") &&
                 text.contains("the step's region"),
             qPrintable(text));
    QVERIFY(view.hoverText(view.imageToWidget().map(QPointF(4, 4))).contains("cell (0, 1)"));
    const QRectF img = view.imageToWidget().mapRect(QRectF(0, 0, 100, 32));
    const QPointF strip(view.imageToWidget().map(QPointF(40, 0)).x(), img.bottom() + 6);
    QCOMPARE(view.stripColumnAt(strip), kHotColumn);
    const QString stripText = view.hoverText(strip);
    QVERIFY2(stripText.contains("column 10") && stripText.contains("4 rows: 1.0000"),
             qPrintable(stripText));
    // 1-D: the same readout names the region.
    view.setTrace(columnTrace(12));
    QVERIFY(view.hoverText(view.imageToWidget().map(QPointF(52, 16))).startsWith("region 12"));
  }

  void gridViewCells() {
    ui::AttentionGridView grid;
    grid.resize(520, 150);
    grid.setTrace(gridTrace());
    grid.show();
    QVERIFY(QTest::qWaitForWindowExposed(&grid));
    QCOMPARE(grid.shape().rows, kRows);
    QCOMPARE(grid.shape().columns, kColumns);
    const QRectF hot = grid.cellRect(kHotRow, kHotColumn);
    QVERIFY(hot.width() >= 10);
    QCOMPARE(hot.width(), hot.height());  // square cells
    QVERIFY(grid.rect().contains(grid.cellRect(kRows - 1, kColumns - 1).toRect()));
    QCOMPARE(grid.cellRect(kHotRow, kHotColumn + 1).left(), hot.right());
    QCOMPARE(grid.cellRect(kHotRow + 1, kHotColumn).top(), hot.bottom());
    QCOMPARE(grid.regionAt(hot.center()), kHot);
    QCOMPARE(grid.regionAt(grid.cellRect(0, 0).center()), 0);
    QCOMPARE(grid.regionAt(QPointF(1, 1)), -1);
    QCOMPARE(grid.cellColour(kHot), ui::heatColour(1.0));
    QCOMPARE(grid.cellColour(0), ui::heatColour(0.0));
    QVERIFY(grid.cellText(kHot).contains("row 2, column 10"));
    QVERIFY(grid.cellText(kHot).contains("α = 1.0000"));
    // What is painted is what it says.
    const QImage shot = grid.grab().toImage();
    const qreal dpr = grid.devicePixelRatioF();
    QCOMPARE(QColor(shot.pixel((hot.center() * dpr).toPoint())), ui::heatColour(1.0));
    QCOMPARE(QColor(shot.pixel((grid.cellRect(3, 24).center() * dpr).toPoint())),
             ui::heatColour(0.0));
    // Stepping moves the hot cell: step 1 looks at region 1 (cell (0, 1)).
    grid.setStep(1);
    QCOMPARE(grid.cellColour(1), ui::heatColour(1.0));
    QCOMPARE(grid.cellColour(kHot), ui::heatColour(0.0));
  }

  // Multi-head attention (PARSeq): the map menu offers each head and the first pass beside the
  // mean; choosing one moves the grid's hot cell, the bars, the alignment and the heat map to
  // that head's; a trace with one attention takes the entries away again.
  void headSelectorShowsEachHead() {
    auto t = gridTrace();           // the mean looks at kHot at step 0
    constexpr int kHeadTwoHot = 3;  // head 2 looks at cell (0, 3) at every step
    auto& h1 = t->addMap(std::string(core::kAttentionHeadPrefix) + "1", "α head 1");
    auto& h2 = t->addMap(std::string(core::kAttentionHeadPrefix) + "2", "α head 2");
    auto& first = t->addMap(core::kFirstPassAttentionMap, "α first pass");
    for (size_t s = 0; s < t->steps.size(); ++s) {
      h1.steps.push_back(t->attention(s));
      h2.steps.emplace_back(kRows * kColumns, 0.0)[kHeadTwoHot] = 1.0;
      // The first pass ran step 0 only: later steps fall back to the mean.
      first.steps.emplace_back(s == 0 ? std::vector<double>(kRows * kColumns, 0.0)
                                      : std::vector<double>{});
      if (s == 0) first.steps.back()[0] = 1.0;
    }
    QCOMPARE(t->attentionHeads(), 2);
    ui::StepCursor cursor;
    ui::InspectorPage page(&cursor);
    page.resize(1200, 700);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.setImage(greyImage());
    page.setTrace(t);
    cursor.setCount(3);
    cursor.setStep(0);
    auto* menu = page.findChild<QComboBox*>(QStringLiteral("heat-source"));
    QVERIFY(menu);
    QCOMPARE(menu->itemData(0).toString(), QString(core::kAttentionMap));
    QVERIFY(menu->itemText(0).contains("mean"));
    QCOMPARE(menu->itemData(1).toString(), QString("attention-head-1"));
    QCOMPARE(menu->itemData(2).toString(), QString("attention-head-2"));
    QCOMPARE(menu->itemData(3).toString(), QString(core::kFirstPassAttentionMap));
    QVERIFY(menu->itemText(2).contains("head 2 of 2"));
    QVERIFY(menu->findData(QString("saliency")) > 3);  // the explanations stay after them
    QCOMPARE(page.attentionGrid()->cellColour(kHot), ui::heatColour(1.0));
    // Head 2: every view follows.
    menu->setCurrentIndex(2);
    QCOMPARE(page.attentionGrid()->cellColour(kHeadTwoHot), ui::heatColour(1.0));
    QCOMPARE(page.attentionGrid()->cellColour(kHot), ui::heatColour(0.0));
    QCOMPARE(page.attentionPlot()->values().at(kHeadTwoHot), 1.0);
    QCOMPARE(page.traceView()->heatSource(), QString("attention-head-2"));
    QVERIFY(page.traceView()->pixelHeat().empty());  // an attention, not a pixel map
    const QImage headMap = page.traceView()->heatMap();
    const QImage meanMap = ui::heatMapImage(*t, t->attention(0), headMap.size());
    const QImage twoMap = ui::heatMapImage(*t, h2.steps[0], headMap.size());
    QCOMPARE(headMap, twoMap);
    QVERIFY(headMap != meanMap);
    if (qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR"))  // to look at, not committed
      QVERIFY(page.grab().save(qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR") + "/head-two.png"));
    // The first pass: its own map where it ran, the mean where it did not.
    menu->setCurrentIndex(3);
    QCOMPARE(page.attentionGrid()->cellColour(0), ui::heatColour(1.0));
    cursor.setStep(1);
    QCOMPARE(page.attentionGrid()->cellColour(1), ui::heatColour(1.0));  // the mean's step 1
    // Another reading with one attention: the head entries go, the menu falls back to the mean.
    menu->setCurrentIndex(2);
    page.setTrace(gridTrace());
    QCOMPARE(menu->currentData().toString(), QString(core::kAttentionMap));
    QCOMPARE(menu->itemText(0), QString("Attention"));
    QCOMPARE(menu->findData(QString("attention-head-1")), -1);
    QCOMPARE(page.traceView()->heatSource(), QString(core::kAttentionMap));
    cursor.setStep(0);
    QCOMPARE(page.attentionGrid()->cellColour(kHot), ui::heatColour(1.0));
  }

  // R*M columns, flattened row by row, with each grid row's start marked.
  void alignmentMatrixHasEveryCell() {
    ui::AlignmentView view;
    view.resize(560, 200);
    view.setTrace(gridTrace());
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.columnCount(), kRows * kColumns);
    const QRectF m = view.matrixRect();
    QVERIFY(qFuzzyCompare(view.columnWidth() * kRows * kColumns, m.width()));
    const auto starts = view.gridRowStarts();
    QCOMPARE(int(starts.size()), kRows);
    for (int r = 0; r < kRows; ++r)
      QVERIFY(
          qFuzzyCompare(1 + starts[size_t(r)], 1 + m.left() + r * kColumns * view.columnWidth()));
    const QPoint hot((starts[kHotRow] + (kHotColumn + 0.5) * view.columnWidth()),
                     m.top() + m.height() / 6);  // step 0's row
    QCOMPARE(view.stepAt(hot), 0);
    QCOMPARE(view.regionAt(hot), kHot);
    QVERIFY2(view.hoverText(hot).contains("cell (2, 10): α = 1.0000"),
             qPrintable(view.hoverText(hot)));
    // The hot cell is drawn hot.
    const QImage shot = view.grab().toImage();
    QCOMPARE(QColor(shot.pixel(hot * view.devicePixelRatioF())), ui::heatColour(1.0));
    // A 1-D trace keeps its one header line and has no row starts.
    view.setTrace(columnTrace(12));
    QCOMPARE(view.columnCount(), 24);
    QVERIFY(view.gridRowStarts().empty());
    QVERIFY(view.matrixRect().top() < m.top());
  }

  // The inspector shows the grid instead of the bar chart for a 2-D model and names the cell in
  // its step panel; a 1-D model keeps the bar chart.
  void inspectorShowsTheGridFor2d() {
    ui::StepCursor cursor;
    ui::InspectorPage page(&cursor);
    page.resize(1200, 700);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.setImage(greyImage());
    page.setTrace(gridTrace());
    cursor.setCount(3);
    cursor.setStep(0);
    QVERIFY(page.attentionGrid()->isVisible());
    QVERIFY(!page.attentionPlot()->isVisible());
    QVERIFY2(page.stepText().contains("cell (2, 10)"), qPrintable(page.stepText()));
    cursor.setStep(1);
    QVERIFY(page.stepText().contains("cell (0, 1)"));
    QCOMPARE(page.attentionGrid()->cellColour(1), ui::heatColour(1.0));
    page.setTrace(columnTrace(12));
    QVERIFY(page.attentionPlot()->isVisible());
    QVERIFY(!page.attentionGrid()->isVisible());
    QVERIFY2(page.stepText().contains("region 12"), qPrintable(page.stepText()));
    QCOMPARE(int(page.attentionPlot()->values().size()), 24);
  }

  // Real models: a 1-D and a 2-D model read the same image side by side; both draw their heat
  // maps, the 2-D one per cell; steps stay in sync; the inspector follows the 2-D model.
  void compareOneAndTwoDimensional() {
    ui::MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openModel(m_model1d));
    QVERIFY(w.openModel(m_model2d));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 30000);
    QVERIFY(w.errorText().isEmpty());
    QVERIFY(w.openImage(m_image));
    QTRY_VERIFY_WITH_TIMEOUT(w.comparePage()->columnCount() == 2 && !w.isTracing(), 60000);
    w.tabs()->setCurrentWidget(w.comparePage());
    auto* page = w.comparePage();
    QCOMPARE(page->summary()->rowCount(), 2);
    int flat = -1, grid = -1;
    for (int c = 0; c < 2; ++c) {
      auto* view = page->traceView(c);
      QTRY_VERIFY(view->isVisible());
      QCOMPARE(view->image().size(), QImage(m_image).size());
      QVERIFY(!view->heatMap().isNull());
    }
    // Which column is which: hovering the image names a cell (2-D) or a region (1-D).
    for (int c = 0; c < 2; ++c) {
      const QString hover =
          page->traceView(c)->hoverText(page->traceView(c)->imageToWidget().map(QPointF(50, 16)));
      if (hover.startsWith("cell ("))
        grid = c;
      else if (hover.startsWith("region "))
        flat = c;
    }
    QVERIFY(flat >= 0 && grid >= 0 && flat != grid);
    w.setStep(1);
    for (int c = 0; c < 2; ++c) QCOMPARE(page->traceView(c)->step(), 1);
    // With the heat map on (the inspector's toggle, which the compare page follows) both
    // columns draw it over their image, and differently.
    auto* heat =
        w.inspector()->findChild<QCheckBox*>(QStringLiteral("overlay-") + ui::overlay::kHeatImage);
    QVERIFY(heat);
    if (!heat->isChecked()) heat->click();
    for (int c = 0; c < 2; ++c) QVERIFY(page->traceView(c)->isOverlayOn(ui::overlay::kHeatImage));
    QTest::qWait(100);
    const auto oneD = page->traceView(flat)->trace(), twoD = page->traceView(grid)->trace();
    QVERIFY(oneD && twoD);
    QCOMPARE(ui::gridShape(*oneD).rows, 1);
    QCOMPARE(int(oneD->attention(1).size()), 24);
    QCOMPARE(twoD->gridRows, 4);
    QCOMPARE(twoD->gridColumns, 25);
    QCOMPARE(int(twoD->attention(1).size()), 100);
    const QImage a = page->traceView(flat)->heatMap(), b = page->traceView(grid)->heatMap();
    QCOMPARE(a.size(), b.size());
    // The 1-D map is the same down every column of pixels.
    for (int x = 0; x < a.width(); ++x)
      for (int y = 1; y < a.height(); ++y) QCOMPARE(a.pixel(x, y), a.pixel(x, 0));
    // The 2-D one is the step's alpha at its cells' centres.
    QCOMPARE(b, ui::heatMapImage(*twoD, twoD->attention(1), b.size()));
    QVERIFY(page->traceView(grid)
                ->hoverText(page->traceView(grid)->imageToWidget().map(ui::cellCentre(*twoD, 60)))
                .startsWith("cell (2, 10)"));
    // The inspector on the 2-D model: the grid, not the bar chart.
    w.tabs()->setCurrentWidget(w.inspector());
    QTRY_VERIFY(w.trace());
    if (ui::gridShape(*w.trace()).isGrid()) {
      QVERIFY(w.inspector()->attentionGrid()->isVisible());
      QCOMPARE(w.inspector()->attentionGrid()->shape().rows, 4);
      QCOMPARE(w.inspector()->alignmentView()->columnCount(), 100);
    } else {
      QVERIFY(w.inspector()->attentionPlot()->isVisible());
    }
  }

  // Issue 31: strhub's PARSeq (2-D attention over 8x16 patches), strhub's TRBA (1-D attention
  // over 33 columns, through DTRB's stages) and a sharp model side by side in Compare on one word
  // image ("42", of the strhub fixtures' images: digits, which the sharp model reads). Three cards,
  // each with a reading; the two strhub models read what strhub's own code read
  // (tests/data/*/expected.json), the sharp digits model reads digits. With FOVEAL_SCREENSHOT_DIR
  // set the page is saved as compare-parseq-trba-sharp.png (docs/screenshots).
  void compareParseqTrbaSharp() {
    const QString data = QStringLiteral(FOVEAL_SOURCE_DIR "/tests/data/");
    const QString image = data + "parseq/img01_40x30_rgb.png";
    const QString sharp = QStringLiteral(FOVEAL_SAMPLES_DIR "/models/sharp-pooling.fvm");
    ui::MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openModel(data + "parseq/parseq_small.ckpt"));
    QVERIFY(w.openModel(data + "trba/trba_small.ckpt"));
    QVERIFY(w.openModel(sharp));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 60000);
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    QVERIFY(w.openImage(image));
    QTRY_VERIFY_WITH_TIMEOUT(w.comparePage()->columnCount() == 3 && !w.isTracing(), 120000);
    w.tabs()->setCurrentWidget(w.comparePage());
    auto* page = w.comparePage();
    QCOMPARE(page->summary()->rowCount(), 3);
    QString parseq, trba, sharpReading;
    for (int c = 0; c < 3; ++c) {
      QTRY_VERIFY(page->traceView(c)->isVisible());
      QVERIFY(page->card(c)->isVisible());
      const auto t = page->traceView(c)->trace();
      QVERIFY(t);
      QVERIFY2(!t->prediction.empty(), t->stages.c_str());
      const QString reading = QString::fromStdString(t->prediction);
      // The card shows its reading.
      bool shown = false;
      for (auto* label : page->card(c)->findChildren<QLabel*>())
        shown = shown || label->text().contains(reading);
      QVERIFY2(shown, qPrintable(reading));
      if (t->stages.find("parseq") != std::string::npos) {
        parseq = reading;
        QCOMPARE(t->gridRows * t->gridColumns, 8 * 16);
      } else if (t->stages.rfind("tps-resnet-bilstm-attention", 0) == 0) {
        trba = reading;
        QCOMPARE(int(t->attention(0).size()), 33);
      } else if (t->stages.find("sharp") != std::string::npos) {
        sharpReading = reading;
      }
    }
    auto strhubReading = [&](const QString& dir) {
      QFile f(data + dir + "/expected.json");
      if (!f.open(QIODevice::ReadOnly)) return QString();
      const auto models = QJsonDocument::fromJson(f.readAll()).object()["models"].toArray();
      return models[0]
          .toObject()["results"]
          .toObject()["img01_40x30_rgb.png"]
          .toObject()["reading"]
          .toString();
    };
    QCOMPARE(parseq, strhubReading("parseq"));
    QCOMPARE(trba, strhubReading("trba"));
    QVERIFY2(!sharpReading.isEmpty() &&
                 sharpReading.count(QRegularExpression("[0-9]")) == sharpReading.size(),
             qPrintable(sharpReading));
    if (const QString shots = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR"); !shots.isEmpty()) {
      auto* heat = w.inspector()->findChild<QCheckBox*>(QStringLiteral("overlay-") +
                                                        ui::overlay::kHeatImage);
      if (heat && !heat->isChecked()) heat->click();
      w.setStep(1);
      QTest::qWait(300);
      QVERIFY(w.grab().save(shots + "/compare-parseq-trba-sharp.png"));
    }
  }

  // The documentation's screenshots of 2-D attention (docs/screenshots/attention-2d-*.png,
  // compare-1d-2d.png), 1366x768: only when FOVEAL_SCREENSHOT_DIR is set. FOVEAL_SCREENSHOT_2D
  // names the 2-D model (default: the untrained tiny one of this suite), FOVEAL_SCREENSHOT_1D the
  // 1-D one (default samples/models/soft.fvm); the image is samples/images/digits-46214.png;
  // FOVEAL_SCREENSHOT_STEP chooses the step (default 3, the "1" of 46214: its attention spreads
  // over four cells).
  void screenshots2d() {
    if (!qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_DIR")) QSKIP("FOVEAL_SCREENSHOT_DIR not set");
    const QString dir = qEnvironmentVariable("FOVEAL_SCREENSHOT_DIR");
    const QString model2d = qEnvironmentVariable("FOVEAL_SCREENSHOT_2D", m_model2d);
    QString model1d = qEnvironmentVariable("FOVEAL_SCREENSHOT_1D",
                                           QStringLiteral(FOVEAL_SAMPLES_DIR "/models/soft.fvm"));
    if (!QFileInfo::exists(model1d)) model1d = m_model1d;
    const int step = qEnvironmentVariableIsSet("FOVEAL_SCREENSHOT_STEP")
                         ? qEnvironmentVariableIntValue("FOVEAL_SCREENSHOT_STEP")
                         : 3;
    ui::MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(w.openModel(model1d));
    QVERIFY(w.openModel(model2d));
    QTRY_VERIFY_WITH_TIMEOUT(w.models()->loadingCount() == 0, 30000);
    QVERIFY2(w.errorText().isEmpty(), qPrintable(w.errorText()));
    QVERIFY(w.openImage(m_image));
    QTRY_VERIFY_WITH_TIMEOUT(w.comparePage()->columnCount() == 2 && !w.isTracing(), 60000);
    // The inspector on the 2-D model.
    if (!w.trace() || !ui::gridShape(*w.trace()).isGrid()) {
      auto* models = w.inspector()->findChild<QComboBox*>();
      QVERIFY(models);
      for (int i = 0; i < models->count(); ++i)
        if (models->itemText(i).contains(QFileInfo(model2d).completeBaseName())) {
          models->setCurrentIndex(i);
          Q_EMIT models->activated(i);
        }
      QTRY_VERIFY_WITH_TIMEOUT(w.trace() && ui::gridShape(*w.trace()).isGrid() && !w.isTracing(),
                               60000);
    }
    QCOMPARE(w.size(), QSize(1366, 768));
    w.tabs()->setCurrentWidget(w.inspector());
    auto* heat =
        w.inspector()->findChild<QCheckBox*>(QStringLiteral("overlay-") + ui::overlay::kHeatImage);
    QVERIFY(heat);
    if (!heat->isChecked()) heat->click();
    w.setStep(std::min(step, w.stepCount() - 1));
    QTest::qWait(300);
    QVERIFY(w.inspector()->attentionGrid()->isVisible());
    QVERIFY(w.grab().save(dir + "/attention-2d-heatmap.png"));
    // The grid and the alignment matrix at a larger share of the height, the heat map off.
    heat->click();
    if (auto* split = w.inspector()->findChild<QSplitter*>(QString(), Qt::FindDirectChildrenOnly);
        split) {
      const int h = split->height();
      split->setSizes({h / 2, h - h / 2});
    }
    QTest::qWait(300);
    QVERIFY(w.grab().save(dir + "/attention-2d-grid.png"));
    heat->click();
    w.tabs()->setCurrentWidget(w.comparePage());
    QTest::qWait(400);
    QVERIFY(w.grab().save(dir + "/compare-1d-2d.png"));
  }
};

QTEST_MAIN(TestAttention2d)
#include "test_attention_2d.moc"
