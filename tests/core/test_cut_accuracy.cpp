// Cut accuracy (train/cut_accuracy.h): one character's IoU, width and offset by hand, and the
// shipped CRNN's greedy cuts scored as eval's localisation scores them, its forced-alignment cuts
// equal to them on the lines it reads right.
#include <QtTest/QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "train/cut_accuracy.h"
#include "train/evaluation.h"

using namespace foveal::core;
using namespace foveal::core::train;

class TestCutAccuracy : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void byHand() {
    // A 10-px character and a box shifted by half a character: IoU 50 / 150, width 1, offset
    // +0.5 (its centre at x = 10, the true box's right edge, which is outside); the second
    // character has no box: IoU 0, nothing else counted.
    const auto s = scoreCuts({{5, 0, 10, 10}}, {{0, 0, 10, 10}, {10, 0, 10, 10}});
    QCOMPARE(s.chars, int64_t(2));
    QCOMPARE(s.boxed, int64_t(1));
    QVERIFY(std::abs(s.meanIou() - 1.0 / 6) < 1e-12);
    QVERIFY(std::abs(s.meanWidthRatio() - 1.0) < 1e-12);
    QVERIFY(std::abs(s.meanOffset() - 0.5) < 1e-12);
    QCOMPARE(s.centreInside, int64_t(0));
    // A box half as wide, centred: IoU 0.5, width 0.5, offset 0, centre inside.
    const auto n = scoreCuts({{2.5, 0, 5, 10}}, {{0, 0, 10, 10}});
    QVERIFY(std::abs(n.meanIou() - 0.5) < 1e-12);
    QVERIFY(std::abs(n.meanWidthRatio() - 0.5) < 1e-12);
    QVERIFY(std::abs(n.meanOffset()) < 1e-12);
    QCOMPARE(n.centreInside, int64_t(1));
  }

  void shippedCrnnAgreesWithEval() {
    const std::string model = std::string(FOVEAL_SAMPLES_DIR) + "/models/crnn.fvm";
    const std::string data = "digits:len=9,rotated,split=test,seed=2,count=40";
    CutOptions o;
    const CutReport r = measureCuts(model, data, o);
    QCOMPARE(r.kind, std::string("ctc"));
    QCOMPARE(r.images, int64_t(40));
    QCOMPARE(r.kinds.size(), size_t(4));
    const auto& greedy = r.kinds[0];
    const auto& forced = r.kinds[1];
    QCOMPARE(greedy.all.chars, int64_t(40 * 9));
    QCOMPARE(forced.all.chars, int64_t(40 * 9) - 9 * r.unaligned);
    // eval's localisation: the same steps' boxes against the same slots.
    EvalOptions eo;
    const auto report = evaluateModelFile(model, {data}, eo);
    const auto loc = report.overall().localisation;
    QCOMPARE(loc.steps, greedy.all.chars);
    QVERIFY2(std::abs(loc.meanIou() - greedy.all.meanIou()) < 1e-9,
             qPrintable(QString("%1 %2").arg(loc.meanIou()).arg(greedy.all.meanIou())));
    QCOMPARE(report.overall().correct, r.right);
    // Read right, the truth's best path is the greedy path: the same cuts.
    QVERIFY(r.right > 0);
    QCOMPARE(forced.right.chars, greedy.right.chars);
    QVERIFY(std::abs(forced.right.iouSum - greedy.right.iouSum) < 1e-9);
    const auto j = nlohmann::json::parse(r.toJson());
    QCOMPARE(j["cuts"][1]["boxes"].get<std::string>(), std::string("forced"));
    QVERIFY(QString::fromStdString(cutTable({r})).contains("forced"));
    const CutReport soft =
        measureCuts(std::string(FOVEAL_SAMPLES_DIR) + "/models/soft.fvm", data, CutOptions{5, {}});
    QCOMPARE(soft.kinds.size(), size_t(1));
    QCOMPARE(soft.kinds[0].name, std::string("attention"));
    QCOMPARE(soft.images, int64_t(5));
  }
};

QTEST_APPLESS_MAIN(TestCutAccuracy)
#include "test_cut_accuracy.moc"
