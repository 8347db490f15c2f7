// Dataset formats: folder + gt.txt -> LMDB -> packed round trips, recognising a dataset argument,
// label filters, and every kind of bad input reported with its file and entry.
#include <QtTest/QtTest>
#include <cmath>
#include <fstream>

#include "base/crc32.h"
#include "base/error.h"
#include "data/dataset_export.h"
#include "data/dataset_factory.h"
#include "data/dataset_tools.h"
#include "data/digit_sequences.h"
#include "data/folder_dataset.h"
#include "data/label_filter.h"
#include "data/lmdb_dataset.h"
#include "data/packed_dataset.h"
#include "data/synthetic_words.h"
#include "image/preprocess.h"
#include "model/charset.h"

using namespace foveal::core;
using namespace foveal::core::data;

namespace {

const std::string kSource =
    "digits:len=5,rotated,split=test,seed=9,count=12,mnist=" FOVEAL_SAMPLES_DIR "/mnist/digits.bin";

ExportOptions format(const std::string& f) {
  ExportOptions o;
  o.format = f;
  o.threads = 2;
  return o;
}

void writeText(const QString& path, const std::string& text) {
  std::ofstream out(path.toStdString(), std::ios::binary);
  out << text;
}

// Runs `f`, which must throw Error; returns the message.
template <typename F>
QString errorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return "(no error)";
}

}  // namespace

class TestDataFormats : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void folderToLmdbToPackedRoundTrip() {
    QTemporaryDir dir;
    const std::string folder = dir.filePath("folder").toStdString();
    const std::string lmdb = dir.filePath("lmdb").toStdString();
    const std::string packed = dir.filePath("set.fvpk").toStdString();
    const std::string direct = dir.filePath("direct.fvpk").toStdString();
    auto source = openDataset(kSource);
    QCOMPARE(exportDataset(*source, folder, format("folder")).written, size_t(12));

    auto fromFolder = openDataset(folder);
    QCOMPARE(datasetKind(folder), std::string("folder"));
    QCOMPARE(datasetKind(folder + "/gt.txt"), std::string("folder"));
    QCOMPARE(fromFolder->size(), size_t(12));
    QCOMPARE(exportDataset(*fromFolder, lmdb, format("lmdb")).written, size_t(12));

    auto fromLmdb = openDataset(lmdb);
    QCOMPARE(datasetKind(lmdb), std::string("lmdb"));
    QCOMPARE(exportDataset(*fromLmdb, packed, format("packed")).written, size_t(12));
    exportDataset(*source, direct, format("packed"));

    auto fromPacked = openDataset(packed);
    QCOMPARE(datasetKind(packed), std::string("packed"));
    const auto* p = dynamic_cast<const PackedDataset*>(fromPacked.get());
    QVERIFY(p);
    PackedDataset direct2(direct);
    Preprocessing pp;
    QCOMPARE(p->upsampledW(), pp.upsampledW());
    for (size_t i = 0; i < 12; ++i) {
      const Sample s = source->get(i);
      QCOMPARE(fromFolder->get(i).image.pixels, s.image.pixels);
      QCOMPARE(fromFolder->get(i).label, s.label);
      QCOMPARE(fromLmdb->get(i).image.pixels, s.image.pixels);
      QCOMPARE(fromLmdb->get(i).label, s.label);
      // Packed entries are preprocess()'s output, quantised: byte-identical through any route.
      const ModelInput in = preprocess({s.image}, pp, true);
      const PreparedSample ps = p->prepared(i);
      QCOMPARE(ps.label, s.label);
      QCOMPARE(ps.input.pixels, toGreyImage(in.image[0]).pixels);
      QCOMPARE(ps.upsampled.pixels, toGreyImage(in.upsampled[0]).pixels);
      QCOMPARE(ps.upsampled.width, pp.upsampledW());
      QCOMPARE(direct2.prepared(i).input.pixels, ps.input.pixels);
    }
  }

  // Character boxes (docs/data/char-boxes.md) travel through every format: the digit source's
  // slots -> gt.txt's boxes column -> LMDB's boxes keys -> the packed section (in input pixels).
  void charBoxesSurviveEveryFormat() {
    QTemporaryDir dir;
    const std::string folder = dir.filePath("folder").toStdString();
    const std::string lmdb = dir.filePath("lmdb").toStdString();
    const std::string packed = dir.filePath("set.fvpk").toStdString();
    auto source = openDataset(kSource);
    exportDataset(*source, folder, format("folder"));
    auto fromFolder = openDataset(folder);
    exportDataset(*fromFolder, lmdb, format("lmdb"));
    auto fromLmdb = openDataset(lmdb);
    exportDataset(*fromLmdb, packed, format("packed"));
    PackedDataset fromPacked(packed);
    QVERIFY(fromPacked.hasCharBoxes());
    const Preprocessing pp;
    for (size_t i = 0; i < 12; ++i) {
      const auto truth = source->charBoxes(i);
      QCOMPARE(truth.size(), size_t(5));
      for (const auto* ds : {fromFolder.get(), fromLmdb.get()}) {
        const auto got = ds->charBoxes(i);
        QCOMPARE(got.size(), truth.size());
        for (size_t k = 0; k < truth.size(); ++k) {  // "%g": six significant digits
          QVERIFY(std::abs(got[k].x - truth[k].x) < 1e-3 && std::abs(got[k].w - truth[k].w) < 1e-3);
          QVERIFY(std::abs(got[k].y - truth[k].y) < 1e-3 && std::abs(got[k].h - truth[k].h) < 1e-3);
        }
      }
      const auto p = fromPacked.charBoxes(i);  // 160 x 32 -> 100 x 32
      QCOMPARE(p.size(), truth.size());
      const double sx = double(pp.inputW) / 160.0;
      for (size_t k = 0; k < truth.size(); ++k)
        QVERIFY(std::abs(p[k].x - truth[k].x * sx) < 1e-3 &&
                std::abs(p[k].w - truth[k].w * sx) < 1e-3);
      QCOMPARE(fromPacked.prepared(i).boxes.size(), truth.size());
    }
    // A gt.txt without the column, or with a TAB in a label, reads as before; a bad column is
    // reported with its line.
    QDir(dir.path()).mkpath("old");
    writeText(
        dir.filePath("old/gt.txt"),
        "a.png\tab\nb.png\tx\ty\nc.png\t12\tboxes=0,0,5,8 5,0,9,8\nd.png\t1\tboxes=0,0,oops\n");
    FolderDataset old(dir.filePath("old").toStdString());
    QCOMPARE(old.label(0), std::string("ab"));
    QVERIFY(old.charBoxes(0).empty());
    QCOMPARE(old.label(1), std::string("x\ty"));
    QCOMPARE(old.label(2), std::string("12"));
    QCOMPARE(old.charBoxes(2).size(), size_t(2));
    QVERIFY(old.charBoxes(2)[1] == (Box{5, 0, 4, 8}));
    const QString bad = errorOf([&] { old.charBoxes(3); });
    QVERIFY2(bad.contains("line 4") && bad.contains("x0,y0,x1,y1"), qPrintable(bad));
  }

  // Packing a source without boxes writes what earlier builds wrote: no section, bytes 104..127
  // zero, so older readers and checksums are untouched.
  void packedWithoutBoxesIsTheEarlierFormat() {
    QTemporaryDir dir;
    auto source = openDataset(kSource);
    const std::string folder = dir.filePath("f").toStdString();
    exportDataset(*source, folder, format("folder"));
    // The same images without the boxes column.
    QFile gt(QString::fromStdString(folder + "/gt.txt"));
    QVERIFY(gt.open(QIODevice::ReadOnly));
    QString text = QString::fromUtf8(gt.readAll());
    gt.close();
    text.replace(QRegularExpression("\tboxes=[^\n]*"), "");
    writeText(QString::fromStdString(folder + "/gt.txt"), text.toStdString());
    const std::string packed = dir.filePath("plain.fvpk").toStdString();
    exportDataset(*openDataset(folder), packed, format("packed"));
    QFile f(QString::fromStdString(packed));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    QCOMPARE(bytes.mid(104, 24), QByteArray(24, '\0'));
    PackedDataset p(packed);
    QVERIFY(!p.hasCharBoxes());
    QVERIFY(p.charBoxes(0).empty());
    // With boxes, a damaged box entry is named by its checksum.
    const std::string withBoxes = dir.filePath("boxes.fvpk").toStdString();
    exportDataset(*source, withBoxes, format("packed"));
    QFile g(QString::fromStdString(withBoxes));
    QVERIFY(g.open(QIODevice::ReadOnly));
    QByteArray b = g.readAll();
    const qint64 boxesOffset = *reinterpret_cast<const qint64*>(b.constData() + 104);
    QVERIFY(boxesOffset > 0 && boxesOffset < b.size());
    b[int(boxesOffset + 8 * 13 + 16 * 5 + 2)] =
        char(b[int(boxesOffset + 8 * 13 + 16 * 5 + 2)] ^ 0x40);
    QFile o(dir.filePath("damaged.fvpk"));
    QVERIFY(o.open(QIODevice::WriteOnly));
    o.write(b);
    o.close();
    PackedDataset damaged(dir.filePath("damaged.fvpk").toStdString());
    QVERIFY(damaged.charBoxes(0).size() == 5);
    const QString msg = errorOf([&] { damaged.charBoxes(1); });
    QVERIFY2(msg.contains("entry 1") && msg.contains("character boxes"), qPrintable(msg));
  }

  // Synthetic words: each glyph box is its character's ink through the word's distortions, so
  // the boxes together hold every inked pixel of the word, and run left to right.
  void glyphBoxesHoldTheRenderedInk() {
    if (!canRenderText() || defaultFonts().empty() || !QFile::exists("/usr/share/dict/words"))
      QSKIP("no OpenCV text rendering, fonts or word list here");
    WordSpec spec;
    spec.count = 40;
    spec.seed = 5;
    auto words = makeSyntheticWords(spec);
    for (size_t i = 0; i < words->size(); ++i) {
      const Sample s = words->get(i);
      const auto boxes = words->charBoxes(i);
      const GreyImage ink = syntheticWordInk(*words, i);
      QCOMPARE(ink.width, s.image.width);
      QCOMPARE(words->get(i).image.pixels, s.image.pixels);  // boxes leave the image alone
      QCOMPARE(boxes.size(), splitUtf8(s.label).size());
      int inked = 0;
      for (int y = 0; y < ink.height; ++y)
        for (int x = 0; x < ink.width; ++x) {
          if (ink.pixels[size_t(y) * ink.width + x] <= 24) continue;
          ++inked;
          bool held = false;
          for (const auto& b : boxes)
            held = held || (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h);
          QVERIFY2(held, qPrintable(QString("entry %1 \"%2\": ink at (%3, %4) in no glyph box")
                                        .arg(i)
                                        .arg(QString::fromStdString(s.label))
                                        .arg(x)
                                        .arg(y)));
        }
      QVERIFY(inked > 0);
      for (size_t k = 0; k < boxes.size(); ++k) {
        QVERIFY(boxes[k].w > 0 && boxes[k].w < ink.width);
        if (k)
          QVERIFY2(boxes[k].x + boxes[k].w / 2 > boxes[k - 1].x + boxes[k - 1].w / 2,
                   qPrintable(QString::fromStdString(s.label)));
      }
    }
  }

  void packedRepackCopiesExactly() {
    QTemporaryDir dir;
    auto source = openDataset(kSource);
    const std::string a = dir.filePath("a.fvpk").toStdString(),
                      b = dir.filePath("b.fvpk").toStdString();
    exportDataset(*source, a, format("packed"));
    exportDataset(*openDataset(a), b, format("packed"));
    QFile fa(QString::fromStdString(a)), fb(QString::fromStdString(b));
    QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
    QCOMPARE(fa.readAll(), fb.readAll());
  }

  void labelFilter_data() {
    QTest::addColumn<int>("maxLength");
    QTest::addColumn<QString>("charset");
    QTest::addColumn<bool>("caseInsensitive");
    QTest::addColumn<bool>("punctuation");
    QTest::addColumn<QString>("label");
    QTest::addColumn<QString>("expected");  // "-" when filtered out
    const QString an = "0123456789abcdefghijklmnopqrstuvwxyz";
    QTest::newRow("kept") << 25 << an << true << false << "Hello"
                          << "hello";
    QTest::newRow("too long") << 4 << an << true << false << "Hello"
                              << "-";
    QTest::newRow("outside charset") << 25 << an << true << false << "it's"
                                     << "-";
    QTest::newRow("punctuation removed") << 25 << an << true << true << "it's!"
                                         << "its";
    QTest::newRow("case kept") << 25 << "" << false << false << "MiXed"
                               << "MiXed";
    QTest::newRow("sensitive charset") << 25 << "abc" << false << false << "Abc"
                                       << "-";
    QTest::newRow("empty after removal") << 25 << "" << false << true << "..."
                                         << "-";
    QTest::newRow("no limit") << 0 << "" << false << false << "averyveryverylongword"
                              << "averyveryverylongword";
  }
  void labelFilter() {
    QFETCH(int, maxLength);
    QFETCH(QString, charset);
    QFETCH(bool, caseInsensitive);
    QFETCH(bool, punctuation);
    QFETCH(QString, label);
    QFETCH(QString, expected);
    LabelFilter f{maxLength, charset.toStdString(), caseInsensitive, punctuation};
    const auto out = f.apply(label.toStdString());
    QCOMPARE(out ? QString::fromStdString(*out) : QString("-"), expected);
  }

  void filteredDatasetCountsWhatItLeavesOut() {
    QTemporaryDir dir;
    writeText(dir.filePath("gt.txt"),
              "a.pgm\tHello\nb.pgm\tit's\nc.pgm\tWORLD!\nd.pgm\ttoolongword\n");
    OpenOptions o;
    o.filter = LabelFilter{5, "abcdefghijklmnopqrstuvwxyz", true, false};
    auto ds = openDataset(dir.path().toStdString(), o);
    const auto* f = dynamic_cast<const FilteredDataset*>(ds.get());
    QVERIFY(f);
    QCOMPARE(f->size(), size_t(1));
    QCOMPARE(f->label(0), std::string("hello"));
    QCOMPARE(f->filteredOut(), size_t(3));
    o.filter.removePunctuation = true;
    auto ds2 = openDataset(dir.path().toStdString(), o);
    QCOMPARE(ds2->size(), size_t(3));  // "its" and "world" now pass
    QCOMPARE(ds2->label(2), std::string("world"));
  }

  void unknownArgumentsAreReported() {
    QTemporaryDir dir;
    QVERIFY(errorOf([&] {
              openDataset(dir.filePath("nothing").toStdString());
            }).contains("no such file"));
    QVERIFY(errorOf([&] { openDataset(dir.path().toStdString()); }).contains("not a dataset"));
    QVERIFY(
        errorOf([] { openDataset("digits:len=5,colour=red"); }).contains("unknown key 'colour'"));
    QVERIFY(errorOf([] { openDataset("digits:len=five"); }).contains("'len' needs a non-negative"));
    QVERIFY(errorOf([] { openDataset("digits:split=dev"); }).contains("split must be"));
  }

  // Bad input: every message names the file and the entry.

  void corruptAndTruncatedImagesInFolder() {
    QTemporaryDir dir;
    auto source = openDataset(kSource);
    exportDataset(*source, dir.path().toStdString(), format("folder"));
    const QString ext = storageExtension();  // png, or pgm without image codecs
    // Entry 1: truncated PNG; entry 2: garbage bytes; entry 3: missing file.
    {
      QFile f(dir.filePath("images/000000002." + ext));
      QVERIFY(f.open(QIODevice::ReadWrite));
      const QByteArray head = f.read(60);
      f.resize(0);
      f.seek(0);
      f.write(head);
    }
    writeText(dir.filePath("images/000000003." + ext), "this is not an image at all");
    QVERIFY(QFile::remove(dir.filePath("images/000000004." + ext)));
    auto ds = openDataset(dir.path().toStdString());
    const QString gt = dir.filePath("gt.txt");
    for (int entry : {1, 2, 3}) {
      const QString msg = errorOf([&] { ds->get(entry); });
      QVERIFY2(msg.contains(gt), qPrintable(msg));
      QVERIFY2(
          msg.contains(
              QString("line %1 (images/00000000%2.%3)").arg(entry + 1).arg(entry + 1).arg(ext)),
          qPrintable(msg));
    }
    QVERIFY(errorOf([&] { ds->get(3); }).contains("000000004." + ext));
    // info reads everything and lists the three.
    const auto report = inspectDataset(*ds, nullptr);
    QCOMPARE(report.unreadable, size_t(3));
    QCOMPARE(report.readable, size_t(9));
    QCOMPARE(report.problems.size(), size_t(3));
    QCOMPARE(report.problems[0].first, size_t(1));
    // Export stops at the first, or skips and counts with skipBad.
    QVERIFY(errorOf([&] {
              exportDataset(*ds, dir.filePath("x.fvpk").toStdString(), format("packed"));
            }).contains("line 2"));
    QVERIFY(!QFile::exists(dir.filePath("x.fvpk")));
    auto opt = format("packed");
    opt.skipBad = true;
    const auto r = exportDataset(*ds, dir.filePath("y.fvpk").toStdString(), opt);
    QCOMPARE(r.written, size_t(9));
    QCOMPARE(r.skipped, size_t(3));
    QVERIFY(QString::fromStdString(r.skippedMessages[2]).contains("000000004." + ext));
    QCOMPARE(PackedDataset(dir.filePath("y.fvpk").toStdString()).size(), size_t(9));
  }

  void malformedGtLinesAndMissingGt() {
    QTemporaryDir dir;
    writeText(dir.filePath("gt.txt"), "a.pgm\tfine\nno-tab-here\n\t\n");
    FolderDataset ds(dir.path().toStdString());
    QCOMPARE(ds.size(), size_t(3));
    const QString msg = errorOf([&] { ds.get(1); });
    QVERIFY2(msg.contains("gt.txt: line 2 (no-tab-here)") && msg.contains("no TAB"),
             qPrintable(msg));
    QVERIFY(errorOf([&] { ds.label(2); }).contains("line 3"));
    QVERIFY(errorOf([&] { ds.get(0); }).contains("a.pgm"));  // missing image file
    QTemporaryDir empty;
    QVERIFY(errorOf([&] {
              FolderDataset x(empty.filePath("gt.txt").toStdString());
            }).contains("cannot open gt.txt"));
  }

  void lmdbBadInput() {
    QTemporaryDir dir;
    // A valid LMDB with a corrupt image and an empty image in entries 1 and 2.
    const std::string path = dir.filePath("bad").toStdString();
    {
      LmdbWriter w(path);
      auto source = openDataset(kSource);
      w.add(source->get(0));
      w.addEncoded("\x89PNG\r\n\x1a\n garbage", "123");
      w.addEncoded("", "456");
      w.finish();
    }
    LmdbDataset ds(path);
    QCOMPARE(ds.size(), size_t(3));
    QVERIFY(ds.get(0).image.width == 160);
    const QString corrupt = errorOf([&] { ds.get(1); });
    QVERIFY2(corrupt.contains(QString::fromStdString(path)) && corrupt.contains("image-000000002"),
             qPrintable(corrupt));
    QVERIFY(errorOf([&] { ds.get(2); }).contains("image-000000003"));
    QVERIFY(errorOf([&] { ds.get(3); }).contains("out of range"));
    // An empty dataset is fine; an LMDB without num-samples is not.
    const std::string empty = dir.filePath("empty").toStdString();
    LmdbWriter(empty).finish();
    QCOMPARE(LmdbDataset(empty).size(), size_t(0));
    QVERIFY(writeLmdbWithoutCount(dir.filePath("raw").toStdString()));
    const QString msg = errorOf([&] { LmdbDataset x(dir.filePath("raw").toStdString()); });
    QVERIFY2(msg.contains(dir.filePath("raw")) && msg.contains("num-samples"), qPrintable(msg));
    QVERIFY(errorOf([&] {
              LmdbDataset x(dir.filePath("none").toStdString());
            }).contains("no data.mdb"));
  }

  void packedBadInput() {
    QTemporaryDir dir;
    const QString good = dir.filePath("good.fvpk");
    exportDataset(*openDataset(kSource), good.toStdString(), format("packed"));
    QFile f(good);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray bytes = f.readAll();
    auto write = [&](const QString& name, const QByteArray& b) {
      QFile o(dir.filePath(name));
      o.open(QIODevice::WriteOnly);
      o.write(b);
      return dir.filePath(name).toStdString();
    };
    QByteArray magic = bytes;
    magic[3] = 'X';
    QVERIFY(errorOf([&] {
              PackedDataset p(write("magic.fvpk", magic));
            }).contains("wrong header magic"));
    QByteArray version = bytes;
    version[8] = 9;
    QVERIFY(
        errorOf([&] { PackedDataset p(write("version.fvpk", version)); }).contains("unsupported"));
    const std::string truncated = write("truncated.fvpk", bytes.left(bytes.size() - 1000));
    const QString msg = errorOf([&] { PackedDataset p(truncated); });
    QVERIFY2(msg.contains("truncated.fvpk") && msg.contains("truncated"), qPrintable(msg));
    QVERIFY(
        errorOf([&] { PackedDataset p(write("tiny.fvpk", bytes.left(20))); }).contains("header"));
    // A damaged label index names the entry.
    QByteArray index = bytes;
    const qint64 indexOffset = *reinterpret_cast<const qint64*>(bytes.constData() + 64);
    *reinterpret_cast<qint64*>(index.data() + indexOffset + 8 * 5) = 1 << 30;
    const QString idx = errorOf([&] { PackedDataset p(write("index.fvpk", index)); });
    QVERIFY2(idx.contains("index.fvpk: entry 4") || idx.contains("index.fvpk: entry 5"),
             qPrintable(idx));
    // Label data placed past the end of the file (found by fuzz_packed: the reads ran off the
    // mapping), and the fuzzer's own input.
    QByteArray past = bytes;
    *reinterpret_cast<qint64*>(past.data() + 72) = qint64(bytes.size()) + 4096;
    reseal(past);  // past the header checksum, to reach the offset checks
    QVERIFY(errorOf([&] {
              PackedDataset p(write("past.fvpk", past));
            }).contains("inconsistent offsets"));
    const std::string fuzzed =
        QStringLiteral(FOVEAL_SAMPLES_DIR "/../tests/data/fuzz-regressions/packed-label-offset.fvd")
            .toStdString();
    QVERIFY(errorOf([&] {
              PackedDataset p(fuzzed);
              for (size_t i = 0; i < p.size(); ++i) p.get(i);
            }).contains("packed-label-offset.fvd"));
    QVERIFY(errorOf([&] {
              PackedDataset p(dir.filePath("missing.fvpk").toStdString());
            }).contains("cannot open"));
  }

 private:
  static bool writeLmdbWithoutCount(const std::string& path);
  // A packed header edited on purpose gets a matching checksum (bytes 88..91, over the header
  // with those four bytes zero), so a test reaches the checks behind it.
  static void reseal(QByteArray& b) {
    std::memset(b.data() + 88, 0, 4);
    const uint32_t crc = foveal::core::crc32(b.constData(), 128);
    std::memcpy(b.data() + 88, &crc, 4);
  }
};

#include <lmdb.h>

bool TestDataFormats::writeLmdbWithoutCount(const std::string& path) {
  QDir().mkpath(QString::fromStdString(path));
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi;
  if (mdb_env_create(&env) || mdb_env_set_mapsize(env, 1 << 20) ||
      mdb_env_open(env, path.c_str(), 0, 0644))
    return false;
  mdb_txn_begin(env, nullptr, 0, &txn);
  mdb_dbi_open(txn, nullptr, 0, &dbi);
  std::string k = "label-000000001", v = "12";
  MDB_val mk{k.size(), k.data()}, mv{v.size(), v.data()};
  mdb_put(txn, dbi, &mk, &mv, 0);
  const bool ok = mdb_txn_commit(txn) == 0;
  mdb_env_close(env);
  return ok;
}

QTEST_APPLESS_MAIN(TestDataFormats)
#include "test_data_formats.moc"
