// Faithfulness (core/trace/faithfulness): the pure scores by hand, the deletion and insertion
// curves' ends, and on a model whose answer depends on one known region, deletion AUC ordered
// oracle map < random map < inverted map.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <numeric>
#include <random>

#include "image/preprocess.h"
#include "test_models.h"
#include "trace/attribution_engine.h"
#include "trace/faithfulness.h"
#include "trace/pixel_maps.h"
#include "train/faithfulness_eval.h"

using namespace foveal::core;
using foveal::test::tinyConfig;

namespace {

GreyImage strokes(int w, int h, uint64_t seed) {
  GreyImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(static_cast<size_t>(w * h));
  uint64_t s = seed;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const int base = ((x / 3 + y / 5) % 4 == 0) ? 30 : 210;
      img.pixels[static_cast<size_t>(y * w + x)] = static_cast<uint8_t>(base + (s >> 59));
    }
  return img;
}

}  // namespace

class TestFaithfulness : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(2); }

  void scoresByHand() {
    QCOMPARE(curveArea({1, 1, 1}), 1.0);
    QCOMPARE(curveArea({1, 0}), 0.5);
    QCOMPARE(curveArea({0, 1, 0, 1, 0}), 0.5);
    // Order: largest first, ties by index.
    QCOMPARE(mapOrder({0.5, 2, 0.5, 3}), (std::vector<size_t>{3, 1, 0, 2}));
    // A 20 x 10 map with its peak at (14, 3).
    std::vector<double> map(200, 0.0);
    map[3 * 20 + 14] = 5;
    map[0] = -9;  // negative mass counts for neither game
    QVERIFY(pointingHit(map, 20, 10, Box{10, 0, 5, 10}));
    QVERIFY(!pointingHit(map, 20, 10, Box{0, 0, 10, 10}));
    QVERIFY(pointingHit(map, 20, 10, Box{0, 0, 10, 10}, /*tolerance=*/5));
    QVERIFY(!pointingHit(std::vector<double>(200, 0.0), 20, 10, Box{0, 0, 20, 10}));
    std::vector<double> flat(200, 1.0);
    flat[5] = -3;
    QCOMPARE(weightingShare(flat, 20, 10, Box{10, 0, 10, 10}), 100.0 / 199.0);
    QCOMPARE(weightingShare(std::vector<double>(200, -1.0), 20, 10, Box{0, 0, 20, 10}), 0.0);
    // Spearman: monotone agreement is 1 whatever the scale, reversal -1, ties averaged.
    QCOMPARE(rankCorrelation({1, 2, 3, 4}, {10, 20, 30, 400}), 1.0);
    QCOMPARE(rankCorrelation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    QCOMPARE(rankCorrelation({1, 1, 1}, {1, 2, 3}), 0.0);
    // a = (1, 1, 2): ranks (0.5, 0.5, 2); b = (1, 2, 3): ranks (0, 1, 2) -> r = sqrt(3)/2.
    QVERIFY(std::abs(rankCorrelation({1, 1, 2}, {1, 2, 3}) - std::sqrt(3.0) / 2) < 1e-12);
    const auto r1 = randomMap(8, 4, 3), r2 = randomMap(8, 4, 3), r3 = randomMap(8, 4, 4);
    QCOMPARE(r1, r2);
    QVERIFY(r1 != r3);
  }

  // A map's order and ranks on a map of the curves' size with many ties (values on 7 levels, a
  // zero and a negative zero among them): the order a stable sort of the pixels gives, and the
  // ranks of a plain count (the number of smaller values plus half the equal others).
  void orderAndRanksOnTies() {
    std::mt19937 gen(5);
    std::vector<double> map(3200);
    for (auto& v : map) v = static_cast<double>(static_cast<int>(gen() % 7)) - 3.0;
    map[10] = -0.0;
    std::vector<size_t> stable(map.size());
    std::iota(stable.begin(), stable.end(), size_t(0));
    std::stable_sort(stable.begin(), stable.end(),
                     [&](size_t a, size_t b) { return map[a] > map[b]; });
    QCOMPARE(mapOrder(map), stable);
    // Gradient-like values of both signs and many magnitudes, zeros of both signs, repeats, and
    // a map too small for the radix sort: each in the stable sort's order.
    std::normal_distribution<double> normal(0.0, 1.0);
    for (size_t n : {size_t(3200), size_t(40)}) {
      std::vector<double> mixed(n);
      for (size_t i = 0; i < n; ++i) {
        const auto kind = gen() % 6;
        mixed[i] = kind == 0   ? 0.0
                   : kind == 1 ? -0.0
                   : kind == 2 && i > 0
                       ? mixed[gen() % i]
                       : normal(gen) * std::pow(10.0, static_cast<double>(gen() % 20) - 12);
      }
      std::vector<size_t> want(n);
      std::iota(want.begin(), want.end(), size_t(0));
      std::stable_sort(want.begin(), want.end(),
                       [&](size_t a, size_t b) { return mixed[a] > mixed[b]; });
      QCOMPARE(mapOrder(mixed), want);
    }
    std::vector<double> other(map.size());
    for (auto& v : other) v = static_cast<double>(gen() % 1000);
    // Spearman: the Pearson correlation of ranks counted by hand.
    auto countRanks = [](const std::vector<double>& v) {
      std::vector<double> r(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        double less = 0, equal = 0;
        for (double w : v) {
          less += w < v[i];
          equal += w == v[i];
        }
        r[i] = less + (equal - 1) / 2;
      }
      return r;
    };
    const auto ra = countRanks(map), rb = countRanks(other);
    const double want = torch::corrcoef(torch::stack(
        {torch::tensor(ra, torch::kDouble), torch::tensor(rb, torch::kDouble)}))[0][1]
                            .item<double>();
    QVERIFY(std::abs(rankCorrelation(map, other) - want) < 1e-12);
  }

  void tableAveragesPerMethod() {
    FaithfulnessTable t;
    FaithfulnessCurves a;
    a.deletionAuc = 0.2;
    a.insertionAuc = 0.8;
    FaithfulnessCurves b;
    b.deletionAuc = 0.4;
    b.insertionAuc = 0.6;
    std::vector<double> hit(4, 0.0), miss(4, 0.0);
    hit[0] = 1;
    miss[3] = 1;
    const Box box{0, 0, 1, 1};
    t.add("ig", a, hit, 2, 2, &box, 0.5);
    t.add("ig", b, miss, 2, 2, &box, std::numeric_limits<double>::quiet_NaN());
    t.add("random", b, miss, 2, 2, nullptr, 0.0);
    const auto rows = t.rows();
    QCOMPARE(rows.size(), size_t(2));
    QCOMPARE(rows[0].method, std::string("ig"));
    QVERIFY(std::abs(rows[0].deletionAuc - 0.3) < 1e-12);
    QVERIFY(std::abs(rows[0].insertionAuc - 0.7) < 1e-12);
    QCOMPARE(rows[0].pointing, 0.5);
    QCOMPARE(rows[0].weighting, 0.5);
    QCOMPARE(rows[0].rankCorrelation, 0.5);
    QCOMPARE(rows[1].boxed, int64_t(0));
    QVERIFY(std::isnan(rows[1].pointing));
    QVERIFY(QString::fromStdString(t.toTable()).contains("random"));
  }

  // eval --faithfulness scores several images at once (a model copy and one thread each) and
  // adds them to the table in image order: the table is the same to the bit as one worker's with
  // one thread (with two threads an operator's sums split differently: within 1e-6), and a stop
  // after the second image counts exactly two, however many were being scored.
  void workersGiveTheSameTable() {
    train::FaithfulnessOptions o;
    o.limit = 5;
    o.igSteps = 8;
    o.curves.points = 6;
    const std::string model = std::string(FOVEAL_SOURCE_DIR) + "/samples/models/soft.fvm";
    const std::string data = "digits:len=5,split=test,seed=1";
    o.workers = 1;
    const auto twoThreads = train::evaluateFaithfulness(model, data, o);
    at::set_num_threads(1);
    const auto one = train::evaluateFaithfulness(model, data, o);
    at::set_num_threads(2);
    o.workers = 2;
    const auto two = train::evaluateFaithfulness(model, data, o);
    QCOMPARE(two.table.images, 5);
    const auto a = one.table.rows(), b = two.table.rows();
    QCOMPARE(a.size(), size_t{3});
    QCOMPARE(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      QCOMPARE(b[i].method, a[i].method);
      QCOMPARE(b[i].steps, a[i].steps);
      QCOMPARE(b[i].steps, int64_t{25});
      QCOMPARE(b[i].boxed, a[i].boxed);
      QCOMPARE(b[i].deletionAuc, a[i].deletionAuc);
      QCOMPARE(b[i].insertionAuc, a[i].insertionAuc);
      QCOMPARE(b[i].pointing, a[i].pointing);
      QCOMPARE(b[i].weighting, a[i].weighting);
      QCOMPARE(b[i].correlated, a[i].correlated);
      QCOMPARE(b[i].rankCorrelation, a[i].rankCorrelation);
      const auto& c = twoThreads.table.rows()[i];
      QVERIFY2(std::abs(c.deletionAuc - a[i].deletionAuc) < 1e-6,
               qPrintable(QString("%1: deletion %2 against %3")
                              .arg(QString::fromStdString(a[i].method))
                              .arg(c.deletionAuc, 0, 'g', 12)
                              .arg(a[i].deletionAuc, 0, 'g', 12)));
      QVERIFY2(std::abs(c.insertionAuc - a[i].insertionAuc) < 1e-6,
               qPrintable(QString("%1: insertion %2 against %3")
                              .arg(QString::fromStdString(a[i].method))
                              .arg(c.insertionAuc, 0, 'g', 12)
                              .arg(a[i].insertionAuc, 0, 'g', 12)));
      QCOMPARE(c.pointing, a[i].pointing);
    }
    std::vector<int64_t> seen;
    o.progress = [&](int64_t done, int64_t) {
      seen.push_back(done);
      return done < 2;
    };
    const auto stopped = train::evaluateFaithfulness(model, data, o);
    QCOMPARE(stopped.table.images, 2);
    QCOMPARE(seen, (std::vector<int64_t>{1, 2}));
    QCOMPARE(at::get_num_threads(), 2);  // the caller's threads are back
  }

  // A CTC column without a sequence stage reads only its receptive field: a model whose answer
  // at that column depends on one known region (x 77..123 of a 200-px input, the image unscaled).
  // Deleting that region first (the oracle) must lower the token's probability sooner than a
  // random order, and a random order sooner than deleting everything else first (the inverse).
  void deletionOrdersOracleRandomInverted() {
    auto cfg = tinyConfig("soft");
    cfg.prediction = "ctc";
    cfg.sequence = "none";
    cfg.preprocessing.inputW = 200;
    torch::manual_seed(17);
    Recognizer model(cfg);
    model->eval();
    const GreyImage img = strokes(200, 32, 3);
    const int column = 24;
    const Box field = model->geometry().regionBoxes()[column];
    QCOMPARE(field.x, 77.0);
    QCOMPARE(field.w, 46.0);
    // The token to explain: the class whose probability at the column the image raises most
    // above the mid-grey image's.
    int token = 0;
    {
      torch::NoGradGuard ng;
      Trace probe;
      probe.decoder = "ctc";
      ForcedReading none;
      none.ctc = true;
      const auto src = sourceTensor(img, cfg.preprocessing);
      auto lp = forcedLogProbs(model, none, torch::cat({src, torch::zeros_like(src)}), {});
      auto gain = lp[0][column].exp() - lp[1][column].exp();  // [K]
      token = static_cast<int>(gain.argmax().item<int64_t>());
      QVERIFY(gain[token].item<double>() > 0.05);
    }
    Trace tr;
    tr.imageW = 200;
    tr.imageH = 32;
    tr.decoder = "ctc";
    TraceStep st;
    st.tokenIndex = token;
    st.columns = {column};
    tr.steps.push_back(st);

    std::vector<double> oracle(200 * 32), inverted(200 * 32);
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 200; ++x) {
        const bool in = x >= field.x && x < field.x + field.w;
        oracle[static_cast<size_t>(y * 200 + x)] = in ? 1.0 : 0.0;
        inverted[static_cast<size_t>(y * 200 + x)] = in ? 0.0 : 1.0;
      }
    CurveOptions o;
    o.points = 21;
    o.batch = 16;
    std::vector<CurveRequest> requests = {{0, oracle}, {0, inverted}};
    for (uint64_t seed = 1; seed <= 3; ++seed) requests.push_back({0, randomMap(200, 32, seed)});
    const auto curves = deletionInsertionCurves(model, img, tr, requests, o);
    QCOMPARE(curves.size(), requests.size());
    double random = 0;
    for (size_t i = 2; i < curves.size(); ++i) random += curves[i].deletionAuc / 3;
    const double oracleAuc = curves[0].deletionAuc, invertedAuc = curves[1].deletionAuc;
    QVERIFY2(oracleAuc < random && random < invertedAuc,
             qPrintable(QString("deletion AUC: oracle %1, random %2, inverted %3")
                            .arg(oracleAuc)
                            .arg(random)
                            .arg(invertedAuc)));
    // Insertion runs the other way round.
    double randomIns = 0;
    for (size_t i = 2; i < curves.size(); ++i) randomIns += curves[i].insertionAuc / 3;
    QVERIFY2(curves[0].insertionAuc > randomIns && randomIns > curves[1].insertionAuc,
             qPrintable(QString("insertion AUC: oracle %1, random %2, inverted %3")
                            .arg(curves[0].insertionAuc)
                            .arg(randomIns)
                            .arg(curves[1].insertionAuc)));
    // Every curve starts at p(image) when deleting and ends there when inserting; deletion ends
    // at the mid-grey image.
    const auto src = sourceTensor(img, cfg.preprocessing);
    ForcedReading reading = forcedReading(model, tr);
    torch::NoGradGuard ng;
    auto lp = forcedLogProbs(model, reading, torch::cat({src, torch::zeros_like(src)}), {});
    const double p = lp[0][column][token].exp().item<double>();
    const double grey = lp[1][column][token].exp().item<double>();
    for (const auto& c : curves) {
      QCOMPARE(c.deletion.size(), size_t(21));
      QVERIFY(std::abs(c.deletion.front() - p) < 1e-5);
      QVERIFY(std::abs(c.deletion.back() - grey) < 1e-5);
      QVERIFY(std::abs(c.insertion.back() - p) < 1e-5);
      QVERIFY(std::abs(c.deletionAuc - curveArea(c.deletion)) < 1e-12);
    }
  }

  // Every point of every curve is the step's probability on the image built by hand (the map's
  // first pixels mid-grey, or put back into the blurred image), read by a full teacher-forced
  // decode: for an attention model whose curves' images are read once for their shared ends and
  // otherwise in batches sorted by step, each batch's decoder stopping at its latest step.
  void curvePointsMatchAFullDecodeOfEachImage() {
    torch::manual_seed(23);
    Recognizer model(tinyConfig("soft"));
    model->eval();
    const GreyImage img = strokes(48, 32, 5);
    Trace tr;
    tr.imageW = 48;
    tr.imageH = 32;
    tr.decoder = "attention";
    for (int t = 0; t < 4; ++t) {
      TraceStep st;
      st.tokenIndex = 3 + t;
      st.region = t;
      tr.steps.push_back(st);
    }
    const int64_t N = 48 * 32;
    std::vector<CurveRequest> requests = {{2, randomMap(48, 32, 1)},
                                          {0, randomMap(48, 32, 2)},
                                          {3, randomMap(48, 32, 3)},
                                          {2, randomMap(48, 32, 4)},
                                          // maps given again at other steps: read once each
                                          {1, randomMap(48, 32, 2)},
                                          {3, randomMap(48, 32, 1)}};
    CurveOptions o;
    o.points = 5;
    o.batch = 4;  // batches that mix steps and shared images
    const auto curves = deletionInsertionCurves(model, img, tr, requests, o);
    const auto reading = forcedReading(model, tr);
    const auto src = sourceTensor(img, model->config.preprocessing);
    const auto blurred = gaussianBlur(src, 32.0 / 4);
    torch::NoGradGuard ng;
    for (size_t r = 0; r < requests.size(); ++r) {
      const auto order = mapOrder(requests[r].map);
      for (int k = 0; k < o.points; ++k) {
        const int64_t count = std::llround(double(k) / (o.points - 1) * double(N));
        auto mask = torch::zeros({1, 1, 32, 48});
        auto m = mask.view({-1});
        for (int64_t i = 0; i < count; ++i) m[static_cast<int64_t>(order[i])] = 1.0;
        const auto both = torch::cat({src * (1 - mask), blurred * (1 - mask) + src * mask});
        const auto lp = forcedLogProbs(model, reading, both);  // every step decoded
        const int step = requests[r].step;
        const double del = lp[0][step][tr.steps[step].tokenIndex].exp().item<double>();
        const double ins = lp[1][step][tr.steps[step].tokenIndex].exp().item<double>();
        QVERIFY2(std::abs(curves[r].deletion[k] - del) < 1e-5,
                 qPrintable(QString("request %1 point %2: deletion %3, by hand %4")
                                .arg(r)
                                .arg(k)
                                .arg(curves[r].deletion[k])
                                .arg(del)));
        QVERIFY2(std::abs(curves[r].insertion[k] - ins) < 1e-5,
                 qPrintable(QString("request %1 point %2: insertion %3, by hand %4")
                                .arg(r)
                                .arg(k)
                                .arg(curves[r].insertion[k])
                                .arg(ins)));
      }
    }
  }

  // Attention's per-region values over the source pixels: each value at its region's centre,
  // linear between centres, constant beyond the outermost.
  void regionMapsLandOnTheirCentres() {
    Trace tr;
    tr.imageW = 40;
    tr.imageH = 4;
    tr.regions = {Box{0, 0, 10, 4}, Box{10, 0, 10, 4}, Box{20, 0, 20, 4}};
    tr.regionCentres = {{5.5, 2}, {15.5, 2}, {30.5, 2}};
    const auto px = regionMapToPixels(tr, {0.0, 1.0, 0.5});
    QCOMPARE(px.size(), size_t(160));
    QCOMPARE(px[0], 0.0);                                         // before the first centre
    QCOMPARE(px[5], 0.0);                                         // pixel 5's centre is 5.5
    QCOMPARE(px[15], 1.0);                                        // the second centre
    QVERIFY(std::abs(px[10] - 0.5) < 1e-12);                      // 10.5: halfway
    QVERIFY(std::abs(px[3 * 40 + 23] - (1 - 4.0 / 15)) < 1e-12);  // 23.5: 8/15 of the way to 0.5
    QCOMPARE(px[39], 0.5);                                        // after the last
    QVERIFY_THROWS_EXCEPTION(Error, regionMapToPixels(tr, {1.0}));
    // A signed map overlays in red and blue; the image stays its size.
    std::vector<double> signedMap(160, 0.0);
    signedMap[0] = 1;
    signedMap[1] = -1;
    GreyImage img(40, 4, std::vector<uint8_t>(160, 128));
    const auto o = overlayImage(img, signedMap);
    QCOMPARE(o.rgb.size(), size_t(480));
    QVERIFY(o.rgb[0] > o.rgb[2]);  // red
    QVERIFY(o.rgb[5] > o.rgb[3]);  // blue
  }
};

QTEST_APPLESS_MAIN(TestFaithfulness)
#include "test_faithfulness.moc"
