// Evaluation on a hand-built case: a recognizer whose weights are set so that it always reads "12"
// with uniform attention, over labels whose accuracy, normalised edit distance and entropy are
// known in advance; plus text scoring, the report formats and the Table 1 layout.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/text_metrics.h"
#include "data/dataset.h"
#include "model/recognizer.h"
#include "train/evaluate_model.h"
#include "train/evaluation.h"
#include "train/train_config.h"

using namespace foveal::core;
using namespace foveal::core::train;
using nlohmann::json;

namespace {

class LabelsOnly : public data::Dataset {
 public:
  explicit LabelsOnly(std::vector<std::string> labels) : m_labels(std::move(labels)) {}
  size_t size() const override { return m_labels.size(); }
  data::Sample get(size_t i) const override {
    data::Sample s;
    s.image.width = 96;
    s.image.height = 32;
    s.image.pixels.resize(96 * 32);
    for (size_t k = 0; k < s.image.pixels.size(); ++k) s.image.pixels[k] = (k * 37 + i) % 251;
    s.label = m_labels.at(i);
    return s;
  }
  std::string entryName(size_t i) const override { return "hand entry " + std::to_string(i); }
  std::string describe() const override { return "hand-built labels"; }

 private:
  std::vector<std::string> m_labels;
};

// The same images with a true box per character: the first character's box holds the image's
// centre (x 40..56 of 96), the second is exactly receptive field 0 clipped to the image.
class LabelsWithBoxes : public LabelsOnly {
 public:
  using LabelsOnly::LabelsOnly;
  std::vector<Box> charBoxes(size_t) const override {
    return {{40, 0, 16, 32}, {0, 0, (4.0 * 0 - 19 + 46) * 96 / 100, 32}};
  }
};

// Reads "12" whatever the image: p(y_t) = softmax(W [y_{t-1}; h] + b) with W acting on y_{t-1}
// only: start -> '1', '1' -> '2', '2' -> end. The attention score vector is zero: alpha uniform.
Recognizer reader12() {
  ModelConfig c;
  c.attention = "soft";
  c.width = 0.125;
  c.maxLength = 4;
  torch::manual_seed(0);
  Recognizer m(c);
  torch::NoGradGuard ng;
  auto params = m->named_parameters();
  const int K = m->numClasses();  // 11: end, '0'..'9'
  const int one = 2, two = 3;     // class of '1' and '2'
  auto w = params["prediction.output.weight"];
  auto b = params["prediction.output.bias"];
  w.zero_();
  b.zero_();
  b[one] = 50;  // t = 0: y0 = 0, the bias alone picks '1'
  w[two][one] = 100;
  w[0][two] = 100;
  params["prediction.attention.score.weight"].zero_();
  (void)K;
  return m;
}

}  // namespace

class TestTrainEval : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // Evaluation stops decoding once every image has read its end token: fewer steps, the same
  // readings, confidences and entropies up to the end.
  void earlyStopKeepsTheReadings() {
    auto model = reader12();
    model->eval();
    c10::InferenceMode guard;
    torch::manual_seed(1);
    auto images = torch::rand({3, 1, 32, 100}) * 2 - 1;
    DecodeOptions all, early;
    early.stopWhenAllEnded = true;
    const auto full = model->forward(images, {}, all);
    const auto cut = model->forward(images, {}, early);
    QCOMPARE(full.tokens.size(1), int64_t(5));  // maxLength + 1
    QCOMPARE(cut.tokens.size(1), int64_t(3));   // '1', '2', end
    QCOMPARE(model->readings(cut), model->readings(full));
    QVERIFY(torch::equal(cut.logProbs, full.logProbs.slice(1, 0, 3)));
    QVERIFY(torch::equal(cut.alpha, full.alpha.slice(1, 0, 3)));
    // Teacher forcing (training's loss) never stops early.
    early.targets = full.tokens;
    QCOMPARE(model->forward(images, {}, early).tokens.size(1), int64_t(5));
  }

  void handBuiltCase() {
    auto model = reader12();
    // truth : prediction "12" -> correct, NED
    //  "12"  : yes, 1
    //  "13"  : no, 1 - 1/2
    //  "123" : no, 1 - 1/3
    //  "2"   : no, 1 - 1/2
    //  "12"  : yes, 1
    //  "9999": no, 1 - 4/4 = 0
    auto ds = std::make_shared<LabelsOnly>(
        std::vector<std::string>{"12", "13", "123", "2", "12", "9999"});
    EvalOptions eo;
    eo.batchSize = 4;  // two batches, the second partial
    eo.loaderThreads = 1;
    const auto r = evaluateDataset(model, ds, "hand", eo, torch::Device(torch::kCPU));
    QCOMPARE(r.overall.count, int64_t(6));
    QCOMPARE(r.overall.correct, int64_t(2));
    QCOMPARE(r.overall.accuracy(), 2.0 / 6.0);
    const double ned = (1 + 0.5 + (1 - 1.0 / 3) + 0.5 + 1 + 0) / 6;
    QVERIFY(std::abs(r.overall.ned() - ned) < 1e-12);
    // Uniform attention over the 24 columns at each of the 3 decoded steps ('1', '2', end).
    QVERIFY2(std::abs(r.overall.entropy() - std::log(24.0)) < 1e-5,
             qPrintable(QString::number(r.overall.entropy())));
    QCOMPARE(int(r.byLength.size()), 4);
    QCOMPARE(r.byLength.at(2).count, int64_t(3));
    QCOMPARE(r.byLength.at(2).correct, int64_t(2));
    QCOMPARE(r.byLength.at(1).accuracy(), 0.0);
    QCOMPARE(r.byLength.at(4).ned(), 0.0);
    // dinglehopper's CER, pooled: edits 0+1+1+1+0+4 over truth characters 2+2+3+1+2+4.
    QCOMPARE(r.overall.cerDistance, int64_t(7));
    QCOMPARE(r.overall.cerLength, int64_t(14));
    QCOMPARE(r.overall.cer(), 0.5);
    QCOMPARE(r.byLength.at(3).cer(), 1.0 / 3.0);
    QCOMPARE(int(r.failures.size()), 4);
    QCOMPARE(r.failures[0].truth, std::string("13"));
    QCOMPARE(r.failures[0].prediction, std::string("12"));
    QCOMPARE(r.failures[0].index, size_t(1));
    QCOMPARE(r.failures[0].entry, std::string("hand entry 1"));
    QVERIFY(model->is_training());  // the mode it had before is restored

    // The report: pooled numbers, JSON, table, failures file.
    EvalReport rep;
    rep.model = "reader12";
    rep.datasets = {r, r};
    rep.datasets[1].name = "hand again";
    QCOMPARE(rep.overall().count, int64_t(12));
    QCOMPARE(rep.overall().accuracy(), 2.0 / 6.0);
    const auto j = json::parse(rep.toJson());
    QCOMPARE(j["overall"]["count"].get<int>(), 12);
    QCOMPARE(j["datasets"][0]["by_length"][1]["length"].get<int>(), 2);
    QCOMPARE(j["datasets"][0]["by_length"][1]["correct"].get<int>(), 2);
    const auto table = QString::fromStdString(rep.toTable());
    QVERIFY2(table.contains("33.33%"), qPrintable(table));
    QCOMPARE(j["overall"]["cer"].get<double>(), 0.5);
    QCOMPARE(j["overall"]["cer_chars"].get<int>(), 28);
    QVERIFY2(table.contains(" CER ") && table.contains("50.00%"), qPrintable(table));
    const auto tsv = QString::fromStdString(rep.failuresTsv());
    QVERIFY2(tsv.startsWith("dataset\tindex\tentry\ttruth\tprediction\n"), qPrintable(tsv));
    QVERIFY(tsv.contains("hand\t1\thand entry 1\t13\t12\n"));
    QCOMPARE(tsv.count('\n'), 1 + 8);
  }

  // dinglehopper's CER (its character_error_rate): Levenshtein distance over the NFC grapheme
  // clusters, divided by the truth's cluster count; computed by hand for each case.
  void dinglehopperCer_data() {
    QTest::addColumn<QString>("truth");
    QTest::addColumn<QString>("reading");
    QTest::addColumn<int>("clusters");  // of the truth
    QTest::addColumn<int>("distance");
    QTest::addColumn<double>("cer");
    QTest::newRow("equal") << "abc"
                           << "abc" << 3 << 0 << 0.0;
    QTest::newRow("one insertion") << "Foo"
                                   << "Food" << 3 << 1 << 1.0 / 3;
    QTest::newRow("case counts") << "Hello"
                                 << "hello" << 5 << 1 << 0.2;
    // n + U+0303 COMBINING TILDE is U+00F1 after NFC: no error (code points count one).
    QTest::newRow("decomposed equals precomposed")
        << QString::fromUtf8("Schly\u00f1") << QString::fromUtf8("Schlyn\u0303") << 6 << 0 << 0.0;
    // a + U+0308 + U+0332: NFC gives U+00E4 U+0332, one cluster; reading "a" substitutes it.
    QTest::newRow("combining marks are one character")
        << QString::fromUtf8("a\u0308\u0332") << "a" << 1 << 1 << 1.0;
    // Truth e + U+0301 (one cluster), reading e + U+0301 + U+0301 (another cluster): 1 edit.
    QTest::newRow("an extra mark substitutes the cluster")
        << QString::fromUtf8("xe\u0301") << QString::fromUtf8("xe\u0301\u0301") << 2 << 1 << 0.5;
    // Conjoining jamo U+1100 U+1161 compose to U+AC00: one character.
    QTest::newRow("hangul jamo") << QString::fromUtf8("\u1100\u1161b")
                                 << QString::fromUtf8("\uac00") << 2 << 1 << 0.5;
    // A ZWJ family emoji is one cluster of five code points.
    QTest::newRow("emoji ZWJ sequence")
        << QString::fromUtf8("a\U0001F468\u200D\U0001F469\u200D\U0001F467b") << "ab" << 3 << 1
        << 1.0 / 3;
    QTest::newRow("empty both") << ""
                                << "" << 0 << 0 << 0.0;
    QTest::newRow("empty truth") << ""
                                 << "ab" << 0 << 2 << std::numeric_limits<double>::infinity();
  }
  void dinglehopperCer() {
    if (!hasGraphemeClusters()) QSKIP("built without ICU: CER counts code points");
    QFETCH(QString, truth);
    QFETCH(QString, reading);
    QFETCH(int, clusters);
    QFETCH(int, distance);
    QFETCH(double, cer);
    const auto t = truth.toStdString(), r = reading.toStdString();
    QCOMPARE(int(graphemeClusters(t).size()), clusters);
    const auto e = characterErrors(r, t);
    QCOMPARE(e.distance, distance);
    QCOMPARE(e.truthLength, clusters);
    QCOMPARE(characterErrorRate(r, t), cer);
    const auto score = scorePrediction(r, t, /*textScoring=*/true);  // CER ignores text scoring
    QCOMPARE(score.cerDistance, distance);
    QCOMPARE(score.cerLength, clusters);
  }

  void textScoring() {
    QCOMPARE(normaliseForScoring("Hello, World!"), std::string("helloworld"));
    QVERIFY(scorePrediction("hello", "Hello!", true).correct);
    QVERIFY(!scorePrediction("hello", "Hello!", false).correct);
    QCOMPARE(scorePrediction("helo", "HELLO", true).ned, 0.8);
  }

  void digitProtocolLayout() {
    EvalReport rep;
    const auto sets = digitProtocolSets(100);
    for (size_t i = 0; i < sets.size(); ++i) {
      DatasetEval d;
      d.name = sets[i];
      d.overall.count = 100;
      d.overall.correct = 90 + static_cast<int64_t>(i % 5);  // n5..n13: 90..94, r likewise
      d.overall.nedSum = 95.0;                               // NED 0.95 on every set
      d.overall.entropySum = 10.0 * static_cast<double>(i);  // 0.0 .. 0.9: mean 0.45
      rep.datasets.push_back(d);
    }
    const auto table = digitProtocolTable({{"soft", rep}});
    const auto lines = QString::fromStdString(table).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[0].simplified() == "model n5 n7 n9 n11 n13 r5 r7 r9 r11 r13 mean ned entropy",
             qPrintable(lines[0]));
    QVERIFY2(lines[1].simplified() ==
                 "soft 90.0 91.0 92.0 93.0 94.0 90.0 91.0 92.0 93.0 94.0 92.0 0.950 0.450",
             qPrintable(lines[1]));
  }

  // Localisation through evaluation, with answers known by hand: reader12's alpha is uniform, so
  // every step's focus is the mean of the region centres, the image's centre (x 48 of 96), and its
  // box (the region of largest alpha: the first of equals) is region 0 clipped to the image. So
  // step 0 points into its box (IoU 0) and step 1 misses its box while its box is exactly it
  // (IoU 1): pointing 1/2, IoU 1/2 per image. "123" has two boxes for three characters: left out.
  void localisationThroughEvaluation() {
    auto model = reader12();
    auto ds = std::make_shared<LabelsWithBoxes>(std::vector<std::string>{"12", "13", "123"});
    EvalOptions eo;
    eo.loaderThreads = 1;
    const auto r = evaluateDataset(model, ds, "boxes", eo, torch::Device(torch::kCPU));
    const auto& l = r.overall.localisation;
    QCOMPARE(l.images, int64_t(2));
    QCOMPARE(l.steps, int64_t(4));
    QCOMPARE(l.hits, int64_t(2));
    QVERIFY2(std::abs(l.meanIou() - 0.5) < 1e-9, qPrintable(QString::number(l.meanIou())));
    QCOMPARE(l.correctImages, int64_t(1));
    QCOMPARE(l.correctPointing(), 0.5);
    QCOMPARE(r.byLength.at(2).localisation.steps, int64_t(4));
    QVERIFY(r.byLength.at(3).localisation.empty());
    EvalReport rep;
    rep.datasets = {r};
    const auto j = json::parse(rep.toJson());
    QCOMPARE(j["overall"]["pointing"].get<double>(), 0.5);
    QCOMPARE(j["datasets"][0]["localised_images"].get<int>(), 2);
    QVERIFY(!j["datasets"][0]["by_length"][1].contains("pointing"));  // length 3: no boxes
    QVERIFY2(QString::fromStdString(rep.toTable()).contains("50.00%"),
             qPrintable(QString::fromStdString(rep.toTable())));
    // Switched off (the trainer's periodic evaluation): nothing measured, nothing else changes.
    eo.localisation = false;
    const auto off = evaluateDataset(model, ds, "boxes", eo, torch::Device(torch::kCPU));
    QVERIFY(off.overall.localisation.empty());
    QCOMPARE(off.overall.correct, r.overall.correct);
    // Data without boxes: no localisation, and the JSON has no such keys.
    const auto plain =
        evaluateDataset(model, std::make_shared<LabelsOnly>(std::vector<std::string>{"12"}),
                        "plain", EvalOptions{}, torch::Device(torch::kCPU));
    QVERIFY(plain.overall.localisation.empty());
    EvalReport prep;
    prep.datasets = {plain};
    QVERIFY(!json::parse(prep.toJson())["overall"].contains("pointing"));
  }

  // Localisation in Table 1's layout: pointing accuracy per setting and its mean, then pooled:
  // pointing over the correctly read images, mean IoU over all and over those.
  void digitProtocolLocalisationLayout() {
    EvalReport rep;
    const auto sets = digitProtocolSets(100);
    for (size_t i = 0; i < sets.size(); ++i) {
      DatasetEval d;
      d.name = sets[i];
      d.overall.count = 10;
      // 10 images of 5 steps: 40 + i hits (80 % + 2 i %), IoU 0.5 each; the first 5 images
      // read right with every step a hit.
      for (int k = 0; k < 10; ++k) {
        ImageLocalisation one;
        one.steps = 5;
        one.hits = k < 5 ? 5 : (k < 5 + static_cast<int>(i) ? 4 : 3);
        one.iouSum = 2.5;
        d.overall.localisation.add(one, k < 5);
      }
      rep.datasets.push_back(d);
    }
    const auto table = digitProtocolLocalisationTable({{"runs/x/sharp.fvm", rep}});
    const auto lines = QString::fromStdString(table).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[0].simplified() ==
                 "model n5 n7 n9 n11 n13 r5 r7 r9 r11 r13 mean pooled pt(ok) IoU IoU(ok)",
             qPrintable(lines[0]));
    // Hits 40 + i of 50 -> 80.0, 82.0, ..., 98.0 (i < 5 then 5 more: capped by the 5 images).
    QVERIFY2(lines[1].simplified() ==
                 "sharp 80.0 82.0 84.0 86.0 88.0 90.0 90.0 90.0 90.0 90.0 87.0 87.0 100.0 0.500 "
                 "0.500",
             qPrintable(lines[1]));
    // Without boxes the rows say so.
    EvalReport none;
    none.datasets.push_back(DatasetEval{});
    none.datasets.back().name = sets[0];
    none.datasets.back().overall.count = 3;
    const auto empty = QString::fromStdString(digitProtocolLocalisationTable({{"crnn", none}}));
    QVERIFY2(empty.split('\n', Qt::SkipEmptyParts)[1].simplified().startsWith("crnn - - -"),
             qPrintable(empty));
  }
};

QTEST_APPLESS_MAIN(TestTrainEval)
#include "test_train_eval.moc"
