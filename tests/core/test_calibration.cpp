// Calibration (train/calibration.h): the reliability diagram's bins, ECE and MCE against
// hand-computed values, the characters' confidences against the truth, the report's table,
// JSON, SVG and PNG, and a shipped model's diagram on digits agreeing with `eval`.
#include <QXmlStreamReader>
#include <QtTest/QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "image/chart_png.h"
#include "image/grey_image.h"
#include "trace/trace.h"
#include "train/calibration.h"
#include "train/evaluation.h"

using namespace foveal::core;
using namespace foveal::core::train;

namespace {

QString errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

Trace traceOf(const std::vector<std::pair<std::string, double>>& steps) {
  Trace t;
  for (const auto& [token, p] : steps) {
    TraceStep s;
    s.token = token;
    s.prob = p;
    t.steps.push_back(s);
    if (token != "<end>") t.prediction += token;
  }
  return t;
}

// Seven predictions whose ECE is worked out by hand below.
ReliabilityDiagram handDiagram() {
  auto d = makeReliabilityDiagram(10, "line");
  const double conf[] = {0.05, 0.15, 0.15, 0.95, 0.95, 0.95, 1.0};
  const bool right[] = {false, false, true, true, true, false, true};
  for (int i = 0; i < 7; ++i) d.add(conf[i], right[i]);
  return d;
}

}  // namespace

class TestCalibration : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;

 private Q_SLOTS:
  void eceByHand() {
    const auto d = handDiagram();
    // bin 0: one at 0.05, wrong: |0 - 0.05| = 0.05. bin 1: two at 0.15, one right: |0.5 - 0.15|
    // = 0.35. bin 9: 0.95 x 3 and 1.0 (the last bin is closed), three right: |0.75 - 0.9625| =
    // 0.2125. ECE = (1 * 0.05 + 2 * 0.35 + 4 * 0.2125) / 7 = 1.6 / 7; MCE = 0.35.
    QCOMPARE(d.count, int64_t(7));
    QCOMPARE(d.bins[0].count, int64_t(1));
    QCOMPARE(d.bins[1].count, int64_t(2));
    QCOMPARE(d.bins[9].count, int64_t(4));
    for (int b = 2; b < 9; ++b) QCOMPARE(d.bins[b].count, int64_t(0));
    QVERIFY(std::abs(d.bins[9].meanConfidence() - 0.9625) < 1e-12);
    QVERIFY(std::abs(d.bins[9].accuracy() - 0.75) < 1e-12);
    QVERIFY(std::abs(d.ece() - 1.6 / 7) < 1e-12);
    QVERIFY(std::abs(d.mce() - 0.35) < 1e-12);
    QVERIFY(std::abs(d.accuracy() - 4.0 / 7) < 1e-12);
    // A perfectly calibrated pair of bins: ECE 0.
    auto perfect = makeReliabilityDiagram(2, "line");
    perfect.add(0.25, true);
    for (int i = 0; i < 3; ++i) perfect.add(0.25, false);
    perfect.add(0.75, true);
    perfect.add(0.75, true);
    perfect.add(0.75, true);
    perfect.add(0.75, false);
    QVERIFY(std::abs(perfect.ece()) < 1e-12);
    // Edges: 0.1 goes to [0.1, 0.2), 0 to the first bin.
    auto edges = makeReliabilityDiagram(10, "line");
    edges.add(0.1, true);
    edges.add(0.0, false);
    QCOMPARE(edges.bins[1].count, int64_t(1));
    QCOMPARE(edges.bins[0].count, int64_t(1));
    QVERIFY(errorOf([&] { edges.add(std::nan(""), true); }).contains("not a probability"));
    QVERIFY(errorOf([&] { edges.add(1.5, true); }).contains("not a probability"));
    QVERIFY(errorOf([] { makeReliabilityDiagram(0, "line"); }).contains("between 1 and 1000"));
  }

  void charactersAgainstTheTruth() {
    // "cat" read for "cut": c right, a wrong, t right; the end step is no character.
    const auto c = characterConfidences(
        traceOf({{"c", 0.9}, {"a", 0.8}, {"t", 0.7}, {"<end>", 0.99}}), "cut", false);
    QCOMPARE(c.confidence, (std::vector<double>{0.9, 0.8, 0.7}));
    QCOMPARE(c.correct, (std::vector<bool>{true, false, true}));
    // Exact scoring: case counts; text scoring: case-blind, punctuation is no character.
    const auto exact =
        characterConfidences(traceOf({{"C", 0.6}, {"-", 0.5}, {"t", 0.4}}), "ct", false);
    QCOMPARE(exact.correct, (std::vector<bool>{false, false, true}));
    const auto text =
        characterConfidences(traceOf({{"C", 0.6}, {"-", 0.5}, {"t", 0.4}}), "ct", true);
    QCOMPARE(text.confidence, (std::vector<double>{0.6, 0.4}));
    QCOMPARE(text.correct, (std::vector<bool>{true, true}));
    // A character the reading left out costs nothing here: only read characters have a
    // confidence.
    const auto deleted = characterConfidences(traceOf({{"c", 0.9}, {"t", 0.8}}), "cat", false);
    QCOMPARE(deleted.correct, (std::vector<bool>{true, true}));
  }

  void reportTableJsonAndPlots() {
    QVERIFY(m_dir.isValid());
    CalibrationReport r;
    r.model = "m.fvm";
    r.dataset = "d";
    r.scoring = "exact";
    r.images = 7;
    r.lines = handDiagram();
    r.characters = handDiagram();
    r.characters.level = "character";
    const QString table = QString::fromStdString(r.toTable());
    QVERIFY2(table.contains("ECE 0.2286") && table.contains("MCE 0.3500"), qPrintable(table));
    QVERIFY(table.contains("[0.90, 1.00]"));
    const auto j = nlohmann::json::parse(r.toJson());
    QVERIFY(std::abs(j["lines"]["ece"].get<double>() - 1.6 / 7) < 1e-12);
    QCOMPARE(j["lines"]["bins"].size(), size_t(10));
    QCOMPARE(j["characters"]["bins"][1]["count"].get<int>(), 2);
    // The SVG is well-formed XML with one bar (and one gap) per non-empty bin of each diagram.
    const QString svg = QString::fromStdString(r.svg());
    QXmlStreamReader xml(svg);
    int rects = 0;
    while (!xml.atEnd())
      if (xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("rect"))
        ++rects;
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    // background + per diagram: 3 bars, the gaps of the 2 over-confident bins filled, all 3
    // gaps outlined, the frame, the legend's 2 swatches and an outline
    QCOMPARE(rects, 1 + 2 * (3 + 2 + 3 + 1 + 3));
    QVERIFY(svg.contains("ECE 0.229"));
    const std::string svgPath = m_dir.filePath("r.svg").toStdString();
    writeCalibrationPlot(r, svgPath);
    QVERIFY(QFileInfo(QString::fromStdString(svgPath)).size() > 1000);
    QVERIFY(errorOf([&] {
              writeCalibrationPlot(r, m_dir.filePath("r.gif").toStdString());
            }).contains(".png or .svg"));
    if (!ChartCanvas::available() || !hasImageCodecs()) return;
    const std::string png = m_dir.filePath("r.png").toStdString();
    writeCalibrationPlot(r, png);
    const GreyImage back = readImage(png, true);
    QCOMPARE(back.width, 1000);
    QCOMPARE(back.height, 520);
    // The accuracy bar of the [0.9, 1] bin of the lines' diagram (0.75 high) is drawn: its
    // middle is the bar colour, (74, 127, 181).
    const int left = 64, top = 44, size = std::min(500 - 84, 520 - 130);  // as drawDiagram
    const int x = left + static_cast<int>(0.95 * size),
              y = top + size - static_cast<int>(0.4 * size);
    const size_t at = (static_cast<size_t>(y) * 1000 + x) * 3;
    QVERIFY2(
        back.rgb[at] == 74 && back.rgb[at + 1] == 127 && back.rgb[at + 2] == 181,
        qPrintable(
            QString("%1 %2 %3").arg(back.rgb[at]).arg(back.rgb[at + 1]).arg(back.rgb[at + 2])));
  }

  // The shipped CRNN on 30 digit sequences: its lines' accuracy is the word accuracy `eval`
  // reports on the same images; the characters counted are the steps read.
  void shippedModelAgreesWithEval() {
    const std::string model = std::string(FOVEAL_SAMPLES_DIR) + "/models/crnn.fvm";
    const std::string data = "digits:len=7,split=test,seed=3,count=30";
    CalibrationOptions o;
    const auto r = evaluateCalibration(model, data, o);
    QCOMPARE(r.images, int64_t(30));
    QCOMPARE(r.lines.count, int64_t(30));
    QVERIFY(r.characters.count >= 30 * 6);
    QCOMPARE(r.scoring, std::string("exact"));
    EvalOptions eo;
    eo.localisation = false;
    const auto report = evaluateModelFile(model, {data}, eo);
    QCOMPARE(r.lines.correct, report.overall().correct);
    QVERIFY(r.lines.ece() >= 0 && r.lines.ece() <= 1);
    o.bins = 5;
    o.limit = 4;
    const auto few = evaluateCalibration(model, data, o);
    QCOMPARE(few.images, int64_t(4));
    QCOMPARE(few.lines.bins.size(), size_t(5));
  }
};

QTEST_APPLESS_MAIN(TestCalibration)
#include "test_calibration.moc"
