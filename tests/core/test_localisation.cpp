// Localisation (docs/DESIGN.md "Localisation"): each step's focus and box by glimpse, the pointing
// accuracy and mean IoU on hand-made traces whose answers are known, and the hOCR export (it
// parses as XHTML and its boxes are the JSON's).
#include <QXmlStreamReader>
#include <QtTest/QtTest>
#include <nlohmann/json.hpp>

#include <torch/torch.h>

#include "base/error.h"
#include "image/preprocess.h"
#include "model/recognizer.h"
#include "trace/localisation.h"
#include "trace/model_session.h"
#include "trace/trace.h"
#include "trace/trace_builder.h"

using namespace foveal::core;
using nlohmann::json;

namespace {

// Four regions 10 px wide side by side on a 40 x 10 image.
std::vector<Box> fourRegions() {
  return {{0, 0, 10, 10}, {10, 0, 10, 10}, {20, 0, 10, 10}, {30, 0, 10, 10}};
}

TraceStep stepAt(int region, const std::string& token = "1") {
  TraceStep s;
  s.token = token;
  s.region = region;
  return s;
}

}  // namespace

class TestLocalisation : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void softFocusIsAlphaWeightedMeanAndBoxTheLargestRegion() {
    const std::vector<double> alpha = {0.0, 0.25, 0.75, 0.0};  // centres 15 and 25: mean 22.5
    const auto loc = locateStep(TraceStep{}, alpha, fourRegions(), FocusRule::AlphaMean, 40, 10);
    QCOMPARE(loc.focus.x, 22.5);
    QCOMPARE(loc.focus.y, 5.0);
    QVERIFY(loc.box == (Box{20, 0, 10, 10}));
  }

  void hardUsesTheSelectedRegionNotTheLargestAlpha() {
    TraceStep s;
    const std::vector<double> alpha = {0.1, 0.6, 0.3, 0.0};
    s.region = 2;  // sampled
    const auto loc = locateStep(s, alpha, fourRegions(), FocusRule::Selected, 40, 10);
    QCOMPARE(loc.focus.x, 25.0);
    QVERIFY(loc.box == (Box{20, 0, 10, 10}));
  }

  void sharpUsesTheLastStnQuad() {
    TraceStep s;
    StnTrace coarse, fine;
    coarse.quad = {PointF{0, 0}, PointF{40, 0}, PointF{40, 10}, PointF{0, 10}};
    fine.quad = {PointF{12, 1}, PointF{18, 2}, PointF{17, 9}, PointF{11, 8}};  // a turned patch
    s.stn = {coarse, fine};
    const auto loc = locateStep(s, {}, fourRegions(), FocusRule::StnQuad, 40, 10);
    QCOMPARE(loc.focus.x, 14.5);
    QCOMPARE(loc.focus.y, 5.0);
    QVERIFY(loc.box == (Box{11, 1, 7, 8}));
  }

  void ctcUsesTheEmittingColumnsAndBoxesAreClipped() {
    TraceStep s;
    s.columns = {2, 3};
    auto regions = fourRegions();
    regions[3].w = 25;  // reaches past the image's right edge, as receptive fields do
    const auto loc = locateStep(s, {}, regions, FocusRule::Columns, 40, 10);
    QCOMPARE(loc.focus.x, (25.0 + 42.5) / 2);
    QVERIFY(loc.box == (Box{20, 0, 20, 10}));  // clipped at x = 40
    QCOMPARE(toString(FocusRule::Columns), std::string("columns"));
    TraceStep none;
    QVERIFY_THROWS_EXCEPTION(Error, locateStep(none, {}, regions, FocusRule::Columns, 40, 10));
  }

  // Columns whose receptive field spans the input (a ResNet's) make every region the whole image;
  // the trace gives each step a character box around its focus instead, and the evaluation's
  // localisation (locateDecodedSteps, what eval's IoU is computed from) must give the same boxes.
  void wideColumnsHaveCharacterBoxesInEvaluationToo_data() {
    QTest::addColumn<QString>("prediction");
    QTest::newRow("attention") << "attention";
    QTest::newRow("ctc") << "ctc";
  }
  void wideColumnsHaveCharacterBoxesInEvaluationToo() {
    QFETCH(QString, prediction);
    ModelConfig c;
    c.features = "resnet";
    c.prediction = prediction.toStdString();
    c.attention = "soft";
    c.width = 0.125;
    c.maxLength = 6;
    c.validate();
    torch::manual_seed(3);
    Recognizer model(c);
    model->eval();
    GreyImage img;
    img.width = 100;
    img.height = 32;
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x)
        img.pixels.push_back(static_cast<uint8_t>((x / 7 + y / 4) % 3 == 0 ? 20 : 230));
    c10::InferenceMode guard;
    const auto input = preprocess({img}, c.preprocessing, false);
    QVERIFY(model->geometry(static_cast<int>(input.image.size(3))).sizeX >= input.image.size(3));
    const auto out = model->forward(input.image, input.upsampled);
    const Trace tr = buildTrace(model, out, input, 0, img.width, img.height, 5, true);
    const auto located =
        locateDecodedSteps(model, out, 0, img.width, img.height,
                           static_cast<int>(input.image.size(3)), input.contentW.at(0));
    QVERIFY(!located.empty());
    QCOMPARE(located.size(), tr.steps.size());
    for (size_t t = 0; t < located.size(); ++t) {
      const Box &a = located[t].box, &b = tr.steps[t].box;
      QVERIFY2(
          std::abs(a.x - b.x) < 1e-9 && std::abs(a.w - b.w) < 1e-9 && std::abs(a.y - b.y) < 1e-9 &&
              std::abs(a.h - b.h) < 1e-9,
          qPrintable(
              QString("step %1: %2 %3 against %4 %5").arg(t).arg(a.x).arg(a.w).arg(b.x).arg(b.w)));
      QCOMPARE(a.h, double(img.height));
      QVERIFY(a.w < img.width);  // not the whole-image region
    }
  }

  void iouAndContainment() {
    QCOMPARE(intersectionOverUnion({0, 0, 10, 10}, {5, 0, 10, 10}), 50.0 / 150.0);
    QCOMPARE(intersectionOverUnion({0, 0, 10, 10}, {10, 0, 10, 10}), 0.0);
    QCOMPARE(intersectionOverUnion({0, 0, 10, 10}, {0, 0, 10, 10}), 1.0);
    QVERIFY(contains({0, 0, 10, 10}, {0, 0}));
    QVERIFY(!contains({0, 0, 10, 10}, {10, 5}));  // the right edge belongs to the next box
  }

  // Truth: four characters in the four regions. The steps look at regions 0, 1, 3 and then end
  // early (the fourth character has no step): pointing 2/4; IoU 1 + 1 + 0 + 0 over 4.
  void pointingAndIouOnAHandMadeTrace() {
    Trace tr;
    tr.imageW = 40;
    tr.imageH = 10;
    tr.regions = fourRegions();
    tr.steps = {stepAt(0), stepAt(1), stepAt(3, "<end>")};
    locateSteps(tr, FocusRule::Selected);
    QCOMPARE(tr.focusRule, std::string("selected"));
    std::vector<Box> truth = {{0, 0, 10, 10}, {10, 0, 10, 10}, {20, 0, 10, 10}, {30, 0, 10, 10}};
    std::vector<StepLocation> located;
    for (const auto& s : tr.steps) located.push_back({s.focus, s.box});
    const auto one = scoreLocalisation(located, truth);
    QCOMPARE(one.steps, int64_t(4));
    QCOMPARE(one.hits, int64_t(2));
    QCOMPARE(one.iouSum, 2.0);

    // A second image read correctly: every step on its character, boxes half as wide as the
    // truth (IoU 0.5 each).
    std::vector<StepLocation> good = {{{5, 5}, {0, 0, 5, 10}}, {{15, 5}, {10, 0, 5, 10}}};
    const auto two = scoreLocalisation(good, {{0, 0, 10, 10}, {10, 0, 10, 10}});
    QCOMPARE(two.hits, int64_t(2));
    QCOMPARE(two.iouSum, 1.0);

    LocalisationStats stats;
    stats.add(one, false);
    stats.add(two, true);
    QCOMPARE(stats.images, int64_t(2));
    QCOMPARE(stats.pointing(), 4.0 / 6.0);
    QCOMPARE(stats.meanIou(), 3.0 / 6.0);
    QCOMPARE(stats.correctPointing(), 1.0);
    QCOMPARE(stats.correctMeanIou(), 0.5);

    tr.truthBoxes = truth;
    QCOMPARE(stepHits(tr), (std::vector<int>{1, 1, 0}));
    tr.truthBoxes.resize(2);
    QCOMPARE(stepHits(tr), (std::vector<int>{1, 1, -1}));
  }

  // The hOCR page is well-formed XHTML, holds one ocrx_cinfo per character (not the end token),
  // in reading order, and each x_bboxes is the JSON's box rounded to whole pixels.
  void hocrParsesAndAgreesWithJson() {
    auto session = ModelSession::open(FOVEAL_SAMPLES_DIR "/models/sharp-chain.fvm");
    const auto image = readImage(FOVEAL_SAMPLES_DIR "/images/digits-46214.pgm");
    auto trace = session->trace(image, "a <odd> & \"quoted\" name.pgm");
    QCOMPARE(trace.prediction, std::string("46214"));
    const json j = json::parse(trace.toJson());
    QCOMPARE(j["focus_rule"].get<std::string>(), std::string("stn-quad"));

    QXmlStreamReader xml(QByteArray::fromStdString(trace.toHocr()));
    QStringList chars;
    std::vector<std::array<long, 4>> boxes;
    QString wordTitle, pageTitle;
    bool xhtml = false;
    while (!xml.atEnd()) {
      if (xml.readNext() != QXmlStreamReader::StartElement) continue;
      const auto cls = xml.attributes().value("class").toString();
      if (xml.name() == QLatin1String("html"))
        xhtml = xml.namespaceUri() == QLatin1String("http://www.w3.org/1999/xhtml");
      if (cls == "ocr_page") pageTitle = xml.attributes().value("title").toString();
      if (cls == "ocrx_word") wordTitle = xml.attributes().value("title").toString();
      // A character's ocrx_cinfo has its box; the ones after it hold its top-k (x_confs).
      if (cls == "ocrx_cinfo" &&
          xml.attributes().value("title").startsWith(QLatin1String("x_bboxes"))) {
        const auto title = xml.attributes().value("title").toString();
        const auto parts = title.split(';').first().split(' ', Qt::SkipEmptyParts);
        QCOMPARE(parts.size(), 5);
        QCOMPARE(parts[0], QString("x_bboxes"));
        boxes.push_back(
            {parts[1].toLong(), parts[2].toLong(), parts[3].toLong(), parts[4].toLong()});
        chars << xml.readElementText();
      }
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(xhtml);
    QVERIFY2(pageTitle.contains("bbox 0 0 160 32"), qPrintable(pageTitle));
    QVERIFY2(pageTitle.contains("a <odd> & \"quoted\" name.pgm"), qPrintable(pageTitle));
    QCOMPARE(chars.join(""), QString("46214"));
    QCOMPARE(boxes.size(), size_t(5));
    long wx0 = 1 << 20, wx1 = -1;
    for (size_t t = 0; t < boxes.size(); ++t) {
      const auto& b = j["steps"][t]["box"];
      const double x = b["x"], y = b["y"], w = b["w"], h = b["h"];
      QCOMPARE(boxes[t][0], std::lround(x));
      QCOMPARE(boxes[t][1], std::lround(y));
      QCOMPARE(boxes[t][2], std::lround(x + w));
      QCOMPARE(boxes[t][3], std::lround(y + h));
      wx0 = std::min(wx0, boxes[t][0]);
      wx1 = std::max(wx1, boxes[t][2]);
      if (t > 0) QVERIFY(j["steps"][t]["focus"][0] > j["steps"][t - 1]["focus"][0]);
    }
    QVERIFY2(wordTitle.startsWith(QString("bbox %1 ").arg(wx0)), qPrintable(wordTitle));
  }

  // The CSV carries the same focus and box as the JSON, one row per step.
  void csvCarriesFocusAndBox() {
    Trace tr;
    tr.imageW = 40;
    tr.imageH = 10;
    tr.regions = fourRegions();
    tr.steps = {stepAt(1), stepAt(2, "<end>")};
    locateSteps(tr, FocusRule::Selected);
    const auto lines = QString::fromStdString(tr.toCsv()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 3);
    const auto head = lines[0].split(',');
    const auto row = lines[1].split(',');
    QCOMPARE(row[head.indexOf("focus_x")], QString("15"));
    QCOMPARE(row[head.indexOf("box_x")], QString("10"));
    QCOMPARE(row[head.indexOf("box_w")], QString("10"));
  }
};

QTEST_APPLESS_MAIN(TestLocalisation)
#include "test_localisation.moc"
