// Hostile input, faults and careless use (issue 20), at the level of core: files that are not
// what they claim (directories, FIFOs, endless devices), damaged saved state, two trainers in one
// run folder, values out of range. Every case must end in an Error that names the file (and the
// entry) and the problem: no crash, no hang, nothing lost. The command-line side of the same
// cases is in tests/hostile_input.cmake.
#include <lmdb.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/torch.h>
#include <QtTest/QtTest>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/safe_read.h"
#include "data/data_loader.h"
#include "data/dataset_export.h"
#include "data/dataset_factory.h"
#include "data/folder_dataset.h"
#include "data/lmdb_dataset.h"
#include "data/output_guard.h"
#include "data/packed_dataset.h"
#include "formats/checkpoint.h"
#include "formats/model_format.h"
#include "formats/state_file.h"
#include "image/grey_image.h"
#include "image/image_checks.h"
#include "image/preprocessing_check.h"
#include "model/charset.h"
#include "run/run_lock.h"
#include "run/run_log.h"
#include "trace/finite_outputs.h"
#include "trace/model_session.h"
#include "train/evaluate_model.h"
#include "train/evaluation.h"
#include "train/faithfulness_eval.h"
#include "train/train_config.h"
#include "train/trainer.h"

using namespace foveal::core;
using namespace foveal::core::data;
using namespace foveal::core::train;
namespace fs = std::filesystem;

namespace {

const std::string kSamples = FOVEAL_SAMPLES_DIR;
const std::string kImage = kSamples + "/images/digits-46214.pgm";

QString errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return QStringLiteral("(no error)");
}

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeAll(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

TrainConfig tiny() {
  auto c = presetConfig("digits-soft", 0.125);
  c.model.maxLength = 3;
  c.trainData = {"digits:len=3,split=train,seed=1,count=16"};
  c.evalData = {};
  c.batchSize = 8;
  c.iterations = 2;
  c.logInterval = 1;
  c.evalInterval = 0;
  c.checkpointInterval = 2;
  c.threads = 1;
  c.loaderThreads = 1;
  return c;
}

std::string packTwo(const fs::path& file) {
  const auto ds = openDataset("digits:len=3,split=test,seed=1,count=2");
  ExportOptions o;
  o.format = "packed";
  exportDataset(*ds, file.string(), o);
  return readAll(file);
}

uint64_t load64(const std::string& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}

}  // namespace

class TestHostileInput : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;
  fs::path dir(const std::string& name) {
    const fs::path p = fs::path(m_tmp.path().toStdString()) / name;
    fs::create_directories(p);
    return p;
  }

 private Q_SLOTS:
  // 1, 8, 9: what stands where a file should be is named before anything reads it.
  void notARegularFile_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("kind");
    QTest::newRow("directory") << "DIR"
                               << "a directory";
    QTest::newRow("fifo") << "FIFO"
                          << "a FIFO";
    QTest::newRow("dev-zero") << "/dev/zero"
                              << "a character device";
  }
  void notARegularFile() {
    QFETCH(QString, path);
    QFETCH(QString, kind);
    std::string p = path.toStdString();
    if (p == "DIR") p = dir("d.png").string();
    if (p == "FIFO") {
      p = (dir("fifo") / "f.png").string();
      QCOMPARE(::mkfifo(p.c_str(), 0600), 0);
    }
    for (const auto& [what, read] : std::vector<std::pair<QString, std::function<void()>>>{
             {"image", [&] { readImage(p); }},
             {"model file", [&] { loadCheckpoint(p); }},
             {"training state", [&] { readTrainingState(p); }}}) {
      const QString msg = errorOf(read);
      QVERIFY2(msg.startsWith(QString::fromStdString(p) + ": cannot read " + what + " (" + kind),
               qPrintable(msg));
    }
  }
  void configJsonIsADirectory() {  // foveal --export-curves --run R aborted on it
    const fs::path run = dir("cfgdir");
    fs::create_directories(run / "config.json");
    const auto c = readRunConfig(run.string());
    QVERIFY(!c.ok);
    QVERIFY2(QString::fromStdString(c.error).contains(
                 "config.json: cannot read run configuration (a directory"),
             c.error.c_str());
    QVERIFY(errorOf([&] { Trainer::loadRunConfig(run.string()); }).contains("(a directory"));
  }
  void tooLargeIsRefusedBeforeReading() {
    const QString msg = errorOf([&] { readRegularFile(kImage, "image", 100); });
    QVERIFY2(msg.contains("digits-46214.pgm: the image is too large") &&
                 msg.contains("the limit is 100 bytes"),
             qPrintable(msg));
  }
  void gtTxtIsADirectory() {
    const fs::path d = dir("gtdir");
    fs::create_directories(d / "gt.txt");
    QVERIFY(errorOf([&] {
              FolderDataset f(d.string());
            }).contains("gt.txt: cannot read gt.txt (a directory"));
    QVERIFY(errorOf([&] {
              FolderDataset f((d / "gt.txt").string());
            }).contains("gt.txt: cannot read gt.txt (a directory"));
  }
  void dotAsImageIsAnEntryError() {
    const fs::path d = dir("dot");
    fs::copy_file(kImage, d / "a.pgm");
    writeAll(d / "gt.txt", "a.pgm\t46214\n.\t1\n");
    FolderDataset f(d.string());
    QCOMPARE(f.get(0).label, std::string("46214"));
    const QString msg = errorOf([&] { f.get(1); });
    QVERIFY2(msg.contains("gt.txt: line 2 (.)") && msg.contains("a directory"), qPrintable(msg));
    // Packing with --skip-bad skips it, and no worker thread dies of it.
    ExportOptions o;
    o.format = "packed";
    o.skipBad = true;
    const auto r = exportDataset(f, (d / "out.fvpk").string(), o);
    QCOMPARE(r.written, size_t(1));
    QCOMPARE(r.skipped, size_t(1));
  }

  // 2, 13: an LMDB whose data.mdb is truncated, empty, or counts more entries than it holds.
  void lmdbDamaged() {
    const fs::path l = dir("lmdb") / "l";
    ExportOptions o;
    o.format = "lmdb";
    exportDataset(*openDataset("digits:len=5,split=test,seed=1,count=40"), l.string(), o);
    QCOMPARE(LmdbDataset(l.string()).size(), size_t(40));
    fs::resize_file(l / "data.mdb", 6000);
    QString msg = errorOf([&] { LmdbDataset x(l.string()); });
    QVERIFY2(msg.contains("data.mdb: truncated LMDB (6000 bytes"), qPrintable(msg));
    fs::resize_file(l / "data.mdb", 0);
    msg = errorOf([&] { LmdbDataset x(l.string()); });
    QVERIFY2(msg.contains("data.mdb: empty file, not an LMDB database"), qPrintable(msg));

    const fs::path big = dir("lmdb-count");
    MDB_env* env = nullptr;
    MDB_txn* txn = nullptr;
    MDB_dbi dbi;
    QCOMPARE(mdb_env_create(&env), 0);
    mdb_env_set_mapsize(env, 1 << 20);
    QCOMPARE(mdb_env_open(env, big.c_str(), 0, 0644), 0);
    mdb_txn_begin(env, nullptr, 0, &txn);
    mdb_dbi_open(txn, nullptr, 0, &dbi);
    auto put = [&](std::string k, std::string v) {
      MDB_val mk{k.size(), k.data()}, mv{v.size(), v.data()};
      mdb_put(txn, dbi, &mk, &mv, 0);
    };
    put("num-samples", "2000000000");
    for (int i = 1; i <= 6; ++i) {
      char k[32];
      std::snprintf(k, sizeof k, "%09d", i);
      put(std::string("label-") + k, "1");
      put(std::string("image-") + k, readAll(kImage));
    }
    QCOMPARE(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    msg = errorOf([&] { LmdbDataset x(big.string()); });
    QVERIFY2(msg.contains("'num-samples' says 2000000000, but the database holds only 13 keys"),
             qPrintable(msg));
  }

  // 3, 14: one check of the preprocessing numbers, for every writer of packed files.
  void preprocessingChecked_data() {
    QTest::addColumn<int>("w");
    QTest::addColumn<double>("scale");
    QTest::addColumn<QString>("message");
    QTest::newRow("scale 0") << 100 << 0.0 << "region scale must be in [1, 8], not 0";
    QTest::newRow("scale -1") << 100 << -1.0 << "region scale must be in [1, 8], not -1";
    QTest::newRow("scale nan") << 100 << std::nan("") << "region scale must be in [1, 8], not nan";
    QTest::newRow("width 100000") << 100000 << 1.8
                                  << "input width must be in [8, 4096], not 100000";
  }
  void preprocessingChecked() {
    QFETCH(int, w);
    QFETCH(double, scale);
    QFETCH(QString, message);
    Preprocessing p;
    p.inputW = w;
    p.regionScale = scale;
    QVERIFY2(errorOf([&] { checkPreprocessing(p); }).contains(message),
             qPrintable(errorOf([&] { checkPreprocessing(p); })));
    ExportOptions o;
    o.format = "packed";
    o.preprocessing = p;
    const fs::path out = dir("pp") / "x.fvpk";
    const QString msg =
        errorOf([&] { exportDataset(*openDataset("digits:len=3,count=2"), out.string(), o); });
    QVERIFY2(msg.contains("invalid preprocessing: " + message), qPrintable(msg));
    QVERIFY(!fs::exists(out));
  }

  // 4: one trainer per run folder; a lock left by a killed trainer is taken over.
  void runFolderLock() {
    const fs::path run = dir("locked");
    {
      RunLock held(run.string());
      const QString msg = errorOf([&] { RunLock second(run.string()); });
      QVERIFY2(msg.contains("another training process (pid " + QString::number(::getpid())),
               qPrintable(msg));
      RunOptions ro;
      ro.runDir = run.string();
      const QString t = errorOf([&] { Trainer trainer(tiny(), ro); });
      QVERIFY2(t.contains(QString::fromStdString(run.string())) &&
                   t.contains("another training process"),
               qPrintable(t));
      QVERIFY(!fs::exists(run / "config.json"));
    }
    RunLock again(run.string());  // released with its holder
  }
  void staleLockIsTakenOver() {
    const fs::path run = dir("stale");
    const std::string lock = (run / kRunLockFile).string();
    const pid_t child = ::fork();
    if (child == 0) {  // only system calls between fork and the kill
      const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
      if (fd < 0 || ::flock(fd, LOCK_EX) != 0) ::_exit(1);
      ::kill(::getpid(), SIGKILL);
      ::_exit(2);
    }
    int status = 0;
    QCOMPARE(::waitpid(child, &status, 0), child);
    QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    QVERIFY(fs::exists(lock));
    RunOptions ro;
    ro.runDir = run.string();
    Trainer(tiny(), ro).run();  // the dead holder's lock is stale: taken over
    QVERIFY(fs::exists(run / "latest.state"));
    QVERIFY(readAll(lock).find("pid " + std::to_string(::getpid())) == 0);
  }
  void temporaryNamesArePerProcess() {
    const std::string tmp = atomicTempPath("/x/latest.fvm");
    QCOMPARE(tmp, "/x/latest.fvm.tmp." + std::to_string(::getpid()));
  }

  // 5: nothing a user may want to keep is overwritten without --force; an input never.
  void outputGuard() {
    const fs::path d = dir("guard");
    fs::copy_file(kSamples + "/models/soft.fvm", d / "m.fvm");
    QString msg =
        errorOf([&] { checkOutputPath((d / "m.fvm").string(), "failures file", {}, false); });
    QVERIFY2(msg.contains("m.fvm: already holds a model file") && msg.contains("--force"),
             qPrintable(msg));
    checkOutputPath((d / "m.fvm").string(), "failures file", {}, true);
    msg = errorOf([&] {
      checkOutputPath((d / "m.fvm").string(), "failures file", {(d / "m.fvm").string()}, true);
    });
    QVERIFY2(msg.contains("over an input of this command"), qPrintable(msg));
    packTwo(d / "p.fvpk");
    QVERIFY(errorOf([&] {
              checkOutputPath((d / "p.fvpk").string(), "model", {}, false);
            }).contains("already holds a packed dataset"));
    fs::create_directories(d / "folder");
    writeAll(d / "folder" / "gt.txt", "a.png\tx\n");
    QVERIFY(errorOf([&] {
              checkOutputPath((d / "folder").string(), "folder dataset", {}, false);
            }).contains("already holds a dataset (gt.txt)"));
    writeAll(d / "old.tsv", "dataset\tindex\n");
    checkOutputPath((d / "old.tsv").string(), "failures file", {}, false);  // replaceable
    checkOutputPath((d / "new.tsv").string(), "failures file", {}, false);
  }

  // 6: the training state is checksummed; a flipped byte is refused, latest.fvm left alone.
  void corruptTrainingStateIsRefused() {
    const fs::path run = dir("state");
    RunOptions ro;
    ro.runDir = run.string();
    Trainer(tiny(), ro).run();
    const std::string model = readAll(run / "latest.fvm");
    std::string state = readAll(run / "latest.state");
    QVERIFY(state.rfind("FOVEALST", 0) == 0);
    state[state.size() / 2] = static_cast<char>(state[state.size() / 2] ^ 0x10);
    writeAll(run / "latest.state", state);
    ro.resume = true;
    auto c = tiny();
    c.iterations = 4;
    const QString msg = errorOf([&] { Trainer(c, ro).run(); });
    QVERIFY2(msg.contains("latest.state: corrupt training state (checksum mismatch)"),
             qPrintable(msg));
    QVERIFY(readAll(run / "latest.fvm") == model);
    writeAll(run / "latest.state", state.substr(0, state.size() - 10));
    QVERIFY(errorOf([&] { Trainer(c, ro).run(); }).contains("truncated or damaged training state"));
  }

  // 6, 13: packed datasets carry checksums, checked on read; labels must be UTF-8.
  void corruptPackedEntriesAreRefused() {
    const fs::path d = dir("packed");
    const std::string good = packTwo(d / "good.fvpk");
    QCOMPARE(PackedDataset((d / "good.fvpk").string()).version(), 2u);
    const uint64_t labelData = load64(good, 72);

    std::string pixel = good;
    pixel[128 + 10] = static_cast<char>(pixel[128 + 10] ^ 1);
    writeAll(d / "pixel.fvpk", pixel);
    PackedDataset p((d / "pixel.fvpk").string());
    QVERIFY2(errorOf([&] { p.get(0); }).contains("pixel.fvpk: entry 0: corrupt image data"),
             qPrintable(errorOf([&] { p.get(0); })));
    QCOMPARE(p.get(1).label, PackedDataset((d / "good.fvpk").string()).get(1).label);

    std::string label = good;
    label[labelData] = static_cast<char>(0xFF);
    writeAll(d / "label.fvpk", label);
    PackedDataset l((d / "label.fvpk").string());
    QVERIFY(errorOf([&] { l.label(0); }).contains("label.fvpk: entry 0: corrupt label"));

    // A loader skips the damaged entry and says why.
    LoaderOptions lo;
    lo.batchSize = 2;
    lo.skipBad = true;
    lo.maxLength = 5;
    lo.charset = Charset::digits();
    DataLoader loader(std::make_shared<PackedDataset>((d / "pixel.fvpk").string()), lo);
    const auto b = loader.next();
    QVERIFY(b && b->indices.size() == 1);
    QCOMPARE(loader.skippedByReason().at("unreadable entry"), int64_t(1));
    QVERIFY(QString::fromStdString(loader.skippedSummary()).contains("corrupt image data"));

    std::string header = good;
    header[40] = static_cast<char>(header[40] ^ 4);  // the region scale
    writeAll(d / "header.fvpk", header);
    QVERIFY(errorOf([&] {
              PackedDataset h((d / "header.fvpk").string());
            }).contains("header.fvpk: corrupt header (checksum mismatch)"));
    std::string size0 = good;
    std::memset(size0.data() + 12, 0, 4);
    writeAll(d / "size0.fvpk", size0);
    const QString msg = errorOf([&] { PackedDataset h((d / "size0.fvpk").string()); });
    QVERIFY2(msg.contains("corrupt header (header size 0") && !msg.contains("version"),
             qPrintable(msg));

    PackedWriter w((d / "utf8.fvpk").string(), Preprocessing());
    PreparedSample s = PackedDataset((d / "good.fvpk").string()).prepared(0);
    s.label = "4\xFF";
    QVERIFY(errorOf([&] { w.add(s); }).contains("the label is not valid UTF-8 (byte 2)"));
  }

  // 13: a byte order mark is not part of the first path; invalid UTF-8 labels are named.
  void gtTxtEncoding() {
    const fs::path d = dir("bom");
    fs::copy_file(kImage, d / "a.pgm");
    writeAll(d / "gt.txt",
             "\xEF\xBB\xBF"
             "a.pgm\t46214\na.pgm\t4\xC3\n");
    FolderDataset f(d.string());
    QCOMPARE(f.get(0).label, std::string("46214"));
    QCOMPARE(f.entryName(0), (d / "gt.txt").string() + ": line 1 (a.pgm)");
    QVERIFY(errorOf([&] { f.get(1); }).contains("line 2 (a.pgm): the label is not valid UTF-8"));
    QCOMPARE(invalidUtf8Offset("ok \xC3\xA9"), std::string::npos);
    QCOMPARE(invalidUtf8Offset("\xED\xA0\x80"), size_t(0));  // a surrogate
    QCOMPARE(invalidUtf8Offset("ab\xC0\xAF"), size_t(2));    // overlong
  }

  // 7, 10: numbers that make no sense are refused by the configuration itself.
  void trainConfigBounds() {
    auto c = tiny();
    c.lambdaR = std::nan("");
    QVERIFY(errorOf([&] { c.validate(); }).contains("lambda_r must be a finite number"));
    c = tiny();
    c.threads = 10000;
    QVERIFY(errorOf([&] { c.validate(); }).contains("at most 256"));
  }

  // 10: an endless stream is evaluated only up to a limit.
  void endlessEvalNeedsALimit() {
    auto loaded = loadCheckpoint(kSamples + "/models/soft.fvm");
    const QString msg = errorOf([&] {
      evaluateDataset(loaded.model, openDataset("digits:len=5,split=stream"), "stream",
                      EvalOptions(), torch::Device(torch::kCPU));
    });
    QVERIFY2(msg.contains("an endless stream needs a limit"), qPrintable(msg));
    QVERIFY(errorOf([&] {
              openDataset("digits:count=99999999999999");
            }).contains("more than the limit of 100000000"));
  }

  // 11: eval names the entries it cannot read, per reason; nothing readable is an error.
  void evalNamesWhatItSkips() {
    const fs::path d = dir("eval");
    fs::copy_file(kImage, d / "a.pgm");
    writeAll(d / "gt.txt", "a.pgm\t46214\na.pgm\tabc\nmissing.pgm\t1\n");
    const std::string model = kSamples + "/models/soft.fvm";
    EvalOptions o;
    o.skipBad = false;
    QVERIFY(errorOf([&] {
              evaluateModelFile(model, {d.string()}, o);
            }).contains("line 2 (a.pgm): character 'a' of label \"abc\""));
    o.skipBad = true;
    const auto r = evaluateModelFile(model, {d.string()}, o);
    QCOMPARE(r.datasets[0].overall.count, int64_t(1));
    QCOMPARE(r.datasets[0].skippedByReason.at("label outside the charset 0123456789"), int64_t(1));
    QCOMPARE(r.datasets[0].skippedByReason.at("unreadable entry"), int64_t(1));
    QVERIFY(QString::fromStdString(r.toTable()).contains("missing.pgm"));
    writeAll(d / "gt.txt", "a.pgm\tabc\n");
    QVERIFY(errorOf([&] {
              evaluateModelFile(model, {d.string()}, o);
            }).contains("no entry this model can read"));
  }
  // 11: text scoring compares lower-cased, so an upper-case label is read by a lower-case model.
  void textScoringReadsAnyCase() {
    const fs::path d = dir("case");
    fs::copy_file(kImage, d / "a.pgm");
    writeAll(d / "gt.txt", "a.pgm\tHello\n");
    ModelConfig c;
    c.width = 0.125;
    c.maxLength = 6;
    c.charset = "abcdefghijklmnopqrstuvwxyz";
    const std::string model = (d / "letters.fvm").string();
    saveCheckpoint(model, Recognizer(c));
    EvalOptions o;
    o.skipBad = false;
    o.scoring = "text";
    const auto r = evaluateModelFile(model, {d.string()}, o);
    QCOMPARE(r.datasets[0].overall.count, int64_t(1));
    QCOMPARE(r.datasets[0].skipped, int64_t(0));
    o.scoring = "exact";
    QVERIFY(errorOf([&] {
              evaluateModelFile(model, {d.string()}, o);
            }).contains("character 'H' of label \"Hello\""));
  }

  // Issue 65, 1: an LMDB writer that does not finish (a full disk, a bad entry) leaves no
  // half-written data.mdb, and no lock file at all; one over an existing LMDB is refused.
  void lmdbWriterLeavesNothingHalfWritten() {
    const fs::path d = dir("lmdb-writer");
    {
      LmdbWriter w((d / "new").string());
      w.addEncoded("not an image", "1");
      QVERIFY(fs::exists(d / "new" / "data.mdb"));
      QVERIFY(!fs::exists(d / "new" / "lock.mdb"));  // MDB_NOLOCK: no mapped lock file
    }
    QVERIFY2(!fs::exists(d / "new"), "an abandoned writer left its folder");
    fs::create_directories(d / "kept");
    writeAll(d / "kept" / "notes.txt", "mine");
    { LmdbWriter w((d / "kept").string()); }
    QVERIFY(fs::exists(d / "kept" / "notes.txt") && !fs::exists(d / "kept" / "data.mdb"));
    {
      LmdbWriter w((d / "done").string());
      w.addEncoded("x", "1");
      w.finish();
    }
    QCOMPARE(LmdbDataset((d / "done").string()).size(), size_t(1));
    const QString msg = errorOf([&] { LmdbWriter w((d / "done").string()); });
    QVERIFY2(msg.contains("done: already holds an LMDB; remove it first"), qPrintable(msg));
    QCOMPARE(LmdbDataset((d / "done").string()).size(), size_t(1));  // untouched by the refusal
  }

  // Issue 65, 4: finite weights of 3e38 overflow float32 and the outputs are NaN: trace (and so
  // explain, which reads the trace first), eval and the faithfulness evaluation refuse to report
  // a reading, naming the model and the image; they printed -nan with exit 0.
  void nonFiniteOutputsAreRefused() {
    auto cfg = presetConfig("digits-soft", 0.125).model;
    Recognizer model(cfg);
    {
      torch::NoGradGuard ng;
      for (auto& p : model->parameters()) p.fill_(3e38f);
    }
    const std::string path = (dir("nan-model") / "nan.fvm").string();
    saveCheckpoint(path, model);
    const QString named = QString::fromStdString(path + ": its outputs are not finite");
    auto session = ModelSession::open(path);
    QString msg = errorOf([&] { session->trace(readImage(kImage), kImage); });
    QVERIFY2(msg.contains(named) && msg.contains(QString::fromStdString("reading " + kImage)),
             qPrintable(msg));
    EvalOptions eo;
    eo.batchSize = 2;
    eo.skipBad = false;
    msg = errorOf([&] { evaluateModelFile(path, {"digits:len=5,count=3"}, eo); });
    QVERIFY2(msg.contains(named) && msg.contains("reading digits") && msg.contains("entry 0"),
             qPrintable(msg));
    FaithfulnessOptions fo;
    fo.limit = 1;
    fo.methods = {"attention", "random"};
    fo.workers = 1;
    msg = errorOf([&] { evaluateFaithfulness(path, "digits:len=5,count=1", fo); });
    QVERIFY2(msg.contains(named), qPrintable(msg));
    // The same model with sane weights reads (the check refuses only what is not finite).
    saveCheckpoint(path, Recognizer(cfg));
    msg = errorOf([&] { ModelSession::open(path)->trace(readImage(kImage), kImage); });
    QCOMPARE(msg, QStringLiteral("(no error)"));
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    QCOMPARE(firstNonFiniteRow(torch::tensor({0.0f, -inf}).view({1, 1, 2})), int64_t(-1));
    QCOMPARE(firstNonFiniteRow(torch::tensor({0.0f, 0.0f, nan, 0.0f}).view({2, 1, 2})), int64_t(1));
    QCOMPARE(firstNonFiniteRow(torch::tensor({inf, 0.0f}).view({1, 1, 2})), int64_t(0));
  }

  // Issue 65, 9: a JPEG cut short and closed again by an end-of-image marker, or with a run of
  // zeros inside its data, decodes through OpenCV in silence (the marker is there): libjpeg's
  // warning makes it a truncated or damaged JPEG, said by the viewers and refused by readImage.
  void damagedJpegIsSaid() {
    if (!hasImageCodecs()) QSKIP("this build has no OpenCV");
    if (!jpegDamageChecked()) QSKIP("this build has no libjpeg headers");
    std::ifstream in(std::string(FOVEAL_SOURCE_DIR) + "/tests/data/dtrb/img05_400x50_rgb.jpg",
                     std::ios::binary);
    const std::vector<uint8_t> whole{std::istreambuf_iterator<char>(in), {}};
    QVERIFY(whole.size() > 4000);
    std::string warning;
    decodeImageWarning(whole, "whole.jpg", false, warning);
    QVERIFY2(warning.empty(), warning.c_str());
    std::vector<uint8_t> closed(whole.begin(), whole.begin() + 2900);  // cut, then FF D9
    closed.push_back(0xFF);
    closed.push_back(0xD9);
    std::vector<uint8_t> zeroed = whole;  // a hole in the middle of the scan
    std::fill(zeroed.begin() + 2000, zeroed.begin() + 3000, 0);
    for (const auto& [name, bytes, damage] :
         std::vector<std::tuple<std::string, std::vector<uint8_t>, std::string>>{
             {"closed.jpg", closed, "premature end of data segment"},
             {"zeroed.jpg", zeroed, "extraneous bytes before marker 0xd9"}}) {
      QVERIFY(!isTruncatedJpeg(bytes));  // what round three checked
      const GreyImage shown = decodeImageWarning(bytes, name, true, warning);
      QCOMPARE(shown.width, 400);
      QVERIFY2(QString::fromStdString(warning).contains(
                   QString::fromStdString(name + ": truncated or damaged JPEG (libjpeg: Corrupt "
                                                 "JPEG data: ")),
               warning.c_str());
      QVERIFY2(QString::fromStdString(warning).contains(QString::fromStdString(damage)),
               warning.c_str());
      const QString refused = errorOf([&] { decodeImage(bytes, name, false); });
      QVERIFY2(refused.contains("truncated or damaged JPEG"), qPrintable(refused));
    }
  }

  // Issue 65, 11: EasyOCR's yaml read as strictly as the DTRB import reads its options.
  void easyocrYamlIsReadStrictly() {
    const std::string net =
        std::string(FOVEAL_SOURCE_DIR) + "/tests/data/easyocr/custom/fixture_net";
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    fs::copy_file(net + ".pth", d + "/m.pth");
    std::ifstream yin(net + ".yaml");
    const std::string yaml{std::istreambuf_iterator<char>(yin), {}};
    auto write = [&](const std::string& text) {
      std::ofstream(d + "/m.yaml", std::ios::trunc) << text;
    };
    auto replaced = [&](const std::string& from, const std::string& to) {
      std::string t = yaml;
      const size_t at = t.find(from);
      if (at != std::string::npos) t.replace(at, from.size(), to);
      return t;
    };
    const std::string m = d + "/m.pth";
    // A character listed twice in --character: refused as the DTRB import refuses one ('z'
    // replaced by 'a'). (A yaml's list may repeat one, as EasyOCR's own lists do: EasyOCR reads
    // both classes as the character, and so does the import: test_model_formats.)
    write(yaml);
    QString msg = errorOf([&] {
      loadModelFile(m, {{"character", "0123456789abcdefghijklmnopqrstuvwxya -'"}});
    });
    QVERIFY2(msg.contains("m.pth: --character names 'a' more than once"), qPrintable(msg));
    // network_params on one line: a mapping is read (and checked against the file) ...
    write(replaced("network_params:\n  hidden_size: 16\n  input_channel: 1\n  output_channel: 32",
                   "network_params: {hidden_size: 16, input_channel: 1, output_channel: 31}"));
    msg = errorOf([&] { loadModelFile(m); });
    QVERIFY2(msg.contains("says network_params.output_channel 31, but the file's "
                          "FeatureExtraction gives 32"),
             qPrintable(msg));
    write(
        replaced("network_params:\n  hidden_size: 16\n  input_channel: 1\n  output_channel: 32",
                 "network_params: {hidden_size: 16, input_channel: 1, output_channel: 32}  # ok"));
    loadModelFile(m);
    // ... a list or a value is refused.
    write(replaced("network_params:\n  hidden_size: 16\n  input_channel: 1\n  output_channel: 32",
                   "network_params: [16, 1, 32]"));
    msg = errorOf([&] { loadModelFile(m); });
    QVERIFY2(msg.contains("m.yaml:") && msg.contains("network_params is a list ('[16, 1, 32]')"),
             qPrintable(msg));
    write(replaced("network_params:\n  hidden_size: 16\n  input_channel: 1\n  output_channel: 32",
                   "network_params: 16"));
    msg = errorOf([&] { loadModelFile(m); });
    QVERIFY2(msg.contains("network_params is a value ('16'), not a mapping"), qPrintable(msg));
    // --easyocr NAME with the yaml beside the file: the yaml's characters, and said.
    write(yaml);
    ImportReport report;
    loadModelFile(m, {{"easyocr", "english_g2"}}, &report);
    bool said = false;
    for (const auto& note : report.assumed)
      said = said || note.rfind(
                         "--easyocr english_g2 not used for the characters: "
                         "character_list of " +
                             d + "/m.yaml names them",
                         0) == 0;
    QVERIFY2(said, report.assumed.empty() ? "no notes" : report.assumed.back().c_str());
    // A directory or a FIFO where the yaml would be: named, not skipped (the file then read as
    // an unnamed EasyOCR .pth: "nothing says it is EasyOCR's").
    fs::remove(d + "/m.yaml");
    fs::create_directory(d + "/m.yaml");
    msg = errorOf([&] { loadModelFile(m); });
    QVERIFY2(msg.contains("m.yaml") && msg.contains("a directory"), qPrintable(msg));
    fs::remove(d + "/m.yaml");
    QCOMPARE(mkfifo((d + "/m.yaml").c_str(), 0600), 0);
    msg = errorOf([&] { loadModelFile(m); });
    QVERIFY2(msg.contains("m.yaml") && msg.contains("a FIFO"), qPrintable(msg));
  }

  // Issue 65, 5: invalid UTF-8 in a charset is refused where it enters, naming the byte; it
  // reached the model file's JSON writer as "internal error: [json.exception.type_error.316]".
  void invalidUtf8Charset() {
    QString msg = errorOf([] {
      Charset(
          "ab\x80"
          "c");
    });
    QVERIFY2(msg.contains("charset is not valid UTF-8 (byte 3, 0x80)"), qPrintable(msg));
    msg = errorOf([] { checkCharsetUtf8("\xFF", "--charset"); });
    QVERIFY2(msg.contains("--charset is not valid UTF-8 (byte 1, 0xFF)"), qPrintable(msg));
    ModelConfig c;
    c.charset = "01\xC3";
    QVERIFY(errorOf([&] { c.validate(); }).contains("not valid UTF-8 (byte 3, 0xC3)"));
    checkCharsetUtf8("0123\xC3\xA9", "--charset");  // é: valid
  }
};

QTEST_APPLESS_MAIN(TestHostileInput)
#include "test_hostile_input.moc"
