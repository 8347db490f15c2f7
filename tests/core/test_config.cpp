// Charset, model config JSON and image file I/O: the Torch-free pieces of core; the heap settings.
#include <QtTest/QtTest>
#include <cstdlib>
#include <cstring>
#include <fstream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "base/error.h"
#include "base/heap_tuning.h"
#include "image/grey_image.h"
#include "model/charset.h"
#include "model/model_config.h"

using namespace foveal::core;

class TestConfig : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // First: glibc's thresholds move with the blocks freed, so the process must not have freed a
  // large block yet for the untuned thresholds to map a 16 MiB block on its own.
  void heapKeepsFreedBlocks() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    QSKIP("a sanitizer's allocator: glibc's heap is not the one in use");
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    QCOMPARE(QString::fromStdString(heapSettings()), QStringLiteral("glibc defaults"));
    const auto said = QString::fromStdString(tuneHeapForTensors());
    if (said.startsWith(QStringLiteral("the environment's")) ||
        said.contains(QStringLiteral("FOVEAL_DEFAULT_MALLOC")))
      QSKIP(qPrintable(QStringLiteral("the environment sets the heap: ") + said));
    QCOMPARE(said, QStringLiteral("tuned (mmap 32 MiB, trim 1 GiB)"));
    QCOMPARE(QString::fromStdString(heapSettings()),
             QStringLiteral("tuned (mmap 32 MiB, trim 1 GiB)"));
    // 16 MiB: mapped on its own under glibc's starting threshold (128 KiB), in the heap under
    // the tuned one (32 MiB); once freed it stays there (the trim threshold is 1 GiB).
    constexpr size_t size = 16 << 20;
    const auto before = mallinfo2();
    auto* volatile block = static_cast<char*>(std::malloc(size));
    QVERIFY(block != nullptr);
    std::memset(block, 1, size);
    const auto during = mallinfo2();
    QCOMPARE(during.hblks, before.hblks);
    QVERIFY2(during.arena >= before.arena + size, "the block did not come from the heap");
    std::free(block);
    const auto after = mallinfo2();
    QVERIFY2(after.arena >= before.arena + size, "the heap was trimmed after the free");
    QVERIFY(after.fordblks >= size);
#else
    QSKIP("not glibc 2.33 or later (mallinfo2)");
#endif
  }

  void charsetEncodesAndDecodes() {
    const Charset cs = Charset::digits();
    QCOMPARE(cs.size(), 11);
    const auto enc = cs.encode("4021");
    QCOMPARE(enc, (std::vector<int>{5, 1, 3, 2}));
    QCOMPARE(cs.decode({5, 1, 3, 2, 0, 7}), std::string("4021"));
    QCOMPARE(cs.token(0), std::string("<end>"));
  }

  void charsetRejectsUnknownCharacters() {
    const Charset cs = Charset::digits();
    try {
      cs.encode("12a4");
      QFAIL("no error for a character outside the charset");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("'a'"));
      QVERIFY(QString(e.what()).contains("12a4"));
    }
    QVERIFY(!cs.covers("1 2"));
    QVERIFY_THROWS_EXCEPTION(Error, Charset("aba"));
  }

  // A charset with repeats (imported EasyOCR lists): each occurrence its own class, reading as
  // the character; a label encodes to the last occurrence. Without the flag: refused.
  void charsetWithRepeats() {
    const Charset cs("aba", false, ClassLayout::BlankFirst, true);
    QVERIFY(cs.repeats());
    QCOMPARE(cs.size(), 4);
    QCOMPARE(cs.token(1), std::string("a"));
    QCOMPARE(cs.token(3), std::string("a"));
    QCOMPARE(cs.encode("ab"), (std::vector<int>{3, 2}));
    QCOMPARE(cs.decode({1, 0, 3, 2}), std::string("aab"));
    QVERIFY(cs.covers("baa"));
    QVERIFY_THROWS_EXCEPTION(Error, Charset("aba", false, ClassLayout::BlankFirst));
    ModelConfig c;
    c.prediction = "ctc";
    c.charset = "aba";
    QVERIFY_THROWS_EXCEPTION(Error, c.validate());
    c.charsetRepeats = true;
    c.validate();
    const auto back = ModelConfig::fromJson(c.toJson());
    QVERIFY(back.charsetRepeats);
    QCOMPARE(back.makeCharset().encode("a"), std::vector<int>{3});
    QVERIFY(ModelConfig().toJson().find("charset_repeats") == std::string::npos);
  }

  void charsetCaseInsensitive() {
    const Charset cs = Charset::alphanumeric();
    QCOMPARE(cs.encode("AbC"), cs.encode("abc"));
    QCOMPARE(cs.size(), 37);
  }

  void configJsonRoundTrip() {
    ModelConfig c;
    c.attention = "sharp";
    c.context = ContextKind::Weighting;
    c.numStns = 2;
    c.width = 0.25;
    c.maxLength = 9;
    c.charset = "abc";
    c.preprocessing.regionScale = 2.0;
    const auto back = ModelConfig::fromJson(c.toJson());
    QCOMPARE(back.toJson(), c.toJson());
    QCOMPARE(back.numStns, 2);
    QVERIFY(back.context == ContextKind::Weighting);
    QCOMPARE(back.preprocessing.upsampledW(), 200);
  }

  void configErrorsNameTheProblem_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("message");
    QTest::newRow("not json") << "{oops"
                              << "bad model config JSON";
    QTest::newRow("unknown attention") << R"({"attention":"fuzzy","max_length":5,"charset":"01"})"
                                       << "unknown glimpse 'fuzzy' (known: soft, hard, sharp)";
    QTest::newRow("three stns") << R"({"attention":"sharp","stns":3,"max_length":5,"charset":"01"})"
                                << "stns must be 1 or 2";
    QTest::newRow("duplicate char") << R"({"attention":"soft","max_length":5,"charset":"011"})"
                                    << "duplicate character";
    QTest::newRow("missing charset") << R"({"attention":"soft","max_length":5})"
                                     << "bad model config JSON";
    // Found by fuzz_checkpoint: a float too large for int was converted (undefined behaviour).
    QTest::newRow("huge stns")
        << R"({"attention":"sharp","stns":6.66667e+36,"max_length":5,"charset":"01"})"
        << "field 'stns' must be an integer";
    QTest::newRow("fractional length") << R"({"attention":"soft","max_length":5.5,"charset":"01"})"
                                       << "field 'max_length' must be an integer";
    QTest::newRow("string width")
        << R"({"attention":"soft","width":"wide","max_length":5,"charset":"01"})"
        << "bad model config JSON";
    // Taller inputs are averaged over the height, as DTRB does; too short gives no row at all.
    QTest::newRow("input height") << R"({"attention":"soft","max_length":5,"charset":"01",
        "preprocessing":{"input_h":12}})"
                                  << "input 100x12";
  }
  void configErrorsNameTheProblem() {
    QFETCH(QString, json);
    QFETCH(QString, message);
    try {
      ModelConfig::fromJson(json.toStdString(), "model.fvm");
      QFAIL("no error");
    } catch (const Error& e) {
      const QString what = e.what();
      QVERIFY2(what.startsWith("model.fvm: "), qPrintable(what));
      QVERIFY2(what.contains(message), qPrintable(what));
    }
  }

  void pngWriterRoundTrips() {
    GreyImage img{37, 11, {}};
    for (int i = 0; i < 37 * 11; ++i) img.pixels.push_back(static_cast<uint8_t>((i * 7) % 256));
    const QString path = QDir::temp().filePath("foveal-test-roundtrip.png");
    writePng(img, path.toStdString());
    if (!hasImageCodecs()) QSKIP("no OpenCV in this build to decode PNG");
    const auto back = readImage(path.toStdString());
    QCOMPARE(back.width, 37);
    QCOMPARE(back.height, 11);
    QCOMPARE(back.pixels, img.pixels);
  }

  void pgmReads() {
    const QString path = QDir::temp().filePath("foveal-test.pgm");
    {
      std::ofstream f(path.toStdString(), std::ios::binary);
      f << "P5\n# comment\n3 2\n255\n";
      const char px[6] = {0, 10, 20, 30, 40, static_cast<char>(250)};
      f.write(px, 6);
    }
    const auto img = readImage(path.toStdString());
    QCOMPARE(img.width, 3);
    QCOMPARE(img.height, 2);
    QCOMPARE(int(img.at(2, 1)), 250);
  }

  void badImagesNameTheFile_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << QByteArray() << "empty image file";
    QTest::newRow("truncated pgm") << QByteArray("P5\n10 10\n255\nabc") << "truncated image data";
    QTest::newRow("bad pgm header") << QByteArray("P5\nxx\n") << "corrupt PNM header";
    if (hasImageCodecs()) {
      QTest::newRow("garbage") << QByteArray("this is not an image at all")
                               << "unsupported image format";
      // Found by fuzz_image: OpenCV's DICOM reader aborted the process on these bytes.
      QFile gdcm(QStringLiteral(FOVEAL_SAMPLES_DIR
                                "/../tests/data/fuzz-regressions/image-gdcm-assert.bin"));
      QVERIFY(gdcm.open(QIODevice::ReadOnly));
      QTest::newRow("fuzz: DICOM reader abort") << gdcm.readAll() << "unsupported image format";
      QFile gdcm2(QStringLiteral(FOVEAL_SAMPLES_DIR
                                 "/../tests/data/fuzz-regressions/image-gdcm-assert-2.bin"));
      QVERIFY(gdcm2.open(QIODevice::ReadOnly));
      QTest::newRow("fuzz: not quite PPM") << gdcm2.readAll() << "unsupported image format";
      QTest::newRow("png signature, garbage body")
          << QByteArray("\x89PNG\r\n\x1a\n garbage garbage", 25) << "cannot decode image";
      QFile png(QStringLiteral(FOVEAL_SAMPLES_DIR) + "/images/digits-46214.png");
      QVERIFY(png.open(QIODevice::ReadOnly));
      QTest::newRow("truncated png") << png.read(300) << "cannot decode image";
    }
  }
  void badImagesNameTheFile() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, message);
    const QString path = QDir::temp().filePath("foveal-bad-image.bin");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes);
    f.close();
    try {
      readImage(path.toStdString());
      QFAIL("no error for a bad image");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).startsWith(path + ": "), e.what());
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }

  void missingImage() { QVERIFY_THROWS_EXCEPTION(Error, readImage("/nonexistent/foveal.png")); }
};

QTEST_APPLESS_MAIN(TestConfig)
#include "test_config.moc"
