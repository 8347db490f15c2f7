// The training engine on a tiny model: the run directory (config, metrics, checkpoints that
// loadCheckpoint reads), exact resume, the non-finite guard, stopping on request.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/error.h"
#include "data/synthetic_words.h"
#include "formats/checkpoint.h"
#include "run/run_folder.h"
#include "train/train_config.h"
#include "train/trainer.h"
#include "train/warm_start.h"

using namespace foveal::core;
using namespace foveal::core::train;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// 40 images of 3 digits, batch 8: 5 batches an epoch, so 8 iterations cross an epoch boundary and
// a stop after 4 resumes in the middle of one.
TrainConfig tiny(const std::string& preset) {
  auto c = presetConfig(preset, 0.125);
  c.model.maxLength = 3;
  c.trainData = {"digits:len=3,split=train,seed=1,count=40"};
  c.evalData = {"digits:len=3,split=test,seed=1,count=16"};
  c.batchSize = 8;
  c.iterations = 8;
  c.logInterval = 1;
  c.evalInterval = 3;
  c.evalLimit = 16;
  c.checkpointInterval = 2;
  c.threads = 2;
  c.loaderThreads = 1;
  return c;
}

std::vector<json> records(const fs::path& run, const std::string& kind) {
  std::ifstream in(run / "metrics.jsonl");
  std::vector<json> out;
  std::string line;
  while (std::getline(in, line)) {
    auto j = json::parse(line);
    if (j.value("kind", "") == kind) out.push_back(j);
  }
  return out;
}

void compareModels(const std::string& a, const std::string& b) {
  auto ma = loadCheckpoint(a), mb = loadCheckpoint(b);
  auto pa = ma.model->named_parameters(), pb = mb.model->named_parameters();
  QCOMPARE(pa.size(), pb.size());
  for (const auto& p : pa)
    QVERIFY2(torch::equal(p.value(), pb[p.key()]), qPrintable(QString::fromStdString(p.key())));
  auto ba = ma.model->named_buffers(), bb = mb.model->named_buffers();
  for (const auto& p : ba)
    QVERIFY2(torch::equal(p.value(), bb[p.key()]), qPrintable(QString::fromStdString(p.key())));
}

}  // namespace

class TestTrainEngine : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;
  fs::path dir(const std::string& name) { return fs::path(m_tmp.path().toStdString()) / name; }

 private Q_SLOTS:
  void runDirectory() {
    const auto run = dir("soft");
    auto c = tiny("digits-soft");
    RunOptions ro;
    ro.runDir = run.string();
    // A temporary: a live Trainer holds the folder's lock (core/run/run_lock.h), which would refuse
    // the second run below for that reason instead of the one this test checks.
    const auto r = Trainer(c, ro).run();
    QCOMPARE(r.iteration, int64_t(8));
    QVERIFY(!r.interrupted);
    QVERIFY(fs::exists(run / "config.json"));
    QCOMPARE(Trainer::loadRunConfig(run.string()).toJson(), c.toJson());
    // The model file is an ordinary .fvm with the training position in its metadata.
    auto m = loadCheckpoint((run / "latest.fvm").string());
    QCOMPARE(m.config.maxLength, 3);
    const auto extra = json::parse(m.metadataJson).at("extra").at("training");
    QCOMPARE(extra.at("iteration").get<int>(), 8);
    QCOMPARE(extra.at("epoch").get<int>(), 1);
    QCOMPARE(extra.at("batch_in_epoch").get<int>(), 3);
    QCOMPARE(extra.at("state").get<std::string>(), std::string("latest.state"));
    QVERIFY(fs::exists(run / "latest.state"));
    QVERIFY(fs::exists(run / "best.fvm"));
    loadCheckpoint((run / "best.fvm").string());
    const auto train = records(run, "train");
    QCOMPARE(int(train.size()), 8);
    for (const char* k :
         {"iteration", "loss", "nll", "reinforce", "reference", "reward", "baseline", "grad_norm",
          "train_accuracy", "lr", "images_per_s", "elapsed_s"})
      QVERIFY2(train[0].contains(k), k);
    // The metric catalogue (run_folder.h) and the records agree: every catalogued metric is in
    // its kind's records, every numeric field of a record is catalogued or bookkeeping.
    const auto evals0 = records(run, "eval");
    for (const auto& m : run_folder::metricCatalogue())
      QVERIFY2((std::string(m.kind) == "train" ? train[0] : evals0.at(0)).contains(m.key), m.key);
    for (const json* r : {&train[0], &evals0.at(0)})
      for (const auto& [key, value] : r->items()) {
        if (!value.is_number() && !value.is_null()) continue;
        bool known = key == "iteration" || key == "epoch" || key == "elapsed_s" || key == "count" ||
                     key == run_folder::kTimeKey;
        for (const auto& m : run_folder::metricCatalogue()) known = known || key == m.key;
        QVERIFY2(known, key.c_str());
      }
    // Wall-clock time on every record, rising, around now.
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (size_t i = 0; i < train.size(); ++i) {
      const double t = train[i].at(run_folder::kTimeKey).get<double>();
      QVERIFY(t > now - 600 && t <= now + 1);
      if (i > 0) QVERIFY(t >= train[i - 1].at(run_folder::kTimeKey).get<double>());
    }
    QCOMPARE(train[0]["lr"].get<double>(), 1.0);
    QVERIFY(train[0]["grad_norm"].get<double>() > 0);
    QVERIFY(train[0]["baseline"].is_null());  // soft: no REINFORCE
    const auto evals = records(run, "eval");
    QCOMPARE(int(evals.size()), 3);  // iterations 3, 6 and the end
    QCOMPARE(evals.back()["iteration"].get<int>(), 8);
    QCOMPARE(evals.back()["count"].get<int>(), 16);
    QVERIFY(!fs::exists(atomicTempPath((run / "latest.fvm").string())) &&
            !fs::exists(atomicTempPath((run / "latest.state").string())));

    // A second fresh run into the same folder is refused.
    try {
      Trainer again(c, ro);
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("already holds a run"), e.what());
    }
  }

  // The checkpoint history (run_folder::kHistoryDir): a model every historyInterval iterations,
  // each an ordinary model file at its iteration; past historyKeep files every other one goes and
  // the spacing doubles, so the folder stays bounded and spans the whole run.
  void historyIsWrittenAndCapped() {
    const auto run = dir("history");
    auto c = tiny("digits-soft");
    c.iterations = 12;
    c.evalInterval = 0;
    c.checkpointInterval = 0;
    c.historyInterval = 1;
    c.historyKeep = 4;
    RunOptions ro;
    ro.runDir = run.string();
    Trainer(c, ro).run();
    std::vector<int64_t> its;
    for (const auto& e : fs::directory_iterator(run / run_folder::kHistoryDir)) {
      const int64_t it = run_folder::historyIteration(e.path().filename().string());
      QVERIFY2(it > 0, e.path().string().c_str());
      its.push_back(it);
      auto m = loadCheckpoint(e.path().string());
      QCOMPARE(
          json::parse(m.metadataJson).at("extra").at("training").at("iteration").get<int64_t>(),
          it);
    }
    std::sort(its.begin(), its.end());
    // 1..4 kept; at 5 the stride doubles (2, 4), 6, 8; at 10 it doubles again (4, 8), 12.
    QCOMPARE(its, (std::vector<int64_t>{4, 8, 12}));
    // Off: no folder.
    const auto none = dir("history-off");
    c.historyInterval = 0;
    ro.runDir = none.string();
    Trainer(c, ro).run();
    QVERIFY(!fs::exists(none / run_folder::kHistoryDir));
    // Bad settings are refused by name; the file names parse both ways.
    c.historyKeep = 1;
    QVERIFY_THROWS_EXCEPTION(Error, c.validate());
    c.historyKeep = 4;
    c.historyInterval = -1;
    QVERIFY_THROWS_EXCEPTION(Error, c.validate());
    QCOMPARE(run_folder::historyFileName(1500), std::string("iter-000001500.fvm"));
    QCOMPARE(run_folder::historyIteration("iter-000001500.fvm"), int64_t(1500));
    QCOMPARE(run_folder::historyIteration("iter-.fvm"), int64_t(-1));
    QCOMPARE(run_folder::historyIteration("iter-12a.fvm"), int64_t(-1));
    QCOMPARE(run_folder::historyIteration("latest.fvm"), int64_t(-1));
    // A config written before the history reads as none.
    auto j = json::parse(c.toJson());
    j.erase("history_interval");
    QCOMPARE(TrainConfig::fromJson(j.dump()).historyInterval, int64_t(0));
  }

  void resumeIsExact_data() {
    QTest::addColumn<QString>("preset");
    QTest::newRow("hard (sampling, baseline)") << "digits-hard";
    QTest::newRow("sharp pooling + reference") << "digits-sharp-pooling-reference";
  }
  void resumeIsExact() {
    QFETCH(QString, preset);
    if (preset.contains("reference") && !data::canRenderText())
      QSKIP("built without OpenCV: no reference glyphs to render (the run would need them copied)");
    const auto c = tiny(preset.toStdString());
    const auto once = dir("once-" + preset.toStdString());
    const auto split = dir("split-" + preset.toStdString());
    {
      RunOptions ro;
      ro.runDir = once.string();
      Trainer(c, ro).run();
    }
    {
      RunOptions ro;
      ro.runDir = split.string();
      ro.stopAfter = 4;
      const auto r = Trainer(c, ro).run();
      QVERIFY(r.interrupted);
      QCOMPARE(r.iteration, int64_t(4));
    }
    {
      RunOptions ro;
      ro.runDir = split.string();
      ro.resume = true;
      Trainer t(Trainer::loadRunConfig(split.string()), ro);
      QCOMPARE(t.iteration(), int64_t(4));
      QCOMPARE(t.run().iteration, int64_t(8));
    }
    compareModels((once / "latest.fvm").string(), (split / "latest.fvm").string());
    // The logs agree too, record by record (losses, rewards, baselines).
    const auto a = records(once, "train"), b = records(split, "train");
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      for (const char* k : {"iteration", "loss", "reward", "baseline", "grad_norm"})
        QVERIFY2(a[i][k] == b[i][k], qPrintable(QString("record %1 field %2").arg(i).arg(k)));
    QVERIFY(a.back()["baseline"].is_number());
  }

  void nonFiniteStepIsSkipped() {
    const auto run = dir("nan");
    auto c = tiny("digits-hard");
    c.iterations = 5;
    RunOptions ro;
    ro.runDir = run.string();
    TrainHooks hooks;
    hooks.poisonBatch = [](int64_t it) { return it == 3; };
    const auto r = Trainer(c, ro, hooks).run();
    QCOMPARE(r.iteration, int64_t(5));
    QCOMPARE(r.skippedSteps, int64_t(1));
    const auto skips = records(run, "skip");
    QCOMPARE(int(skips.size()), 1);
    QCOMPARE(skips[0]["iteration"].get<int>(), 3);
    for (const auto& t : records(run, "train")) {
      QVERIFY(t["iteration"].get<int>() != 3);
      QVERIFY(std::isfinite(t["baseline"].get<double>()));  // NaN reward never reached b
    }
    auto m = loadCheckpoint((run / "latest.fvm").string());
    for (const auto& p : m.model->parameters()) QVERIFY(torch::isfinite(p).all().item<bool>());
  }

  void tooManyNonFiniteStopTheRun() {
    const auto run = dir("nan-stop");
    auto c = tiny("digits-soft");
    c.maxNonFinite = 3;
    RunOptions ro;
    ro.runDir = run.string();
    TrainHooks hooks;
    hooks.poisonBatch = [](int64_t it) { return it >= 3; };
    try {
      Trainer(c, ro, hooks).run();
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("training stopped at iteration 5: 3 non-finite losses "
                                          "in a row"),
               e.what());
    }
    // The interval checkpoint of iteration 4 (written after two skipped steps) holds the finite
    // weights of iteration 2.
    auto m = loadCheckpoint((run / "latest.fvm").string());
    QCOMPARE(json::parse(m.metadataJson)["extra"]["training"]["iteration"].get<int>(), 4);
    for (const auto& p : m.model->parameters()) QVERIFY(torch::isfinite(p).all().item<bool>());
  }

  void stopRequestWritesACheckpoint() {
    const auto run = dir("stop");
    auto c = tiny("digits-soft");
    c.checkpointInterval = 0;
    std::atomic<bool> stop{false};
    RunOptions ro;
    ro.runDir = run.string();
    TrainHooks hooks;
    hooks.stop = &stop;
    hooks.poisonBatch = [&](int64_t it) {  // the "signal" arrives during iteration 3
      if (it == 3) stop = true;
      return false;
    };
    const auto r = Trainer(c, ro, hooks).run();
    QVERIFY(r.interrupted);
    QCOMPARE(r.iteration, int64_t(3));
    auto m = loadCheckpoint((run / "latest.fvm").string());
    QCOMPARE(json::parse(m.metadataJson)["extra"]["training"]["iteration"].get<int>(), 3);
    QCOMPARE(int(records(run, "stop").size()), 1);
  }

  // --init-from: a sharp run starts from a trained hard model. Tensors of the same name and shape
  // are copied (backbone, BiLSTM, attention), the sharpener's encoder comes from the backbone, the
  // rest keeps its initialisation; the run records where it started; bad sources are named.
  void warmStartFromAnotherModel() {
    const fs::path hardRun = dir("warm-hard");
    {
      auto c = tiny("digits-hard");
      c.iterations = 2;
      RunOptions ro;
      ro.runDir = hardRun.string();
      Trainer(c, ro).run();
    }
    const std::string source = (hardRun / "latest.fvm").string();
    auto c = tiny("digits-sharp-chain");
    c.iterations = 2;
    c.initFrom = source;
    torch::manual_seed(5);
    Recognizer fresh(c.model);
    const auto report = warmStart(fresh, source);
    QVERIFY(report.copied > 0);
    QVERIFY(report.fromBackbone > 0);
    QVERIFY(report.kept > 0);  // the STN, and the decoder input (chain context is wider)
    auto src = loadCheckpoint(source).model;
    auto sp = src->named_parameters();
    auto dp = fresh->named_parameters();
    QVERIFY(torch::equal(dp["features.layers.0.weight"], sp["features.layers.0.weight"]));
    QVERIFY(torch::equal(dp["prediction.glimpse.sharpener.encoder.layers.0.weight"],
                         sp["features.layers.0.weight"]));
    QVERIFY(
        torch::equal(dp["prediction.attention.key.weight"], sp["prediction.attention.key.weight"]));
    QVERIFY(dp["prediction.cell.weight_ih"].sizes() != sp["prediction.cell.weight_ih"].sizes());
    QVERIFY(report.summary().find("copied") != std::string::npos);

    const fs::path run = dir("warm-sharp");
    RunOptions ro;
    ro.runDir = run.string();
    Trainer(c, ro).run();
    std::ifstream cfg(run / "config.json");
    QCOMPARE(json::parse(cfg).value("init_from", std::string()), source);
    QCOMPARE(Trainer::loadRunConfig(run.string()).initFrom, source);

    // A missing or corrupt source is named; a model sharing no tensor is refused.
    Recognizer other(c.model);
    try {
      warmStart(other, dir("missing.fvm").string());
      QFAIL("a missing source was accepted");
    } catch (const Error& e) {
      QVERIFY(std::string(e.what()).find("missing.fvm") != std::string::npos);
    }
    auto foreign = tiny("digits-soft");
    foreign.model.width = 0.25;
    foreign.model.charset = "ab";
    foreign.model.attentionDepth = 32;
    const std::string foreignPath = dir("foreign.fvm").string();
    saveCheckpoint(foreignPath, Recognizer(foreign.model));
    try {
      warmStart(other, foreignPath);
      QFAIL("a model sharing no tensor was accepted");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("cannot warm-start") != std::string::npos, e.what());
    }
  }

  // A full disk (the checkpoint's temporary file is a link to /dev/full, which answers every
  // write with ENOSPC) stops the run with an error naming the file and the reason; the previous
  // checkpoint and the run folder stay readable and the run resumes from them.
  void fullDiskIsReported_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("model") << "latest.fvm";
    QTest::newRow("state") << "latest.state";
  }
  void fullDiskIsReported() {
    QFETCH(QString, file);
    if (!fs::exists("/dev/full")) QSKIP("no /dev/full on this system");
    const fs::path run = dir("full-" + file.toStdString());
    auto c = tiny("digits-soft");
    c.iterations = 4;
    c.evalInterval = 0;
    {
      RunOptions ro;
      ro.runDir = run.string();
      c.iterations = 2;
      Trainer(c, ro).run();  // a good checkpoint at iteration 2
    }
    const fs::path tmp = atomicTempPath((run / file.toStdString()).string());
    fs::create_symlink("/dev/full", tmp);
    c.iterations = 4;
    RunOptions ro;
    ro.runDir = run.string();
    ro.resume = true;
    try {
      Trainer(c, ro).run();
      QFAIL("a full disk went unnoticed");
    } catch (const Error& e) {
      const QString what = e.what();
      QVERIFY2(what.contains(QString::fromStdString((run / file.toStdString()).string())),
               e.what());
      QVERIFY2(what.contains("No space left on device"), e.what());
    }
    QVERIFY(!fs::exists(fs::symlink_status(tmp)));
    QVERIFY(loadCheckpoint((run / "latest.fvm").string()).config.attention == "soft");
    for (const auto& r : records(run, "checkpoint")) QVERIFY(r.value("iteration", 0) <= 4);
    Trainer(c, ro).run();  // the disk has room again: the run finishes from its checkpoint
    QCOMPARE(records(run, "stop").empty() ? 4 : 4, 4);
    QCOMPARE(loadCheckpoint((run / "latest.fvm").string()).metadataJson.find("\"iteration\":4") !=
                 std::string::npos,
             true);
  }

  void resumeChecksItsInput() {
    RunOptions ro;
    ro.runDir = dir("empty").string();
    ro.resume = true;
    try {
      Trainer(tiny("digits-soft"), ro);
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("nothing to resume"), e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestTrainEngine)
#include "test_train_engine.moc"
