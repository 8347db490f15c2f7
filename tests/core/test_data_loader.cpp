// The batch loader: tensor shapes and label encoding, determinism whatever the thread count,
// sharding by rank, packed input equal to preprocess(), and bad entries (error or skip and count).
#include <QtTest/QtTest>
#include <fstream>
#include <set>

#include "base/error.h"
#include "data/data_loader.h"
#include "data/dataset_export.h"
#include "data/dataset_factory.h"
#include "image/preprocess.h"

using namespace foveal::core;
using namespace foveal::core::data;

namespace {

const std::string kMnist = ",mnist=" FOVEAL_SAMPLES_DIR "/mnist/digits.bin";

DatasetPtr digits(const std::string& spec) { return openDataset("digits:" + spec + kMnist); }

std::vector<Batch> drain(DataLoader& loader) {
  std::vector<Batch> out;
  while (auto b = loader.next()) out.push_back(std::move(*b));
  return out;
}

}  // namespace

class TestDataLoader : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void batchesHaveTheModelShapes() {
    LoaderOptions o;
    o.batchSize = 8;
    o.maxLength = 13;
    DataLoader loader(digits("len=7,split=test,seed=1,count=20"), o);
    QCOMPARE(loader.batchesPerEpoch(), int64_t(3));
    const auto batches = drain(loader);
    QCOMPARE(batches.size(), size_t(3));
    const Batch& b = batches[0];
    QCOMPARE(b.images.sizes().vec(), (std::vector<int64_t>{8, 1, 32, 100}));
    QCOMPARE(b.upsampled.sizes().vec(), (std::vector<int64_t>{8, 1, 32, 180}));
    QCOMPARE(b.targets.sizes().vec(), (std::vector<int64_t>{8, 14}));
    QCOMPARE(b.targets.scalar_type(), torch::kInt64);
    QCOMPARE(b.lengths.sizes().vec(), (std::vector<int64_t>{8}));
    QCOMPARE(batches[2].images.size(0), int64_t(4));
    QVERIFY(b.images.min().item<float>() >= -1.0f && b.images.max().item<float>() <= 1.0f);
    const Charset cs = Charset::digits();
    for (int64_t k = 0; k < 8; ++k) {
      QCOMPARE(b.lengths[k].item<int64_t>(), int64_t(7));
      std::vector<int> row;
      for (int t = 0; t < 14; ++t) row.push_back(static_cast<int>(b.targets[k][t].item<int64_t>()));
      QCOMPARE(cs.decode(row), b.labels[k]);
      for (int t = 7; t < 14; ++t) QCOMPARE(row[t], Charset::kEnd);  // end token, then padding
      for (int t = 0; t < 7; ++t) QVERIFY(row[t] > 0);
    }
    // Every entry exactly once in an epoch.
    std::set<size_t> seen;
    for (const auto& batch : batches) seen.insert(batch.indices.begin(), batch.indices.end());
    QCOMPARE(seen.size(), size_t(20));
  }

  void imagesArePreprocessOutput() {
    auto ds = digits("len=5,rotated,split=test,seed=2,count=4");
    LoaderOptions o;
    o.batchSize = 4;
    o.shuffle = false;
    DataLoader loader(ds, o);
    const Batch b = *loader.next();
    std::vector<GreyImage> images;
    for (size_t i = 0; i < 4; ++i) images.push_back(ds->get(i).image);
    const ModelInput in = preprocess(images, o.preprocessing, true);
    QVERIFY(torch::equal(b.images, in.image));
    QVERIFY(torch::equal(b.upsampled, in.upsampled));
  }

  void packedMatchesPreprocessWithinQuantisation() {
    QTemporaryDir dir;
    auto ds = digits("len=9,split=test,seed=3,count=10");
    ExportOptions ex;
    exportDataset(*ds, dir.filePath("p.fvpk").toStdString(), ex);
    LoaderOptions o;
    o.batchSize = 10;
    o.shuffle = false;
    DataLoader live(ds, o), packed(openDataset(dir.filePath("p.fvpk").toStdString()), o);
    const Batch a = *live.next(), b = *packed.next();
    QCOMPARE(a.labels, b.labels);
    QVERIFY(torch::equal(a.targets, b.targets));
    // Quantisation to 8 bits: at most half a grey level on the [-1, 1] scale.
    const float tol = 0.5f / 127.5f + 1e-5f;
    QVERIFY((a.images - b.images).abs().max().item<float>() <= tol);
    QVERIFY((a.upsampled - b.upsampled).abs().max().item<float>() <= tol);
    // A model with other sizes is refused.
    LoaderOptions other = o;
    other.preprocessing.regionScale = 2.0;
    try {
      DataLoader x(openDataset(dir.filePath("p.fvpk").toStdString()), other);
      QFAIL("no error for a packed file made for other sizes");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("p.fvpk"));
      QVERIFY(QString(e.what()).contains("upsampled width 200"));
    }
  }

  void deterministicWhateverTheThreads() {
    auto ds = digits("len=5,split=train,seed=4,count=200");
    LoaderOptions o;
    o.batchSize = 16;
    o.seed = 42;
    o.threads = 1;
    DataLoader one(ds, o);
    o.threads = 4;
    o.prefetch = 2;
    DataLoader four(ds, o);
    const auto a = drain(one), b = drain(four);
    QCOMPARE(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      QCOMPARE(a[i].number, int64_t(i));
      QCOMPARE(a[i].indices, b[i].indices);
      QVERIFY(torch::equal(a[i].images, b[i].images));
      QVERIFY(torch::equal(a[i].targets, b[i].targets));
    }
    // Another seed or epoch: another order; no shuffle: 0, 1, 2, ...
    o.seed = 43;
    DataLoader other(ds, o);
    QVERIFY(other.order() != one.order());
    o.seed = 42;
    o.epoch = 1;
    DataLoader nextEpoch(ds, o);
    QVERIFY(nextEpoch.order() != one.order());
    o.shuffle = false;
    DataLoader plain(ds, o);
    QCOMPARE(plain.order()[5], size_t(5));
  }

  void shardsSplitTheEpoch() {
    auto ds = digits("len=5,split=train,seed=5,count=100");
    LoaderOptions o;
    o.batchSize = 8;
    o.seed = 7;
    o.worldSize = 3;
    std::vector<size_t> all;
    std::vector<int64_t> batches;
    for (int rank = 0; rank < 3; ++rank) {
      o.rank = rank;
      DataLoader loader(ds, o);
      QCOMPARE(loader.order().size(), size_t(34));  // ceil(100 / 3), padded by wrapping
      batches.push_back(loader.batchesPerEpoch());
      for (const auto& b : drain(loader)) all.insert(all.end(), b.indices.begin(), b.indices.end());
    }
    QCOMPARE(batches, (std::vector<int64_t>{5, 5, 5}));
    QCOMPARE(all.size(), size_t(102));
    QCOMPARE(std::set<size_t>(all.begin(), all.end()).size(), size_t(100));  // 2 padded repeats
    // The shards interleave one epoch order.
    const auto order = DataLoader::epochOrder(100, 7, 0, true);
    o.rank = 1;
    DataLoader r1(ds, o);
    QCOMPARE(r1.order()[0], order[1]);
    QCOMPARE(r1.order()[1], order[4]);
    o.rank = 3;
    QVERIFY_THROWS_EXCEPTION(Error, DataLoader(ds, o));
  }

  void endlessStreamShards() {
    auto ds = digits("len=5,split=stream,seed=6");
    LoaderOptions o;
    o.batchSize = 4;
    o.worldSize = 2;
    o.rank = 1;
    DataLoader loader(ds, o);
    QCOMPARE(loader.batchesPerEpoch(), int64_t(-1));
    for (int i = 0; i < 3; ++i) {
      const Batch b = *loader.next();
      QCOMPARE(b.indices, (std::vector<size_t>{size_t(8 * i + 1), size_t(8 * i + 3),
                                               size_t(8 * i + 5), size_t(8 * i + 7)}));
      QCOMPARE(b.labels[0], ds->label(b.indices[0]));
    }
  }

  void badEntriesThrowOrAreSkippedAndCounted() {
    QTemporaryDir dir;
    ExportOptions ex;
    ex.format = "folder";
    exportDataset(*digits("len=5,split=test,seed=8,count=6"), dir.path().toStdString(), ex);
    // Entry 1: empty label, entry 2: a letter outside the digits, entry 3: too long,
    // entry 4: missing image.
    std::ifstream in(dir.filePath("gt.txt").toStdString());
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    in.close();
    auto path = [&](int i) { return lines[i].substr(0, lines[i].find('\t')); };
    lines[1] = path(1) + "\t";
    lines[2] = path(2) + "\t12a45";
    lines[3] = path(3) + "\t12345678901234";
    QVERIFY(QFile::remove(dir.filePath(QString::fromStdString(path(4)))));
    std::ofstream out(dir.filePath("gt.txt").toStdString());
    for (const auto& l : lines) out << l << "\n";
    out.close();
    auto ds = openDataset(dir.path().toStdString());
    const QString gt = dir.filePath("gt.txt");

    LoaderOptions o;
    o.batchSize = 1;
    o.shuffle = false;
    const std::vector<QString> expected = {"", "line 2", "line 3", "line 4", "line 5"};
    const std::vector<QString> problem = {"", "empty label", "'a'", "more than the model's maximum",
                                          "000000005."};
    // Without skipBad each bad entry throws from next(); the loader then goes on with the next.
    DataLoader loader(ds, o);
    std::vector<QString> messages;
    for (int k = 0; k < 6; ++k) {
      try {
        const auto b = loader.next();
        QVERIFY(b);
        messages.push_back("");
      } catch (const Error& e) {
        messages.push_back(e.what());
      }
    }
    QVERIFY(!loader.next());
    QVERIFY(messages[0].isEmpty() && messages[5].isEmpty());
    for (int bad = 1; bad <= 4; ++bad) {
      const QString& msg = messages[bad];
      QVERIFY2(msg.contains(gt) && msg.contains(expected[bad]) && msg.contains(problem[bad]),
               qPrintable(msg));
    }
    o.skipBad = true;
    o.batchSize = 4;
    DataLoader skipping(ds, o);
    const auto batches = drain(skipping);
    size_t kept = 0;
    for (const auto& b : batches) kept += b.indices.size();
    QCOMPARE(kept, size_t(2));
    QCOMPARE(skipping.skipped(), int64_t(4));
    QCOMPARE(skipping.skippedMessages().size(), size_t(4));
    QCOMPARE(batches[0].images.size(0), int64_t(1));  // entries 0..3: only 0 is good
  }
};

QTEST_APPLESS_MAIN(TestDataLoader)
#include "test_data_loader.moc"
