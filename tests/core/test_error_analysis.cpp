// Error analysis (issue 19): the confusion matrix, CERs and per-length / per-character figures
// against alignments worked out by hand; the report files; a real run over a dataset, whose
// accuracy matches the evaluation's and whose confidence and entropy match the trace's; entries a
// model cannot read counted by reason; and a cancelled run that returns nothing.
#include <QtTest/QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "data/dataset_factory.h"
#include "image/grey_image.h"
#include "test_models.h"
#include "trace/model_session.h"
#include "train/error_analysis.h"
#include "train/evaluation.h"

using namespace foveal::core;
using namespace foveal::core::train;

namespace {

ImageReading reading(size_t index, const std::string& truth, const std::string& read) {
  ImageReading r;
  r.index = index;
  r.entry = "entry " + std::to_string(index);
  r.truth = truth;
  r.reading = read;
  r.confidence = 0.5;
  r.entropy = 0.25;
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The hand-worked case: right; one substitution (3 -> 8); one deletion (3); one insertion (7);
// two substitutions 7 -> 1 in one image.
std::vector<ImageReading> handCase() {
  return {reading(0, "123", "123"), reading(1, "123", "128"), reading(2, "1234", "124"),
          reading(3, "12", "172"), reading(4, "77", "11")};
}

}  // namespace

class TestErrorAnalysis : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;

 private Q_SLOTS:
  void confusionMatrixFollowsTheAlignments() {
    const ModelErrors m = analyseReadings("hand.fvm", handCase(), false);
    const ConfusionMatrix& c = m.confusion;
    QCOMPARE(c.symbols(), (std::vector<std::string>{"1", "2", "3", "4", "7", "8"}));
    QCOMPARE(c.size(), 7);
    QCOMPARE(c.gap(), 6);
    const int one = c.indexOf("1"), two = c.indexOf("2"), three = c.indexOf("3"),
              four = c.indexOf("4"), seven = c.indexOf("7"), eight = c.indexOf("8"), gap = c.gap();
    QCOMPARE(c.indexOf(""), gap);
    QCOMPARE(c.indexOf("x"), -1);
    QCOMPARE(c.count(one, one), 4);  // images 0-3 read their 1
    QCOMPARE(c.count(two, two), 4);
    QCOMPARE(c.count(three, three), 1);
    QCOMPARE(c.count(three, eight), 1);
    QCOMPARE(c.count(three, gap), 1);  // the deletion
    QCOMPARE(c.count(four, four), 1);
    QCOMPARE(c.count(gap, seven), 1);  // the insertion
    QCOMPARE(c.count(seven, one), 2);  // twice in one image
    QCOMPARE(c.images(seven, one), (std::vector<size_t>{4}));
    QCOMPARE(c.images(three, eight), (std::vector<size_t>{1}));
    QCOMPARE(c.images(one, one), (std::vector<size_t>{0, 1, 2, 3}));
    int64_t total = 0;
    for (int t = 0; t < c.size(); ++t)
      for (int r = 0; r < c.size(); ++r) total += c.count(t, r);
    QCOMPARE(total, 3 + 3 + 4 + 3 + 2);  // one cell per alignment operation
    QCOMPARE(c.maxOffDiagonal(), 2);
  }

  void cersAndGroupsFollowTheAlignments() {
    const ModelErrors m = analyseReadings("hand.fvm", handCase(), false);
    QCOMPARE(int(m.errors.size()), 5);
    const int distance[] = {0, 1, 1, 1, 2};
    const double cer[] = {0.0, 1.0 / 3, 1.0 / 4, 1.0 / 2, 1.0};
    for (int i = 0; i < 5; ++i) {
      QCOMPARE(m.errors[size_t(i)].distance, distance[i]);
      QCOMPARE(m.errors[size_t(i)].cer, cer[i]);
      QCOMPARE(m.errors[size_t(i)].correct, i == 0);
    }
    QCOMPARE(m.overall.images, 5);
    QCOMPARE(m.overall.correct, 1);
    QCOMPARE(m.overall.edits, 5);
    QCOMPARE(m.overall.chars, 14);
    QCOMPARE(m.overall.cer(), 5.0 / 14);
    QCOMPARE(m.overall.accuracy(), 0.2);
    QCOMPARE(int(m.byLength.size()), 3);
    QCOMPARE(m.byLength.at(3).images, 2);
    QCOMPARE(m.byLength.at(3).accuracy(), 0.5);
    QCOMPARE(m.byLength.at(3).cer(), 1.0 / 6);
    QCOMPARE(m.byLength.at(2).cer(), 3.0 / 4);
    QCOMPARE(m.byLength.at(2).accuracy(), 0.0);
    QCOMPARE(m.byLength.at(4).cer(), 1.0 / 4);
    const CharStats& three = m.byCharacter.at("3");
    QCOMPARE(three.occurrences, 3);
    QCOMPARE(three.matched, 1);
    QCOMPARE(three.substituted, 1);
    QCOMPARE(three.deleted, 1);
    QCOMPARE(three.accuracy(), 1.0 / 3);
    QCOMPARE(three.errorRate(), 2.0 / 3);
    const CharStats& seven = m.byCharacter.at("7");
    QCOMPARE(seven.occurrences, 2);
    QCOMPARE(seven.substituted, 2);
    QCOMPARE(seven.inserted, 1);
    QCOMPARE(m.byCharacter.at("1").occurrences, 4);
    QCOMPARE(m.byCharacter.at("1").matched, 4);
    QVERIFY(!m.byCharacter.count("8"));  // never in a truth, never inserted
  }

  void textScoringAppliesToDistances() {
    const ModelErrors m = analyseReadings(
        "words.fvm", {reading(0, "Hello!", "hello"), reading(1, "Hello", "hel1o")}, true);
    QVERIFY(m.errors[0].correct);
    QCOMPARE(m.errors[0].distance, 0);
    QVERIFY(!m.errors[1].correct);
    QCOMPARE(m.errors[1].cer, 1.0 / 5);
    QCOMPARE(m.confusion.count(m.confusion.indexOf("l"), m.confusion.indexOf("1")), 1);
    QCOMPARE(m.confusion.indexOf("H"), -1);  // lower-cased before aligning
    const ModelErrors exact = analyseReadings("words.fvm", {reading(0, "Hello!", "hello")}, false);
    QVERIFY(!exact.errors[0].correct);
    QCOMPARE(exact.errors[0].distance, 2);  // H -> h and the dropped "!"
  }

  void emptyTruthAndReading() {
    const ModelErrors m = analyseReadings("x", {reading(0, "", "12"), reading(1, "12", "")}, false);
    QCOMPARE(m.errors[0].distance, 2);
    QCOMPARE(m.errors[0].cer, 2.0);  // no truth characters: the distance itself
    QCOMPARE(m.errors[1].cer, 1.0);
    QCOMPARE(m.confusion.count(m.confusion.gap(), m.confusion.indexOf("1")), 1);
    QCOMPARE(m.confusion.count(m.confusion.indexOf("2"), m.confusion.gap()), 1);
  }

  void reportsAreWritten() {
    ErrorAnalysis a;
    a.dataset = "hand";
    a.description = "hand-built";
    // Two models; the second skipped entry 2 and reads a truth with a comma.
    auto first = handCase();
    first.push_back(reading(5, "1,2", "1,2"));
    a.models.push_back(analyseReadings("/models/soft.fvm", first, false));
    a.models.push_back(analyseReadings("/other/soft.fvm",
                                       {reading(0, "123", "123"), reading(5, "1,2", "12")}, false));
    QCOMPARE(a.entries(), (std::vector<size_t>{0, 1, 2, 3, 4, 5}));
    QCOMPARE(a.models[1].positionOf(2), -1);
    QCOMPARE(a.models[1].positionOf(5), 1);
    QCOMPARE(a.models[1].positionOf(99), -1);
    const std::string table = a.tableCsv();
    QVERIFY2(table.rfind("index,entry,truth,length,soft:reading,soft:correct,", 0) == 0,
             table.c_str());
    QVERIFY(table.find("soft-2:reading") != std::string::npos);  // two soft.fvm: distinct names
    QVERIFY2(table.find("\n2,entry 2,1234,4,124,0,0.500000,1,0.250000,0.250000,,,,,,\n") !=
                 std::string::npos,
             table.c_str());
    QVERIFY(table.find("\n5,entry 5,\"1,2\",3,\"1,2\",1,") != std::string::npos);
    QCOMPARE(std::count(table.begin(), table.end(), '\n'), 7);
    const std::string only = a.tableCsv({4, 1});
    QCOMPARE(std::count(only.begin(), only.end(), '\n'), 3);
    QVERIFY(only.find("\n4,") < only.find("\n1,"));  // in the order given

    const std::string csv = a.models[0].confusion.csv();
    QVERIFY2(csv.rfind("truth\\read,\",\",1,2,3,4,7,8,(none)\n", 0) == 0, csv.c_str());
    QVERIFY2(csv.find("\n7,0,2,0,0,0,0,0,0\n") != std::string::npos, csv.c_str());
    QVERIFY2(csv.find("\n(none),0,0,0,0,0,1,0,0\n") != std::string::npos, csv.c_str());

    const std::string dir = m_dir.filePath("report").toStdString();
    const auto files = writeErrorReport(a, dir);
    QCOMPARE(int(files.size()), 8);
    for (const char* name :
         {"table.csv", "by-length.csv", "by-character.csv", "summary.txt", "confusion-soft.csv",
          "confusion-soft.svg", "confusion-soft-2.csv", "confusion-soft-2.svg"})
      QVERIFY2(std::filesystem::file_size(dir + "/" + name) > 0, name);
    const std::string svg = slurp(dir + "/confusion-soft.svg");
    QVERIFY(svg.rfind("<svg", 0) == 0);
    QVERIFY(svg.find("font-size=\"10\">2</text>") != std::string::npos);  // 7 -> 1's count
    const std::string summary = slurp(dir + "/summary.txt");
    QVERIFY2(summary.find("truth \"7\" read as \"1\": 2 times in 1 images") != std::string::npos,
             summary.c_str());
    const std::string lengths = slurp(dir + "/by-length.csv");
    QVERIFY2(lengths.find("soft,2,2,0,0.000000,3,4,0.750000") != std::string::npos,
             lengths.c_str());
    const std::string chars = slurp(dir + "/by-character.csv");
    QVERIFY2(chars.find("soft,3,3,1,1,1,0,0.333333,0.666667") != std::string::npos, chars.c_str());
    // A file where the folder should be: named in the error.
    std::ofstream(m_dir.filePath("taken").toStdString()) << "x";
    try {
      writeErrorReport(a, m_dir.filePath("taken").toStdString());
      QFAIL("wrote into a file");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("taken"));
    }
  }

  // A real run: every image read once, the accuracy the evaluation reports, and per image the
  // confidence and entropy the trace reports.
  void runMatchesEvaluationAndTrace() {
    const std::string model = m_dir.filePath("soft.fvm").toStdString();
    ModelConfig c = foveal::test::tinyConfig("soft");
    ModelSession::create(c, 3)->save(model);
    const std::string spec = "digits:len=5,split=test,seed=4";
    ErrorRunOptions o;
    o.limit = 40;
    o.batchSize = 16;
    std::vector<std::pair<int64_t, int64_t>> reports;
    const ErrorAnalysis a = runErrorAnalysis({model, model}, spec, o, [&](int64_t d, int64_t t) {
      reports.emplace_back(d, t);
      return true;
    });
    QCOMPARE(int(a.models.size()), 2);
    QCOMPARE(int(a.models[0].readings.size()), 40);
    QCOMPARE(a.entries().size(), size_t(40));
    QVERIFY(!reports.empty());
    QCOMPARE(reports.back(), std::make_pair(int64_t(80), int64_t(80)));
    for (size_t i = 1; i < reports.size(); ++i) QVERIFY(reports[i].first >= reports[i - 1].first);
    EvalOptions eo;
    eo.limit = 40;
    const auto report = evaluateModelFile(model, {spec}, eo);
    QCOMPARE(a.models[0].overall.correct, report.overall().correct);
    QCOMPARE(a.models[0].overall.images, report.overall().count);

    auto session = ModelSession::open(model);
    const auto dataset = data::openDataset(spec);
    for (size_t i : {size_t(0), size_t(7), size_t(39)}) {
      const ImageReading& r = a.models[0].readings[i];
      QCOMPARE(r.index, i);
      const Trace tr = session->trace(dataset->get(i).image, "x");
      QCOMPARE(QString::fromStdString(r.reading), QString::fromStdString(tr.prediction));
      QVERIFY2(std::abs(r.confidence - tr.confidence) <= 1e-4 * std::max(1e-6, tr.confidence),
               qPrintable(QString("%1 vs %2").arg(r.confidence).arg(tr.confidence)));
      QVERIFY2(std::abs(r.entropy - tr.meanEntropy) <= 1e-4,
               qPrintable(QString("%1 vs %2").arg(r.entropy).arg(tr.meanEntropy)));
    }
  }

  void unreadableEntriesAreCountedByReason() {
    if (!hasImageCodecs()) QSKIP("built without OpenCV: the folder's images are PNG");
    // A folder dataset: two readable labels, one too long for the model, one outside its charset.
    const QString folder = m_dir.filePath("folder");
    QVERIFY(QDir().mkpath(folder));
    GreyImage img;
    img.width = 100;
    img.height = 32;
    img.pixels.assign(100 * 32, 200);
    std::ofstream gt((folder + "/gt.txt").toStdString());
    const char* labels[] = {"12", "345", "1234567", "12a"};
    for (int i = 0; i < 4; ++i) {
      const std::string name = "img" + std::to_string(i) + ".png";
      writePng(img, (folder + "/" + QString::fromStdString(name)).toStdString());
      gt << name << "\t" << labels[i] << "\n";
    }
    gt.close();
    const std::string model = m_dir.filePath("hard.fvm").toStdString();
    ModelSession::create(foveal::test::tinyConfig("hard"), 5)->save(model);  // maxLength 6
    const ErrorAnalysis a = runErrorAnalysis({model}, folder.toStdString());
    QCOMPARE(int(a.models[0].readings.size()), 2);
    QCOMPARE(a.models[0].skipped, 2);
    QCOMPARE(int(a.models[0].skippedByReason.size()), 2);
    QVERIFY2(a.summary().find("skipped: 2 entries skipped") != std::string::npos,
             a.summary().c_str());
    // Nothing readable at all: an error naming the model and why.
    std::ofstream((folder + "/gt.txt").toStdString()) << "img3.png\t12a\n";
    try {
      runErrorAnalysis({model}, folder.toStdString());
      QFAIL("no readable entry, no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("no model can read an entry") &&
                   QString(e.what()).contains("hard.fvm") &&
                   QString(e.what()).contains("outside the charset"),
               e.what());
    }
  }

  void cancelledRunReturnsNothing() {
    const std::string model = m_dir.filePath("soft-c.fvm").toStdString();
    ModelSession::create(foveal::test::tinyConfig("soft"), 3)->save(model);
    ErrorRunOptions o;
    o.limit = 200;
    o.batchSize = 16;
    int calls = 0;
    bool threw = false;
    try {
      runErrorAnalysis({model}, "digits:len=5,split=test,seed=4", o, [&](int64_t, int64_t) {
        return ++calls < 3;  // stop after the third batch
      });
    } catch (const EvalCancelled&) {
      threw = true;
    }
    QVERIFY(threw);
    QCOMPARE(calls, 3);
  }
};

QTEST_APPLESS_MAIN(TestErrorAnalysis)
#include "test_error_analysis.moc"
