// Receptive-field geometry: the layer arithmetic, and a check of it against autograd.
#include <torch/torch.h>
#include <QtTest/QtTest>

#include "base/error.h"
#include "model/backbone.h"
#include "model/geometry.h"

using namespace foveal::core;

class TestGeometry : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void columnsAndBoxes_data() {
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("columns");
    QTest::addColumn<int>("column");
    QTest::addColumn<double>("x0");
    QTest::addColumn<double>("x1");  // inclusive last pixel
    QTest::newRow("100 first") << 100 << 24 << 0 << -19.0 << 26.0;
    QTest::newRow("100 middle") << 100 << 24 << 12 << 29.0 << 74.0;
    QTest::newRow("100 last") << 100 << 24 << 23 << 73.0 << 118.0;
    QTest::newRow("180 upsampled") << 180 << 44 << 10 << 21.0 << 66.0;
    QTest::newRow("200 upsampled") << 200 << 49 << 48 << 173.0 << 218.0;
    QTest::newRow("patch 24") << 24 << 5 << 2 << -11.0 << 34.0;
    QTest::newRow("coarse patch 64") << 64 << 15 << 14 << 37.0 << 82.0;
  }
  void columnsAndBoxes() {
    QFETCH(int, width);
    QFETCH(int, columns);
    QFETCH(int, column);
    QFETCH(double, x0);
    QFETCH(double, x1);
    const auto rf = receptiveField(vggLayers(1.0), width, 32);
    QCOMPARE(rf.columns, columns);
    QCOMPARE(rf.rows, 1);
    QCOMPARE(rf.sizeX, 46.0);
    QCOMPARE(rf.sizeY, 86.0);
    const Box b = rf.box(column);
    QCOMPARE(b.x, x0);
    QCOMPARE(b.x + b.w - 1, x1);
    QCOMPARE(b.h, 86.0);
    const Box c = rf.clippedBox(column);
    QCOMPARE(c.y, 0.0);
    QCOMPARE(c.h, 32.0);
    QCOMPARE(c.x, x0);  // columns are not clipped: the sharpener pads beyond the image
  }

  void geometryDoesNotDependOnWidthMultiplier() {
    const auto a = receptiveField(vggLayers(1.0), 100, 32);
    const auto b = receptiveField(vggLayers(0.125), 100, 32);
    QCOMPARE(a.columns, b.columns);
    QCOMPARE(a.box(7), b.box(7));
  }

  void tooSmallInputIsAnError() {
    QVERIFY_THROWS_EXCEPTION(foveal::core::Error, receptiveField(vggLayers(1.0), 3, 32));
  }

  void backboneOutputMatchesGeometry_data() {
    QTest::addColumn<int>("width");
    QTest::newRow("100") << 100;
    QTest::newRow("180") << 180;
    QTest::newRow("24") << 24;
  }
  void backboneOutputMatchesGeometry() {
    QFETCH(int, width);
    torch::manual_seed(0);
    VggBackbone net(VggBackboneOptions(0.125));
    auto f = net->forward(torch::randn({2, 1, 32, width}));
    const auto rf = net->geometry(width, 32);
    QCOMPARE(f.size(0), int64_t(2));
    QCOMPARE(f.size(1), int64_t(rf.columns));
    QCOMPARE(f.size(2), int64_t(net->outChannels()));
  }

  // docs/DESIGN.md: with max pools the gradient support is smaller than the receptive field, so the
  // check runs on a copy with average pools and positive constant weights: then the gradient of
  // one output column w.r.t. the input is non-zero exactly inside that column's (clipped) box.
  void boxesAgreeWithAutograd_data() {
    QTest::addColumn<int>("column");
    for (int c : {0, 1, 5, 12, 22, 23}) QTest::newRow(qPrintable(QString::number(c))) << c;
  }
  void boxesAgreeWithAutograd() {
    QFETCH(int, column);
    VggBackbone net(VggBackboneOptions(0.125).average_pools(true));
    net->eval();
    {
      torch::NoGradGuard g;
      for (auto& p : net->named_parameters()) {
        if (p.key().find("weight") != std::string::npos)
          p.value().fill_(0.05);
        else
          p.value().fill_(0.0);
      }
    }
    net->to(torch::kDouble);
    auto x = torch::ones({1, 1, 32, 100}, torch::dtype(torch::kDouble).requires_grad(true));
    auto f = net->forward(x);  // [1, 24, C]
    f.select(1, column).sum().backward();
    auto support = (x.grad().abs() > 0).squeeze();  // [32, 100]
    auto cols = support.any(0);
    auto rows = support.any(1);
    const auto box = net->geometry(100, 32).clippedBox(column);
    const int x0 = std::max(0, static_cast<int>(box.x));
    const int x1 = std::min(100, static_cast<int>(box.x + box.w));  // exclusive
    for (int i = 0; i < 100; ++i)
      QVERIFY2(
          cols[i].item<bool>() == (i >= x0 && i < x1),
          qPrintable(
              QString("column %1, pixel x=%2, box %3..%4").arg(column).arg(i).arg(x0).arg(x1 - 1)));
    QVERIFY(rows.all().item<bool>());  // 86 rows tall: covers all 32
    // Inside the box the support is full: every pixel of the box influences the column.
    QCOMPARE(support.narrow(1, x0, x1 - x0).all().item<bool>(), true);
  }

  // The vertical extent (86 px) only shows on a taller input, where a middle output row's box
  // lies wholly inside the image.
  void verticalExtentAgreesWithAutograd() {
    VggBackbone net(VggBackboneOptions(0.125).average_pools(true));
    net->eval();
    {
      torch::NoGradGuard g;
      for (auto& p : net->named_parameters())
        p.value().fill_(p.key().find("weight") != std::string::npos ? 0.05 : 0.0);
    }
    net->to(torch::kDouble);
    auto x = torch::ones({1, 1, 128, 100}, torch::dtype(torch::kDouble).requires_grad(true));
    auto f = net->featureMap(x);  // [1, C, rows, 24]
    const auto rf = net->geometry(100, 128);
    QCOMPARE(f.size(2), int64_t(rf.rows));
    const int row = 2, column = 12;
    f.select(2, row).select(2, column).sum().backward();
    auto support = (x.grad().abs() > 0).squeeze();
    auto rows = support.any(1);
    const double y0 = rf.startY + row * rf.jumpY - (rf.sizeY - 1) / 2;
    QCOMPARE(rf.sizeY, 86.0);
    for (int y = 0; y < 128; ++y)
      QVERIFY2(rows[y].item<bool>() == (y >= y0 && y < y0 + 86), qPrintable(QString::number(y)));
    QCOMPARE(support.any(0).sum().item<int64_t>(), int64_t(46));
  }
};

QTEST_APPLESS_MAIN(TestGeometry)
#include "test_geometry.moc"
