// Tesseract as a reference engine (core/engines/): the tesseract:LANG[,psm=N] spec; the reading,
// boxes and confidences the engine gives for the sample image, held against what the
// `tesseract` program writes for the same image (the same library: the same text and the same
// character boxes); its traces in the OCR formats; evaluation with pointing and IoU on its boxes.
// A build without libtesseract checks that the seam says Tesseract is absent.
#include <QProcess>
#include <QStandardPaths>
#include <QXmlStreamReader>
#include <QtTest/QtTest>
#include <algorithm>
#include <cmath>
#include <functional>

#include "base/error.h"
#include "base/text_metrics.h"
#include "data/dataset_factory.h"
#include "engines/tesseract_engine.h"
#include "formats/checkpoint.h"
#include "formats/ocr_formats.h"
#include "trace/localisation.h"
#include "trace/model_session.h"
#include "train/faithfulness_eval.h"
#include "train/reader_evaluation.h"

using namespace foveal::core;

namespace {

QString samplePath() {
  return hasImageCodecs() ? FOVEAL_SAMPLES_DIR "/images/digits-46214.png"
                          : FOVEAL_SAMPLES_DIR "/images/digits-46214.pgm";
}

QString errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return QStringLiteral("no error");
}

// The tessdata folder Tesseract reads without TESSDATA_PREFIX (Debian's, where eng lives).
std::string tessdataFolder() {
  for (const char* d : {"/usr/share/tesseract-ocr/5/tessdata",
                        "/usr/share/tesseract-ocr/4.00/tessdata", "/usr/share/tessdata"})
    if (QFile::exists(QString(d) + "/eng.traineddata")) return d;
  return "/usr/share/tesseract-ocr/5/tessdata";
}

QByteArray runTesseract(const QStringList& args) {
  QProcess p;
  p.start("tesseract", args);
  if (!p.waitForFinished(120000) || p.exitCode() != 0) return {};
  return p.readAllStandardOutput();
}

// The character boxes of an hOCR page (ocrx_cinfo spans with x_bboxes), in reading order.
std::vector<std::array<long, 4>> hocrCharBoxes(const QByteArray& hocr, QString* text) {
  std::vector<std::array<long, 4>> out;
  QXmlStreamReader xml(hocr);
  while (!xml.atEnd()) {
    if (xml.readNext() != QXmlStreamReader::StartElement) continue;
    const auto title = xml.attributes().value("title").toString();
    if (xml.attributes().value("class") == QLatin1String("ocrx_cinfo") &&
        title.startsWith("x_bboxes")) {
      const auto p = title.split(';').first().split(' ', Qt::SkipEmptyParts);
      out.push_back({p[1].toLong(), p[2].toLong(), p[3].toLong(), p[4].toLong()});
      *text += xml.readElementText();
    }
  }
  return out;
}

// The LSTM's timesteps of an hOCR page written with lstm_choice_mode=1: per symbol (ocr_symbol),
// its timesteps (ocrx_cinfo id timestep...), each a list of (character, x_confs) choices
// ("<blank>" for the null character, as Foveal writes it).
using HocrTimestep = std::vector<std::pair<QString, double>>;
std::vector<std::vector<HocrTimestep>> hocrTimesteps(const QByteArray& hocr) {
  std::vector<std::vector<HocrTimestep>> out;
  QXmlStreamReader xml(hocr);
  while (!xml.atEnd()) {
    if (xml.readNext() != QXmlStreamReader::StartElement) continue;
    const auto cls = xml.attributes().value("class");
    const auto id = xml.attributes().value("id");
    if (cls == QLatin1String("ocr_symbol")) {
      out.emplace_back();
    } else if (cls == QLatin1String("ocrx_cinfo") && id.startsWith(QLatin1String("timestep"))) {
      if (!out.empty()) out.back().emplace_back();
    } else if (cls == QLatin1String("ocrx_cinfo") && id.startsWith(QLatin1String("choice_"))) {
      const double conf = xml.attributes().value("title").split(' ').last().toDouble();
      const QString text = xml.readElementText();
      if (!out.empty() && !out.back().empty())
        out.back().back().emplace_back(text.isEmpty() ? QStringLiteral("<blank>") : text, conf);
    }
  }
  return out;
}

}  // namespace

class TestTesseract : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;

 private Q_SLOTS:
  void specs_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("language");
    QTest::addColumn<int>("psm");
    QTest::addColumn<QString>("characters");
    QTest::newRow("language only") << "tesseract:eng"
                                   << "eng" << 7 << "";
    QTest::newRow("psm") << "tesseract:eng,psm=13"
                         << "eng" << 13 << "";
    QTest::newRow("two languages, characters with a comma") << "tesseract:deu+eng,psm=6,chars=0-9,."
                                                            << "deu+eng" << 6 << "0-9,.";
  }
  void specs() {
    QFETCH(QString, spec);
    QFETCH(QString, language);
    QFETCH(int, psm);
    QFETCH(QString, characters);
    QVERIFY(isTesseractSpec(spec.toStdString()));
    const auto s = parseTesseractSpec(spec.toStdString());
    QCOMPARE(QString::fromStdString(s.language), language);
    QCOMPARE(s.psm, psm);
    QCOMPARE(QString::fromStdString(s.characters), characters);
    QCOMPARE(parseTesseractSpec(s.toString()).toString(), s.toString());
  }

  void badSpecsSayWhy_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("message");
    QTest::newRow("no language") << "tesseract:"
                                 << "Tesseract spec 'tesseract:': no language";
    QTest::newRow("psm too large") << "tesseract:eng,psm=14"
                                   << "psm must be a page segmentation mode 0-13, not '14'";
    QTest::newRow("psm not a number") << "tesseract:eng,psm=7x"
                                      << "psm must be a page segmentation mode 0-13, not '7x'";
    QTest::newRow("unknown option") << "tesseract:eng,oem=1"
                                    << "unknown option 'oem'";
    QTest::newRow("path in language")
        << "tesseract:../eng"
        << "language '../eng' has a character a traineddata name does not";
    QTest::newRow("not a spec") << "model.fvm"
                                << "'model.fvm' is not a Tesseract spec";
    QTest::newRow("psm 0 reads nothing")
        << "tesseract:eng,psm=0"
        << "psm=0 detects orientation and script only and reads no text";
    QTest::newRow("psm 2 reads nothing") << "tesseract:eng,psm=2"
                                         << "psm=2 segments the page without reading it: no text";
  }
  void badSpecsSayWhy() {
    QFETCH(QString, spec);
    QFETCH(QString, message);
    try {
      parseTesseractSpec(spec.toStdString());
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }

  // Without libtesseract the seam says so; with it, a language without data is named.
  void absentOrMissingLanguageIsAnError() {
    TesseractSpec spec;
    spec.language = tesseractAvailable() ? "xyzzy" : "eng";
    try {
      TesseractEngine::open(spec);
      QFAIL("no error");
    } catch (const Error& e) {
      const QString expected = tesseractAvailable()
                                   ? "cannot load the language 'xyzzy'"
                                   : "this build has no Tesseract: libtesseract was not found";
      QVERIFY2(QString(e.what()).contains(expected), e.what());
      if (tesseractAvailable())
        QVERIFY2(QString(e.what()).contains("tesseract-ocr-xyzzy"), e.what());
    }
  }

  // Issue 65, 6: a traineddata that is there but cannot be loaded is named as such, not as
  // missing: empty, a directory, a file of random bytes and one cut short, each in a tessdata
  // folder of its own (TESSDATA_PREFIX); and a missing one still says which package has it.
  void brokenTraineddataIsNamedAsSuch_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << "empty"
                           << "xx.traineddata is an empty file, not a traineddata file";
    QTest::newRow("directory") << "directory"
                               << "xx.traineddata is a directory, not a traineddata file";
    QTest::newRow("random bytes")
        << "random"
        << "xx.traineddata (5000 bytes) is corrupt or not a traineddata file";
    QTest::newRow("cut short") << "cut"
                               << "xx.traineddata (100000 bytes) is corrupt or not a traineddata";
    QTest::newRow("missing") << "missing"
                             << "no xx.traineddata in %1/; Debian: apt install tesseract-ocr-xx";
  }
  void brokenTraineddataIsNamedAsSuch() {
    if (!tesseractAvailable()) QSKIP("this build has no Tesseract");
    QFETCH(QString, kind);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString file = dir.filePath("xx.traineddata");
    if (kind == "directory") {
      QVERIFY(QDir(dir.path()).mkdir("xx.traineddata"));
    } else if (kind != "missing") {
      QFile f(file);
      QVERIFY(f.open(QIODevice::WriteOnly));
      if (kind == "random") {
        QByteArray bytes(5000, 0);
        for (int i = 0; i < bytes.size(); ++i) bytes[i] = char((i * 7919 + 13) % 251);
        f.write(bytes);
      } else if (kind == "cut") {
        QFile eng(QString::fromStdString(tessdataFolder()) + "/eng.traineddata");
        if (!eng.open(QIODevice::ReadOnly)) QSKIP("no eng.traineddata to cut short");
        f.write(eng.read(100000));
      }
    }
    const QByteArray previous = qgetenv("TESSDATA_PREFIX");
    const bool had = qEnvironmentVariableIsSet("TESSDATA_PREFIX");
    qputenv("TESSDATA_PREFIX", dir.path().toLocal8Bit());
    const QString msg = [&] {
      try {
        TesseractEngine::open(parseTesseractSpec("tesseract:xx"));
      } catch (const Error& e) {
        return QString::fromStdString(e.what());
      }
      return QString();
    }();
    if (had)
      qputenv("TESSDATA_PREFIX", previous);
    else
      qunsetenv("TESSDATA_PREFIX");
    QVERIFY2(msg.contains("Tesseract cannot load the language 'xx'"), qPrintable(msg));
    QVERIFY2(msg.contains(message.arg(dir.path())), qPrintable(msg));
    if (kind != "missing") QVERIFY2(!msg.contains("apt install"), qPrintable(msg));
  }

  // Tesseract starts with the languages it can load and only prints the others' failure: a spec
  // naming one it cannot is refused, naming that one (it read with eng alone, exit 0).
  void everyLanguageOfASpecLoads() {
    if (!tesseractAvailable()) QSKIP("this build has no Tesseract");
    for (const char* spec : {"tesseract:eng+nope", "tesseract:nope+eng"}) {
      try {
        TesseractEngine::open(parseTesseractSpec(spec));
        QFAIL(qPrintable(QString("%1 opened").arg(spec)));
      } catch (const Error& e) {
        QVERIFY2(QString(e.what()).contains("cannot load the language 'nope' (no nope.traineddata"),
                 e.what());
        QVERIFY2(!QString(e.what()).contains("'eng'"), e.what());
      }
    }
    TesseractEngine::open(parseTesseractSpec("tesseract:eng"));  // and eng alone still opens
  }

  // An engine has no network: explaining it, measuring its faithfulness, importing or timing it
  // says so (not "charset is empty" or "cannot open model file").
  void enginesHaveNoGradientsAndNothingToImport() {
    QString msg = errorOf([] { loadModelFile("tesseract:eng"); });
    QVERIFY2(msg.contains("tesseract:eng: an engine, not a model file: nothing to import"),
             qPrintable(msg));
    msg = errorOf([] {
      train::FaithfulnessOptions o;
      train::evaluateFaithfulness("tesseract:eng", "digits:len=5,count=2", o);
    });
    QVERIFY2(msg.contains("tesseract:eng: an engine has no gradients to explain"), qPrintable(msg));
    if (!tesseractAvailable()) return;
    auto session = ModelSession::open("tesseract:eng,psm=7");
    const GreyImage image = readImage(samplePath().toStdString());
    const Trace trace = session->trace(image, "sample");
    msg = errorOf([&] { session->explain(image, trace, {}); });
    QVERIFY2(msg.contains("tesseract:eng,psm=7: an engine has no gradients to explain"),
             qPrintable(msg));
    msg = errorOf([&] { session->curves(image, trace, {}, {}); });
    QVERIFY2(msg.contains("an engine has no gradients to explain"), qPrintable(msg));
  }

  // The engine reads the sample as the tesseract program does with the same settings: the same
  // text, the same character boxes (hOCR x_bboxes), confidences in [0, 1], the LSTM's choices as
  // each step's top-k, best first, focus at each box's centre.
  void readsLikeTheTesseractProgram() {
    if (!tesseractAvailable()) QSKIP("this build has no Tesseract");
    if (QStandardPaths::findExecutable("tesseract").isEmpty())
      QSKIP("the tesseract program is not installed (Debian: tesseract-ocr)");
    const QString image = samplePath();
    auto engine = TesseractEngine::open(parseTesseractSpec("tesseract:eng,psm=7"));
    QVERIFY(QString::fromStdString(engine->describe()).startsWith("Tesseract 5"));
    const auto trace = engine->read(readImage(image.toStdString()), image.toStdString());

    const QString programText =
        QString::fromUtf8(runTesseract({image, "stdout", "--psm", "7", "--dpi", "70"})).trimmed();
    QVERIFY(!programText.isEmpty());
    QCOMPARE(QString::fromStdString(trace.prediction), programText);
    QString hocrText;
    const auto boxes = hocrCharBoxes(runTesseract({image, "stdout", "--psm", "7", "--dpi", "70",
                                                   "-c", "hocr_char_boxes=1", "hocr"}),
                                     &hocrText);
    std::vector<const TraceStep*> symbols;
    for (const auto& s : trace.steps)
      if (s.token != " ") symbols.push_back(&s);
    QCOMPARE(symbols.size(), boxes.size());
    QString symbolText;
    for (size_t k = 0; k < symbols.size(); ++k) {
      const auto& s = *symbols[k];
      symbolText += QString::fromStdString(s.token);
      QCOMPARE(hocrBox(s.box), boxes[k]);
      QVERIFY(s.prob >= 0 && s.prob <= 1);
      QCOMPARE(s.focus.x, s.box.x + s.box.w / 2);
      QVERIFY(!s.topk.empty());
      for (size_t j = 1; j < s.topk.size(); ++j) QVERIFY(s.topk[j - 1].prob >= s.topk[j].prob);
    }
    QCOMPARE(symbolText, hocrText);
    QCOMPARE(trace.imageW, 160);
    QCOMPARE(trace.focusRule, std::string(kTesseractFocusRule));
    QVERIFY(trace.confidence > 0 && trace.confidence <= 1);
    // chars= is Tesseract's whitelist: the same reading as the program's with it.
    auto digits = TesseractEngine::open(parseTesseractSpec("tesseract:eng,psm=7,chars=0123456789"));
    const QString digitsText =
        QString::fromUtf8(runTesseract({image, "stdout", "--psm", "7", "--dpi", "70", "-c",
                                        "tessedit_char_whitelist=0123456789"}))
            .trimmed();
    QVERIFY(!digitsText.isEmpty());
    QCOMPARE(QString::fromStdString(digits->read(readImage(image.toStdString()), "d").prediction),
             digitsText);
  }

  // The per-timestep alternatives: the LSTM's choices at every timestep are the trace's columns,
  // as the tesseract program writes them with lstm_choice_mode=1 (its hOCR's timestep spans):
  // the same timesteps per symbol, the same choices with the same confidences (x_confs is the
  // probability x 100, truncated). Each symbol's columns are its timesteps, in order; its map is
  // its token's probability over the line's timesteps, normalised; the fitted x puts its best
  // timestep inside its box.
  void perTimestepAlternativesAsTheProgramWritesThem() {
    if (!tesseractAvailable()) QSKIP("this build has no Tesseract");
    if (QStandardPaths::findExecutable("tesseract").isEmpty())
      QSKIP("the tesseract program is not installed (Debian: tesseract-ocr)");
    const QString image = samplePath();
    auto engine = TesseractEngine::open(parseTesseractSpec("tesseract:eng,psm=7"));
    const auto trace = engine->read(readImage(image.toStdString()), image.toStdString());
    const auto program = hocrTimesteps(runTesseract(
        {image, "stdout", "--psm", "7", "--dpi", "70", "-c", "lstm_choice_mode=1", "hocr"}));
    QVERIFY(!program.empty());
    // The sample reads as two words: the space's timesteps are the first symbol span of the word
    // after it in the program's hOCR, and the space step's columns in the trace.
    QVERIFY(QString::fromStdString(trace.prediction).contains(' '));
    QCOMPARE(program.size(), trace.steps.size());
    QVERIFY(trace.hasMap(kAttentionMap));
    QCOMPARE(trace.regions.size(), trace.columnTopk.size());
    size_t next = 0;
    for (size_t k = 0; k < trace.steps.size(); ++k) {
      const auto& s = trace.steps[k];
      QCOMPARE(s.columns.size(), program[k].size());
      for (size_t j = 0; j < s.columns.size(); ++j) {
        const auto c = static_cast<size_t>(s.columns[j]);
        QCOMPARE(c, next++);  // consecutive, in reading order
        const auto& ours = trace.columnTopk[c];
        const auto& theirs = program[k][j];
        QCOMPARE(ours.size(), std::min<size_t>(5, theirs.size()));
        for (const auto& tp : ours) {
          const auto hit = std::find_if(theirs.begin(), theirs.end(), [&](const auto& t) {
            return t.first == QString::fromStdString(tp.token);
          });
          QVERIFY2(hit != theirs.end(), tp.token.c_str());
          QVERIFY2(std::abs(static_cast<int>(tp.prob * 100) - hit->second) <= 1,
                   qPrintable(QString("step %1 timestep %2 '%3': %4 against x_confs %5")
                                  .arg(k)
                                  .arg(j)
                                  .arg(QString::fromStdString(tp.token))
                                  .arg(tp.prob)
                                  .arg(hit->second)));
        }
        const auto& r = trace.regions[c];
        QVERIFY(r.x >= 0 && r.w > 0 && r.x + r.w <= trace.imageW + 1e-9);
      }
      const auto& row = trace.attention(k);
      QCOMPARE(row.size(), trace.columnTopk.size());
      double sum = 0;
      for (double v : row) sum += v;
      QVERIFY(std::abs(sum - 1) < 1e-9);
      QVERIFY(std::find(s.columns.begin(), s.columns.end(), s.region) != s.columns.end());
      const double x = trace.regionCentres[static_cast<size_t>(s.region)].x;
      QVERIFY2(x >= s.box.x - 2 && x <= s.box.x + s.box.w + 2,
               qPrintable(QString("step %1: best timestep at x %2, box %3..%4")
                              .arg(k)
                              .arg(x)
                              .arg(s.box.x)
                              .arg(s.box.x + s.box.w)));
    }
    QCOMPARE(next, trace.columnTopk.size());
    // Foveal's hOCR of the trace writes the same timesteps in the same structure (the space's
    // timesteps, which the program puts before the next word's symbols, belong to no character).
    const auto written = hocrTimesteps(QByteArray::fromStdString(toHocr(trace)));
    std::vector<size_t> characters;
    for (size_t k = 0; k < trace.steps.size(); ++k)
      if (trace.steps[k].token != " ") characters.push_back(k);
    QCOMPARE(written.size(), characters.size());
    for (size_t i = 0; i < written.size(); ++i) {
      const auto& theirs = program[characters[i]];
      QCOMPARE(written[i].size(), theirs.size());
      for (size_t j = 0; j < theirs.size(); ++j) {
        QCOMPARE(written[i][j].front().first, theirs[j].front().first);
        QVERIFY(std::abs(std::floor(written[i][j].front().second) - theirs[j].front().second) <= 1);
      }
    }
  }

  // Its trace writes valid OCR documents whose boxes are Tesseract's.
  void itsTraceInTheOcrFormats() {
    if (!tesseractAvailable()) QSKIP("this build has no Tesseract");
    auto engine = TesseractEngine::open(parseTesseractSpec("tesseract:eng"));
    const auto trace = engine->read(readImage(samplePath().toStdString()), "sample");
    for (auto f : {OcrFormat::Hocr, OcrFormat::Alto, OcrFormat::Page}) {
      QXmlStreamReader xml(QByteArray::fromStdString(toOcrDocument(trace, f)));
      while (!xml.atEnd()) xml.readNext();
      QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    }
    QString text;
    const auto boxes = hocrCharBoxes(QByteArray::fromStdString(toHocr(trace)), &text);
    QVERIFY(!boxes.empty());
    QCOMPARE(boxes.front(), hocrBox(trace.steps.front().box));
  }

  // Evaluation of the engine on digit sequences: the counts and the pointing accuracy are those
  // computed here from its own traces and the data's true boxes.
  void evaluationScoresItsBoxes() {
    if (!tesseractAvailable()) QSKIP("this build has no Tesseract");
    auto engine = TesseractEngine::open(parseTesseractSpec("tesseract:eng,psm=7,chars=0123456789"));
    const std::string set = "digits:len=5,split=test,seed=3";
    train::EvalOptions o;
    o.limit = 6;
    const auto report = train::evaluateReader(
        "tesseract",
        [&](const GreyImage& im, const std::string& src) { return engine->read(im, src); }, {set},
        o);
    const auto& all = report.datasets.at(0).overall;
    QCOMPARE(all.count, int64_t(6));
    QCOMPARE(all.localisation.images, int64_t(6));
    QCOMPARE(all.localisation.steps, int64_t(30));
    const auto ds = data::openDataset(set);
    int64_t hits = 0, correct = 0, cerDistance = 0;
    for (size_t i = 0; i < 6; ++i) {
      const auto sample = ds->get(i);
      const auto trace = engine->read(sample.image, ds->entryName(i));
      correct += trace.prediction == sample.label;
      cerDistance += characterErrors(trace.prediction, sample.label).distance;
      const auto truth = ds->charBoxes(i);
      std::vector<const TraceStep*> symbols;
      for (const auto& s : trace.steps)
        if (s.token != " ") symbols.push_back(&s);
      for (size_t t = 0; t < truth.size() && t < symbols.size(); ++t)
        hits += contains(truth[t], symbols[t]->focus);
    }
    QCOMPARE(all.correct, correct);
    QCOMPARE(all.localisation.hits, hits);
    QCOMPARE(all.cerDistance, cerDistance);
    // Tesseract merges and splits handwritten digits, so step t is often not digit t: measured
    // 0.27 on these six images; the figure is what the test computes from its boxes above.
    QVERIFY(all.localisation.pointing() >= 0 && all.localisation.pointing() <= 1);
  }
};

QTEST_APPLESS_MAIN(TestTesseract)
#include "test_tesseract.moc"
