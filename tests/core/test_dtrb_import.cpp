// Opening deep-text-recognition-benchmark checkpoints (issue 15). The fixtures in tests/data/dtrb
// are made by scripts/make-dtrb-fixtures with Debian's python3-torch: four DTRB-shaped models in
// both torch.save formats, with and without DataParallel's prefix; images of many sizes, grey and
// colour; what DTRB's demo computes for each (reading, confidence, probabilities, alpha); and
// files every import must refuse. Also: the pickle reader's own edge cases and PIL's resize.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <atomic>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/error.h"
#include "formats/checkpoint.h"
#include "formats/dtrb_import.h"
#include "formats/torch_pickle.h"
#include "image/grey_image.h"
#include "image/pil_resize.h"
#include "model/model_variants.h"
#include "trace/model_session.h"

using namespace foveal::core;
using nlohmann::json;

namespace {

const std::string kDir = std::string(FOVEAL_SOURCE_DIR) + "/tests/data/dtrb/";

json expected() {
  std::ifstream in(kDir + "expected.json");
  return json::parse(in);
}

DtrbOptions optionsOf(const json& m) {
  DtrbOptions o;
  if (!m["character"].is_null()) o.character = m["character"].get<std::string>();
  o.imgH = m["imgH"];
  o.imgW = m["imgW"];
  o.pad = m["PAD"];
  return o;
}

std::vector<uint8_t> bytesOf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

QString refusal(const std::string& path, const DtrbOptions& o = {}) {
  try {
    ModelSession::open(path, o);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestDtrbImport : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  // Every model, both formats, with and without "module.", on every image: DTRB's reading and
  // confidence, and the probabilities (every step or column) and alphas within 1e-4.
  void matchesDtrb_data() {
    QTest::addColumn<int>("model");
    QTest::addColumn<QString>("file");
    const json e = expected();
    for (size_t m = 0; m < e["models"].size(); ++m)
      for (const auto& f : e["models"][m]["files"]) {
        const auto name = QString::fromStdString(f.get<std::string>());
        QTest::newRow(name.toUtf8()) << static_cast<int>(m) << name;
      }
  }
  void matchesDtrb() {
    if (!hasImageCodecs()) QSKIP("built without OpenCV: the fixture images are PNG and JPEG");
    QFETCH(int, model);
    QFETCH(QString, file);
    const json e = expected();
    const json& m = e["models"][static_cast<size_t>(model)];
    auto session = ModelSession::open(kDir + file.toStdString(), optionsOf(m));
    const bool ctc = m["prediction"] == "CTC";
    QCOMPARE(session->config().isCtc(), ctc);
    QCOMPARE(session->config().makeCharset().size(), m["num_class"].get<int>());
    TraceOptions opt;
    opt.stopAtEnd = false;
    opt.topk = 200;
    double worstP = 0, worstAlpha = 0;
    for (const auto& imageName : e["images"]) {
      const std::string name = imageName.get<std::string>();
      const auto image = readImage(kDir + name, /*keepColour=*/true);
      const auto tr = session->trace(image, name, opt);
      const json& r = m["results"][name];
      QVERIFY2(
          tr.prediction == r["reading"].get<std::string>(),
          (name + ": read '" + tr.prediction + "', DTRB '" + r["reading"].get<std::string>() + "'")
              .c_str());
      QVERIFY2(std::abs(tr.confidence - r["confidence"].get<double>()) < 1e-4, name.c_str());
      const auto& probs = r["probs"];
      if (ctc) {
        QCOMPARE(tr.columnTopk.size(), probs.size());
        for (size_t c = 0; c < probs.size(); ++c)
          for (const auto& tp : tr.columnTopk[c])
            worstP = std::max(
                worstP, std::abs(tp.prob - probs[c][static_cast<size_t>(tp.index)].get<double>()));
        continue;
      }
      QCOMPARE(tr.steps.size(), probs.size());
      for (size_t t = 0; t < probs.size(); ++t) {
        for (const auto& tp : tr.steps[t].topk)
          worstP = std::max(
              worstP, std::abs(tp.prob - probs[t][static_cast<size_t>(tp.index)].get<double>()));
        const auto& alpha = r["alphas"][t];
        QCOMPARE(tr.attention(t).size(), alpha.size());
        for (size_t i = 0; i < alpha.size(); ++i)
          worstAlpha = std::max(worstAlpha, std::abs(tr.attention(t)[i] - alpha[i].get<double>()));
      }
    }
    qInfo("%s: largest |p - p_DTRB| %.2e, |alpha - alpha_DTRB| %.2e", qPrintable(file), worstP,
          worstAlpha);
    QVERIFY2(worstP < 1e-4, std::to_string(worstP).c_str());
    QVERIFY2(worstAlpha < 1e-4, std::to_string(worstAlpha).c_str());
  }

  // Issue 37: the window crashed on the second read with DTRB models ticked. The GUI compiles a
  // model's oneDNN plan on one pooled thread and runs it on whichever pooled thread reads the next
  // image, while other models run theirs on other threads. Here: three long-lived workers, each
  // reading with every model in turn (so every plan runs on threads other than its creator's,
  // beside the other models' plans), images of several sizes (kept-ratio models compile a plan
  // per width). Every reading must equal the one made alone on the main thread.
  void plansRunOnAnyThreadBesideOthers() {
    if (!hasImageCodecs()) QSKIP("built without OpenCV: the fixture images are PNG and JPEG");
    const json e = expected();
    std::vector<std::shared_ptr<ModelSession>> sessions;
    std::vector<std::string> names;
    for (const auto& m : e["models"]) {
      auto o = optionsOf(m);
      sessions.push_back(ModelSession::open(kDir + m["files"][0].get<std::string>(), o));
      names.push_back(m["name"].get<std::string>());
      o.pad = true;  // the same weights, kept ratio: one plan per image width
      sessions.push_back(ModelSession::open(kDir + m["files"][0].get<std::string>(), o));
      names.push_back(m["name"].get<std::string>() + " PAD");
    }
    // Full-size TRBA and CRNN (the shapes of DTRB's released models): their convolutions take
    // other oneDNN kernels than the small fixtures' (Winograd F(4x4, 3x3), with a scratchpad).
    for (const char* variant : {"trba", "crnn"}) {
      sessions.push_back(ModelSession::create(modelVariant(variant, 1.0).config, 7));
      names.push_back(std::string(variant) + " full size");
    }
    std::vector<GreyImage> images;
    for (const auto& imageName : e["images"])
      images.push_back(readImage(kDir + imageName.get<std::string>(), true));
    const size_t models = sessions.size(), n = images.size();
    std::vector<std::vector<std::string>> want(models, std::vector<std::string>(n));
    // The reference readings run on threads of their own, which end before the workers start.
    for (size_t s = 0; s < models; ++s)
      std::thread([&, s] {
        for (size_t i = 0; i < n; ++i) {
          const auto tr = sessions[s]->trace(images[i], "ref");
          want[s][i] = tr.prediction + " " + std::to_string(tr.confidence);
        }
      }).join();
    std::atomic<int> wrong{0}, failed{0};
    std::mutex m;
    std::string firstWrong;
    std::vector<std::thread> workers;
    for (int w = 0; w < 3; ++w)
      workers.emplace_back([&, w] {
        torch::NoGradGuard noGrad;
        for (int round = 0; round < 6; ++round)
          for (size_t k = 0; k < models; ++k) {
            const size_t s = (k + static_cast<size_t>(w) * 3) % models;
            const size_t i = (k + static_cast<size_t>(round + w)) % n;
            try {
              const auto tr = sessions[s]->trace(images[i], "stress");
              const auto got = tr.prediction + " " + std::to_string(tr.confidence);
              if (got != want[s][i]) {
                ++wrong;
                std::lock_guard<std::mutex> lock(m);
                if (firstWrong.empty())
                  firstWrong = names[s] + " on image " + std::to_string(i) + ": '" + got +
                               "', alone '" + want[s][i] + "'";
              }
            } catch (const std::exception&) {
              ++failed;
            }
          }
      });
    for (auto& t : workers) t.join();
    QVERIFY2(wrong == 0, firstWrong.c_str());
    QCOMPARE(failed.load(), 0);
  }

  // The fixtures must be able to fail matchesDtrb: models whose output barely depends on the
  // image (random weights do that: the first fixtures read "" or "q" from every image, their
  // alphas within 1e-6 of each other) would pass with any preprocessing. So: each model reads
  // most fixture images differently, and its probabilities (and alphas) differ between images
  // by far more than the 1e-4 tolerance.
  void fixturesSeeTheImage() {
    const json e = expected();
    for (const auto& m : e["models"]) {
      const auto name = m["name"].get<std::string>();
      std::set<std::string> readings;
      double probSpread = 0, alphaSpread = 0;
      const json& first = m["results"][e["images"][0].get<std::string>()];
      for (const auto& imageName : e["images"]) {
        const json& r = m["results"][imageName.get<std::string>()];
        readings.insert(r["reading"].get<std::string>());
        const size_t rows = std::min(r["probs"].size(), first["probs"].size());
        for (size_t t = 0; t < rows; ++t)
          for (size_t k = 0; k < r["probs"][t].size(); ++k)
            probSpread = std::max(probSpread, std::abs(r["probs"][t][k].get<double>() -
                                                       first["probs"][t][k].get<double>()));
        if (m["prediction"] == "CTC") continue;
        for (size_t t = 0; t < r["alphas"].size(); ++t)
          for (size_t i = 0; i < r["alphas"][t].size(); ++i)
            alphaSpread = std::max(alphaSpread, std::abs(r["alphas"][t][i].get<double>() -
                                                         first["alphas"][t][i].get<double>()));
      }
      QVERIFY2(readings.size() >= 5, (name + ": too few distinct readings").c_str());
      QVERIFY2(probSpread > 0.1, (name + ": " + std::to_string(probSpread)).c_str());
      if (m["prediction"] != "CTC")
        QVERIFY2(alphaSpread > 0.1, (name + ": " + std::to_string(alphaSpread)).c_str());
    }
  }

  // The file's architecture, read from keys and shapes.
  void inspectsTheArchitecture() {
    auto a = inspectDtrb(kDir + "tps-resnet-bilstm-attn.zip-module.pth");
    QCOMPARE(a.transformation, std::string("TPS"));
    QCOMPARE(a.features, std::string("ResNet"));
    QCOMPARE(a.sequence, std::string("BiLSTM"));
    QCOMPARE(a.prediction, std::string("Attn"));
    QCOMPARE(a.fiducials, 20);
    QCOMPARE(a.inputChannels, 3);
    QCOMPARE(a.outputChannels, 32);
    QCOMPARE(a.hiddenSize, 16);
    QCOMPARE(a.numClasses, 13);
    QVERIFY(a.modulePrefix);
    QCOMPARE(a.format, std::string("zip"));
    QVERIFY(a.assumedCharacters.empty());  // 11 characters: no standard set fits
    a = inspectDtrb(kDir + "none-resnet-none-ctc.legacy.pth");
    QCOMPARE(a.format, std::string("legacy"));
    QVERIFY(!a.modulePrefix);
    QCOMPARE(a.sequence, std::string("None"));
    QCOMPARE(a.assumedCharacters, std::string(kDtrbSensitiveCharacters));
    QCOMPARE(std::string(kDtrbSensitiveCharacters).size(), size_t(94));
  }

  // Each refusal names the file and what is wrong.
  void refusesWhatDoesNotFit_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("message");
    const json e = expected();
    QVERIFY(e["refusals"].size() >= 10);
    for (const auto& [file, message] : e["refusals"].items())
      QTest::newRow(file.c_str()) << QString::fromStdString(file)
                                  << QString::fromStdString(message.get<std::string>());
  }
  void refusesWhatDoesNotFit() {
    QFETCH(QString, file);
    QFETCH(QString, message);
    const QString got = refusal(kDir + file.toStdString());
    QVERIFY2(got.contains(file), qPrintable(got));
    QVERIFY2(got.contains(message), qPrintable(got + " lacks " + message));
  }

  void refusesAWrongCharsetOrSize() {
    DtrbOptions o;
    o.character = "abc";
    QString got = refusal(kDir + "none-vgg-bilstm-attn.zip.pth", o);
    QVERIFY2(
        got.contains("--character has 3 characters, giving 5 classes for Attn; the file has 38"),
        qPrintable(got));
    o = {};
    o.imgW = 64;  // TPS: P_hat holds one row per pixel of the input it was built for
    o.character = "0123456789-";
    got = refusal(kDir + "tps-resnet-bilstm-attn.zip.pth", o);
    QVERIFY2(got.contains("P_hat") && got.contains("--imgH"), qPrintable(got));
    o.imgW = 50;  // same pixel count, other grid: the values tell
    o.imgH = 64;
    got = refusal(kDir + "tps-resnet-bilstm-attn.zip.pth", o);
    QVERIFY2(got.contains("differs from the TPS grid"), qPrintable(got));
    o = {};
    o.sensitive = true;
    got = refusal(kDir + "none-vgg-bilstm-ctc.zip.pth", o);
    QVERIFY2(got.contains("--sensitive has 94 characters"), qPrintable(got));
  }

  // An imported model saved as .fvm keeps its preprocessing and gives the same traces.
  void importedModelRoundTrips() {
    if (!hasImageCodecs()) QSKIP("built without OpenCV: the fixture images are PNG and JPEG");
    QTemporaryDir dir;
    const json e = expected();
    const json& m = e["models"][1];  // VGG CTC at 120x48 with --PAD
    const auto in = kDir + m["files"][0].get<std::string>();
    DtrbImport info;
    auto loaded = importDtrb(in, optionsOf(m), &info);
    QVERIFY(!info.notes.empty());  // the charset was assumed: said so
    const std::string out = dir.filePath("m.fvm").toStdString();
    saveCheckpoint(out, loaded.model, "{\"imported_from\": " + info.provenanceJson + "}");
    auto a = ModelSession::open(in, optionsOf(m));
    auto b = ModelSession::open(out);
    QCOMPARE(b->config().preprocessing.resize, std::string("pil_bicubic"));
    QCOMPARE(b->config().preprocessing.colour, std::string("pil_luma"));
    QVERIFY(b->config().preprocessing.keepRatioPad);
    QCOMPARE(b->config().preprocessing.inputH, 48);
    const auto image = readImage(kDir + "img05_400x50_rgb.jpg", true);
    const auto ta = a->trace(image, "x"), tb = b->trace(image, "x");
    QCOMPARE(ta.prediction, tb.prediction);
    QCOMPARE(ta.confidence, tb.confidence);
    QCOMPARE(ta.regions.size(), tb.regions.size());
    // With keep-ratio padding the regions map onto the image's own width, not the padded one.
    QVERIFY(ta.regions.back().x > image.width * 0.5);
  }

  // DTRB's preprocessing is an option of Foveal's own models too, recorded in the model file.
  void dtrbPreprocessingIsAModelOption() {
    ModelConfig c;
    c.width = 0.125;
    c.maxLength = 6;
    c.preprocessing.colour = "pil_luma";
    c.preprocessing.resize = "pil_bicubic";
    c.preprocessing.keepRatioPad = true;
    const ModelConfig back = ModelConfig::fromJson(c.toJson());
    QCOMPARE(back.preprocessing.colour, std::string("pil_luma"));
    QCOMPARE(back.preprocessing.resize, std::string("pil_bicubic"));
    QVERIFY(back.preprocessing.keepRatioPad);
    c.preprocessing.resize = "lanczos";
    QVERIFY_THROWS_EXCEPTION(Error, c.validate());
    c.preprocessing.resize = "pil_bicubic";
    auto session = ModelSession::create(c, 1);
    GreyImage wide(300, 30, std::vector<uint8_t>(9000, 200));
    const auto tr = session->trace(wide, "wide");
    QVERIFY(!tr.steps.empty());
    // 300x30 kept at its ratio fills all 100 columns; a narrow one fills ceil(32 * 40 / 30) = 43.
    GreyImage narrow(40, 30, std::vector<uint8_t>(1200, 200));
    const auto tn = session->trace(narrow, "narrow");
    const double last = tn.regions.back().x + tn.regions.back().w;
    QVERIFY2(last > 40 * 1.5, std::to_string(last).c_str());  // regions past the padded width
  }

  // The reader by itself: wrappers, dtypes, views, hostile pickles.
  void readerAcceptsOnlyStateDicts() {
    const auto good = bytesOf(kDir + "none-vgg-bilstm-ctc.zip.pth");
    const auto sd = parseTorchFile(good, "good.pth");
    QCOMPARE(sd.format, std::string("zip"));
    const auto* t = sd.find("FeatureExtraction.ConvNet.0.weight");
    QVERIFY(t);
    QCOMPARE(t->shape, (std::vector<int64_t>{4, 1, 3, 3}));
    const auto* n = sd.find("FeatureExtraction.ConvNet.12.num_batches_tracked");
    QVERIFY(n);
    QVERIFY(n->type == StoredType::Int64);
    QCOMPARE(sd.floats(*n).at(0), 1234.0f);
    // Every prefix of the file is refused with an Error, never a crash.
    for (size_t cut : {size_t(0), size_t(3), size_t(40), good.size() / 3, good.size() - 1}) {
      bool threw = false;
      try {
        parseTorchFile(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(cut)),
                       "cut.pth");
      } catch (const Error&) {
        threw = true;
      }
      QVERIFY2(threw, std::to_string(cut).c_str());
    }
    // A legacy file with the pickle's GLOBAL renamed to something dangerous.
    auto legacy = bytesOf(kDir + "none-vgg-bilstm-ctc.legacy.pth");
    const std::string from = "collections\nOrderedDict\n", to = "subprocess\nOrderedDict\n";
    auto at = std::search(legacy.begin(), legacy.end(), from.begin(), from.end());
    QVERIFY(at != legacy.end());
    std::copy(to.begin(), to.end(), at);
    legacy.erase(at + static_cast<long>(to.size()), at + static_cast<long>(from.size()));
    try {
      parseTorchFile(legacy, "evil.pth");
      QFAIL("accepted a pickle naming subprocess");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("refusing pickled global 'subprocess.OrderedDict'"),
               e.what());
    }
  }

  // PIL's resize, bit-exact: the fixture images resized by the script are compared through the
  // whole model above; here an identity and a known small case.
  void pilResizeKeepsSizeAndFlatImages() {
    std::vector<uint8_t> flat(37 * 13, 77);
    auto r = pilResizeBicubic(flat.data(), 37, 13, 1, 100, 32);
    QCOMPARE(r.size(), size_t(3200));
    for (auto v : r) QCOMPARE(int(v), 77);  // normalised weights: a flat image stays flat
    std::vector<uint8_t> ramp(10);
    for (int i = 0; i < 10; ++i) ramp[static_cast<size_t>(i)] = static_cast<uint8_t>(i * 25);
    QCOMPARE(pilResizeBicubic(ramp.data(), 10, 1, 1, 10, 1), ramp);  // same size: untouched
    const uint8_t px[3] = {255, 0, 0};
    QCOMPARE(int(pilLuma(px, 1)[0]), 76);  // PIL: L of pure red is 76
  }
};

QTEST_APPLESS_MAIN(TestDtrbImport)
#include "test_dtrb_import.moc"
