// EasyOCR's recognisers read as EasyOCR's readtext reads a crop (issue 71): the image operations
// made bit-exact in plain C++ (core/image/easyocr_input.h: cv2.resize INTER_LINEAR, cvtColor
// BGR2GRAY, np.percentile), checked against fixtures of OpenCV's and NumPy's own output in
// every build and against OpenCV itself where the build has it; then every fixture model of
// tests/data/easyocr on every crop of tests/data/easyocr/readtext (heights 20 to 200, narrower
// than tall, colour, palette, JPEG, grey with alpha, RGBA, 16-bit grey and colour PNGs, low
// contrast), against what EasyOCR's own Reader.recognize computed for it
// (scripts/make-easyocr-fixtures): the reading, the confidence, the pass get_text kept and every
// column's probabilities within 1e-4; the first pass alone, and the crops as readtext reads a
// BGR array. The boxes and the explanation maps follow the crop through both resizes.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "base/error.h"
#include "formats/checkpoint.h"
#include "formats/model_format.h"
#include "image/easyocr_input.h"
#include "image/grey_image.h"
#include "image/preprocess.h"
#include "import_fixtures.h"
#include "model/model_config.h"
#include "trace/attribution.h"
#include "trace/model_session.h"
#include "trace/trace.h"
#include "trace/trace_builder.h"

#ifdef FOVEAL_TEST_OPENCV
#include <opencv2/imgproc.hpp>
#endif

using namespace foveal::core;
using nlohmann::json;

namespace {

const std::string kEasy = std::string(FOVEAL_SOURCE_DIR) + "/tests/data/easyocr/";
const std::string kReadtext = kEasy + "readtext/";

const json& expected() {
  static const json e = foveal::test::readExpected(kReadtext);
  return e;
}

const json& model(const std::string& name) {
  for (const auto& m : expected()["models"])
    if (m["name"] == name) return m;
  throw std::runtime_error("no fixture model " + name);
}

// The script's pattern(): (x*x*7 + y*13 + x*y*3 + (x ^ y) + k) & 255.
std::vector<uint8_t> pattern(int w, int h, int k = 0) {
  std::vector<uint8_t> p(static_cast<size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      p[static_cast<size_t>(y) * w + x] =
          static_cast<uint8_t>((x * x * 7 + y * 13 + x * y * 3 + (x ^ y) + k) & 255);
  return p;
}

std::vector<uint8_t> fromHex(const std::string& hex) {
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

// A crop as the test reads it: the file with its colours, or (a build without image codecs) its
// PGM copy where the fixtures have one; an empty image when neither can be read here.
GreyImage readCrop(const json& crop) {
  const std::string name = crop["name"].get<std::string>();
  if (hasImageCodecs()) return readImage(kReadtext + name, /*keepColour=*/true);
  if (crop["pgm"].is_string()) return readImage(kReadtext + crop["pgm"].get<std::string>(), true);
  return {};
}

std::shared_ptr<ModelSession> openFixture(const json& m, const ImportOptions& o = {}) {
  return ModelSession::open(kEasy + m["file"].get<std::string>(), o);
}

TraceOptions everyClass() {
  TraceOptions opt;
  opt.topk = 100000;  // every class of every column
  return opt;
}

// The largest |p - p_EasyOCR| of a trace's columns against a fixture's `probs`, with the column
// counts compared first.
double largestColumnDifference(const Trace& tr, const json& probs, const std::string& what) {
  if (tr.columnTopk.size() != probs.size())
    throw std::runtime_error(what + ": " + std::to_string(tr.columnTopk.size()) +
                             " columns, EasyOCR " + std::to_string(probs.size()));
  double worst = 0;
  for (size_t c = 0; c < probs.size(); ++c) {
    if (tr.columnTopk[c].size() != probs[c].size())
      throw std::runtime_error(what + ": not every class in the trace's top-k");
    for (const auto& tp : tr.columnTopk[c])
      worst = std::max(worst,
                       std::abs(tp.prob - probs[c][static_cast<size_t>(tp.index)].get<double>()));
  }
  return worst;
}

// log p of each emitted token summed over its columns, from the trace's probabilities (what
// attribution's objective is for a CTC step).
double stepLogProb(const Trace& tr, size_t step) {
  const auto& st = tr.steps[step];
  double f = 0;
  for (int c : st.columns)
    for (const auto& tp : tr.columnTopk[static_cast<size_t>(c)])
      if (tp.index == st.tokenIndex) f += std::log(tp.prob);
  return f;
}

}  // namespace

class TestEasyOcrReadtext : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  // cv2.resize(INTER_LINEAR) as OpenCV 4.6 computes it: the fixtures' outputs, byte for byte,
  // in any build; the sizes include the edges (1 pixel), exact doubling and halving (OpenCV's
  // INTER_AREA shortcut) and enlarging in one axis while shrinking in the other.
  void opencvResizeMatchesTheFixtures() {
    for (const auto& r : expected()["primitives"]["resizes"]) {
      const int w = r["size"][0], h = r["size"][1], ow = r["to"][0], oh = r["to"][1];
      const auto src = pattern(w, h);
      const auto got = opencvResizeLinear(src.data(), w, h, ow, oh);
      const auto want = fromHex(r["pixels"].get<std::string>());
      QVERIFY2(got == want, (std::to_string(w) + "x" + std::to_string(h) + " -> " +
                             std::to_string(ow) + "x" + std::to_string(oh))
                                .c_str());
    }
    const auto& c = expected()["primitives"]["cvtcolor"];
    const int w = c["size"][0], h = c["size"][1];
    const auto p = pattern(w, h);
    std::vector<uint8_t> rgb(p.size() * 3);
    for (size_t i = 0; i < p.size(); ++i) {
      rgb[3 * i] = p[i];
      rgb[3 * i + 1] = static_cast<uint8_t>((p[i] * 3 + 1) & 255);
      rgb[3 * i + 2] = static_cast<uint8_t>((p[i] * 5 + 7) & 255);
    }
    QVERIFY(opencvGrey(rgb.data(), p.size()) == fromHex(c["grey"].get<std::string>()));
    // np.percentile's linear interpolation to the last bit (the contrast retry compares and
    // divides by these).
    for (const auto& q : expected()["primitives"]["percentiles"]) {
      const int n = q["n"];
      const auto v = pattern(n, 1, n);
      QCOMPARE(numpyPercentile(v.data(), v.size(), 10), q["p10"].get<double>());
      QCOMPARE(numpyPercentile(v.data(), v.size(), 90), q["p90"].get<double>());
    }
  }

  // Where the build has OpenCV: the plain-C++ resize and grey against OpenCV itself on
  // thousands of random sizes and images (EasyOCR's to-the-height sizes among them).
  void opencvResizeMatchesOpenCv() {
#ifndef FOVEAL_TEST_OPENCV
    QSKIP("built without OpenCV: opencvResizeMatchesTheFixtures checks the fixtures' outputs");
#else
    std::mt19937 rng(71);
    int cases = 0;
    for (int t = 0; t < 3000; ++t) {
      const int w = 1 + static_cast<int>(rng() % 260), h = 1 + static_cast<int>(rng() % 210);
      int ow = 1 + static_cast<int>(rng() % 260), oh = 1 + static_cast<int>(rng() % 210);
      if (t % 2) {
        const auto s = easyocrResizedSize(w, h, 64);
        ow = s.width;
        oh = s.height;
      }
      if (ow > 4000 || oh > 4000) continue;
      cv::Mat src(h, w, CV_8UC1);
      for (int i = 0; i < w * h; ++i) src.data[i] = static_cast<uint8_t>(rng() % 256);
      cv::Mat dst;
      cv::resize(src, dst, cv::Size(ow, oh), 0, 0, cv::INTER_LINEAR);
      const auto got = opencvResizeLinear(src.data, w, h, ow, oh);
      QVERIFY2(std::equal(got.begin(), got.end(), dst.data),
               (std::to_string(w) + "x" + std::to_string(h) + " -> " + std::to_string(ow) + "x" +
                std::to_string(oh))
                   .c_str());
      ++cases;
    }
    QVERIFY(cases > 2500);
    cv::Mat bgr(41, 67, CV_8UC3);
    for (size_t i = 0; i < bgr.total() * 3; ++i) bgr.data[i] = static_cast<uint8_t>(rng() % 256);
    cv::Mat grey;
    cv::cvtColor(bgr, grey, cv::COLOR_BGR2GRAY);
    std::vector<uint8_t> rgb(bgr.total() * 3);
    for (size_t i = 0; i < bgr.total(); ++i)
      for (int k = 0; k < 3; ++k) rgb[3 * i + static_cast<size_t>(k)] = bgr.data[3 * i + 2 - k];
    const auto got = opencvGrey(rgb.data(), bgr.total());
    QVERIFY(std::equal(got.begin(), got.end(), grey.data));
#endif
  }

  // get_image_list's sizes: both branches of compute_ratio_and_resize, Python's truncation.
  void resizedSizes_data() {
    QTest::addColumn<int>("w");
    QTest::addColumn<int>("h");
    QTest::addColumn<int>("imgH");
    QTest::addColumn<int>("ow");
    QTest::addColumn<int>("oh");
    QTest::newRow("wide") << 81 << 40 << 64 << 129 << 64;
    QTest::newRow("already 64") << 90 << 64 << 64 << 90 << 64;
    QTest::newRow("square") << 50 << 50 << 64 << 64 << 64;
    QTest::newRow("narrower than tall") << 48 << 64 << 64 << 64 << 85;
    QTest::newRow("tall") << 31 << 90 << 64 << 64 << 185;
    QTest::newRow("yaml's imgH 48") << 166 << 100 << 48 << 79 << 48;
  }
  void resizedSizes() {
    QFETCH(int, w);
    QFETCH(int, h);
    QFETCH(int, imgH);
    const auto s = easyocrResizedSize(w, h, imgH);
    QFETCH(int, ow);
    QFETCH(int, oh);
    QCOMPARE(s.width, ow);
    QCOMPARE(s.height, oh);
  }

  // Every fixture model on every crop, opened with no option: readtext's pipeline and its
  // contrast retry. The reading, the confidence, the pass kept, the input width and every
  // column's probabilities as EasyOCR's Reader.recognize gives them; the largest difference per
  // kind of crop is printed.
  void readsAsReadtext_data() {
    QTest::addColumn<QString>("name");
    for (const auto& m : expected()["models"])
      QTest::newRow(m["name"].get<std::string>().c_str())
          << QString::fromStdString(m["name"].get<std::string>());
  }
  void readsAsReadtext() {
    QFETCH(QString, name);
    const json& m = model(name.toStdString());
    ImportReport report;
    auto session =
        ModelSession::open(kEasy + m["file"].get<std::string>(), ImportOptions{}, &report);
    const auto& pp = session->config().preprocessing;
    QCOMPARE(pp.preResize, std::string("opencv_linear"));
    QCOMPARE(pp.contrastThreshold, expected()["contrast_ths"].get<double>());
    QCOMPARE(pp.adjustContrast, expected()["adjust_contrast"].get<double>());
    std::map<std::string, double> worstByKind;
    int read = 0, contrastKept = 0, firstKeptAfterRetry = 0;
    double worstConf = 0;
    for (const auto& crop : expected()["crops"]) {
      const std::string crName = crop["name"].get<std::string>();
      const auto image = readCrop(crop);
      if (image.empty()) continue;
      const json& r = m["results"][crName];
      const auto tr = session->trace(image, crName, everyClass());
      QVERIFY2(tr.prediction == r["reading"].get<std::string>(),
               (crName + ": read '" + tr.prediction + "', EasyOCR '" +
                r["reading"].get<std::string>() + "'")
                   .c_str());
      worstConf = std::max(worstConf, std::abs(tr.confidence - r["confidence"].get<double>()));
      QVERIFY2(std::abs(tr.confidence - r["confidence"].get<double>()) < 1e-4, crName.c_str());
      // The pass get_text kept, and the trace says so.
      const bool retried = !r["contrast"].is_null();
      QVERIFY2(tr.contrastPass == (r["kept"] == "contrast"), crName.c_str());
      QVERIFY(QString::fromStdString(tr.inputPass)
                  .startsWith(tr.contrastPass ? "contrast pass" : "first pass"));
      QCOMPARE(!QString::fromStdString(tr.inputPass).contains("not under contrast_ths"), retried);
      contrastKept += tr.contrastPass;
      firstKeptAfterRetry += retried && !tr.contrastPass;
      // As many columns as EasyOCR's input (max_width wide) gives, and their probabilities.
      QCOMPARE(static_cast<size_t>(tr.gridColumns), r["probs"].size());
      double worst = 0;
      try {
        worst = largestColumnDifference(tr, r["probs"], crName);
      } catch (const std::exception& e) {
        QFAIL(e.what());
      }
      QVERIFY2(worst < 1e-4, (crName + ": " + std::to_string(worst)).c_str());
      double& k = worstByKind[crop["kind"].get<std::string>()];
      k = std::max(k, worst);
      ++read;
    }
    for (const auto& [kind, worst] : worstByKind)
      qInfo("%s, %s crops: largest |p - p_EasyOCR| %.2e", qPrintable(name), kind.c_str(), worst);
    qInfo(
        "%s: %d crops, largest |confidence - EasyOCR's| %.2e; contrast pass kept %d times, "
        "first kept after a retry %d times",
        qPrintable(name), read, worstConf, contrastKept, firstKeptAfterRetry);
    QVERIFY(read >= (hasImageCodecs() ? 30 : 11));
    QVERIFY(contrastKept > 0);
    QVERIFY(name == "custom" || firstKeptAfterRetry > 0);  // custom keeps every second pass
  }

  // With --contrast-ths 0 the retry is off: every crop reads as get_text's first pass.
  void firstPassAlone() {
    const json& m = model("english_g2");
    auto session = openFixture(m, {{"contrast-ths", "0"}});
    QCOMPARE(session->config().preprocessing.contrastThreshold, 0.0);
    int compared = 0;
    for (const auto& crop : expected()["crops"]) {
      const auto image = readCrop(crop);
      if (image.empty()) continue;
      const std::string crName = crop["name"].get<std::string>();
      const json& r = m["results"][crName];
      const auto tr = session->trace(image, crName, everyClass());
      QVERIFY(!tr.contrastPass && tr.inputPass.empty());
      QCOMPARE(tr.prediction, r["first"]["reading"].get<std::string>());
      QVERIFY2(std::abs(tr.confidence - r["first"]["confidence"].get<double>()) < 1e-4,
               crName.c_str());
      if (r["kept"] == "first") {
        QVERIFY(largestColumnDifference(tr, r["probs"], crName) < 1e-4);
        ++compared;
      }
    }
    QVERIFY(compared >= 5);
  }

  // The colour crops as readtext reads a BGR array (cvtColor(BGR2GRAY)): --easyocr-input
  // readtext-array.
  void readsAsReadtextReadsAnArray() {
    if (!hasImageCodecs()) QSKIP("built without OpenCV: the colour crops are PNG and JPEG");
    for (const auto& m : expected()["models"]) {
      auto session = openFixture(m, {{"easyocr-input", "readtext-array"}});
      QCOMPARE(session->config().preprocessing.colour, std::string("opencv_grey"));
      double worst = 0;
      int read = 0;
      for (const auto& [crName, r] : m["arrays"].items()) {
        const auto image = readImage(kReadtext + crName, /*keepColour=*/true);
        QVERIFY(!image.rgb.empty());
        const auto tr = session->trace(image, crName, everyClass());
        QCOMPARE(tr.prediction, r["reading"].get<std::string>());
        QVERIFY2(std::abs(tr.confidence - r["confidence"].get<double>()) < 1e-4, crName.c_str());
        QCOMPARE(tr.contrastPass, r["kept"] == "contrast");
        worst = std::max(worst, largestColumnDifference(tr, r["probs"], crName));
        ++read;
      }
      qInfo("%s, BGR arrays: %d crops, largest |p - p_EasyOCR| %.2e",
            m["name"].get<std::string>().c_str(), read, worst);
      QVERIFY2(worst < 1e-4, std::to_string(worst).c_str());
      QVERIFY(read >= 10);
    }
  }

  // The fixtures can fail: the recogniser alone (today's path) and readtext read the crops
  // differently, by far more than the tolerance, and the second pass differs from the first.
  void pipelinesDiffer() {
    const json& m = model("english_g2");
    auto alone = openFixture(m, {{"easyocr-input", "recogniser"}});
    QCOMPARE(alone->config().preprocessing.preResize, std::string("none"));
    QCOMPARE(alone->config().preprocessing.contrastThreshold, 0.0);  // today's path: no retry
    double spread = 0;
    for (const auto& crop : expected()["crops"]) {
      const auto image = readCrop(crop);
      if (image.empty()) continue;
      const json& r = m["results"][crop["name"].get<std::string>()];
      const auto tr = alone->trace(image, "x", everyClass());
      if (tr.columnTopk.size() != r["probs"].size()) {
        spread = 1;
        continue;
      }
      spread = std::max(spread, largestColumnDifference(tr, r["probs"], "x"));
    }
    QVERIFY2(spread > 0.05, std::to_string(spread).c_str());
    double passes = 0;
    for (const auto& [crName, r] : m["results"].items())
      if (!r["contrast"].is_null())
        passes = std::max(passes, std::abs(r["first"]["confidence"].get<double>() -
                                           r["contrast"]["confidence"].get<double>()));
    QVERIFY(passes > 1e-3);
  }

  // info and the trace say which pipeline and which pass; the import says what it assumed and
  // an imported .fvm keeps the pipeline.
  void saysWhichPipeline() {
    const json& m = model("english_g2");
    ImportReport report;
    auto session =
        ModelSession::open(kEasy + m["file"].get<std::string>(), ImportOptions{}, &report);
    QVERIFY2(QString::fromStdString(session->describe())
                 .contains("read as EasyOCR's readtext reads a crop"),
             session->describe().c_str());
    QVERIFY(QString::fromStdString(report.description).contains("cv2.resize (INTER_LINEAR)"));
    bool inputNoted = false, retryNoted = false;
    for (const auto& a : report.assumed) {
      inputNoted |= a.find("--easyocr-input recogniser") != std::string::npos;
      retryNoted |= a.find("contrast_ths 0.1, adjust_contrast 0.5") != std::string::npos;
    }
    QVERIFY(inputNoted && retryNoted);
    QVERIFY(json::parse(report.provenanceJson)["input"] == "readtext");
    auto alone = openFixture(m, {{"easyocr-input", "recogniser"}});
    QVERIFY(QString::fromStdString(alone->describe()).contains("EasyOCR's recogniser alone"));
    QVERIFY(QString::fromStdString(alone->describe()).contains("no contrast retry"));
    // The trace: in its table, its JSON and its description.
    const json& crop = expected()["crops"][0];
    const auto image = readCrop(crop);
    if (image.empty()) QSKIP("built without OpenCV: the first crop is PNG");
    const auto tr = session->trace(image, "x");
    QVERIFY(QString::fromStdString(tr.modelDescription).contains("readtext"));
    QVERIFY(QString::fromStdString(tr.toTable()).contains("pass       "));
    const auto j = json::parse(tr.toJson());
    QCOMPARE(j["input_pass"]["pass"].get<std::string>(),
             std::string(tr.contrastPass ? "contrast" : "first"));
    // Kept in a checkpoint: the configuration round-trips with the pipeline and the retry.
    const auto back = ModelConfig::fromJson(session->config().toJson());
    QCOMPARE(back.preprocessing.preResize, std::string("opencv_linear"));
    QCOMPARE(back.preprocessing.contrastThreshold, 0.1);
    QCOMPARE(back.preprocessing.adjustContrast, 0.5);
    QCOMPARE(ModelConfig::fromJson(alone->config().toJson()).preprocessing.preResize,
             std::string("none"));
  }

  // The boxes follow the crop through both resizes: a crop narrower than tall (48x64) is resized
  // to 64x85 and then to 49x64 by AlignCollate, so the image fills 49 input columns where the
  // recogniser alone fills ceil(64 * 48 / 64) = 48, and every region's centre in source pixels
  // is 48/49 of the recogniser alone's; an 81x40 crop fills int(64 * 81 / 40) = 129 columns
  // (130 alone); a 46x135 one 22 both ways (64x187, then ceil(64 * 64 / 187)).
  void boxesFollowTheCrop() {
    const json& m = model("english_g2");
    auto readtext = openFixture(m, {{"contrast-ths", "0"}});
    auto alone = openFixture(m, {{"easyocr-input", "recogniser"}});
    struct Case {
      const char* name;
      double readtextW, aloneW;
    };
    for (const Case c : {Case{"rt05_48x64_grey.png", 49, 48}, Case{"rt01_81x40_grey.png", 129, 130},
                         Case{"rt06_46x135_grey.png", 22, 22}}) {
      json crop;
      for (const auto& cr : expected()["crops"])
        if (cr["name"] == c.name) crop = cr;
      const auto image = readCrop(crop);
      QVERIFY(!image.empty());
      const auto a = readtext->trace(image, c.name), b = alone->trace(image, c.name);
      QCOMPARE(a.regions.size(), b.regions.size());
      QCOMPARE(a.regionCentres.size(), b.regionCentres.size());
      // Centres: the input's times srcW / contentW in both.
      for (size_t i = 1; i < a.regionCentres.size(); ++i) {
        const double ra = a.regionCentres[i].x, rb = b.regionCentres[i].x;
        QVERIFY2(std::abs(ra / rb - c.aloneW / c.readtextW) < 1e-9,
                 (std::string(c.name) + ": " + std::to_string(ra / rb)).c_str());
      }
      // The columns over the image end where the content does: the last region whose centre
      // lies on the image is within one stride of its right edge.
      double lastOnImage = 0;
      for (const auto& p : a.regionCentres)
        if (p.x < image.width) lastOnImage = std::max(lastOnImage, p.x);
      QVERIFY(lastOnImage > image.width - 4.0 * image.width / c.readtextW - 1);
      for (const auto& st : a.steps) {
        QVERIFY(st.box.x >= 0 && st.box.x + st.box.w <= image.width + 1e-9);
        QVERIFY(st.box.y >= 0 && st.box.y + st.box.h <= image.height + 1e-9);
      }
      // Evaluation's localisation of a batch read the same way puts the steps where the trace
      // does (it takes the content width from preprocess()).
      auto loaded = loadModelFile(kEasy + m["file"].get<std::string>(), {{"contrast-ths", "0"}});
      c10::InferenceMode guard;
      const auto input = preprocess({image}, loaded.config.preprocessing, false);
      QCOMPARE(input.contentW.at(0), static_cast<int>(c.readtextW));
      const auto out = loaded.model->forward(input.image, input.upsampled);
      const auto located =
          locateDecodedSteps(loaded.model, out, 0, image.width, image.height,
                             static_cast<int>(input.image.size(3)), input.contentW[0]);
      QCOMPARE(located.size(), a.steps.size());
      for (size_t t = 0; t < located.size(); ++t)
        QVERIFY(std::abs(located[t].focus.x - a.steps[t].focus.x) < 1e-9);
    }
  }

  // The explanation maps follow the crop through both resizes and the contrast pass: the
  // differentiable input (sourceTensor -> inputFromSource) is the traced input to within
  // OpenCV's and PIL's 8-bit rounding, and attribution's objective at the image is the trace's
  // log p of the token; the map is in source pixels.
  void explanationsFollowTheCrop() {
    const json& m = model("english_g2");
    auto session = openFixture(m);
    const auto& pp = session->config().preprocessing;
    int explained = 0, contrast = 0;
    double worstInput = 0, worstValue = 0, withoutContrast = 0;
    for (const auto& crop : expected()["crops"]) {
      const auto image = readCrop(crop);
      if (image.empty()) continue;
      const auto tr = session->trace(image, "x", everyClass());
      // The input, both passes.
      for (bool second : {false, true}) {
        c10::InferenceMode guard;
        const auto traced = preprocess({image}, pp, false, second);
        const ContrastAdjustment adj =
            second ? contrastAdjustmentOf(image, pp) : ContrastAdjustment{};
        const auto made = inputFromSource(sourceTensor(image, pp), pp, false, &adj);
        QCOMPARE(made.image.sizes(), traced.image.sizes());
        QCOMPARE(made.contentW, traced.contentW);
        const double d = (made.image - traced.image).abs().max().item<double>();
        worstInput = std::max(worstInput, d);
        // A grey level is 2/255 here; the two resizes round twice, the contrast multiplies.
        const double allowed = (second && adj.adjusted ? adj.ratio : 1.0) * 3.0 * 2.0 / 255.0;
        QVERIFY2(d <= allowed,
                 (crop["name"].get<std::string>() + ": " + std::to_string(d)).c_str());
      }
      if (tr.steps.empty() || explained >= 6) continue;
      AttributionOptions o;
      o.igSteps = 2;
      o.steps = {0};
      const auto e = session->explain(image, tr, o);
      QCOMPARE(e.width, image.width);
      QCOMPARE(e.height, image.height);
      QCOMPARE(e.maps[0].size(), static_cast<size_t>(image.width) * image.height);
      const double traced = stepLogProb(tr, 0);
      worstValue = std::max(worstValue, std::abs(e.steps[0].value - traced));
      if (tr.contrastPass) {  // the same trace explained as if it were the first pass's
        Trace first = tr;
        first.contrastPass = false;
        withoutContrast = std::max(
            withoutContrast, std::abs(session->explain(image, first, o).steps[0].value - traced));
      }
      QVERIFY2(std::abs(e.steps[0].value - traced) < 0.05 * std::max(1.0, std::abs(traced)),
               (crop["name"].get<std::string>() + ": " + std::to_string(e.steps[0].value) + " vs " +
                std::to_string(traced))
                   .c_str());
      contrast += tr.contrastPass;
      ++explained;
    }
    qInfo(
        "inputs within %.4f of the traced ones; log p at the image within %.4f of the trace's "
        "(%.4f when a contrast pass is explained as a first pass)",
        worstInput, worstValue, withoutContrast);
    QVERIFY(explained >= 4);
    QVERIFY(contrast >= 1);
    QVERIFY(withoutContrast > 2 * worstValue);
  }

  // Each refusal names the file and the problem.
  void refusesBadOptions() {
    const std::string file = kEasy + "english_g2.pth";
    QString got = foveal::test::refusalOf(file, ImportOptions{{"easyocr-input", "detector"}});
    QVERIFY2(got.contains("english_g2.pth: --easyocr-input detector is not one of readtext") &&
                 got.contains("recogniser"),
             qPrintable(got));
    got = foveal::test::refusalOf(file, ImportOptions{{"contrast-ths", "2"}});
    QVERIFY2(got.contains("--contrast-ths must be a number in [0, 1] (got '2')"), qPrintable(got));
    got = foveal::test::refusalOf(file, ImportOptions{{"adjust-contrast", "0"}});
    QVERIFY2(got.contains("--adjust-contrast must be a number in (0, 1] (got '0')"),
             qPrintable(got));
    got = foveal::test::refusalOf(file, ImportOptions{{"contrast-ths", "lots"}});
    QVERIFY2(got.contains("(got 'lots')"), qPrintable(got));
    // The configuration refuses what it cannot read.
    auto cfg = openFixture(model("english_g2"))->config();
    cfg.preprocessing.preResize = "lanczos";
    QVERIFY_THROWS_EXCEPTION(Error, cfg.validate());
    try {
      cfg.validate();
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("unknown pre_resize 'lanczos'"), e.what());
    }
    cfg.preprocessing.preResize = "opencv_linear";
    cfg.preprocessing.keepRatioPad = false;
    cfg.preprocessing.variableWidth = false;
    try {
      cfg.validate();
      QFAIL("a pre-resize without keep-ratio padding was accepted");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("needs keep_ratio_pad"), e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestEasyOcrReadtext)
#include "test_easyocr_readtext.moc"
