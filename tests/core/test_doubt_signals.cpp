// Doubt signals and `eval --doubt` (issue 67): the step labelling on hand-made readings
// (substitutions, insertions, deletions at both ends and inside, text scoring), AUROC against a
// brute-force pair count, balanced accuracy and top-5 % precision against brute force and hand
// cases, the combined score kept honest (fitted on one half of the images by id, reported on the
// other: a spurious signal that is perfect on the fitting half and inverted on the reported one
// must drag the reported combined AUROC down), the logistic fit against the data's own weights,
// every signal on constructed distributions with values worked out by hand, and a real run of the
// shipped soft model whose wrong images are the evaluation's misread ones.
#include <QtTest/QtTest>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "base/text_metrics.h"
#include "image/grey_image.h"
#include "trace/doubt_signals.h"
#include "trace/model_session.h"
#include "train/doubt_eval.h"
#include "train/doubt_metrics.h"
#include "train/evaluation.h"

using namespace foveal::core;
using namespace foveal::core::train;

namespace {

std::vector<std::string> units(const std::string& s) {
  std::vector<std::string> out;
  for (char c : s) out.push_back(std::string(1, c));
  return out;
}

// 'R' right, 'W' wrong, 'U' unscored per step.
std::string labels(const StepLabelling& l) {
  std::string out;
  for (auto x : l.labels) out += x == StepLabel::Right ? 'R' : x == StepLabel::Wrong ? 'W' : 'U';
  return out;
}

// The pairs a wrong step beats a right one in, ties half: what AUROC must equal.
double bruteAuroc(const std::vector<double>& d, const std::vector<bool>& w) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < d.size(); ++i)
    for (size_t j = 0; j < d.size(); ++j)
      if (w[i] && !w[j]) {
        pairs += 1;
        wins += d[i] > d[j] ? 1.0 : d[i] == d[j] ? 0.5 : 0.0;
      }
  return wins / pairs;
}

double bruteBalancedAccuracy(const std::vector<double>& d, const std::vector<bool>& w) {
  double best = 0.5;  // flag none
  for (double t : d) {
    double tp = 0, fn = 0, tn = 0, fp = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      const bool flag = d[i] >= t;
      (w[i] ? (flag ? tp : fn) : (flag ? fp : tn)) += 1;
    }
    best = std::max(best, 0.5 * (tp / (tp + fn) + tn / (tn + fp)));
  }
  return best;
}

TraceStep step(const std::string& token, int index, std::vector<TokenProb> topk) {
  TraceStep s;
  s.token = token;
  s.tokenIndex = index;
  for (const auto& t : topk)
    if (t.index == index) s.prob = t.prob;
  s.topk = std::move(topk);
  return s;
}

}  // namespace

class TestDoubtSignals : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void labelling_data() {
    QTest::addColumn<QString>("tokens");  // one character a step; '$' the end token
    QTest::addColumn<QString>("truth");
    QTest::addColumn<bool>("text");
    QTest::addColumn<QString>("expected");
    QTest::addColumn<int>("unattached");
    QTest::newRow("right") << "123$"
                           << "123" << false << "RRRR" << 0;
    QTest::newRow("substitution") << "193$"
                                  << "123" << false << "RWRR" << 0;
    QTest::newRow("insertion inside") << "1723$"
                                      << "123" << false << "RWRRR" << 0;
    QTest::newRow("insertion at the start") << "012$"
                                            << "12" << false << "WRRR" << 0;
    QTest::newRow("insertion at the end") << "1234$"
                                          << "123" << false << "RRRWR" << 0;
    // A deleted character marks the step that read on in its place.
    QTest::newRow("deletion inside") << "13$"
                                     << "123" << false << "RWR" << 0;
    QTest::newRow("two deletions inside") << "14$"
                                          << "1234" << false << "RWR" << 0;
    QTest::newRow("deletion at the start") << "23$"
                                           << "123" << false << "WRR" << 0;
    QTest::newRow("deletion at the end: the end step") << "12$"
                                                       << "123" << false << "RRW" << 0;
    QTest::newRow("empty reading: the end step") << "$"
                                                 << "12" << false << "W" << 0;
    // CTC has no end step: a trailing deletion marks the last step.
    QTest::newRow("ctc deletion at the end") << "12"
                                             << "123" << false << "RW" << 0;
    QTest::newRow("ctc deletion at the start") << "23"
                                               << "123" << false << "WR" << 0;
    QTest::newRow("ctc empty reading") << ""
                                       << "12" << false << "" << 2;
    // 1 (2) (3) 9/4: the deletions and the substitution mark one step, the end step is right.
    QTest::newRow("substitution after deletions") << "19$"
                                                  << "1234" << false << "RWR" << 0;
    QTest::newRow("exact scoring keeps case") << "Ab$"
                                              << "ab" << false << "WRR" << 0;
    QTest::newRow("text scoring folds case, drops punctuation") << "A-b$"
                                                                << "ab" << true << "RURR" << 0;
    QTest::newRow("text scoring: a deletion skips the dropped step")
        << "a-c$"
        << "abc" << true << "RUWR" << 0;
  }
  void labelling() {
    QFETCH(QString, tokens);
    QFETCH(QString, truth);
    QFETCH(bool, text);
    QFETCH(QString, expected);
    QFETCH(int, unattached);
    std::string t = tokens.toStdString();
    const bool end = !t.empty() && t.back() == '$';
    std::vector<std::string> steps = units(end ? t.substr(0, t.size() - 1) : t);
    if (end) steps.push_back("<end>");
    const auto l = labelSteps(steps, end, truth.toStdString(), text);
    QCOMPARE(QString::fromStdString(labels(l)), expected);
    QCOMPARE(l.unattached, unattached);
  }

  void labellingCountsTheEdits() {
    const auto l = labelSteps({"1", "9", "3", "4", "<end>"}, true, "1235", false);
    // 1 2 3 5 against 1 9 3 4: two substitutions, the distance 2.
    QCOMPARE(l.substitutions, 2);
    QCOMPARE(l.insertions + l.deletions, 0);
    const auto m = labelSteps({"7", "1", "2", "<end>"}, true, "12", false);
    QCOMPARE(m.insertions, 1);
    QCOMPARE(m.deletions + m.substitutions, 0);
    QCOMPARE(QString::fromStdString(labels(m)), QString("WRRR"));
    const auto k = labelSteps({"2", "<end>"}, true, "12", false);
    QCOMPARE(k.deletions, 1);
    QCOMPARE(QString::fromStdString(labels(k)), QString("WR"));
  }

  void aurocMatchesThePairCount() {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 20; ++trial) {
      std::uniform_int_distribution<int> size(2, 80);
      const int n = size(rng);
      std::vector<double> d;
      std::vector<bool> w;
      std::bernoulli_distribution wrong(0.3);
      std::uniform_int_distribution<int> level(0, trial % 2 ? 4 : 1000);  // many ties, or few
      for (int i = 0; i < n; ++i) {
        w.push_back(wrong(rng));
        d.push_back(level(rng) / 10.0 + (w.back() ? 0.1 : 0.0));
      }
      if (std::count(w.begin(), w.end(), true) == 0) w[0] = true;
      if (std::count(w.begin(), w.end(), false) == 0) w[1] = false;
      QVERIFY(std::abs(auroc(d, w) - bruteAuroc(d, w)) < 1e-12);
      QVERIFY(std::abs(bestBalancedAccuracy(d, w).balancedAccuracy - bruteBalancedAccuracy(d, w)) <
              1e-12);
    }
    QCOMPARE(auroc({1, 2, 3, 4}, {false, false, true, true}), 1.0);
    QCOMPARE(auroc({1, 2, 3, 4}, {true, true, false, false}), 0.0);
    QCOMPARE(auroc({5, 5, 5, 5}, {true, false, true, false}), 0.5);
    QVERIFY(std::isnan(auroc({1, 2}, {false, false})));
  }

  void balancedAccuracyByHand() {
    // Flag >= 0.9: TPR 1/2, TNR 1 -> 0.75 (the first best, kept); >= 0.7: TPR 1, TNR 1/2 -> 0.75.
    const auto t = bestBalancedAccuracy({0.9, 0.8, 0.7, 0.1}, {true, false, true, false});
    QCOMPARE(t.balancedAccuracy, 0.75);
    QCOMPARE(t.threshold, 0.9);
    const auto perfect = bestBalancedAccuracy({0.1, 0.8, 0.7, 0.2}, {false, true, true, false});
    QCOMPARE(perfect.balancedAccuracy, 1.0);
    QCOMPARE(perfect.threshold, 0.7);
  }

  void precisionOfTheMostDoubtful() {
    // 40 steps: the top 5 % are the two most doubtful, one of them wrong.
    std::vector<double> d;
    std::vector<bool> w;
    for (int i = 0; i < 40; ++i) {
      d.push_back(i);
      w.push_back(i == 39 || i < 5);
    }
    QCOMPARE(precisionAtTop(d, w), 0.5);
    // 20 steps: the top 5 % is one step, but the first two tie (one wrong): half a hit.
    std::vector<double> e(20, 0.0);
    std::vector<bool> x(20, true);
    e[0] = e[1] = 1.0;
    x[1] = false;
    QCOMPARE(precisionAtTop(e, x), 0.5);
    // 21 steps: ceil(1.05) = 2 steps.
    std::vector<double> f(21, 0.0);
    std::vector<bool> y(21, false);
    f[0] = 3, f[1] = 2, f[2] = 1;
    y[0] = true, y[2] = true;
    QCOMPARE(precisionAtTop(f, y), 0.5);
  }

  void rocCurveEndsInTheCorners() {
    const auto roc = rocCurve({0.9, 0.8, 0.7, 0.1}, {true, false, true, false});
    QCOMPARE(roc.size(), size_t(5));
    QCOMPARE(roc.front().truePositiveRate, 0.0);
    QCOMPARE(roc[1].truePositiveRate, 0.5);
    QCOMPARE(roc[1].falsePositiveRate, 0.0);
    QCOMPARE(roc.back().truePositiveRate, 1.0);
    QCOMPARE(roc.back().falsePositiveRate, 1.0);
  }

  void splitIsByIdAndBalanced() {
    int ones = 0;
    for (int i = 0; i < 1000; ++i) {
      const std::string id = "digits: entry " + std::to_string(i);
      QCOMPARE(doubtSplit(id), doubtSplit(id));
      ones += doubtSplit(id);
    }
    QVERIFY2(ones > 440 && ones < 560, qPrintable(QString::number(ones)));
  }

  // The fitting half leaks into the reported one if the combined score is fitted on the
  // reported steps (or on all of them): here "leak" is perfect on the fitting half and exactly
  // inverted on the reported half, "honest" is a noisy but real signal on both. Fitted on the
  // fitting half alone, the regression leans on "leak" and the reported AUROC falls below 0.5;
  // fitted on everything, "leak" cancels out and the AUROC would be that of "honest" (~0.8);
  // fitted on the reported half, ~1.
  void combinedScoreIsReportedOnTheOtherHalf() {
    std::mt19937 rng(3);
    std::normal_distribution<double> noise(0.0, 1.0);
    std::bernoulli_distribution wrong(0.3);
    std::vector<DoubtStep> steps;
    for (int i = 0; i < 400; ++i) {
      const std::string id = "image " + std::to_string(i);
      const bool fitting = doubtSplit(id) == 0;
      for (int s = 0; s < 5; ++s) {
        DoubtStep st;
        st.image = static_cast<size_t>(i);
        st.entry = id;
        st.step = s;
        st.wrong = wrong(rng);
        const double leak = (st.wrong == fitting ? 1.0 : 0.0) + 0.01 * noise(rng);
        const double honest = (st.wrong ? 1.0 : 0.0) + noise(rng);
        st.values = {leak, honest};
        steps.push_back(std::move(st));
      }
    }
    const std::vector<DoubtSignalInfo> signals = {{"leak", true}, {"honest", true}};
    const auto scores = scoreDoubt(signals, steps);
    // Every reported step is of the reported half, and every step of that half is reported.
    std::set<size_t> reportedImages;
    for (size_t r : scores.reported) {
      QCOMPARE(doubtSplit(steps[r].entry), 1);
      reportedImages.insert(steps[r].image);
    }
    int64_t ofReportedHalf = 0;
    for (const auto& st : steps) ofReportedHalf += doubtSplit(st.entry) == 1;
    QCOMPARE(static_cast<int64_t>(scores.reported.size()), ofReportedHalf);
    QCOMPARE(scores.reportSteps + scores.fitSteps, static_cast<int64_t>(steps.size()));
    QCOMPARE(static_cast<int64_t>(reportedImages.size()), scores.reportImages);
    QCOMPARE(scores.reportImages + scores.fitImages, int64_t(400));
    QVERIFY(scores.combinedNote.empty());
    QCOMPARE(scores.combinedSignals, (std::vector<std::string>{"leak", "honest"}));
    QVERIFY2(scores.combined.weights[0] > 1.0,
             qPrintable(QString::number(scores.combined.weights[0])));
    const auto& combined = scores.scores.back();
    QCOMPARE(combined.signal, std::string(kCombinedSignal));
    QCOMPARE(combined.steps, ofReportedHalf);
    QVERIFY2(combined.auroc < 0.5, qPrintable(QString::number(combined.auroc)));
    // The single signals are scored on the reported half too: leak is inverted there.
    QVERIFY(scores.scores[0].auroc < 0.05);
    QVERIFY(scores.scores[1].auroc > 0.7);
  }

  // The window's combined score (issue 67 item 3) is the report's: its JSON read back gives every
  // reported step the score the report computed for it.
  void combinedScoreReadBackGivesTheReportedScores() {
    std::mt19937 rng(5);
    std::normal_distribution<double> noise(0.0, 1.0);
    std::bernoulli_distribution wrong(0.3);
    DoubtReport report;
    report.model = "runs/soft.fvm";
    report.dataset = "hand";
    report.signals = {{"probability", false, DoubtScale::Unit},
                      {"output_entropy", true, DoubtScale::Positive},
                      {"attention_gini", false, DoubtScale::Unit}};
    for (int i = 0; i < 300; ++i)
      for (int k = 0; k < 4; ++k) {
        DoubtStep st;
        st.image = static_cast<size_t>(i);
        st.entry = "image " + std::to_string(i);
        st.step = k;
        st.wrong = wrong(rng);
        const double p = 1 / (1 + std::exp(-(2.0 - 2.5 * st.wrong + noise(rng))));
        st.values = {p, std::abs(noise(rng)) + st.wrong,
                     k == 3 ? std::numeric_limits<double>::quiet_NaN() : 0.5 + 0.1 * noise(rng)};
        report.steps.push_back(std::move(st));
      }
    report.scores = scoreDoubt(report.signals, report.steps);
    QVERIFY(report.scores.combinedNote.empty());
    QTemporaryDir dir;
    const std::string path = dir.filePath("doubt.json").toStdString();
    {
      std::ofstream out(path);
      out << "[" << report.toJson() << "]\n";
    }
    const auto combined = readCombinedDoubt(path);
    QCOMPARE(combined.size(), size_t(1));
    QCOMPARE(combined[0].model, report.model);
    QCOMPARE(combined[0].signals, report.scores.combinedSignals);
    for (size_t i = 0; i < report.scores.reported.size(); ++i) {
      const auto& st = report.steps[report.scores.reported[i]];
      DoubtSignals one;
      one.signals = report.signals;
      for (double v : st.values) one.values.push_back({v});
      const double p = combinedDoubt(combined[0], one).front();
      QVERIFY2(std::abs(p - report.scores.combinedScore[i]) < 1e-9,
               qPrintable(QStringLiteral("step %1: %2 against %3")
                              .arg(i)
                              .arg(p)
                              .arg(report.scores.combinedScore[i])));
    }
  }

  void combinedScoreSaysWhyItIsMissing() {
    std::vector<DoubtStep> steps;
    for (int i = 0; i < 50; ++i) {
      DoubtStep st;
      st.image = static_cast<size_t>(i);
      st.entry = "image " + std::to_string(i);
      st.wrong = doubtSplit(st.entry) == 1 && i % 3 == 0;  // no wrong step where it is fitted
      st.values = {static_cast<double>(i % 7)};
      steps.push_back(st);
    }
    const auto scores = scoreDoubt({{"x", true}}, steps);
    QCOMPARE(scores.combinedNote, std::string("no wrong step in the fitting half"));
    QVERIFY(std::isnan(scores.scores.back().auroc));
    QCOMPARE(scores.scores.back().steps, int64_t(0));
  }

  void logisticFitRecoversTheWeights() {
    // y ~ Bernoulli(sigmoid(-0.5 + 2 x1 - x2)) with x standard normal: the fit (on standardised
    // features, whose mean and sd are near 0 and 1) finds the weights.
    std::mt19937 rng(11);
    std::normal_distribution<double> n01(0.0, 1.0);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<std::vector<double>> x;
    std::vector<bool> y;
    for (int i = 0; i < 20000; ++i) {
      const double a = n01(rng), b = n01(rng);
      x.push_back({a, b, std::numeric_limits<double>::quiet_NaN()});  // a feature never seen
      y.push_back(u(rng) < 1.0 / (1.0 + std::exp(-(-0.5 + 2 * a - b))));
    }
    const auto m = fitLogistic(x, y);
    const double w1 = m.weights[0] / m.scale[0], w2 = m.weights[1] / m.scale[1];
    const double b =
        m.bias - m.weights[0] * m.mean[0] / m.scale[0] - m.weights[1] * m.mean[1] / m.scale[1];
    QVERIFY2(std::abs(w1 - 2.0) < 0.1, qPrintable(QString::number(w1)));
    QVERIFY2(std::abs(w2 + 1.0) < 0.07, qPrintable(QString::number(w2)));
    QVERIFY2(std::abs(b + 0.5) < 0.07, qPrintable(QString::number(b)));
    QCOMPARE(m.weights[2], 0.0);
    QVERIFY(m.iterations > 1 && m.iterations < 100);
    QVERIFY(std::abs(m.predict({0, 0, 0}) - 1.0 / (1.0 + std::exp(0.5))) < 0.03);
    QVERIFY_THROWS_EXCEPTION(Error, fitLogistic({{1.0}, {2.0}}, {true, true}));
  }

  void combinedFeaturesByScale() {
    const DoubtSignalInfo unit{"p", false, DoubtScale::Unit};
    const DoubtSignalInfo positive{"h", true, DoubtScale::Positive};
    QCOMPARE(combinedFeature(unit, 0.5), 0.0);
    QVERIFY(std::abs(combinedFeature(unit, 0.9) - std::log(9.0)) < 1e-9);
    QVERIFY(std::abs(combinedFeature(unit, 1.0) - std::log((1 - 1e-6) / 1e-6)) < 1e-9);
    QVERIFY(std::abs(combinedFeature(unit, -0.2) + std::log((1 - 1e-6) / 1e-6)) < 1e-9);
    QVERIFY(std::abs(combinedFeature(positive, 1.0) - std::log(1 + 1e-6)) < 1e-12);
    QVERIFY(std::abs(combinedFeature(positive, 0.0) - std::log(1e-6)) < 1e-12);
    QCOMPARE(combinedFeature({"x", true}, -3.0), -3.0);
    QVERIFY(std::isnan(combinedFeature(unit, std::nan(""))));
  }

  void mapSignalsByHand() {
    QCOMPARE(giniCoefficient({1, 1, 1, 1}), 0.0);
    QCOMPARE(giniCoefficient({0, 0, 0, 1}), 0.75);
    // Mean absolute difference over twice the mean: 8 / (2 * 9 * 2) for 1, 2, 3.
    QVERIFY(std::abs(giniCoefficient({3, 1, 2}) - 8.0 / 36.0) < 1e-12);
    QVERIFY(std::isnan(giniCoefficient({})));
    QCOMPARE(coverageShare({0.1, 0.5, 0.1, 0.3}), 0.75);  // 0.5 + 0.3 + 0.1 = 0.9
    QCOMPARE(coverageShare(std::vector<double>(10, 0.1)), 0.9);
    QCOMPARE(coverageShare({1, 0, 0, 0}), 0.25);
    QCOMPARE(peakShare({0.2, 0.5, 0.3}), 0.5);
    QCOMPARE(peakShare({2, 1, 1}), 0.5);  // normalised
    QVERIFY(std::abs(normalisedEntropy({1, 1}) - std::log(2.0)) < 1e-12);
    QVERIFY(std::abs(topkEntropy({{"a", 1, 0.5}, {"b", 2, 0.25}, {"c", 3, 0.25}}) -
                     1.5 * std::log(2.0)) < 1e-12);
    // The mass the top-k leave out counts as one outcome.
    QVERIFY(std::abs(topkEntropy({{"a", 1, 0.5}, {"b", 2, 0.25}}) - 1.5 * std::log(2.0)) < 1e-12);
  }

  void traceSignalsByHand() {
    Trace tr;
    tr.decoder = "attention";
    tr.steps.push_back(step("1", 2, {{"1", 2, 0.6}, {"7", 8, 0.3}, {"<end>", 0, 0.1}}));
    tr.steps.push_back(step("2", 3, {{"7", 8, 0.5}, {"2", 3, 0.4}, {"<end>", 0, 0.1}}));
    tr.steps.push_back(step("<end>", 0, {{"<end>", 0, 1.0}}));
    StepMap& a = tr.addMap(kAttentionMap, "α");
    a.steps = {{0.7, 0.1, 0.1, 0.1}, {0.25, 0.25, 0.25, 0.25}, {}};
    StepMap& h1 = tr.addMap(std::string(kAttentionHeadPrefix) + "1", "α head 1");
    h1.steps = {{1, 0, 0, 0}, {0.5, 0.5, 0, 0}, {0, 0, 0, 1}};
    StepMap& h2 = tr.addMap(std::string(kAttentionHeadPrefix) + "2", "α head 2");
    h2.steps = {{0.4, 0.2, 0.2, 0.2}, {0, 0, 0.5, 0.5}, {0, 0, 1, 0}};
    // Beams 0.6 / 0.3 / 0.1: the second reads 7 at step 1, the third drops the 2.
    tr.hypotheses = {{"12", {2, 3, 0}, {}, std::log(0.6)},
                     {"17", {2, 8, 0}, {}, std::log(0.3)},
                     {"1", {2, 0}, {}, std::log(0.1)}};
    const auto s = doubtSignals(tr);
    auto value = [&](const std::string& name, size_t t) {
      const int k = s.indexOf(name);
      if (k < 0) qFatal("no signal %s", name.c_str());
      return s.values[static_cast<size_t>(k)][t];
    };
    QCOMPARE(value("probability", 0), 0.6);
    QVERIFY(std::abs(value("margin", 0) - 0.3) < 1e-12);
    QVERIFY(std::abs(value("margin", 1) + 0.1) < 1e-12);  // not the best token: negative
    QCOMPARE(value("margin", 2), 1.0);                    // alone in its top-k
    const double h0 = -(0.6 * std::log(0.6) + 0.3 * std::log(0.3) + 0.1 * std::log(0.1));
    QVERIFY(std::abs(value("output_entropy", 0) - h0) < 1e-12);
    QVERIFY(std::abs(value("attention_entropy", 1) - std::log(4.0)) < 1e-12);
    QCOMPARE(value("attention_peak", 0), 0.7);
    QCOMPARE(value("attention_gini", 1), 0.0);
    // Sorted 0.1 0.1 0.1 0.7: 2 (0.1 + 0.2 + 0.3 + 2.8) / 4 - 5/4 = 0.45.
    QVERIFY(std::abs(value("attention_gini", 0) - 0.45) < 1e-12);
    QCOMPARE(value("attention_coverage", 0), 0.75);      // 0.7 + 0.1 + 0.1
    QVERIFY(std::isnan(value("attention_entropy", 2)));  // the step has no map
    QCOMPARE(value("head1_attention_peak", 0), 1.0);
    QCOMPARE(value("head1_attention_coverage", 1), 0.5);
    QVERIFY(std::abs(value("head2_attention_entropy", 1) - std::log(2.0)) < 1e-12);
    QCOMPARE(value("head2_attention_gini", 2), 0.75);
    QVERIFY(std::abs(value("beam_disagreement", 0) - 0.0) < 1e-12);
    QVERIFY(std::abs(value("beam_disagreement", 1) - 0.4) < 1e-12);  // 0.3 + 0.1
    QVERIFY(std::abs(value("beam_disagreement", 2) - 0.0) < 1e-12);
    QCOMPARE(s.indexOf("ctc_run_entropy"), -1);
    QCOMPARE(s.indexOf("attribution_gini"), -1);
    QCOMPARE(s.signals[static_cast<size_t>(s.indexOf("probability"))].higherIsDoubtful, false);
    QCOMPARE(s.signals[static_cast<size_t>(s.indexOf("attention_entropy"))].higherIsDoubtful, true);
    QVERIFY(s.signals[static_cast<size_t>(s.indexOf("probability"))].scale == DoubtScale::Unit);
    QVERIFY(s.signals[static_cast<size_t>(s.indexOf("head2_attention_entropy"))].scale ==
            DoubtScale::Positive);

    // An attribution: its Gini per step, and the share read from the image where measured.
    Explanation e;
    e.maps = {{1, 1, 1, 1}, {0, 0, 0, -2}, {}};
    StepAttribution a0;
    a0.step = 0;
    a0.imageShare = 0.8;
    e.steps = {a0};
    const auto withAttribution = doubtSignals(tr, &e);
    const int g = withAttribution.indexOf("attribution_gini");
    const int share = withAttribution.indexOf("image_share");
    QVERIFY(g >= 0 && share >= 0);
    QCOMPARE(withAttribution.values[static_cast<size_t>(g)][0], 0.0);
    QCOMPARE(withAttribution.values[static_cast<size_t>(g)][1], 0.75);
    QCOMPARE(withAttribution.values[static_cast<size_t>(share)][0], 0.8);
    QVERIFY(std::isnan(withAttribution.values[static_cast<size_t>(share)][1]));
  }

  void ctcRunSignalsByHand() {
    Trace tr;
    tr.decoder = "ctc";
    // Four columns: 1 1 blank 2 (blank is class 0).
    tr.columnTopk = {{{"1", 1, 0.9}, {"", 0, 0.1}},
                     {{"1", 1, 0.6}, {"", 0, 0.3}, {"2", 2, 0.1}},
                     {{"", 0, 1.0}},
                     {{"2", 2, 0.5}, {"", 0, 0.5}}};
    TraceStep one = step("1", 1, tr.columnTopk[0]);
    one.columns = {0, 1};
    TraceStep two = step("2", 2, tr.columnTopk[3]);
    two.columns = {3};
    tr.steps = {one, two};
    const auto s = doubtSignals(tr);
    const int h = s.indexOf("ctc_run_entropy"), lo = s.indexOf("ctc_run_min_probability");
    QVERIFY(h >= 0 && lo >= 0);
    const double e0 = -(0.9 * std::log(0.9) + 0.1 * std::log(0.1));
    const double e1 = -(0.6 * std::log(0.6) + 0.3 * std::log(0.3) + 0.1 * std::log(0.1));
    QVERIFY(std::abs(s.values[static_cast<size_t>(h)][0] - (e0 + e1) / 2) < 1e-12);
    QVERIFY(std::abs(s.values[static_cast<size_t>(h)][1] - std::log(2.0)) < 1e-12);
    QCOMPARE(s.values[static_cast<size_t>(lo)][0], 0.6);
    QCOMPARE(s.values[static_cast<size_t>(lo)][1], 0.5);
  }

  // The shipped soft model on 40 five-digit images: a step is wrong exactly in the images the
  // evaluation counts misread, every step carries the attention signals, and the JSON holds
  // each signal's figures and the combined score last.
  void realRunMatchesTheEvaluation() {
    const std::string model = FOVEAL_SAMPLES_DIR "/models/soft.fvm";
    const std::string spec = "digits:len=5,split=test,seed=1";
    DoubtOptions o;
    o.limit = 40;
    o.workers = 2;
    const auto report = evaluateDoubt(model, spec, o);
    QCOMPARE(report.images, int64_t(40));
    EvalOptions eo;
    eo.limit = 40;
    eo.batchSize = 8;
    eo.localisation = false;
    const auto eval = evaluateModelFile(model, {spec}, eo);
    QCOMPARE(report.wrongImages, eval.overall().count - eval.overall().correct);
    int64_t ends = 0;
    for (const auto& st : report.steps) ends += st.token == "<end>";
    QCOMPARE(ends, int64_t(40));  // one end step an image, labelled like the others
    QVERIFY(report.steps.size() >= 40 * 5);
    QCOMPARE(report.signals.front().name, std::string("probability"));
    QVERIFY(report.scores.reportSteps > 0 && report.scores.fitSteps > 0);
    // The same figures with one worker: the report does not depend on the number.
    o.workers = 1;
    const auto one = evaluateDoubt(model, spec, o);
    QCOMPARE(one.steps.size(), report.steps.size());
    for (size_t i = 0; i < one.steps.size(); ++i)
      QCOMPARE(one.steps[i].wrong, report.steps[i].wrong);
    // Character steps only: no end step, the same images wrong.
    o.endSteps = false;
    const auto characters = evaluateDoubt(model, spec, o);
    QCOMPARE(characters.steps.size() + 40, report.steps.size());
    for (const auto& st : characters.steps) QVERIFY(st.token != "<end>");
    QCOMPARE(characters.wrongImages, report.wrongImages);
    // Both in one steps CSV: the signals' union as columns, a row per step.
    const std::string csv = doubtStepsCsv({report, characters});
    QVERIFY(csv.rfind("model,dataset,image,entry,split,step,token,wrong,probability,", 0) == 0);
    QCOMPARE(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')),
             1 + report.steps.size() + characters.steps.size());
    const auto j = nlohmann::json::parse(report.toJson());
    QVERIFY(j["signals"].is_array());
    QCOMPARE(j["signals"].front()["signal"].get<std::string>(), std::string("probability"));
    QCOMPARE(j["signals"].back()["signal"].get<std::string>(), std::string("combined"));
    for (const char* key : {"auroc", "balanced_accuracy", "precision_top5"})
      QVERIFY(j["signals"].front().contains(key));
    QVERIFY(report.toTable().find("attention_entropy") != std::string::npos);
    QVERIFY_THROWS_EXCEPTION(Error, [&] {
      DoubtOptions bad = o;
      bad.attribution = "lime";
      evaluateDoubt(model, spec, bad);
    }());
  }

  // kraken's steps read right-to-left text from the left and its prediction is in logical order:
  // the truth is compared in the steps' order, so a near-right Syriac line has few wrong steps
  // (at most one per edit), not most of them as a logical-order comparison would make.
  void rightToLeftLineIsLabelledInReadingOrder() {
    const std::string kraken = std::string(FOVEAL_SOURCE_DIR) + "/../shared/fixtures/kraken/";
    if (!QFileInfo::exists(QString::fromStdString(kraken + "models/overfit.mlmodel")))
      QSKIP("kraken's fixtures are not here (../shared/fixtures/kraken)");
    QTemporaryDir dir;
    QVERIFY(QFile::copy(QString::fromStdString(kraken + "lines/000236.png"),
                        dir.filePath("000236.png")));
    QFile gt(QString::fromStdString(kraken + "lines/000236.gt.txt"));
    QVERIFY(gt.open(QIODevice::ReadOnly));
    const std::string truth = QString::fromUtf8(gt.readAll()).trimmed().toStdString();
    QFile out(dir.filePath("gt.txt"));
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(QByteArray::fromStdString("000236.png\t" + truth + "\n"));
    out.close();
    DoubtOptions o;
    o.workers = 1;
    o.scoring = "exact";
    const auto report =
        evaluateDoubt(kraken + "models/overfit.mlmodel", dir.path().toStdString(), o);
    QCOMPARE(report.images, int64_t(1));
    int64_t wrong = 0;
    for (const auto& st : report.steps) wrong += st.wrong;
    const auto trace = ModelSession::open(kraken + "models/overfit.mlmodel")
                           ->trace(readImage(kraken + "lines/000236.png"), "line");
    const int distance = editDistance(trace.prediction, truth);
    QVERIFY2(wrong > 0 && wrong <= distance,
             qPrintable(QString("%1 wrong steps, distance %2").arg(wrong).arg(distance)));
    QVERIFY(static_cast<size_t>(distance) * 3 < report.steps.size());
  }
};

QTEST_APPLESS_MAIN(TestDoubtSignals)
#include "test_doubt_signals.moc"
