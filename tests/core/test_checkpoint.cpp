// Checkpoints: save -> load gives identical outputs; every kind of bad file gives an error that
// names the file and the problem.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/crc32.h"
#include "base/error.h"
#include "formats/checkpoint.h"
#include "test_models.h"
#include "train/model_average.h"

using namespace foveal::core;
using foveal::test::allConfigs;
using foveal::test::tinyConfig;

namespace {

QByteArray readAll(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll();
}

void writeAll(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

uint32_t crc32(const QByteArray& data) {
  uint32_t crc = ~0u;
  for (char ch : data) {
    crc ^= static_cast<unsigned char>(ch);
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
  }
  return ~crc;
}

// Rebuilds a checkpoint with new metadata and a valid checksum (a well-formed file whose
// content is wrong).
QByteArray withMetadata(const QByteArray& file, const std::string& meta) {
  const quint64 metaLen = qFromLittleEndian<quint64>(file.constData() + 16);
  const quint64 weightLen = qFromLittleEndian<quint64>(file.constData() + 24);
  const QByteArray weights = file.mid(40 + static_cast<int>(metaLen), static_cast<int>(weightLen));
  QByteArray out = file.left(40);
  const QByteArray m = QByteArray::fromStdString(meta);
  qToLittleEndian<quint64>(static_cast<quint64>(m.size()), out.data() + 16);
  qToLittleEndian<quint32>(crc32(m + weights), out.data() + 32);
  return out + m + weights;
}

std::string metadataOf(const QByteArray& file) {
  const quint64 metaLen = qFromLittleEndian<quint64>(file.constData() + 16);
  return file.mid(40, static_cast<int>(metaLen)).toStdString();
}

}  // namespace

class TestCheckpoint : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  QString m_good;

  QString path(const QString& name) const { return m_dir.filePath(name); }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    torch::manual_seed(0);
    m_good = path("good.fvm");
    saveCheckpoint(m_good.toStdString(), Recognizer(tinyConfig("sharp", ContextKind::Chain, 2)));
  }

  // The file checksum (base/crc32.h, eight bytes at a time) against the bitwise definition above:
  // the standard check value, every length and alignment up to 40 bytes, chaining.
  void checksumIsCrc32() {
    QCOMPARE(foveal::core::crc32("123456789", 9), 0xCBF43926u);
    QCOMPARE(foveal::core::crc32("", 0), 0u);
    QByteArray bytes(64, '\0');
    for (int i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 151 + 7);
    for (int start = 0; start < 8; ++start)
      for (int n = 0; n <= 40; ++n) {
        const QByteArray piece = bytes.mid(start, n);
        QCOMPARE(foveal::core::crc32(piece.constData(), size_t(n)), crc32(piece));
        const int cut = n / 3;
        QCOMPARE(foveal::core::crc32(piece.constData() + cut, size_t(n - cut),
                                     foveal::core::crc32(piece.constData(), size_t(cut))),
                 crc32(piece));
      }
  }

  void saveLoadGivesIdenticalOutputs_data() {
    QTest::addColumn<int>("index");
    const auto configs = allConfigs();
    for (size_t i = 0; i < configs.size(); ++i) QTest::newRow(configs[i].name.c_str()) << int(i);
  }
  void saveLoadGivesIdenticalOutputs() {
    QFETCH(int, index);
    const auto cfg = allConfigs()[static_cast<size_t>(index)].config;
    torch::manual_seed(100 + index);
    Recognizer model(cfg);
    // Move BN statistics away from their defaults so buffers are checked too.
    model->train();
    model->forward(torch::rand({4, 1, 32, 100}),
                   torch::rand({4, 1, 32, cfg.preprocessing.upsampledW()}));
    model->eval();
    const QString file = path(QString("m%1.fvm").arg(index));
    saveCheckpoint(file.toStdString(), model, R"({"note":"test"})");
    QVERIFY(!QFile::exists(QString::fromStdString(atomicTempPath(file.toStdString()))));
    auto loaded = loadCheckpoint(file.toStdString());
    QCOMPARE(loaded.config.toJson(), cfg.toJson());
    QVERIFY(QString::fromStdString(loaded.metadataJson).contains("\"note\":\"test\""));
    QVERIFY(!loaded.model->is_training());

    auto image = torch::rand({2, 1, 32, 100}) * 2 - 1;
    auto up = torch::rand({2, 1, 32, cfg.preprocessing.upsampledW()}) * 2 - 1;
    torch::NoGradGuard ng;
    auto a = model->forward(image, up);
    auto b = loaded.model->forward(image, up);
    QVERIFY(torch::equal(a.logProbs, b.logProbs));
    QVERIFY(torch::equal(a.alpha, b.alpha));
    QVERIFY(torch::equal(a.selected, b.selected));
    for (size_t k = 0; k < a.patches.size(); ++k) QVERIFY(torch::equal(a.patches[k], b.patches[k]));
  }

  void badFiles_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    const QByteArray good = readAll(m_good);
    QVERIFY(good.size() > 1000);

    QTest::newRow("empty") << QByteArray() << "truncated model file";
    QTest::newRow("header cut") << good.left(20) << "truncated model file";
    QTest::newRow("body cut") << good.left(good.size() / 2) << "truncated model file";
    QTest::newRow("last byte missing") << good.left(good.size() - 1) << "truncated model file";
    QByteArray flipped = good;
    flipped[flipped.size() - 100] = static_cast<char>(flipped[flipped.size() - 100] ^ 0x5A);
    QTest::newRow("flipped weight byte") << flipped << "checksum mismatch";
    QByteArray metaFlip = good;
    metaFlip[45] = static_cast<char>(metaFlip[45] ^ 0x01);
    QTest::newRow("flipped metadata byte") << metaFlip << "checksum mismatch";
    QTest::newRow("trailing garbage") << good + QByteArray("xyz") << "unexpected bytes";
    QTest::newRow("foreign: png") << readAll(QStringLiteral(FOVEAL_SAMPLES_DIR) +
                                             "/images/digits-46214.png")
                                  << "not a Foveal model file";
    QTest::newRow("foreign: text")
        << QByteArray("hello, I am a text file with some content") << "not a Foveal model file";
    QByteArray newer = good;
    qToLittleEndian<quint32>(7, newer.data() + 8);
    QTest::newRow("newer version") << newer << "format version 7 is newer";

    auto meta = nlohmann::json::parse(metadataOf(good));
    auto badConfig = meta;
    badConfig["model"]["stns"] = 3;
    QTest::newRow("invalid config")
        << withMetadata(good, badConfig.dump()) << "stns must be 1 or 2";
    auto otherWidth = meta;
    otherWidth["model"]["width"] = 0.25;
    QTest::newRow("weights of another config")
        << withMetadata(good, otherWidth.dump()) << "weights do not match the model config";
    auto otherKind = meta;
    otherKind["model"]["context"] = "pooling";
    QTest::newRow("weights of another context")
        << withMetadata(good, otherKind.dump()) << "weights do not match the model config";
    {
      // A weight set to NaN with the checksum made valid again: refused, not read as garbage.
      const quint64 metaLen = qFromLittleEndian<quint64>(good.constData() + 16);
      QByteArray weights = good.mid(40 + int(metaLen));
      // Walk the tensor table to the first float32 tensor's data.
      qsizetype pos = 4;
      for (;;) {
        const auto nameLen = qFromLittleEndian<quint32>(weights.constData() + pos);
        pos += 4 + nameLen;
        const auto dtype = static_cast<quint8>(weights[pos]);
        const auto rank = qFromLittleEndian<quint32>(weights.constData() + pos + 1);
        pos += 5 + 8 * rank;
        const auto bytes = qFromLittleEndian<quint64>(weights.constData() + pos);
        pos += 8;
        if (dtype == 1 && bytes >= 4) break;
        pos += qsizetype(bytes);
      }
      const float nan = std::numeric_limits<float>::quiet_NaN();
      memcpy(weights.data() + pos, &nan, sizeof nan);
      QByteArray poisoned = good.left(40 + int(metaLen)) + weights;
      qToLittleEndian<quint32>(crc32(good.mid(40, int(metaLen)) + weights), poisoned.data() + 32);
      QTest::newRow("NaN weight with a valid checksum") << poisoned << "holds NaN or Inf";
    }
    QTest::newRow("metadata not json")
        << withMetadata(good, "{not json") << "corrupt model metadata";
    auto foreignMeta = meta;
    foreignMeta["format"] = "something-else";
    QTest::newRow("metadata of another format")
        << withMetadata(good, foreignMeta.dump()) << "not a Foveal model file";
  }
  void badFiles() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    const QString file = path("bad.fvm");
    writeAll(file, bytes);
    try {
      loadCheckpoint(file.toStdString());
      QFAIL("no error for a bad model file");
    } catch (const Error& e) {
      const QString what = e.what();
      QVERIFY2(what.startsWith(file + ": "), qPrintable(what));
      QVERIFY2(what.contains(message), qPrintable(what));
    }
  }

  void missingFile() {
    try {
      loadCheckpoint(path("absent.fvm").toStdString());
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("absent.fvm: cannot open model file"));
    }
  }

  void unwritableFolder() {
    try {
      saveCheckpoint("/nonexistent-folder/x.fvm", Recognizer(tinyConfig("soft")));
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY(
          QString(e.what()).contains("/nonexistent-folder/x.fvm: cannot write the checkpoint "
                                     "(creating: No such file or directory)"));
    }
  }

  // Saving over an existing file replaces it whole (temp file + rename).
  void overwriteIsAtomic() {
    const QString file = path("over.fvm");
    saveCheckpoint(file.toStdString(), Recognizer(tinyConfig("soft")));
    saveCheckpoint(file.toStdString(), Recognizer(tinyConfig("hard")));
    QVERIFY(loadCheckpoint(file.toStdString()).config.attention == "hard");
    QVERIFY(!QFile::exists(QString::fromStdString(atomicTempPath(file.toStdString()))));
  }

  // Weight averaging: every floating-point parameter and buffer is the mean of the inputs',
  // integer buffers come from the first file, and the metadata lists the inputs.
  void averageIsTheElementwiseMean() {
    const auto cfg = tinyConfig("sharp", ContextKind::Pooling, 1, true);
    std::vector<Recognizer> models;
    std::vector<std::string> files;
    for (int k = 0; k < 3; ++k) {
      torch::manual_seed(200 + k);
      Recognizer m(cfg);
      m->train();  // batch-norm statistics and counters away from their defaults, differently
      for (int pass = 0; pass <= k; ++pass)
        m->forward(torch::rand({4, 1, 32, 100}),
                   torch::rand({4, 1, 32, cfg.preprocessing.upsampledW()}));
      m->eval();
      files.push_back(path(QString("avg%1.fvm").arg(k)).toStdString());
      saveCheckpoint(files.back(), m);
      models.push_back(m);
    }
    const std::string out = path("averaged.fvm").toStdString();
    const auto report = foveal::core::train::averageModelFiles(files, out);
    QCOMPARE(report.files.size(), size_t{3});
    QVERIFY(report.tensors > 0);
    auto avg = loadCheckpoint(out);
    QCOMPARE(avg.config.toJson(), cfg.toJson());
    const auto meta = nlohmann::json::parse(avg.metadataJson);
    QCOMPARE(meta["extra"]["averaged_from"].size(), size_t{3});
    QCOMPARE(meta["extra"]["averaged_from"][2]["file"].get<std::string>(), files[2]);
    int64_t floating = 0, integer = 0;
    auto check = [&](const std::string& name, const torch::Tensor& got,
                     const std::vector<torch::Tensor>& inputs) {
      if (!got.is_floating_point()) {
        ++integer;
        QVERIFY2(torch::equal(got, inputs[0]), name.c_str());
        QVERIFY2(!torch::equal(inputs[0], inputs[2]), name.c_str());  // the inputs did differ
        return;
      }
      ++floating;
      auto mean = (inputs[0].to(torch::kDouble) + inputs[1].to(torch::kDouble) +
                   inputs[2].to(torch::kDouble)) /
                  3.0;
      QVERIFY2(torch::allclose(got.to(torch::kDouble), mean, 1e-6, 1e-7), name.c_str());
    };
    int64_t differing = 0;  // the weights differ between the inputs (biases start at zero)
    for (const auto& p : avg.model->named_parameters()) {
      std::vector<torch::Tensor> in;
      for (auto& m : models) in.push_back(m->named_parameters()[p.key()]);
      if (!torch::equal(in[0], in[1])) ++differing;
      check(p.key(), p.value(), in);
    }
    QVERIFY(differing > 10);
    for (const auto& b : avg.model->named_buffers()) {
      std::vector<torch::Tensor> in;
      for (auto& m : models) in.push_back(m->named_buffers()[b.key()]);
      check(b.key(), b.value(), in);
    }
    QCOMPARE(floating, report.tensors);
    QCOMPARE(integer, report.kept);
    QVERIFY(integer > 0);  // the batch-norm counters
  }

  void averageRefusesAnotherModel() {
    const std::string soft = path("avg-soft.fvm").toStdString();
    const std::string hard = path("avg-hard.fvm").toStdString();
    saveCheckpoint(soft, Recognizer(tinyConfig("soft")));
    saveCheckpoint(hard, Recognizer(tinyConfig("hard")));
    try {
      foveal::core::train::averageModelFiles({soft, hard}, path("never.fvm").toStdString());
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(
          QString(e.what()).startsWith(QString::fromStdString(hard) + ": not the same model as " +
                                       QString::fromStdString(soft)),
          e.what());
    }
    QVERIFY(!QFile::exists(path("never.fvm")));
    try {
      foveal::core::train::averageModelFiles({}, path("never.fvm").toStdString());
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("no model file given"));
    }
  }
};

QTEST_APPLESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
