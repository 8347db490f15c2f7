// kraken's CTC decoding of a line (core/model/kraken_codec, kraken_bidi): greedy_decoder's runs,
// PytorchCodec's decode with codes of several labels and several code points, _scale_val, the
// record's bidi reordering and its character tables. Every expected value below was computed by
// kraken's own code (commit 67df280: greedy_decoder, PytorchCodec, get_display_map,
// BBoxOCRRecord/BaselineOCRRecord.logical_order, VGSLRecognitionInference._scale_val) run under
// Debian's python3 on these inputs; this suite cannot run kraken. An oracle outside the
// repository compared the same functions on 133,302 bidi strings (random mixes, deep nesting and
// the inputs of Unicode's BidiCharacterTest/BidiTest), every code point's class, mirror and
// bracket, 1,500 greedy decodes, 1,500 codec decodes, 400 codec validations, 600 whole lines
// and 69,040 scaled frames: all equal, confidences to the bit.
#include <QtTest/QtTest>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "model/kraken_bidi.h"
#include "model/kraken_codec.h"

using namespace foveal::core;

namespace {

const std::string kFixtures = std::string(FOVEAL_SOURCE_DIR) + "/../shared/fixtures/kraken/";

std::u32string u32(const QString& s) { return krakenCodepoints(s.toStdString(), "test"); }

QString qs(const std::u32string& s) {
  return QString::fromUcs4(reinterpret_cast<const char32_t*>(s.data()), s.size());
}

KrakenBaseDir baseOf(const QString& b) {
  return b == "L" ? KrakenBaseDir::L : b == "R" ? KrakenBaseDir::R : KrakenBaseDir::Auto;
}

template <typename F>
QString errorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

// Exact equality: kraken's confidences are float32 values or numpy means, compared bit for bit.
bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

struct Char {
  char32_t cp;
  int start, end;
  double confidence;
};

void compareChars(const std::vector<KrakenChar>& got, const std::vector<Char>& want) {
  QCOMPARE(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    QCOMPARE(static_cast<uint>(got[i].codepoint), static_cast<uint>(want[i].cp));
    QCOMPARE(got[i].start, want[i].start);
    QCOMPARE(got[i].end, want[i].end);
    QVERIFY2(same(got[i].confidence, want[i].confidence),
             qPrintable(QString("char %1: %2 != %3")
                            .arg(i)
                            .arg(got[i].confidence, 0, 'g', 17)
                            .arg(want[i].confidence, 0, 'g', 17)));
  }
}

// The line of pipeline(): a codec with a code of two labels (ܗ = 10, 2) and one of two code
// points (ܓܕ = 9); label 11 has no code. Its argmax path, one label per frame (the 21st frame is
// batch padding), with the path's probability cycling through exact binary fractions.
const char* kLineCodec =
    R"json({"ܐ": [1], "ܒ": [2], " ": [3], ".": [4], "1": [5], "2": [6], "(": [7], ")": [8],
        "ܓܕ": [9], "ܗ": [10, 2]})json";
const int kLinePath[] = {1, 1, 0, 3, 10, 2, 0, 4, 3, 7, 5, 6, 6, 8, 0, 11, 9, 9, 0, 3, 1};

std::vector<float> lineProbs(int classes, int frames) {
  const float values[] = {0.5f, 0.875f, 0.75f, 0.625f};
  std::vector<float> probs(static_cast<size_t>(classes) * frames, 0.0625f);  // [classes x frames]
  for (int t = 0; t < frames; ++t) probs[kLinePath[t] * frames + t] = values[t % 4];
  return probs;
}

}  // namespace

class TestKrakenCodec : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // --- bidi -------------------------------------------------------------------------------

  void displayMap_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("base");
    QTest::addColumn<QString>("display");
    QTest::addColumn<QVector<int>>("order");
    // Syriac (AL) with European digits, spaces and a full stop
    QTest::newRow("syriac digits auto")
        << QString("ܫܠܡܐ 123 ܥܠܡܐ.") << "A" << QString(".ܐܡܠܥ 123 ܐܡܠܫ")
        << QVector<int>{13, 12, 11, 10, 9, 8, 5, 6, 7, 4, 3, 2, 1, 0};
    QTest::newRow("syriac digits L")
        << QString("ܫܠܡܐ 123 ܥܠܡܐ.") << "L" << QString("ܐܡܠܥ 123 ܐܡܠܫ.")
        << QVector<int>{12, 11, 10, 9, 8, 5, 6, 7, 4, 3, 2, 1, 0, 13};
    QTest::newRow("syriac digits R")
        << QString("ܫܠܡܐ 123 ܥܠܡܐ.") << "R" << QString(".ܐܡܠܥ 123 ܐܡܠܫ")
        << QVector<int>{13, 12, 11, 10, 9, 8, 5, 6, 7, 4, 3, 2, 1, 0};
    QTest::newRow("latin syriac auto") << QString("abc ܐܒܓ def") << "A" << QString("abc ܓܒܐ def")
                                       << QVector<int>{0, 1, 2, 3, 6, 5, 4, 7, 8, 9, 10};
    QTest::newRow("latin syriac R") << QString("abc ܐܒܓ def") << "R" << QString("def ܓܒܐ abc")
                                    << QVector<int>{8, 9, 10, 7, 6, 5, 4, 3, 0, 1, 2};
    // brackets: paired (N0) and mirrored at odd levels (L4)
    QTest::newRow("brackets auto")
        << QString("ܐܒ (ܓܕ) [x] <y>") << "A" << QString("<y> [x] (ܕܓ) ܒܐ")
        << QVector<int>{14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    QTest::newRow("brackets L") << QString("ܐܒ (ܓܕ) [x] <y>") << "L" << QString("(ܕܓ) ܒܐ [x] <y>")
                                << QVector<int>{6, 5, 4, 3, 2, 1, 0, 7, 8, 9, 10, 11, 12, 13, 14};
    QTest::newRow("hebrew auto") << QString("שלום, world! 12.5%") << "A"
                                 << QString("world! 12.5% ,םולש")
                                 << QVector<int>{6,  7,  8,  9, 10, 11, 12, 13, 14,
                                                 15, 16, 17, 5, 4,  3,  2,  1,  0};
    QTest::newRow("hebrew L") << QString("שלום, world! 12.5%") << "L"
                              << QString("םולש, world! 12.5%")
                              << QVector<int>{3, 2,  1,  0,  4,  5,  6,  7,  8,
                                              9, 10, 11, 12, 13, 14, 15, 16, 17};
    // isolates and embeddings are dropped from the display
    QTest::newRow("isolate auto") << QString("ܐ\u2067abc\u2069 ܒ") << "A" << QString("ܒ abcܐ")
                                  << QVector<int>{7, 6, 2, 3, 4, 0};
    QTest::newRow("embedding auto") << QString("a\u202Bܐܒ 12\u202C c") << "A" << QString("a12 ܒܐ c")
                                    << QVector<int>{0, 5, 6, 4, 3, 2, 8, 9};
    QTest::newRow("embedding R") << QString("a\u202Bܐܒ 12\u202C c") << "R" << QString("c a12 ܒܐ")
                                 << QVector<int>{9, 8, 0, 5, 6, 4, 3, 2};
    QTest::newRow("arabic digits") << QString("٠١٢ ܐ 34") << "A" << QString("34 ܐ ٠١٢")
                                   << QVector<int>{6, 7, 5, 4, 3, 0, 1, 2};
    QTest::newRow("empty auto") << QString("") << "A" << QString("") << QVector<int>{};
    QTest::newRow("empty R") << QString("") << "R" << QString("") << QVector<int>{};
    // no strong character: auto is left to right
    QTest::newRow("neutrals auto")
        << QString("  ..  ") << "A" << QString("  ..  ") << QVector<int>{0, 1, 2, 3, 4, 5};
    QTest::newRow("neutrals R") << QString("  ..  ") << "R" << QString("  ..  ")
                                << QVector<int>{5, 4, 3, 2, 1, 0};
    QTest::newRow("syriac marks") << QString("ܐ\u0730ܒ\u0731 ܓ") << "A"
                                  << QString("ܓ \u0731ܒ\u0730ܐ") << QVector<int>{5, 4, 3, 2, 1, 0};
    QTest::newRow("number separators auto")
        << QString("1.5-2 ܐ") << "A" << QString("ܐ 1.5-2") << QVector<int>{6, 5, 0, 1, 2, 3, 4};
    QTest::newRow("number separators L")
        << QString("1.5-2 ܐ") << "L" << QString("1.5-2 ܐ") << QVector<int>{0, 1, 2, 3, 4, 5, 6};
    // L1: trailing white space (and isolate controls) take the paragraph level
    QTest::newRow("trailing spaces auto")
        << QString("ܐܒ  ") << "A" << QString("  ܒܐ") << QVector<int>{3, 2, 1, 0};
    QTest::newRow("trailing spaces L")
        << QString("ܐܒ  ") << "L" << QString("ܒܐ  ") << QVector<int>{1, 0, 2, 3};
    QTest::newRow("trailing isolate L") << QString("ab \u202Bܐܒ \u2067") << "L" << QString("ab ܒܐ ")
                                        << QVector<int>{0, 1, 2, 5, 4, 6};
    // BN (soft hyphen, ZWJ) dropped; FSI takes its content's direction
    QTest::newRow("bn and fsi auto")
        << QString("a\u00ADb\u200Dc ܐ\u2068ܒ x\u2069") << "A" << QString("abc ܐx ܒ")
        << QVector<int>{0, 2, 4, 5, 6, 10, 9, 8};
    QTest::newRow("bn and fsi R") << QString("a\u00ADb\u200Dc ܐ\u2068ܒ x\u2069") << "R"
                                  << QString("x ܒܐ abc") << QVector<int>{10, 9, 8, 6, 5, 0, 2, 4};
  }
  void displayMap() {
    QFETCH(QString, text);
    QFETCH(QString, base);
    QFETCH(QString, display);
    QFETCH(QVector<int>, order);
    const BidiDisplayMap map = krakenDisplayMap(u32(text), baseOf(base));
    QCOMPARE(qs(map.text), display);
    QCOMPARE(QVector<int>(map.order.begin(), map.order.end()), order);
  }

  // kraken's readings in expected.json are display order (rpred with bidi_reordering): the
  // network's order reordered. kraken's get_display_map of each gives the network order below
  // (the reverse: every character sits at level 1), and reordering that gives the reading back.
  void expectedReadingsReorderBack() {
    std::ifstream in(kFixtures + "expected.json");
    QVERIFY2(in, qPrintable(QString::fromStdString(kFixtures + "expected.json: cannot open")));
    const auto expected = nlohmann::json::parse(in);
    const std::vector<std::string> networkOrder = {
        "ܕܐܐܐܗܗ ܡ ܐܐ ܐ ܐܕܡ ܗ ܡܘ ܡ",
        " ܗ .ܣܐܕܣ. ܐ  ܠ    ܣܗܕܟ ܗܗܕ ܗ   ܣ ܕ  ܐܗܣ ܗ.",
        "",
    };
    QCOMPARE(expected["readings"].size(), networkOrder.size());
    for (size_t i = 0; i < networkOrder.size(); ++i) {
      const std::u32string reading =
          krakenCodepoints(expected["readings"][i]["prediction"].get<std::string>(), "fixture");
      const std::u32string raw = krakenCodepoints(networkOrder[i], "test");
      QCOMPARE(raw.size(), reading.size());
      QCOMPARE(qs(krakenDisplayMap(reading, KrakenBaseDir::Auto).text), qs(raw));
      const BidiDisplayMap map = krakenDisplayMap(raw, KrakenBaseDir::Auto);
      QCOMPARE(qs(map.text), qs(reading));
      for (size_t k = 0; k < map.order.size(); ++k)
        QCOMPARE(map.order[k], static_cast<int>(raw.size() - 1 - k));
      // the cuts and confidences follow the characters
      std::vector<KrakenChar> chars;
      for (size_t k = 0; k < raw.size(); ++k)
        chars.push_back({raw[k], static_cast<int>(2 * k), static_cast<int>(2 * k + 1), 0.5 + k});
      const auto reordered = krakenReorder(chars, KrakenBaseDir::Auto);
      QCOMPARE(krakenText(reordered), expected["readings"][i]["prediction"].get<std::string>());
      for (size_t k = 0; k < reordered.size(); ++k)
        QCOMPARE(reordered[k].start, chars[map.order[k]].start);
    }
  }

  // kraken's tables (UCD 17.0.0), where ICU 72 (Unicode 15.0) would differ, and around Syriac.
  void characterTables() {
    QCOMPARE(int(bidiClass(0x0897)), int(BidiClass::NSM));  // Arabic pepet, Unicode 16; ICU 72: AL
    QCOMPARE(int(bidiClass(0x1ACF)), int(BidiClass::NSM));  // Unicode 16; ICU 72: L
    QCOMPARE(int(bidiClass(0x0710)), int(BidiClass::AL));   // Syriac letter alaph
    QCOMPARE(int(bidiClass(0x0711)), int(BidiClass::NSM));  // superscript alaph
    QCOMPARE(int(bidiClass(0x0730)), int(BidiClass::NSM));  // Syriac pthaha above
    QCOMPARE(int(bidiClass(0x070F)), int(BidiClass::AL));   // Syriac abbreviation mark (AL, not BN)
    QCOMPARE(int(bidiClass(0x05D0)), int(BidiClass::R));
    QCOMPARE(int(bidiClass(0x0660)), int(BidiClass::AN));
    QCOMPARE(int(bidiClass(0x06F0)), int(BidiClass::EN));
    QCOMPARE(int(bidiClass(' ')), int(BidiClass::WS));
    QCOMPARE(int(bidiClass('.')), int(BidiClass::CS));
    QCOMPARE(int(bidiClass(0x10FFFF)), int(BidiClass::BN));  // noncharacters are BN
    QCOMPARE(int(bidiClass(0x0041)), int(BidiClass::L));
    QCOMPARE(static_cast<uint>(bidiMirror('(')), static_cast<uint>(')'));
    QCOMPARE(static_cast<uint>(bidiMirror(0x00AB)), 0x00BBu);
    QCOMPARE(static_cast<uint>(bidiMirror('a')), static_cast<uint>('a'));
    QCOMPARE(bidiBracket(0x3008).type, 'o');
    QCOMPARE(static_cast<uint>(bidiBracket(0x3008).pair), 0x3009u);
    QCOMPARE(bidiBracket('<').type, 'n');  // mirrored but not a paired bracket
  }

  // --- greedy_decoder ---------------------------------------------------------------------

  void greedyDecoder_data() {
    QTest::addColumn<int>("seqLen");
    QTest::addColumn<QVector<QVector<double>>>("runs");  // label, start, end, confidence
    QTest::newRow("whole line") << 10
                                << QVector<QVector<double>>{{1, 1, 2, 0.800000011920929},
                                                            {2, 4, 4, 0.5},
                                                            {2, 6, 6, 0.800000011920929},
                                                            {1, 9, 9, 0.30000001192092896}};
    QTest::newRow("8 frames") << 8
                              << QVector<QVector<double>>{{1, 1, 2, 0.800000011920929},
                                                          {2, 4, 4, 0.5},
                                                          {2, 6, 6, 0.800000011920929}};
    QTest::newRow("7 frames") << 7
                              << QVector<QVector<double>>{{1, 1, 2, 0.800000011920929},
                                                          {2, 4, 4, 0.5},
                                                          {2, 6, 6, 0.800000011920929}};
    QTest::newRow("no frames") << 0 << QVector<QVector<double>>{};
  }
  void greedyDecoder() {
    QFETCH(int, seqLen);
    QFETCH(QVector<QVector<double>>, runs);
    const float nan = std::nanf("");
    // [classes x frames]: frame 5 is a four-way tie (the first, the blank, wins), frame 8's NaN
    // in the blank row is its argmax (torch.max), frame 7 ties blank and label 1
    const std::vector<float> probs = {0.7f, 0.1f, 0.1f,  0.6f, 0.2f, 0.25f, 0.1f, 0.5f, nan,  0.2f,
                                      0.1f, 0.6f, 0.8f,  0.2f, 0.2f, 0.25f, 0.1f, 0.5f, 0.3f, 0.3f,
                                      0.1f, 0.2f, 0.05f, 0.1f, 0.5f, 0.25f, 0.8f, 0.0f, nan,  0.3f,
                                      0.1f, 0.1f, 0.05f, 0.1f, 0.1f, 0.25f, 0.0f, 0.0f, 0.7f, 0.2f};
    const auto got = krakenGreedyDecode(probs.data(), 4, 10, seqLen);
    QCOMPARE(got.size(), static_cast<size_t>(runs.size()));
    for (int i = 0; i < runs.size(); ++i) {
      QCOMPARE(got[i].label, static_cast<int>(runs[i][0]));
      QCOMPARE(got[i].start, static_cast<int>(runs[i][1]));
      QCOMPARE(got[i].end, static_cast<int>(runs[i][2]));
      QVERIFY(same(got[i].confidence, runs[i][3]));
    }
  }

  void greedyDecoderRefusesBadSizes() {
    const float p[4] = {};
    QVERIFY(errorOf([&] { krakenGreedyDecode(p, 2, 2, 3); }).contains("2 classes x 2 frames"));
    QVERIFY(errorOf([&] { krakenGreedyDecode(p, 0, 2, 1); }).contains("0 classes"));
  }

  // --- PytorchCodec -----------------------------------------------------------------------

  void codecDecode() {
    const KrakenCodec codec = KrakenCodec::fromJson(
        R"({"ܐ": [1], "ܒ": [2], " ": [3], ".": [4], "ܓܕ": [5], "ܗ": [6, 2], "ܘܙ": [7, 1, 3],
            "": [8]})",
        "codec");
    QCOMPARE(codec.maxLabel(), 8);
    QCOMPARE(codec.size(), 8);
    // 6 then 2 spell ܗ; 9 has no code; 6 then 3 is no code (6 skipped, 3 read); 7 1 3 spell
    // ܘܙ (two code points, the mean of three runs); 8 decodes to nothing; a final 7 alone is
    // skipped
    const std::vector<KrakenRun> runs = {{1, 0, 1, 0.8999999761581421f},
                                         {6, 3, 3, 0.5f},
                                         {2, 4, 6, 0.75f},
                                         {9, 7, 7, 0.9900000095367432f},
                                         {5, 9, 10, 0.625f},
                                         {6, 12, 12, 0.30000001192092896f},
                                         {3, 13, 13, 0.800000011920929f},
                                         {7, 15, 15, 0.10000000149011612f},
                                         {1, 16, 17, 0.20000000298023224f},
                                         {3, 18, 19, 0.30000001192092896f},
                                         {8, 20, 20, 0.4000000059604645f},
                                         {4, 22, 22, 0.6000000238418579f},
                                         {7, 23, 23, 0.699999988079071f}};
    compareChars(codec.decode(runs), {{U'\u0710', 0, 1, 0.8999999761581421},
                                      {U'\u0717', 3, 6, 0.625},
                                      {U'\u0713', 9, 10, 0.625},
                                      {U'\u0715', 9, 10, 0.625},
                                      {U'\u0020', 13, 13, 0.800000011920929},
                                      {U'\u0718', 15, 19, 0.2000000054637591},
                                      {U'\u0719', 15, 19, 0.2000000054637591},
                                      {U'\u002E', 22, 22, 0.6000000238418579}});
    QVERIFY(codec.decode({}).empty());
  }

  void codecRefusals_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    QTest::newRow("not json") << R"({"a": [1)"
                              << "m.mlmodel: the codec is not JSON";
    QTest::newRow("not an object") << R"([["a", 1]])"
                                   << "m.mlmodel: the codec is not a non-empty object";
    QTest::newRow("empty") << "{}"
                           << "the codec is not a non-empty object";
    QTest::newRow("not a list") << R"({"a": 1})"
                                << R"(codec entry "a" is not a non-empty list of labels)";
    QTest::newRow("empty list") << R"({"a": []})"
                                << R"(codec entry "a" is not a non-empty list)";
    QTest::newRow("blank label")
        << R"({"a": [0]})"
        << R"(codec entry "a" has label 0 (labels are 1 and up; 0 is CTC's blank))";
    QTest::newRow("float label") << R"({"a": [1.5]})"
                                 << "has a label that is not an integer";
    // what kraken's PytorchCodec refuses (KrakenCodecException)
    QTest::newRow("non-singular")
        << R"({"a": [1], "b": [2, 3], "c": [2, 3]})"
        << R"(codec entries "b" and "c" have the same labels [2, 3] (kraken refuses a codec that is not one-to-one))";
    QTest::newRow("prefix")
        << R"({"a": [1], "ܐ": [2], "b": [2, 1]})"
        << R"(codec entry "ܐ"'s labels [2] begin "b"'s [2, 1] (kraken refuses a codec that is not prefix-free))";
    QTest::newRow("longer prefix") << R"({"x": [4, 5], "y": [4, 5, 6], "z": [4, 6]})"
                                   << R"("x"'s labels [4, 5] begin "y"'s [4, 5, 6])";
  }
  void codecRefusals() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    const QString error = errorOf([&] { KrakenCodec::fromJson(json.toStdString(), "m.mlmodel"); });
    QVERIFY2(error.startsWith("m.mlmodel: "), qPrintable(error));
    QVERIFY2(error.contains(message), qPrintable(error));
  }

  // --- _scale_val -------------------------------------------------------------------------

  void scale_data() {
    QTest::addColumn<int>("inputWidth");
    QTest::addColumn<int>("frames");
    QTest::addColumn<int>("lineWidth");
    QTest::addColumn<int>("padding");
    QTest::addColumn<int>("maxValue");
    QTest::addColumn<QVector<int>>("frame");
    QTest::addColumn<QVector<int>>("pixel");
    const QVector<int> f = {0, 1, 3, 4, 5, 7, 12, 13};
    QTest::newRow("padded") << 400 << 100 << 1000 << 16 << 1000 << (f + QVector<int>{99, 100, 105})
                            << QVector<int>{0, 0, 0, 0, 11, 33, 87, 98, 999, 999, 999};
    QTest::newRow("unpadded") << 64 << 16 << 40 << 0 << 40 << (f + QVector<int>{15, 16, 21})
                              << QVector<int>{0, 2, 8, 10, 12, 18, 30, 32, 38, 39, 39};
    QTest::newRow("wide line") << 132 << 25 << 2544 << 16 << 2544 << (f + QVector<int>{24, 25, 30})
                               << QVector<int>{0,    0,    0,    130,  265, 533,
                                               1205, 1339, 2543, 2543, 2543};
    // frame * 0.5 clamped to [0, 99]: halves round to even as Python's round does
    QTest::newRow("halves") << 1 << 2 << 1 << 0 << 100
                            << QVector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
                            << QVector<int>{0, 0, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6};
  }
  void scale() {
    QFETCH(int, inputWidth);
    QFETCH(int, frames);
    QFETCH(int, lineWidth);
    QFETCH(int, padding);
    QFETCH(int, maxValue);
    QFETCH(QVector<int>, frame);
    QFETCH(QVector<int>, pixel);
    const KrakenScale s = KrakenScale::forLine(inputWidth, frames, lineWidth, padding);
    for (int i = 0; i < frame.size(); ++i) QCOMPARE(s.toPixel(frame[i], 0, maxValue), pixel[i]);
  }

  void scaleRefusesEmptySizes() {
    QVERIFY(errorOf([] { KrakenScale::forLine(32, 0, 100, 16); }).contains("0 output frames"));
    QVERIFY(errorOf([] { KrakenScale::forLine(32, 4, 100, 16); }).contains("padding 16"));
    QVERIFY(errorOf([] { KrakenScale::forLine(64, 4, 0, 16); }).contains("width 0"));
  }

  // --- a whole line, as rpred builds its record -------------------------------------------

  void pipeline() {
    const int classes = 12, frames = 21, seqLen = 20, padding = 16, lineWidth = 333;
    const int inputWidth = 2 * padding + 4 * seqLen;
    const KrakenCodec codec = KrakenCodec::fromJson(kLineCodec, "line");
    QCOMPARE(codec.maxLabel() + 1, 11);  // the network has one class more: label 11, no code
    const auto probs = lineProbs(classes, frames);
    const auto chars = codec.decode(krakenGreedyDecode(probs.data(), classes, frames, seqLen));
    QCOMPARE(QString::fromStdString(krakenText(chars)), QString("ܐ ܗ. (12)ܓܕ "));
    compareChars(chars, {{U'ܐ', 0, 1, 0.875},
                         {U' ', 3, 3, 0.625},
                         {U'ܗ', 4, 5, 0.6875},
                         {U'.', 7, 7, 0.625},
                         {U' ', 8, 8, 0.5},
                         {U'(', 9, 9, 0.875},
                         {U'1', 10, 10, 0.75},
                         {U'2', 11, 12, 0.625},
                         {U')', 13, 13, 0.875},
                         {U'ܓ', 16, 17, 0.875},
                         {U'ܕ', 16, 17, 0.875},
                         {U' ', 19, 19, 0.625}});

    const KrakenScale scale = KrakenScale::forLine(inputWidth, seqLen, lineWidth, padding);
    // BBoxOCRRecord of the box x 10..343: its characters' x0 and x1 after logical_order(base)
    struct Expected {
      KrakenBaseDir base;
      QString prediction;
      QVector<int> x0, x1;
      QVector<double> confidence;
    };
    const Expected expected[] = {
        {KrakenBaseDir::Auto,
         " ܕܓ(12) .ܗ ܐ",
         {342, 316, 316, 246, 176, 200, 153, 130, 107, 37, 13, 10},
         {342, 340, 340, 246, 176, 223, 153, 130, 107, 60, 13, 10},
         {0.625, 0.875, 0.875, 0.875, 0.75, 0.625, 0.875, 0.5, 0.625, 0.6875, 0.625, 0.875}},
        {KrakenBaseDir::L,
         "ܕܓ(12) .ܗ ܐ ",
         {316, 316, 246, 176, 200, 153, 130, 107, 37, 13, 10, 342},
         {340, 340, 246, 176, 223, 153, 130, 107, 60, 13, 10, 342},
         {0.875, 0.875, 0.875, 0.75, 0.625, 0.875, 0.5, 0.625, 0.6875, 0.625, 0.875, 0.625}},
    };
    for (const Expected& e : expected) {
      const auto reordered = krakenReorder(chars, e.base);
      QCOMPARE(QString::fromStdString(krakenText(reordered)), e.prediction);
      QCOMPARE(reordered.size(), static_cast<size_t>(e.x0.size()));
      for (size_t i = 0; i < reordered.size(); ++i) {
        QCOMPARE(10 + scale.toPixel(reordered[i].start, 0, lineWidth), e.x0[i]);
        QCOMPARE(10 + scale.toPixel(reordered[i].end, 0, lineWidth), e.x1[i]);
        QVERIFY(same(reordered[i].confidence, e.confidence[i]));
      }
    }
    // BaselineOCRRecord: its cuts are distances along the baseline, reordered with the text
    const QVector<QPair<int, int>> baselineCuts = {{332, 332}, {306, 330}, {306, 330}, {236, 236},
                                                   {166, 166}, {190, 213}, {143, 143}, {120, 120},
                                                   {97, 97},   {27, 50},   {3, 3},     {0, 0}};
    const auto reordered = krakenReorder(chars, KrakenBaseDir::Auto);
    for (size_t i = 0; i < reordered.size(); ++i) {
      QCOMPARE(scale.toPixel(reordered[i].start, 0, lineWidth), baselineCuts[i].first);
      QCOMPARE(scale.toPixel(reordered[i].end, 0, lineWidth), baselineCuts[i].second);
    }
  }

  void invalidUtf8IsAnError() {
    QVERIFY(errorOf([] { krakenCodepoints("a\xC3", "line"); }).contains("line: invalid UTF-8"));
    QVERIFY(errorOf([] { krakenCodepoints("\xED\xA0\x80", "line"); }).contains("byte 0"));
  }
};

QTEST_APPLESS_MAIN(TestKrakenCodec)
#include "test_kraken_codec.moc"
