// The one import seam (issue 31): the registry of model file formats, each recognised by its
// content (never the extension alone), its options refused where they do not belong, and the
// EasyOCR recognisers it opens. The EasyOCR fixtures in tests/data/easyocr are made by
// scripts/make-easyocr-fixtures with EasyOCR's own Model classes and get_text functions: three
// small recognisers fitted to their images (generation 2 VGG named as english_g2.pth, generation
// 1 ResNet named as latin.pth in the legacy torch.save format, and a user network with its
// NAME.yaml at imgH 48), and what EasyOCR computes for every image (reading, confidence and each
// column's probabilities).
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "data/data_loader.h"
#include "data/dataset_factory.h"
#include "formats/checkpoint.h"
#include "formats/easyocr_import.h"
#include "formats/model_format.h"
#include "image/grey_image.h"
#include "image/preprocess.h"
#include "import_fixtures.h"
#include "model/charset.h"
#include "trace/model_session.h"
#include "trace/trace.h"
#include "trace/trace_builder.h"

using namespace foveal::core;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kSrc = std::string(FOVEAL_SOURCE_DIR);
const std::string kEasy = kSrc + "/tests/data/easyocr/";
const std::string kDtrb = kSrc + "/tests/data/dtrb/";

json expected() { return foveal::test::readExpected(kEasy); }

QString refusal(const std::string& path, const ImportOptions& o = {}) {
  return foveal::test::refusalOf(path, o);
}

Recognised recognise(const std::string& path, const ImportOptions& o = {}) {
  FileProbe probe(path);
  return recogniseModelFile(probe, o);
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

class TestModelFormats : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { torch::set_num_threads(2); }

  // The registry: every format has a name, a summary, a sniffer, an import and help for each
  // of its options; the command line's union of options names each key once.
  void registryDescribesEveryFormat() {
    std::set<std::string> names;
    for (const auto& f : modelFormats()) {
      QVERIFY(names.insert(f.name).second);
      QVERIFY(!f.summary.empty());
      QVERIFY(f.sniff && f.load);
      for (const auto& o : f.options) QVERIFY2(!o.help.empty(), (f.name + " --" + o.key).c_str());
      QCOMPARE(findModelFormat(f.name), &f);
    }
    QCOMPARE(names, (std::set<std::string>{"foveal", "dtrb", "easyocr", "strhub", "kraken"}));
    std::set<std::string> keys;
    for (const auto& o : allImportOptions()) QVERIFY2(keys.insert(o.key).second, o.key.c_str());
    QVERIFY(keys.count("character") && keys.count("imgW") && keys.count("easyocr"));
    QVERIFY(!findModelFormat("nope"));
  }

  // Each file goes to the format its content says, and the reason names what was seen.
  void recognisesByContent_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("why");
    QTest::newRow("fvm") << QString::fromStdString(kSrc + "/samples/models/crnn.fvm") << "foveal"
                         << "Foveal's model file signature";
    QTest::newRow("dtrb attn") << QString::fromStdString(kDtrb + "none-vgg-bilstm-attn.zip.pth")
                               << "dtrb"
                               << "every key under DTRB's stages";
    QTest::newRow("dtrb ctc") << QString::fromStdString(kDtrb +
                                                        "none-vgg-bilstm-ctc.legacy-module.pth")
                              << "dtrb"
                              << "EasyOCR's recognisers have these keys too";
    QTest::newRow("easyocr released")
        << QString::fromStdString(kEasy + "english_g2.pth") << "easyocr"
        << "named as EasyOCR's released english_g2.pth";
    QTest::newRow("easyocr gen1") << QString::fromStdString(kEasy + "latin.pth") << "easyocr"
                                  << "named as EasyOCR's released latin.pth";
    QTest::newRow("easyocr user network")
        << QString::fromStdString(kEasy + "custom/fixture_net.pth") << "easyocr"
        << "fixture_net.yaml beside it";
    const std::string kraken = kSrc + "/../shared/fixtures/kraken/models/";
    QTest::newRow("kraken coreml") << QString::fromStdString(kraken + "overfit.mlmodel") << "kraken"
                                   << "a CoreML protobuf";
    QTest::newRow("kraken safetensors")
        << QString::fromStdString(kraken + "model_small_fp16.safetensors") << "kraken"
        << "a safetensors file";
  }
  void recognisesByContent() {
    QFETCH(QString, file);
    QFETCH(QString, format);
    QFETCH(QString, why);
    const auto r = recognise(file.toStdString());
    QCOMPARE(QString::fromStdString(r.format->name), format);
    QVERIFY2(QString::fromStdString(r.why).contains(why), r.why.c_str());
  }

  // Not by the extension: a Foveal model named .pth is Foveal's, a text file named .pth is refused
  // as no model, and EasyOCR's keys under another name are DTRB's until --easyocr says otherwise.
  void neverByTheExtensionAlone() {
    QTemporaryDir dir;
    const std::string fvmAsPth = dir.filePath("model.pth").toStdString();
    fs::copy_file(kSrc + "/samples/models/crnn.fvm", fvmAsPth);
    QCOMPARE(recognise(fvmAsPth).format->name, std::string("foveal"));
    QVERIFY(ModelSession::open(fvmAsPth)->config().isCtc());
    const std::string text = dir.filePath("notes.pth").toStdString();
    writeText(text, "hello, I am a text file with a .pth name");
    QVERIFY2(refusal(text).contains("not a Foveal model file"), qPrintable(refusal(text)));
    const std::string renamed = dir.filePath("mine.pth").toStdString();
    fs::copy_file(kEasy + "english_g2.pth", renamed);
    QCOMPARE(recognise(renamed).format->name, std::string("dtrb"));
    const auto r = recognise(renamed, {{"easyocr", "english_g2"}});
    QCOMPARE(r.format->name, std::string("easyocr"));
    QVERIFY(QString::fromStdString(r.why).contains("--easyocr english_g2 given"));
    QCOMPARE(recognise(renamed, {{"format", "easyocr"}}).why, std::string("--format easyocr"));
  }

  // Options that are not the format's are refused, naming the format and its options; an unknown
  // --format lists the formats; a bad value is named.
  void refusesForeignOptions() {
    QString got = refusal(kEasy + "english_g2.pth", {{"imgW", "100"}});
    QVERIFY2(got.contains("--imgW is not an option of easyocr files") && got.contains("--easyocr"),
             qPrintable(got));
    got = refusal(kDtrb + "none-vgg-bilstm-attn.zip.pth", {{"format", "parseq"}});
    QVERIFY2(
        got.contains("--format parseq is not a model file format (foveal, easyocr, strhub, dtrb, "
                     "kraken)"),
        qPrintable(got));
    got = refusal(kDtrb + "none-vgg-bilstm-attn.zip.pth", {{"imgH", "tall"}});
    QVERIFY2(got.contains("--imgH must be a whole number in [8, 4096] (got 'tall')"),
             qPrintable(got));
    // The DTRB options as the import seam's key/value pairs, and back.
    DtrbOptions d;
    d.character = "abc";
    d.imgW = 128;
    d.pad = true;
    const ImportOptions o = importOptionsOf(d);
    QCOMPARE(o.at("character"), std::string("abc"));
    QCOMPARE(o.at("imgW"), std::string("128"));
    QVERIFY(!o.count("imgH"));  // defaults are not written
    const DtrbOptions back = dtrbOptionsFrom(o, "x");
    QCOMPARE(back.imgW, 128);
    QVERIFY(back.pad);
    QCOMPARE(back.character, std::string("abc"));
  }

  // Every EasyOCR fixture on every image read as the recogniser alone (--easyocr-input
  // recogniser: get_text given the file's pixels; test_easyocr_readtext checks readtext's
  // pipeline): EasyOCR's reading and confidence, and every column's probabilities within 1e-4;
  // the input as wide as EasyOCR's max_width for that crop.
  void matchesEasyOcr_data() {
    QTest::addColumn<int>("model");
    const json e = expected();
    for (size_t m = 0; m < e["models"].size(); ++m)
      QTest::newRow(e["models"][m]["name"].get<std::string>().c_str()) << static_cast<int>(m);
  }
  void matchesEasyOcr() {
    if (!hasImageCodecs()) QSKIP("built without OpenCV: the fixture images are PNG");
    QFETCH(int, model);
    const json e = expected();
    const json& m = e["models"][static_cast<size_t>(model)];
    ImportReport report;
    auto session = ModelSession::open(kEasy + m["file"].get<std::string>(),
                                      {{"easyocr-input", "recogniser"}}, &report);
    QCOMPARE(report.format, std::string("easyocr"));
    const auto& cfg = session->config();
    QVERIFY(cfg.isCtc());
    QVERIFY(cfg.preprocessing.preResize == "none" && cfg.preprocessing.contrastThreshold == 0);
    QCOMPARE(cfg.makeCharset().size(), m["num_class"].get<int>());
    QCOMPARE(cfg.preprocessing.inputH, m["imgH"].get<int>());
    QCOMPARE(cfg.features, std::string(m["generation"] == 2 ? "vgg" : "resnet"));
    TraceOptions opt;
    opt.topk = 1000;
    double worstP = 0, worstConf = 0;
    for (const auto& imageName : e["images"]) {
      const std::string name = imageName.get<std::string>();
      const auto image = readImage(kEasy + name, /*keepColour=*/true);
      const auto tr = session->trace(image, name, opt);
      const json& r = m["results"][name];
      QVERIFY2(tr.prediction == r["reading"].get<std::string>(),
               (name + ": read '" + tr.prediction + "', EasyOCR '" +
                r["reading"].get<std::string>() + "'")
                   .c_str());
      worstConf = std::max(worstConf, std::abs(tr.confidence - r["confidence"].get<double>()));
      const auto& probs = r["probs"];
      QCOMPARE(tr.columnTopk.size(), probs.size());  // as many columns: the same input width
      QCOMPARE(static_cast<size_t>(tr.gridColumns), probs.size());
      for (size_t c = 0; c < probs.size(); ++c) {
        QCOMPARE(tr.columnTopk[c].size(), probs[c].size());
        for (const auto& tp : tr.columnTopk[c])
          worstP = std::max(
              worstP, std::abs(tp.prob - probs[c][static_cast<size_t>(tp.index)].get<double>()));
      }
      // The columns' regions lie on the image, not on the padding.
      QVERIFY(tr.regions.front().x < image.width * 0.5);
    }
    qInfo("%s: largest |p - p_EasyOCR| %.2e, |confidence - EasyOCR's| %.2e",
          m["name"].get<std::string>().c_str(), worstP, worstConf);
    QVERIFY2(worstP < 1e-4, std::to_string(worstP).c_str());
    QVERIFY2(worstConf < 1e-4, std::to_string(worstConf).c_str());
  }

  // The fixtures can fail matchesEasyOcr: each model reads the images differently (so a wrong
  // preprocessing changes readings) and its probabilities differ between images by far more
  // than the tolerance.
  void fixturesSeeTheImage() {
    const json e = expected();
    for (const auto& m : e["models"]) {
      std::set<std::string> readings;
      double spread = 0;
      const json& first = m["results"][e["images"][0].get<std::string>()];
      for (const auto& imageName : e["images"]) {
        const json& r = m["results"][imageName.get<std::string>()];
        readings.insert(r["reading"].get<std::string>());
        spread = std::max(spread, foveal::test::largestDifference(r["probs"], first["probs"]));
      }
      const auto name = m["name"].get<std::string>();
      QVERIFY2(readings.size() >= 5, (name + ": too few distinct readings").c_str());
      QVERIFY2(spread > 0.1, (name + ": " + std::to_string(spread)).c_str());
    }
  }

  // What the import says it assumed, and an imported model kept as .fvm reads the same.
  void importReportsAndRoundTrips() {
    if (!hasImageCodecs()) QSKIP("built without OpenCV: the fixture images are PNG");
    ImportReport report;
    auto loaded = loadModelFile(kEasy + "english_g2.pth", {}, &report);
    QVERIFY2(QString::fromStdString(report.description).contains("generation 2 (VGG)"),
             report.description.c_str());
    bool charsetNoted = false, heightNoted = false;
    for (const auto& a : report.assumed) {
      charsetNoted |= a.find("english_g2") != std::string::npos;
      heightNoted |= a.find("input height 64") != std::string::npos;
    }
    QVERIFY(charsetNoted && heightNoted);
    QVERIFY(json::parse(report.provenanceJson)["kind"] == "easyocr");
    QTemporaryDir dir;
    const std::string out = dir.filePath("en.fvm").toStdString();
    saveCheckpoint(out, loaded.model, "{\"imported_from\": " + report.provenanceJson + "}");
    ImportReport again;
    auto b = ModelSession::open(out, {}, &again);
    QCOMPARE(again.format, std::string("foveal"));
    QVERIFY(json::parse(again.provenanceJson)["kind"] == "easyocr");
    QVERIFY(b->config().preprocessing.variableWidth);
    QCOMPARE(b->config().ctcConfidence, std::string("easyocr"));
    auto a = ModelSession::open(kEasy + "english_g2.pth");
    const json e = expected();
    for (const auto& imageName : e["images"]) {
      const auto image = readImage(kEasy + imageName.get<std::string>(), true);
      const auto ta = a->trace(image, "x"), tb = b->trace(image, "x");
      QCOMPARE(ta.prediction, tb.prediction);
      QCOMPARE(ta.confidence, tb.confidence);
      QCOMPARE(ta.columnTopk.size(), tb.columnTopk.size());
    }
  }

  // Each refusal names the file and what is wrong.
  void refusesWhatDoesNotFit() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString() + "/";
    // A released name whose list does not fit the classes.
    QString got = refusal(kEasy + "latin.pth", {{"easyocr", "english_g2"}});
    QVERIFY2(got.contains("latin.pth") && got.contains("--easyocr english_g2") &&
                 got.contains("has 96 characters, giving 97 classes with the blank"),
             qPrintable(got));
    got = refusal(kEasy + "latin.pth", {{"easyocr", "klingon_g2"}});
    QVERIFY2(got.contains("--easyocr klingon_g2 is not one of EasyOCR's released recognisers"),
             qPrintable(got));
    // Nothing says which characters: the classes and the ways to say it.
    fs::copy_file(kEasy + "english_g2.pth", d + "anon.pth");
    got = refusal(d + "anon.pth", {{"format", "easyocr"}});
    QVERIFY2(got.contains("anon.pth: the file has 97 classes") && got.contains("--easyocr NAME"),
             qPrintable(got));
    // A yaml that disagrees with the file, one without its character list, one we cannot read.
    fs::copy_file(kEasy + "custom/fixture_net.pth", d + "net.pth");
    writeText(d + "net.yaml",
              "network_params:\n  input_channel: 1\n  output_channel: 32\n  hidden_size: 32\n"
              "imgH: 48\ncharacter_list: '0123456789abcdefghijklmnopqrstuvwxyz -'''\n");
    got = refusal(d + "net.pth");
    QVERIFY2(got.contains("net.yaml says network_params.hidden_size 32, but the file's "
                          "SequenceModeling gives 16"),
             qPrintable(got));
    writeText(d + "net.yaml", "imgH: 48\ncharacter_list: abc\n");
    got = refusal(d + "net.pth");
    QVERIFY2(got.contains("character_list of " + QString::fromStdString(d) +
                          "net.yaml has 3 characters, giving 4 classes"),
             qPrintable(got));
    writeText(d + "net.yaml", "imgH: 48\nlang_list:\n  - en\n");
    got = refusal(d + "net.pth");
    QVERIFY2(got.contains("net.yaml: no character_list"), qPrintable(got));
    writeText(d + "net.yaml", "character_list: |\n  abc\n");
    got = refusal(d + "net.pth");
    QVERIFY2(got.contains("net.yaml:1: this YAML form ('|') is not read here"), qPrintable(got));
    // Not an EasyOCR architecture.
    got = refusal(kDtrb + "none-vgg-bilstm-attn.zip.pth", {{"format", "easyocr"}});
    QVERIFY2(got.contains("EasyOCR's recognisers are None-VGG-BiLSTM-CTC or "
                          "None-ResNet-BiLSTM-CTC; this file is None-VGG-BiLSTM-Attn"),
             qPrintable(got));
    // The restricted reader still refuses what it refused before the seam.
    got = refusal(kDtrb + "refuse-os-system.pth", {{"format", "easyocr"}});
    QVERIFY2(got.contains("refusing pickled global 'posix.system'"), qPrintable(got));
  }

  // A character list that names a character twice (EasyOCR's devanagari_g1 and arabic_g1 do):
  // the import keeps both classes, each reads as the character (EasyOCR's rule), and says so.
  // The custom fixture's list with its 'l' replaced by a second 'e': every column's
  // probabilities stay as they were, and each reading is the original with 'l' read as 'e'
  // (read as the recogniser alone, whose readings of the fitted images have an 'l').
  void readsACharacterListedTwice() {
    if (!hasImageCodecs()) QSKIP("built without OpenCV: the fixture images are PNG");
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString() + "/";
    fs::copy_file(kEasy + "custom/fixture_net.pth", d + "net.pth");
    writeText(d + "net.yaml",
              "network_params:\n  input_channel: 1\n  output_channel: 32\n  hidden_size: 16\n"
              "imgH: 48\ncharacter_list: 0123456789abcdefghijkemnopqrstuvwxyz -'\n");
    ImportReport report;
    const ImportOptions alone{{"easyocr-input", "recogniser"}};
    auto twice = ModelSession::open(d + "net.pth", alone, &report);
    bool noted = false;
    for (const auto& a : report.assumed) noted |= a.find("names 'e' twice") != std::string::npos;
    QVERIFY(noted);
    const Charset cs = twice->config().makeCharset();
    QVERIFY(cs.repeats());
    QCOMPARE(cs.token(15), std::string("e"));        // the blank, ten digits, a to d, then 'e'
    QCOMPARE(cs.token(22), std::string("e"));        // where 'l' was
    QCOMPARE(cs.encode("e"), std::vector<int>{22});  // the later class, as EasyOCR encodes
    QCOMPARE(cs.decode({15, 22, 0, 15}), std::string("eee"));
    auto once = ModelSession::open(kEasy + "custom/fixture_net.pth", alone);
    TraceOptions opt;
    opt.topk = 1000;
    int differ = 0;
    const json e = expected();
    for (const auto& imageName : e["images"]) {
      const auto image = readImage(kEasy + imageName.get<std::string>(), true);
      const auto a = once->trace(image, "x", opt), b = twice->trace(image, "x", opt);
      std::string l2e = a.prediction;
      std::replace(l2e.begin(), l2e.end(), 'l', 'e');
      QCOMPARE(b.prediction, l2e);
      differ += a.prediction != b.prediction;
      QCOMPARE(b.confidence, a.confidence);
      QCOMPARE(b.columnTopk.size(), a.columnTopk.size());
      for (size_t c = 0; c < a.columnTopk.size(); ++c)
        for (size_t k = 0; k < a.columnTopk[c].size(); ++k) {
          QCOMPARE(b.columnTopk[c][k].index, a.columnTopk[c][k].index);
          QCOMPARE(b.columnTopk[c][k].prob, a.columnTopk[c][k].prob);
        }
    }
    qInfo("%d of %zu readings had an 'l'", differ, e["images"].size());
    QVERIFY(differ >= 2);  // "helo" and "t6 lab"
    // Kept as .fvm, the model still has both classes.
    const std::string out = d + "net.fvm";
    saveCheckpoint(out, loadModelFile(d + "net.pth", {}, nullptr).model, "{}");
    QVERIFY(ModelSession::open(out)->config().charsetRepeats);
    // Foveal's own models still refuse a repeated character.
    QVERIFY_THROWS_EXCEPTION(Error, Charset("0120"));
  }

  // Localisation of a variable-width model (evaluation's locateDecodedSteps) maps columns as the
  // trace does: through the input width the batch was read at and the columns the image fills,
  // not the model's nominal width. A 40x30 image is read 128 wide (ceil(ratio 1.33) x 64) with
  // 86 columns of content (as the recogniser alone reads it; readtext's resized crop, 85 wide,
  // fills 85: test_easyocr_readtext); the nominal width is 256.
  void variableWidthLocalisation() {
    if (!hasImageCodecs()) QSKIP("built without OpenCV: the fixture images are PNG");
    const std::string file = kEasy + "latin.pth";  // reads this image "42"
    const ImportOptions alone{{"easyocr-input", "recogniser"}};
    auto loaded = loadModelFile(file, alone);
    auto session = ModelSession::open(file, alone);
    const auto image = readImage(kEasy + "img01_40x30_rgb.png", true);
    const auto& pp = loaded.model->config.preprocessing;
    auto input = preprocess({image}, pp, false);
    QCOMPARE(input.image.size(3), int64_t(128));
    QCOMPARE(input.contentW.at(0), 86);
    torch::NoGradGuard ng;
    auto out = loaded.model->forward(input.image, input.upsampled);
    const auto trace = session->trace(image, "x");
    const auto located =
        locateDecodedSteps(loaded.model, out, 0, image.width, image.height, 128, input.contentW[0]);
    QCOMPARE(located.size(), trace.steps.size());
    QVERIFY(!located.empty());
    for (size_t t = 0; t < located.size(); ++t) {
      QVERIFY(std::abs(located[t].focus.x - trace.steps[t].focus.x) < 1e-9);
      QVERIFY(std::abs(located[t].focus.y - trace.steps[t].focus.y) < 1e-9);
      QVERIFY(located[t].focus.x >= 0 && located[t].focus.x <= image.width);
      // Its ResNet's columns see the whole input: the character boxes, the trace's.
      const Box &a = located[t].box, &b = trace.steps[t].box;
      QVERIFY2(std::abs(a.x - b.x) < 1e-9 && std::abs(a.w - b.w) < 1e-9 &&
                   std::abs(a.y - b.y) < 1e-9 && std::abs(a.h - b.h) < 1e-9,
               qPrintable(QString("step %1: %2,%3 %4x%5 against %6,%7 %8x%9")
                              .arg(t)
                              .arg(a.x)
                              .arg(a.y)
                              .arg(a.w)
                              .arg(a.h)
                              .arg(b.x)
                              .arg(b.y)
                              .arg(b.w)
                              .arg(b.h)));
      QCOMPARE(a.h, double(image.height));
      QVERIFY(a.w < image.width);
    }
    // The nominal width puts the columns elsewhere: what evaluation did before.
    const auto nominal = locateDecodedSteps(loaded.model, out, 0, image.width, image.height);
    double moved = 0;
    for (size_t t = 0; t < nominal.size(); ++t)
      moved = std::max(moved, std::abs(nominal[t].focus.x - trace.steps[t].focus.x));
    QVERIFY2(moved > 1.0, std::to_string(moved).c_str());
    // The data loader keeps each entry's content width for evaluation: the fixture folder in
    // batches of 10 is read 320 wide (the widest ratio, 260x64 and 250x50, rounds up to 5).
    data::LoaderOptions lo;
    lo.batchSize = 10;
    lo.shuffle = false;
    lo.charset = loaded.model->config.makeCharset();
    lo.maxLength = 25;
    lo.preprocessing = pp;
    lo.withUpsampled = false;
    data::DataLoader loader(data::openDataset(kEasy), lo);
    const auto batch = loader.next();
    QVERIFY(batch.has_value());
    QCOMPARE(batch->images.size(3), int64_t(320));
    QCOMPARE(batch->contentW.size(), size_t(10));
    const auto idx = std::find(batch->indices.begin(), batch->indices.end(), size_t(1));
    QVERIFY(idx != batch->indices.end());  // img01_40x30_rgb.png, 86 columns of 320
    QCOMPARE(batch->contentW[static_cast<size_t>(idx - batch->indices.begin())], 86);
  }

  // The user network's yaml, as Python's yaml.safe_load reads it: plain, quoted, escaped.
  void readsEasyOcrYaml() {
    auto n = parseEasyOcrYaml(
        "# a comment\nnetwork_params:\n  input_channel: 1\n  output_channel: 256  # width\n"
        "  hidden_size: 256\nimgH: 64\nlang_list:\n- en\n"
        "character_list: 0123456789!\"#$%&'()*+,-./ ABCabc\n",
        "a.yaml");
    QCOMPARE(n.characters, std::string("0123456789!\"#$%&'()*+,-./ ABCabc"));
    QCOMPARE(n.imgH, 64);
    QCOMPARE(n.outputChannel, 256);
    QCOMPARE(n.hiddenSize, 256);
    QCOMPARE(n.inputChannel, 1);
    n = parseEasyOcrYaml("character_list: ' ab''c'\n", "b.yaml");
    QCOMPARE(n.characters, std::string(" ab'c"));
    n = parseEasyOcrYaml("character_list: \"a\\\"b\\\\c\\u00e9\\t\"\n", "c.yaml");
    QCOMPARE(n.characters, std::string("a\"b\\c\xc3\xa9\t"));
    QVERIFY_THROWS_EXCEPTION(Error, parseEasyOcrYaml("character_list: 'abc\n", "d.yaml"));
    QVERIFY_THROWS_EXCEPTION(Error, parseEasyOcrYaml("\tcharacter_list: abc\n", "e.yaml"));
    QVERIFY_THROWS_EXCEPTION(Error, parseEasyOcrYaml("imgH: big\ncharacter_list: a\n", "f.yaml"));
  }

  // EasyOCR's fact table: every released model's list by name and by file; sizes as EasyOCR's
  // config.py gives them.
  void releasedModelsByName() {
    const auto* en = findEasyOcrModel("english_g2");
    QVERIFY(en);
    QCOMPARE(en, findEasyOcrModel("english_g2.pth"));
    QCOMPARE(en->generation, 2);
    QCOMPARE(splitUtf8(en->characters).size(), size_t(96));
    const auto* latin = findEasyOcrModel("latin");  // generation 1's file is latin.pth
    QVERIFY(latin);
    QCOMPARE(std::string(latin->name), std::string("latin_g1"));
    QCOMPARE(latin->generation, 1);
    QVERIFY(easyOcrReleasedModels().size() >= 19);
    QCOMPARE(std::string(findEasyOcrModel("telugu")->name), std::string("telugu_g2"));
    QCOMPARE(splitUtf8(findEasyOcrModel("zh_sim_g2")->characters).size(), size_t(6718));
    // config.py lists a character twice in two models: their charsets keep the repeats.
    const std::set<std::string> repeats = {"devanagari_g1", "arabic_g1"};
    for (const auto& m : easyOcrReleasedModels()) {
      const auto chars = splitUtf8(m.characters);
      QVERIFY2(chars.size() > 90, m.name);
      const bool unique = std::set<std::string>(chars.begin(), chars.end()).size() == chars.size();
      QVERIFY2(unique != (repeats.count(m.name) == 1), m.name);
      const Charset cs(m.characters, false, ClassLayout::BlankFirst, !unique);
      QCOMPARE(cs.size(), static_cast<int>(chars.size()) + 1);
      QCOMPARE(cs.decode(cs.encode(m.characters)), std::string(m.characters));
    }
  }

  // EasyOCR's confidence: the maxima of the non-blank columns, product ^ (2 / sqrt(n)).
  void ctcConfidenceRules() {
    const std::vector<int> argmax = {0, 3, 3, 0, 5};
    const std::vector<double> maxima = {0.9, 0.8, 0.5, 0.99, 0.6};
    QCOMPARE(ctcConfidence("product", argmax, maxima, 0), 0.9 * 0.8 * 0.5 * 0.99 * 0.6);
    QVERIFY(std::abs(ctcConfidence("easyocr", argmax, maxima, 0) -
                     std::pow(0.8 * 0.5 * 0.6, 2.0 / std::sqrt(3.0))) < 1e-12);
    QCOMPARE(ctcConfidence("easyocr", {0, 0}, {0.9, 0.8}, 0), 0.0);
    // kraken's: each character the largest probability of its run of frames, their mean; a
    // repeat after a blank is a new character, a blank ends a run.
    const std::vector<int> path = {4, 4, 0, 4, 6, 6, 0, 0};
    const std::vector<double> p = {0.6, 0.7, 0.99, 0.5, 0.3, 0.8, 0.9, 0.9};
    QCOMPARE(ctcRunMaxima(path, p, 0), (std::vector<double>{0.7, 0.5, 0.8}));
    QVERIFY(std::abs(ctcConfidence("kraken", path, p, 0) - (0.7 + 0.5 + 0.8) / 3) < 1e-12);
    QVERIFY(ctcRunMaxima({0, 0}, {0.9, 0.8}, 0).empty());
    QCOMPARE(ctcConfidence("kraken", {0, 0}, {0.9, 0.8}, 0), 1.0);
  }
};

QTEST_APPLESS_MAIN(TestModelFormats)
#include "test_model_formats.moc"
