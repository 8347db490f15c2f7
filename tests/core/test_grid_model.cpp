// 2-D attention (issue 16): the grid stage's cells and their receptive fields, checked with
// autograd; a grid of one row is the column model; the rows of a grid are read one by one; the
// cells' sine positions; the configurations that cannot work are refused.
// Shapes, gradients, trace fields and REINFORCE of the 2-D glimpses run in test_model and
// test_trace, whose configuration lists (tests/support/test_models.h) include them.
#include <torch/torch.h>
#include <QtTest/QtTest>

#include "base/error.h"
#include "model/backbone.h"
#include "model/recognizer.h"
#include "model/stages/cell_positions.h"
#include "model/stages/stage_registry.h"
#include "test_models.h"

using namespace foveal::core;

namespace {

// The geometry check's network: max pools replaced by average pools of the same kernel, stride
// and padding, every weight a positive constant (docs/DESIGN.md "Checking it with autograd").
VggBackbone averagingGrid() {
  VggBackbone net(VggBackboneOptions(0.125).average_pools(true).grid(true));
  net->eval();
  torch::NoGradGuard g;
  for (auto& p : net->named_parameters())
    p.value().fill_(p.key().find("weight") != std::string::npos ? 0.05 : 0.0);
  net->to(torch::kDouble);
  return net;
}

template <class Interface>
Interface* child(Recognizer& model, const std::string& name) {
  for (const auto& c : model->named_children())
    if (c.key() == name) return dynamic_cast<Interface*>(c.value().get());
  return nullptr;
}

}  // namespace

class TestGridModel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void gridGeometry() {
    const auto rf = featureGeometry("vgg2d", 0.125, 100, 32);
    QVERIFY(rf.grid);
    QCOMPARE(rf.rows, 4);
    QCOMPARE(rf.columns, 25);
    QCOMPARE(rf.regionCount(), 100);
    // By hand from the layers: 42 x 62 pixels, 4 px between columns and 8 px between rows.
    QCOMPARE(rf.sizeX, 42.0);
    QCOMPARE(rf.sizeY, 62.0);
    QCOMPARE(rf.jumpX, 4.0);
    QCOMPARE(rf.jumpY, 8.0);
    // Region 2 * 25 + 10 is row 2, column 10.
    const Box b = rf.regionBox(2 * 25 + 10);
    QCOMPARE(b.x, 4.0 * 10 + 1.5 - 20.5);
    QCOMPARE(b.y, 8.0 * 2 + 3.5 - 30.5);
    QCOMPARE(rf.regionCentre(2 * 25 + 10).y, 20.0);
    // Clipped, every cell spans the 32 rows; the centres stay apart.
    QCOMPARE(rf.clippedRegionBox(0).h, 32.0);
    QCOMPARE(rf.regionCentre(0).y, 4.0);
    QCOMPARE(rf.regionCentre(99).y, 28.0);
    // The column stages: a grid flag off, their regions the columns.
    const auto cols = featureGeometry("vgg", 0.125, 100, 32);
    QVERIFY(!cols.grid);
    QCOMPARE(cols.regionCount(), 24);
    for (int i = 0; i < 24; ++i) QCOMPARE(cols.clippedRegionBox(i), cols.clippedBox(i));
  }

  // Each cell's gradient support on the average-pool copy is exactly its box, on an input tall
  // enough that the box lies inside it (128 rows: a 16 x 25 grid).
  void cellBoxesAgreeWithAutograd_data() {
    QTest::addColumn<int>("row");
    QTest::addColumn<int>("column");
    QTest::newRow("top left") << 0 << 0;
    QTest::newRow("middle") << 7 << 12;
    QTest::newRow("row 5, column 3") << 5 << 3;
    QTest::newRow("bottom right") << 15 << 24;
  }
  void cellBoxesAgreeWithAutograd() {
    QFETCH(int, row);
    QFETCH(int, column);
    auto net = averagingGrid();
    auto x = torch::ones({1, 1, 128, 100}, torch::dtype(torch::kDouble).requires_grad(true));
    auto g = net->grid(x);  // [1, R, M, C]
    const auto rf = net->geometry(100, 128);
    QCOMPARE(g.size(1), int64_t(rf.rows));
    QCOMPARE(g.size(2), int64_t(rf.columns));
    QCOMPARE(rf.rows, 16);
    g.select(1, row).select(1, column).sum().backward();
    auto support = (x.grad().abs() > 0).squeeze();  // [128, 100]
    const Box box = rf.clippedRegionBox(row * rf.columns + column);
    const int x0 = std::max(0, static_cast<int>(box.x)),
              x1 = std::min(100, static_cast<int>(box.x + box.w));
    const int y0 = static_cast<int>(box.y), y1 = static_cast<int>(box.y + box.h);
    auto cols = support.any(0), rows = support.any(1);
    for (int i = 0; i < 100; ++i)
      QVERIFY2(cols[i].item<bool>() == (i >= x0 && i < x1),
               qPrintable(QString("x=%1, box %2..%3").arg(i).arg(x0).arg(x1 - 1)));
    for (int i = 0; i < 128; ++i)
      QVERIFY2(rows[i].item<bool>() == (i >= y0 && i < y1),
               qPrintable(QString("y=%1, box %2..%3").arg(i).arg(y0).arg(y1 - 1)));
    // Inside the box every pixel counts.
    QVERIFY(support.narrow(0, y0, y1 - y0).narrow(1, x0, x1 - x0).all().item<bool>());
  }

  // At the models' own input height (32) the cells' columns agree with autograd too.
  void cellColumnsAgreeWithAutogradAt32() {
    auto net = averagingGrid();
    const auto rf = net->geometry(100, 32);
    for (int region : {0, 37, 99}) {
      auto x = torch::ones({1, 1, 32, 100}, torch::dtype(torch::kDouble).requires_grad(true));
      auto g = net->grid(x).flatten(1, 2);  // [1, 100, C]
      g.select(1, region).sum().backward();
      auto support = (x.grad().abs() > 0).squeeze();
      const Box box = rf.clippedRegionBox(region);
      const int x0 = std::max(0, static_cast<int>(box.x)),
                x1 = std::min(100, static_cast<int>(box.x + box.w));
      QCOMPARE(support.any(0).sum().item<int64_t>(), int64_t(x1 - x0));
      QCOMPARE(support.any(0)[x0].item<bool>(), true);
      QVERIFY(support.any(1).all().item<bool>());  // 62 rows tall: all 32
    }
  }

  // A grid of one row (vgg2d on an 8-pixel-high input) through the recognizer gives exactly what
  // the column model's path gives with the same weights: the stage's columns, the sequence
  // stage on them, the decoder on its output.
  void gridOfOneRowIsTheColumnModel_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("soft") << "soft";
    QTest::newRow("hard") << "hard";
  }
  void gridOfOneRowIsTheColumnModel() {
    QFETCH(QString, kind);
    auto cfg = foveal::test::tinyConfig(kind.toStdString());
    cfg.features = "vgg2d";
    cfg.preprocessing.inputH = 8;
    torch::manual_seed(3);
    Recognizer model(cfg);
    model->eval();
    QCOMPARE(model->geometry().rows, 1);
    QCOMPARE(model->geometry().regionCount(), 25);
    auto image = torch::rand({3, 1, 8, 100}) * 2 - 1;
    torch::NoGradGuard ng;
    auto grid = model->forward(image, {});

    auto* features = child<VggBackboneImpl>(model, "features");
    auto* sequence = child<SequenceModel>(model, "sequence");
    auto* prediction = child<Prediction>(model, "prediction");
    QVERIFY(features && sequence && prediction);
    auto columns = features->forward(image);  // [B, M, C]: the column path
    QCOMPARE(columns.size(1), int64_t(25));
    auto reference = prediction->predict(sequence->encode(columns), {}, {});
    QVERIFY(torch::equal(grid.logProbs, reference.logProbs));
    QVERIFY(torch::equal(grid.alpha, reference.alpha));
    QVERIFY(torch::equal(grid.tokens, reference.tokens));
    QVERIFY(torch::equal(grid.selected, reference.selected));
  }

  // With several rows, each row is a sequence of its own: the encoding of row r is the sequence
  // stage run on row r alone; the regions run row by row.
  void rowsAreReadOneByOne() {
    auto cfg = foveal::test::tinyGridConfig("soft");
    cfg.positions = "none";
    torch::manual_seed(4);
    Recognizer model(cfg);
    model->eval();
    auto image = torch::rand({2, 1, 32, 100}) * 2 - 1;
    torch::NoGradGuard ng;
    auto* features = child<VggBackboneImpl>(model, "features");
    auto* sequence = child<SequenceModel>(model, "sequence");
    auto g = features->grid(image);  // [2, 4, 25, C]
    QCOMPARE(g.sizes().vec(), (std::vector<int64_t>{2, 4, 25, cfg.cnnChannels()}));
    // Trace the regions the decoder attends over: alpha [B, T, 100].
    auto out = model->forward(image, {});
    QCOMPARE(out.alpha.size(2), int64_t(100));
    // Decode with the rows encoded one at a time and concatenated: the same result.
    std::vector<torch::Tensor> rows;
    for (int r = 0; r < 4; ++r) rows.push_back(sequence->encode(g.select(1, r)));
    auto x = torch::cat(rows, 1);  // [2, 100, D]
    auto* prediction = child<Prediction>(model, "prediction");
    auto reference = prediction->predict(x, {}, {});
    QVERIFY(torch::allclose(out.logProbs, reference.logProbs, 1e-5, 1e-6));
    QVERIFY(torch::allclose(out.alpha, reference.alpha, 1e-5, 1e-7));
  }

  void sinePositions() {
    const auto e = sineGrid2d(4, 25, 16);  // [100, 16]
    QCOMPARE(e.sizes().vec(), (std::vector<int64_t>{100, 16}));
    // Cell (0, 0): sin 0 = 0, cos 0 = 1 in both halves.
    for (int d = 0; d < 16; ++d) QCOMPARE(e[0][d].item<float>(), d % 2 == 0 ? 0.0f : 1.0f);
    // The first half depends on the row only, the second on the column only.
    QVERIFY(torch::equal(e[1 * 25 + 3].narrow(0, 0, 8), e[1 * 25 + 17].narrow(0, 0, 8)));
    QVERIFY(torch::equal(e[0 * 25 + 3].narrow(0, 8, 8), e[2 * 25 + 3].narrow(0, 8, 8)));
    // Row 1, lowest frequency (1): sin 1, cos 1.
    QVERIFY(std::abs(e[25][0].item<float>() - std::sin(1.0f)) < 1e-6);
    QVERIFY(std::abs(e[25][1].item<float>() - std::cos(1.0f)) < 1e-6);
    // Every cell's code differs from every other's.
    auto d = (e.unsqueeze(0) - e.unsqueeze(1)).pow(2).sum(-1);  // [100, 100]
    QCOMPARE((d < 1e-4).sum().item<int64_t>(), int64_t(100));
    QVERIFY_THROWS_EXCEPTION(Error, sineGrid2d(4, 25, 18));
  }

  // The positions start at gain 0 (a warm start begins as the model it came from) and add
  // gain * encoding; the gain learns.
  void positionsStartAtZeroAndLearn() {
    auto cfg = foveal::test::tinyGridConfig("soft");
    torch::manual_seed(5);
    Recognizer with(cfg);
    cfg.positions = "none";
    torch::manual_seed(5);
    Recognizer without(cfg);
    auto image = torch::rand({2, 1, 32, 100}) * 2 - 1;
    with->eval();
    without->eval();
    {
      torch::NoGradGuard ng;
      QVERIFY(
          torch::equal(with->forward(image, {}).logProbs, without->forward(image, {}).logProbs));
    }
    auto params = with->named_parameters();
    auto* gain = params.find("positions.gain");
    QVERIFY(gain);
    QCOMPARE(gain->item<float>(), 0.0f);
    with->train();
    DecodeOptions opt;
    opt.targets = torch::randint(1, 11, {2, cfg.steps()}, torch::kLong);
    auto out = with->forward(image, {}, opt);
    LossInputs in;
    in.targets = opt.targets;
    in.lengths = torch::full({2}, 3, torch::kLong);
    with->loss(out, in).total.backward();
    QVERIFY(gain->grad().defined());
    QVERIFY(gain->grad().abs().item<float>() > 0);
  }

  void refusals() {
    auto ctc = foveal::test::tinyConfig("soft");
    ctc.prediction = "ctc";
    ctc.features = "vgg2d";
    try {
      ctc.validate();
      QFAIL("a CTC model on a grid was accepted");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("CTC reads one row of columns"), e.what());
    }
    auto odd = foveal::test::tinyGridConfig("soft");
    odd.sequence = "none";
    odd.featureChannels = 18;  // 18 % 4 != 0
    try {
      odd.validate();
      QFAIL("sine2d positions on 18 dimensions were accepted");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("divisible by 4"), e.what());
    }
    auto unknown = foveal::test::tinyGridConfig("soft");
    unknown.positions = "learned";
    QVERIFY_THROWS_EXCEPTION(Error, unknown.validate());
    // The JSON round trip keeps the stage and the positions.
    const auto back = ModelConfig::fromJson(foveal::test::tinyGridConfig("hard").toJson());
    QCOMPARE(back.features, std::string("vgg2d"));
    QCOMPARE(back.positions, std::string("sine2d"));
    QVERIFY(back.isGrid());
  }
};

QTEST_APPLESS_MAIN(TestGridModel)
#include "test_grid_model.moc"
