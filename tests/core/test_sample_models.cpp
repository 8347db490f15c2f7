// The trained models shipped in samples/models must keep reading digits: each is evaluated on a
// small fixed test set (samples/models/checks.json: the ten Table 1 settings, a few images each,
// drawn from the held-out MNIST digits) and its word accuracy must stay above a bar set a little
// under the accuracy measured when the model was committed (and its normalised edit distance above
// a bar of its own). A change in the core that alters what
// a trained model computes (preprocessing, geometry, decoder, checkpoint reading) fails here.
#include <QtTest/QtTest>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "evaluation.h"

using namespace foveal::core::train;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
const fs::path kModels = fs::path(FOVEAL_SAMPLES_DIR) / "models";

json checks() {
  std::ifstream in(kModels / "checks.json");
  if (!in) throw std::runtime_error((kModels / "checks.json").string() + ": missing");
  return json::parse(in);
}
}  // namespace

class TestSampleModels : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The six models of the issue are all there, each with its run folder.
  void everyMechanismIsShipped() {
    const json c = checks();
    for (const char* name : {"soft", "hard", "sharp-pooling", "sharp-chain", "sharp-weighting",
                             "sharp-pooling-reference"}) {
      QVERIFY2(c.at("models").contains(name), name);
      QVERIFY2(fs::exists(kModels / (std::string(name) + ".fvm")), name);
      const fs::path run = fs::path(FOVEAL_SAMPLES_DIR) / "runs" / name;
      QVERIFY2(fs::exists(run / "config.json") && fs::exists(run / "metrics.jsonl"), name);
    }
  }

  void accuracyStaysAboveItsBar_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<double>("bar");
    QTest::addColumn<double>("measured");
    const json c = checks();  // kept alive: items() refers into it
    for (const auto& [name, m] : c.at("models").items())
      QTest::newRow(name.c_str()) << QString::fromStdString(name) << m.at("bar").get<double>()
                                  << m.at("measured").get<double>();
  }

  void accuracyStaysAboveItsBar() {
    QFETCH(QString, name);
    QFETCH(double, bar);
    QFETCH(double, measured);
    QVERIFY(bar < measured);
    const json c = checks();
    EvalOptions o;
    o.batchSize = 100;
    o.loaderThreads = 1;
    o.keepFailures = false;
    const auto report = evaluateModelFile((kModels / (name.toStdString() + ".fvm")).string(),
                                          c.at("data").get<std::vector<std::string>>(), o);
    const auto all = report.overall();
    QCOMPARE(all.count, c.at("images").get<int64_t>());
    qInfo(
        "%s: word accuracy %.4f (measured %.4f, bar %.4f), norm. edit distance %.4f, entropy %.3f",
        qPrintable(name), all.accuracy(), measured, bar, all.ned(), all.entropy());
    QVERIFY2(all.accuracy() >= bar, qPrintable(QStringLiteral("%1: accuracy %2 is under its bar %3")
                                                   .arg(name)
                                                   .arg(all.accuracy())
                                                   .arg(bar)));
    // The normalised edit distance (1 = every character right) has its own bar: it still says
    // something for a model that reads few whole sequences right.
    const auto& m = c.at("models").at(name.toStdString());
    QVERIFY2(all.ned() >= m.at("ned_bar").get<double>(),
             qPrintable(QStringLiteral("%1: normalised edit distance %2 is under its bar %3")
                            .arg(name)
                            .arg(all.ned())
                            .arg(m.at("ned_bar").get<double>())));
    QVERIFY(std::isfinite(all.entropy()) && all.entropy() > 0);
  }
};

QTEST_APPLESS_MAIN(TestSampleModels)
#include "test_sample_models.moc"
