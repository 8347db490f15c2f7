// Forced alignment (trace/ctc_alignment.h): CTC Viterbi checked against a brute force over every
// path on small cases, the CTC forward likelihood against the brute-force sum, hand-computed
// cases (repeats, a truth longer than the frames, characters outside the charset), and the
// alignment a trace carries: equal to the greedy steps (frames and boxes) where the truth is the
// reading, for a CRNN and for kraken's own model on kraken's own line.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "base/error.h"
#include "image/grey_image.h"
#include "model/charset.h"
#include "model/model_variants.h"
#include "test_models.h"
#include "trace/ctc_alignment.h"
#include "trace/kraken_lines.h"
#include "trace/model_session.h"

using namespace foveal::core;

namespace {

const std::string kKraken = std::string(FOVEAL_SOURCE_DIR) + "/../shared/fixtures/kraken/";

// Frames x classes of log-softmaxed random logits.
std::vector<double> randomLogProbs(int frames, int classes, std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.5);
  std::vector<double> out;
  for (int t = 0; t < frames; ++t) {
    std::vector<double> row(static_cast<size_t>(classes));
    double hi = -1e300;
    for (auto& v : row) hi = std::max(hi, v = n(rng));
    double sum = 0;
    for (double v : row) sum += std::exp(v - hi);
    for (double v : row) out.push_back(v - hi - std::log(sum));
  }
  return out;
}

// Every path of `frames` frames over `classes` classes, as the base-`classes` digits of 0..K^T-1.
struct Brute {
  double best = -INFINITY;
  std::vector<int> bestPath;
  double sum = 0;  // probability, not log
  int paths = 0;
};
Brute bruteForce(const std::vector<double>& lp, int frames, int classes,
                 const std::vector<int>& labels) {
  Brute b;
  int total = 1;
  for (int t = 0; t < frames; ++t) total *= classes;
  for (int code = 0; code < total; ++code) {
    std::vector<int> path;
    int c = code;
    for (int t = 0; t < frames; ++t, c /= classes) path.push_back(c % classes);
    if (ctcCollapse(path, 0) != labels) continue;
    double s = 0;
    for (int t = 0; t < frames; ++t) s += lp[static_cast<size_t>(t) * classes + path[t]];
    ++b.paths;
    b.sum += std::exp(s);
    if (s > b.best) {
      b.best = s;
      b.bestPath = path;
    }
  }
  return b;
}

std::vector<double> logOf(const std::vector<std::vector<double>>& probs) {
  std::vector<double> out;
  for (const auto& row : probs)
    for (double p : row) out.push_back(std::log(p));
  return out;
}

QString errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestCtcAlignment : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void viterbiEqualsBruteForce_data() {
    QTest::addColumn<QString>("labels");  // digits: classes 1.. (0 is the blank)
    QTest::addColumn<int>("frames");
    QTest::addColumn<int>("classes");
    QTest::newRow("empty") << "" << 4 << 3;
    QTest::newRow("one") << "1" << 5 << 3;
    QTest::newRow("two") << "12" << 6 << 3;
    QTest::newRow("repeat") << "11" << 6 << 3;
    QTest::newRow("repeat-tight") << "11" << 3 << 3;
    QTest::newRow("three-repeats") << "111" << 6 << 2;
    QTest::newRow("alternating") << "212" << 6 << 3;
    QTest::newRow("exact-length") << "123" << 3 << 4;
    QTest::newRow("four-classes") << "3132" << 7 << 4;
  }
  void viterbiEqualsBruteForce() {
    QFETCH(QString, labels);
    QFETCH(int, frames);
    QFETCH(int, classes);
    std::vector<int> y;
    for (QChar c : labels) y.push_back(c.digitValue());
    std::mt19937 rng(1234 + frames * 7 + classes);
    for (int trial = 0; trial < 20; ++trial) {
      const auto lp = randomLogProbs(frames, classes, rng);
      const Brute b = bruteForce(lp, frames, classes, y);
      QVERIFY(b.paths > 0);
      const CtcViterbiPath v = ctcViterbi(lp, frames, classes, y);
      QVERIFY2(std::abs(v.logProb - b.best) < 1e-12,
               qPrintable(QString("viterbi %1, brute force %2").arg(v.logProb).arg(b.best)));
      QCOMPARE(v.frameClass, b.bestPath);  // random values: the best path is unique
      QCOMPARE(ctcCollapse(v.frameClass, 0), y);
      QVERIFY(std::abs(ctcPathLogProb(lp, frames, classes, v.frameClass) - v.logProb) < 1e-12);
      // The spans are the frames emitting each label, in order and disjoint.
      QCOMPARE(v.spans.size(), y.size());
      int previous = -1;
      for (size_t l = 0; l < y.size(); ++l) {
        QVERIFY(v.spans[l].first > previous);
        QVERIFY(v.spans[l].second >= v.spans[l].first);
        for (int t = v.spans[l].first; t <= v.spans[l].second; ++t) {
          QCOMPARE(v.frameLabel[static_cast<size_t>(t)], int(l));
          QCOMPARE(v.frameClass[static_cast<size_t>(t)], y[l]);
        }
        previous = v.spans[l].second;
      }
      // The forward algorithm sums what the brute force sums.
      const double ll = ctcLogLikelihood(lp, frames, classes, y);
      QVERIFY2(std::abs(ll - std::log(b.sum)) < 1e-10,
               qPrintable(QString("forward %1, brute force %2").arg(ll).arg(std::log(b.sum))));
    }
  }

  void handComputedSingleCharacter() {
    // Two frames over {blank, a}: p = (0.6, 0.4) then (0.3, 0.7). "a" has three paths:
    // a a = 0.4 * 0.7 = 0.28, _ a = 0.6 * 0.7 = 0.42, a _ = 0.4 * 0.3 = 0.12.
    const auto lp = logOf({{0.6, 0.4}, {0.3, 0.7}});
    const auto v = ctcViterbi(lp, 2, 2, {1});
    QCOMPARE(v.frameClass, (std::vector<int>{0, 1}));
    QVERIFY(std::abs(v.logProb - std::log(0.42)) < 1e-12);
    QCOMPARE(v.spans.front(), std::make_pair(1, 1));
    QVERIFY(std::abs(ctcLogLikelihood(lp, 2, 2, {1}) - std::log(0.82)) < 1e-12);
    // The empty truth: the all-blank path alone, 0.6 * 0.3.
    QVERIFY(std::abs(ctcViterbi(lp, 2, 2, {}).logProb - std::log(0.18)) < 1e-12);
    QVERIFY(std::abs(ctcLogLikelihood(lp, 2, 2, {}) - std::log(0.18)) < 1e-12);
  }

  void handComputedRepeatNeedsABlank() {
    // "aa" over three frames has one path, a _ a, however likely a is at the middle frame.
    const auto lp = logOf({{0.1, 0.9}, {0.2, 0.8}, {0.3, 0.7}});
    const auto v = ctcViterbi(lp, 3, 2, {1, 1});
    QCOMPARE(v.frameClass, (std::vector<int>{1, 0, 1}));
    QVERIFY(std::abs(v.logProb - std::log(0.9 * 0.2 * 0.7)) < 1e-12);
    QCOMPARE(v.spans[0], std::make_pair(0, 0));
    QCOMPARE(v.spans[1], std::make_pair(2, 2));
    QVERIFY(std::abs(ctcLogLikelihood(lp, 3, 2, {1, 1}) - std::log(0.9 * 0.2 * 0.7)) < 1e-12);
    // Over four frames: a _ a a (0.9*.2*.7*.6), a a _ a (0.9*.8*.3*.6), a _ _ a (.9*.2*.3*.6),
    // _ a _ a (.1*.8*.3*.6), a _ a _ (.9*.2*.7*.4): a a _ a = 0.1296 is the best.
    const auto lp4 = logOf({{0.1, 0.9}, {0.2, 0.8}, {0.7, 0.3}, {0.4, 0.6}});
    const auto v4 = ctcViterbi(lp4, 4, 2, {1, 1});
    QCOMPARE(v4.frameClass, (std::vector<int>{1, 1, 0, 1}));
    QVERIFY(std::abs(v4.logProb - std::log(0.9 * 0.8 * 0.7 * 0.6)) < 1e-12);
    QCOMPARE(v4.spans[0], std::make_pair(0, 1));
    // Greedy decoding of these frames reads "aa" too, but collapses it to "a": the two differ.
    QCOMPARE(ctcCollapse({1, 1, 1, 1}, 0), (std::vector<int>{1}));
  }

  void truthLongerThanFramesIsRefused() {
    const auto lp = logOf({{0.5, 0.5}, {0.5, 0.5}});
    QCOMPARE(ctcMinimumFrames({1, 1}), 3);
    QCOMPARE(ctcMinimumFrames({1, 2, 2, 2, 1}), 7);
    const QString repeat = errorOf([&] { ctcViterbi(lp, 2, 2, {1, 1}); });
    QVERIFY2(repeat.contains("needs at least 3 frames") && repeat.contains("1 blank between") &&
                 repeat.contains("only 2"),
             qPrintable(repeat));
    QVERIFY(std::isinf(ctcLogLikelihood(lp, 2, 2, {1, 1})));
    const QString named = errorOf([&] {
      alignTranscription("abc", {{"a", {1}}, {"b", {1}}, {"c", {1}}}, lp, 2, 2, {}, 0, {}, {});
    });
    // One class for all three: two repeats, so five frames.
    QVERIFY2(named.contains("the truth \"abc\" needs at least 5 frames") &&
                 named.contains("2 blanks between repeated"),
             qPrintable(named));
    QVERIFY(errorOf([&] { ctcViterbi(lp, 2, 2, {0}); }).contains("is the blank"));
    QVERIFY(errorOf([&] { ctcViterbi(lp, 2, 2, {5}); }).contains("not one of the 2 classes"));
    QVERIFY(errorOf([&] { ctcViterbi(lp, 3, 2, {1}); }).contains("expected 3 x 2"));
  }

  void charactersOutsideTheCharsetAreNamed() {
    const Charset cs("abc", false, ClassLayout::BlankFirst);
    const auto units = charsetUnits(cs, "cab");
    QCOMPARE(units.size(), size_t(3));
    QCOMPARE(units[0].labels, (std::vector<int>{3}));
    QCOMPARE(units[1].text, std::string("a"));
    const QString e = errorOf([&] { charsetUnits(cs, "abxéxz"); });
    QVERIFY2(e.contains("3 characters outside the model's charset: 'x', 'é', 'z'"), qPrintable(e));
    QVERIFY(errorOf([&] { charsetUnits(cs, "aé"); }).contains("a character outside"));
  }

  void alignmentShowsWhatWasReadInstead() {
    // Classes blank, a, b. Frames 0-1 favour b (greedy reads "b a"), the truth is "a a": the
    // forced alignment puts the first a where b was read and says so.
    const auto lp = logOf(
        {{0.1, 0.3, 0.6}, {0.2, 0.3, 0.5}, {0.8, 0.1, 0.1}, {0.1, 0.8, 0.1}, {0.7, 0.2, 0.1}});
    const std::vector<int> greedy{2, 2, 0, 1, 0};
    std::vector<std::vector<int>> located;
    const FrameSpanMapper mapper = [&](const std::vector<int>& f, size_t n) {
      located.push_back(f);
      // A toy mapping: 10 px a frame, the reading's characters say the height.
      return FrameSpanLocation{
          {10.0 * f.front(), 0, 10.0 * (f.back() - f.front() + 1), static_cast<double>(n)},
          {10.0 * f.front() + 5, 1}};
    };
    const auto a = alignTranscription("aa", {{"a", {1}}, {"a", {1}}}, lp, 5, 3, greedy, 0, mapper,
                                      {"", "a", "b"});
    QVERIFY(a.ok());
    QVERIFY(!a.agrees());
    QCOMPARE(a.chars.size(), size_t(2));
    // a _ _ a _ or a a _ a _ ...: the best is a(0.3) a(0.3) _(0.8) a(0.8) _(0.7).
    QCOMPARE(a.path, (std::vector<int>{1, 1, 0, 1, 0}));
    QCOMPARE(a.chars[0].frames, (std::vector<int>{0, 1}));
    QCOMPARE(a.chars[0].readText, std::string("b"));
    QCOMPARE(a.chars[1].frames, (std::vector<int>{3}));
    QCOMPARE(a.chars[1].readText, std::string("a"));
    QCOMPARE(a.chars[0].box, (Box{0, 0, 20, 2}));
    QCOMPARE(a.chars[1].box, (Box{30, 0, 10, 2}));
    QCOMPARE(located.size(), size_t(5 + 2));  // each frame's position, then each character
    QVERIFY(std::abs(a.logProb - std::log(0.3 * 0.3 * 0.8 * 0.8 * 0.7)) < 1e-12);
    QVERIFY(std::abs(a.shownLogProb - std::log(0.6 * 0.5 * 0.8 * 0.8 * 0.7)) < 1e-12);
    QVERIFY(std::abs(a.chars[0].logProb - std::log(0.3 * 0.3)) < 1e-12);
    QVERIFY(std::abs(a.chars[0].prob - 0.3) < 1e-12);
    QCOMPARE(a.pathChar, (std::vector<int>{0, 0, -1, 1, -1}));
    QVERIFY(std::abs(a.charProbs[1][3] - 0.8) < 1e-12);
    QVERIFY(std::abs(a.blankProb[2] - 0.8) < 1e-12);
    const auto j = nlohmann::json::parse(a.toJson());
    QCOMPARE(j["chars"][0]["read"].get<std::string>(), std::string("b"));
    QCOMPARE(j["chars"][1]["frames"][0].get<int>(), 3);
    QVERIFY(QString::fromStdString(a.toTable()).contains("misread"));
  }

  // The shipped CRNN's trace given its own reading as the truth: the forced path is the greedy
  // path, each aligned character has its step's frames and box; the JSON carries it. Given
  // another truth the alignment says where that truth's characters are; an impossible one says
  // why.
  void traceAlignmentOfACrnn() {
    auto session = ModelSession::open(std::string(FOVEAL_SAMPLES_DIR) + "/models/crnn.fvm");
    const GreyImage image =
        readImage(std::string(FOVEAL_SAMPLES_DIR) +
                  (hasImageCodecs() ? "/images/digits-46214.png" : "/images/digits-46214.pgm"));
    const Trace plain = session->trace(image, "bars");
    QVERIFY(plain.alignment.empty());
    QVERIFY(splitUtf8(plain.prediction).size() >= 2);
    TraceOptions o;
    o.truth = plain.prediction;
    const Trace tr = session->trace(image, "bars", o);
    QCOMPARE(tr.prediction, plain.prediction);
    QVERIFY2(tr.alignment.ok(), tr.alignment.error.c_str());
    QVERIFY(tr.alignment.agrees());
    QCOMPARE(tr.alignment.chars.size(), tr.steps.size());
    for (size_t s = 0; s < tr.steps.size(); ++s) {
      QCOMPARE(tr.alignment.chars[s].frames, tr.steps[s].columns);
      QCOMPARE(tr.alignment.chars[s].box, tr.steps[s].box);
      QCOMPARE(tr.alignment.chars[s].text, tr.steps[s].token);
      QCOMPARE(tr.alignment.chars[s].readText, tr.steps[s].token);
    }
    QVERIFY(std::abs(tr.alignment.logProb - tr.alignment.shownLogProb) < 1e-9);
    QVERIFY(tr.alignment.logLikelihood >= tr.alignment.logProb - 1e-9);
    const auto j = nlohmann::json::parse(tr.toJson());
    QVERIFY(j.contains("alignment"));
    QCOMPARE(j["alignment"]["chars"].size(), tr.steps.size());

    // Another truth: a forced path that the greedy one is not, and less probable than it.
    o.truth = plain.prediction == "12" ? "21" : "12";
    QVERIFY(o.truth != plain.prediction);
    const Trace other = session->trace(image, "bars", o);
    QVERIFY2(other.alignment.ok(), other.alignment.error.c_str());
    QCOMPARE(other.alignment.chars.size(), size_t(2));
    QVERIFY(other.alignment.logProb < other.alignment.shownLogProb);
    // The aligned trace: the truth's characters as steps, each with its frames as columns.
    const Trace forced = alignedTrace(other);
    QCOMPARE(forced.prediction, o.truth);
    QCOMPARE(forced.steps.size(), size_t(2));
    QCOMPARE(forced.steps[1].columns, other.alignment.chars[1].frames);
    QCOMPARE(forced.steps[1].box, other.alignment.chars[1].box);
    // Attribution of a true character through the existing methods.
    AttributionOptions ao;
    ao.method = AttributionMethod::Saliency;
    const auto ex = session->explain(image, forced, ao);
    QCOMPARE(ex.steps.size(), size_t(2));
    QCOMPARE(ex.steps[0].target, forced.steps[0].tokenIndex);

    o.truth = "1x2é";
    const Trace outside = session->trace(image, "bars", o);
    QVERIFY(!outside.alignment.ok());
    QVERIFY2(QString::fromStdString(outside.alignment.error).contains("'x', 'é'"),
             outside.alignment.error.c_str());
    QCOMPARE(outside.prediction, plain.prediction);  // the trace itself is unharmed
    o.truth = std::string(30, '7');                  // 24 columns cannot hold 30 sevens
    const Trace longer = session->trace(image, "bars", o);
    QVERIFY2(QString::fromStdString(longer.alignment.error).contains("needs at least 59 frames"),
             longer.alignment.error.c_str());
    QVERIFY(errorOf([&] { alignedTrace(longer); }).contains("no alignment"));

    auto attention = ModelSession::create(foveal::test::tinyConfig("soft"), 3);
    o.truth = "12";
    const Trace soft = attention->trace(image, "bars", o);
    QVERIFY(QString::fromStdString(soft.alignment.error).contains("needs a CTC model"));
  }

  // kraken's own model on kraken's own line: its reading given as the truth (in logical order,
  // as kraken returns it) aligns back onto the frames the greedy decoder used, cut for cut,
  // through the codec's encoding and kraken's bidi reordering (a right-to-left script). The line's
  // real transcription aligns too, and is less probable than what the model read.
  void krakenAlignmentOnItsLine() {
    const std::string model = kKraken + "models/overfit.mlmodel";
    if (!QFile::exists(QString::fromStdString(model))) QSKIP("kraken fixtures missing");
    auto session = ModelSession::open(model);
    const auto page = readImage(kKraken + "lines/000236.png", true);
    const auto spec = krakenBoxLine(0, 0, page.width, page.height);
    const auto plain = session->traceLine(page, spec, "000236");
    QVERIFY(!plain.trace.prediction.empty());
    TraceOptions o;
    o.truth = plain.trace.prediction;
    const auto line = session->traceLine(page, spec, "000236", o);
    const auto& a = line.trace.alignment;
    QVERIFY2(a.ok(), a.error.c_str());
    QVERIFY(a.agrees());
    QCOMPARE(a.chars.size(), line.trace.steps.size());
    for (size_t s = 0; s < a.chars.size(); ++s) {
      QCOMPARE(a.chars[s].firstFrame, line.trace.steps[s].columns.front());
      QCOMPARE(a.chars[s].lastFrame, line.trace.steps[s].columns.back());
      QCOMPARE(a.chars[s].box, line.trace.steps[s].box);
    }
    QFile gt(QString::fromStdString(kKraken + "lines/000236.gt.txt"));
    QVERIFY(gt.open(QIODevice::ReadOnly));
    o.truth = QString::fromUtf8(gt.readAll()).trimmed().toStdString();
    const auto truth = session->traceLine(page, spec, "000236", o).trace.alignment;
    QVERIFY2(truth.ok(), truth.error.c_str());
    QVERIFY(!truth.agrees());
    QVERIFY(truth.logProb < truth.shownLogProb);
    o.truth = "ab";  // Latin letters: not in this Syriac codec
    const auto latin = session->traceLine(page, spec, "000236", o).trace.alignment;
    QVERIFY2(QString::fromStdString(latin.error).contains("outside the model's codec: 'a', 'b'"),
             latin.error.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCtcAlignment)
#include "test_ctc_alignment.moc"
