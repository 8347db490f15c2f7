// Data parallelism over c10d/Gloo: two ranks (two threads, each with its own TCPStore client and
// ProcessGroupGloo) with batch B end with the same weights as one process with batch 2B split into
// two micro-batches (batch norm sees B images at a time in both), and the ranks agree exactly.
#include <torch/torch.h>
#include <unistd.h>
#include <QtTest/QtTest>
#include <filesystem>
#include <thread>

#include "base/error.h"
#include "formats/checkpoint.h"
#include "train/distributed.h"
#include "train/train_config.h"
#include "train/trainer.h"

using namespace foveal::core;
using namespace foveal::core::train;
namespace fs = std::filesystem;

namespace {

TrainConfig tiny(int batch, int micro) {
  auto c = presetConfig("digits-soft", 0.125);
  c.model.maxLength = 3;
  c.trainData = {"digits:len=3,split=train,seed=1,count=40"};
  c.evalData.clear();
  c.batchSize = batch;
  c.microBatches = micro;
  c.iterations = 4;
  c.logInterval = 1;
  c.checkpointInterval = 0;
  c.threads = 1;
  c.loaderThreads = 1;
  return c;
}

double maxDifference(const std::string& a, const std::string& b) {
  auto ma = loadCheckpoint(a), mb = loadCheckpoint(b);
  auto pb = mb.model->named_parameters();
  double worst = 0;
  for (const auto& p : ma.model->named_parameters())
    worst = std::max(worst, (p.value() - pb[p.key()]).abs().max().item<double>());
  return worst;
}

}  // namespace

class TestTrainDistributed : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;
  std::string path(const std::string& name) {
    return (fs::path(m_tmp.path().toStdString()) / name).string();
  }

 private Q_SLOTS:
  void environment() {
    qunsetenv("WORLD_SIZE");
    QVERIFY(!DistributedOptions::fromEnvironment());
    qputenv("WORLD_SIZE", "2");
    qputenv("RANK", "1");
    qputenv("MASTER_ADDR", "10.0.0.7");
    qputenv("MASTER_PORT", "29511");
    const auto o = DistributedOptions::fromEnvironment();
    QVERIFY(o);
    QCOMPARE(o->rank, 1);
    QCOMPARE(o->worldSize, 2);
    QCOMPARE(o->masterAddr, std::string("10.0.0.7"));
    QCOMPARE(o->masterPort, 29511);
    qputenv("RANK", "2");
    try {
      DistributedOptions::fromEnvironment();
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("RANK=2 is outside WORLD_SIZE=2"), e.what());
    }
    qunsetenv("WORLD_SIZE");
    qunsetenv("RANK");
  }

  void twoRanksMatchOneProcess() {
    if (!distributedAvailable()) QSKIP("this build has no c10d/Gloo");
    const int port = 20000 + static_cast<int>(getpid() % 20000);
    std::string errors[2];
    auto rankMain = [&](int rank) {
      try {
        DistributedOptions o;
        o.masterAddr = "127.0.0.1";
        o.masterPort = port;
        o.rank = rank;
        o.worldSize = 2;
        o.timeout = std::chrono::seconds(60);
        RunOptions ro;
        ro.runDir = path(rank == 0 ? "ddp" : "ddp-rank1-unused");
        ro.group = std::make_shared<ProcessGroup>(o);
        Trainer t(tiny(4, 1), ro);
        t.run();
        t.exportModel(path("rank" + std::to_string(rank) + ".fvm"));
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    };
    std::thread r1(rankMain, 1);
    rankMain(0);
    r1.join();
    QVERIFY2(errors[0].empty() && errors[1].empty(), (errors[0] + " | " + errors[1]).c_str());
    QVERIFY(!fs::exists(path("ddp-rank1-unused")));  // only rank 0 writes

    {
      RunOptions ro;
      ro.runDir = path("single");
      Trainer(tiny(8, 2), ro).run();
    }
    {
      RunOptions ro;
      ro.runDir = path("half");  // control: rank 0's data alone
      Trainer(tiny(4, 1), ro).run();
    }
    const double ranks = maxDifference(path("rank0.fvm"), path("rank1.fvm"));
    const double vsSingle = maxDifference(path("ddp/latest.fvm"), path("single/latest.fvm"));
    const double vsHalf = maxDifference(path("ddp/latest.fvm"), path("half/latest.fvm"));
    qInfo("max |w| difference: rank 0 vs 1 %g, 2 ranks vs 1 process %g, vs half data %g", ranks,
          vsSingle, vsHalf);
    QCOMPARE(ranks, 0.0);
    QVERIFY(vsSingle < 1e-5);
    QVERIFY(vsHalf > 1e-4);  // the comparison can fail
  }
};

QTEST_APPLESS_MAIN(TestTrainDistributed)
#include "test_train_distributed.moc"
