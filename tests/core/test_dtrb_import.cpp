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
#include <tuple>

#include "base/crc32.h"
#include "base/error.h"
#include "formats/checkpoint.h"
#include "formats/dtrb_import.h"
#include "formats/pickle_machine.h"
#include "formats/torch_file.h"
#include "formats/zip_reader.h"
#include "image/grey_image.h"
#include "image/pil_resize.h"
#include "import_fixtures.h"
#include "model/model_variants.h"
#include "trace/model_session.h"

using namespace foveal::core;
using nlohmann::json;

namespace {

const std::string kDir = std::string(FOVEAL_SOURCE_DIR) + "/tests/data/dtrb/";

json expected() { return foveal::test::readExpected(kDir); }

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

// Runs `pickle` on the machine (persistent ids become None) and returns its error, if any.
QString unpickle(const std::string& pickle) {
  try {
    Unpickler u(reinterpret_cast<const uint8_t*>(pickle.data()), pickle.size(), "p",
                [](Unpickler& m, int) { return m.make(PickleValue{}); });
    u.load();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

void putLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// A zip archive of `entries` (name, data, method) as torch.save writes one: local headers with
// the data, then the central directory and its end record.
std::string zipOf(const std::vector<std::tuple<std::string, std::string, int>>& entries) {
  std::string body, directory;
  for (const auto& [name, data, method] : entries) {
    const uint32_t crc = crc32(data.data(), data.size());
    const uint64_t local = body.size();
    putLe(body, 0x04034b50, 4);
    putLe(body, 20, 2);
    putLe(body, 0, 2);
    putLe(body, static_cast<uint64_t>(method), 2);
    putLe(body, 0, 4);  // time, date
    putLe(body, crc, 4);
    putLe(body, data.size(), 4);
    putLe(body, data.size(), 4);
    putLe(body, name.size(), 2);
    putLe(body, 0, 2);
    body += name + data;
    putLe(directory, 0x02014b50, 4);
    putLe(directory, 20, 2);
    putLe(directory, 20, 2);
    putLe(directory, 0, 2);
    putLe(directory, static_cast<uint64_t>(method), 2);
    putLe(directory, 0, 4);
    putLe(directory, crc, 4);
    putLe(directory, data.size(), 4);
    putLe(directory, data.size(), 4);
    putLe(directory, name.size(), 2);
    putLe(directory, 0, 2 + 2 + 2 + 2 + 4);  // extra, comment, disk, attributes
    putLe(directory, local, 4);
    directory += name;
  }
  std::string out = body + directory;
  putLe(out, 0x06054b50, 4);
  putLe(out, 0, 4);  // disks
  putLe(out, entries.size(), 2);
  putLe(out, entries.size(), 2);
  putLe(out, directory.size(), 4);
  putLe(out, body.size(), 4);
  putLe(out, 0, 2);
  return out;
}

QString refusal(const std::string& path, const DtrbOptions& o = {}) {
  return foveal::test::refusalOf(path, o);
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
        probSpread =
            std::max(probSpread, foveal::test::largestDifference(r["probs"], first["probs"]));
        if (m["prediction"] == "CTC") continue;
        alphaSpread =
            std::max(alphaSpread, foveal::test::largestDifference(r["alphas"], first["alphas"]));
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

  // The pickle machine alone, on hand-written protocol 2: containers, numbers, bytes, the memo,
  // and a persistent id handed to the caller.
  void pickleMachineBuildsValues() {
    const std::string pickle(
        "\x80\x02}q\x00(X\x01\x00\x00\x00"
        "a]q\x01(K\x07G@\x04\x00\x00\x00\x00\x00\x00"
        "C\x01yN\x88\x86"
        "eX\x01\x00\x00\x00"
        "bh\x01X\x01\x00\x00\x00pX\x03\x00\x00\x00keyQu.",
        59);
    std::vector<std::string> ids;
    Unpickler u(reinterpret_cast<const uint8_t*>(pickle.data()), pickle.size(), "p",
                [&](Unpickler& m, int id) {
                  ids.push_back(m.at(id).s);
                  PickleValue v;
                  v.kind = PickleValue::Int;
                  v.i = 42;
                  return m.make(v);
                });
    const PickleValue& d = u.at(u.load());
    QCOMPARE(u.consumed(), pickle.size());
    QCOMPARE(ids, std::vector<std::string>{"key"});
    QCOMPARE(int(d.kind), int(PickleValue::Dict));
    QCOMPARE(d.items.size(), size_t(6));
    QCOMPARE(u.at(d.items[0]).s, std::string("a"));
    const PickleValue& list = u.at(d.items[1]);
    QCOMPARE(int(list.kind), int(PickleValue::List));
    QCOMPARE(list.items.size(), size_t(4));
    QCOMPARE(u.at(list.items[0]).i, int64_t(7));
    QCOMPARE(u.at(list.items[1]).f, 2.5);
    QCOMPARE(int(u.at(list.items[2]).kind), int(PickleValue::Bytes));
    QCOMPARE(u.at(list.items[2]).s, std::string("y"));
    const PickleValue& pair = u.at(list.items[3]);
    QCOMPARE(pair.items.size(), size_t(2));
    QCOMPARE(int(u.at(pair.items[0]).kind), int(PickleValue::None));
    QCOMPARE(int(u.at(pair.items[1]).kind), int(PickleValue::Bool));
    QCOMPARE(d.items[3], d.items[1]);  // BINGET 1: the same list, not a copy
    QCOMPARE(u.at(d.items[5]).i, int64_t(42));
  }

  // Globals are refused by name whichever opcode names them; a tensor must lie in its storage.
  void pickleMachineRefuses() {
    QVERIFY(unpickle(std::string("\x80\x02"
                                 "cos\nsystem\n.",
                                 14))
                .contains("refusing pickled global 'os.system'"));
    QVERIFY(unpickle(std::string("\x80\x02X\x08\x00\x00\x00"
                                 "builtinsX\x04\x00\x00\x00"
                                 "eval\x93.",
                                 26))
                .contains("refusing pickled global 'builtins.eval'"));
    QVERIFY(unpickle("\x80\x02(i__main__\nX\n.").contains("unsupported pickle opcode 0x69"));
    QVERIFY(unpickle("\x80\x02K\x01").contains("truncated pickle"));
    QVERIFY(unpickle("\x80\x02h\x05.").contains("memo entry 5 before it is written"));
    // _rebuild_tensor_v2(storage of 4 elements, 0, (2, 3), (3, 1)) reaches element 5.
    const std::string tensor(
        "\x80\x02"
        "ctorch._utils\n_rebuild_tensor_v2\n("
        "X\x01\x00\x00\x00sQK\x00K\x02K\x03\x86K\x03K\x01\x86tR.",
        58);
    std::string got;
    try {
      Unpickler u(reinterpret_cast<const uint8_t*>(tensor.data()), tensor.size(), "p",
                  [](Unpickler& m, int) {
                    PickleValue v;
                    v.kind = PickleValue::Storage;
                    v.numel = 4;
                    return m.make(v);
                  });
      u.load();
    } catch (const Error& e) {
      got = e.what();
    }
    QVERIFY2(got.find("tensor reaches element 5 of a storage of 4") != std::string::npos,
             got.c_str());
  }

  // The zip reader alone: stored entries found in place, a compressed one and a cut-off
  // archive refused.
  void zipReaderFindsStoredEntries() {
    const std::string zip = zipOf({{"a/data.pkl", "hello", 0}, {"a/data/0", "0123456789", 0}});
    const auto entries =
        readZipDirectory(reinterpret_cast<const uint8_t*>(zip.data()), zip.size(), "z.zip");
    QCOMPARE(entries.size(), size_t(2));
    const ZipEntry& e = entries.at("a/data/0");
    QCOMPARE(zip.substr(e.offset, e.size), std::string("0123456789"));
    QCOMPARE(e.crc, crc32("0123456789", 10));
    auto refused = [](const std::string& bytes) {
      try {
        readZipDirectory(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "z.zip");
      } catch (const Error& e) {
        return std::string(e.what());
      }
      return std::string();
    };
    QVERIFY(refused(zipOf({{"a/data.pkl", "x", 8}})).find("is compressed (method 8)") !=
            std::string::npos);
    QVERIFY(refused(zip.substr(0, zip.size() - 1)).find("corrupt zip archive") !=
            std::string::npos);
    // A name listed twice (issue 65): torch.load reads the first, a map kept the last.
    const std::string twice = refused(zipOf(
        {{"a/data.pkl", "harmless", 0}, {"a/data/0", "0", 0}, {"a/data.pkl", "malicious", 0}}));
    QVERIFY2(twice.find("z.zip: zip entry 'a/data.pkl' is listed twice") != std::string::npos,
             twice.c_str());
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
