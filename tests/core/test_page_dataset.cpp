// page:DIR datasets (data/page_dataset.h): kraken's own PAGE and ALTO test files (an explicit
// reading order, regions without coordinates) and a PAGE 2019 file of this test's, each beside
// a page image, read as one dataset of transcribed lines cut out as kraken cuts them; a
// malformed file or a missing image refused by name.
#include <QtTest/QtTest>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "data/data_loader.h"
#include "data/dataset_factory.h"
#include "data/page_dataset.h"
#include "formats/page_layout.h"
#include "image/grey_image.h"
#include "image/kraken_line.h"
#include "model/charset.h"
#include "trace/kraken_lines.h"

using namespace foveal::core;
using namespace foveal::core::data;
namespace fs = std::filesystem;

namespace {

const std::string kPages = std::string(FOVEAL_SOURCE_DIR) + "/../shared/fixtures/kraken/pages/";

// A white page with dark strokes in every band [y0, y1) listed, so no line is blank.
GreyImage pageWithStrokes(int w, int h, const std::vector<std::pair<int, int>>& bands) {
  GreyImage page(w, h, std::vector<uint8_t>(static_cast<size_t>(w) * h, 255));
  for (const auto& [y0, y1] : bands)
    for (int y = y0; y < y1; ++y)
      for (int x = 0; x < w; ++x)
        if ((x / 7) % 3 == 0) page.pixels[static_cast<size_t>(y) * w + x] = 30;
  return page;
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A PAGE 2019 file of the shape eScriptorium exports: a region, lines with Coords, a Baseline
// and TextEquiv; one line without text, one without a baseline (read through its box).
// (Plain string literals: moc does not read raw strings holding markup.)
const char* kOwnPage =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<PcGts xmlns=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15\">\n"
    "  <Metadata><Creator>escriptorium</Creator><Created>2024-01-01T00:00:00</Created>\n"
    "    <LastChange>2024-01-01T00:00:00</LastChange></Metadata>\n"
    "  <Page imageFilename=\"own.png\" imageWidth=\"400\" imageHeight=\"200\">\n"
    "    <TextRegion id=\"r1\">\n"
    "      <Coords points=\"0,0 400,0 400,200 0,200\"/>\n"
    "      <TextLine id=\"o1\">\n"
    "        <Coords points=\"10,10 390,10 390,60 10,60\"/>\n"
    "        <Baseline points=\"10,55 390,55\"/>\n"
    "        <TextEquiv><Unicode>first line</Unicode></TextEquiv>\n"
    "      </TextLine>\n"
    "      <TextLine id=\"o2\">\n"
    "        <Coords points=\"10,70 390,70 390,120 10,120\"/>\n"
    "        <Baseline points=\"10,115 390,115\"/>\n"
    "        <TextEquiv><Unicode></Unicode></TextEquiv>\n"
    "      </TextLine>\n"
    "      <TextLine id=\"o3\">\n"
    "        <Coords points=\"20,130 300,130 300,180 20,180\"/>\n"
    "        <TextEquiv><Unicode>boxed</Unicode></TextEquiv>\n"
    "      </TextLine>\n"
    "    </TextRegion>\n"
    "  </Page>\n"
    "</PcGts>\n";

QString errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestPageDataset : public QObject {
  Q_OBJECT
  QTemporaryDir m_tmp;
  std::string m_dir;

 private Q_SLOTS:
  void initTestCase() {
    if (!hasImageCodecs()) QSKIP("page images need the image codecs (OpenCV)");
    QVERIFY(m_tmp.isValid());
    m_dir = m_tmp.filePath("pages").toStdString();
    fs::create_directories(m_dir);
    fs::copy_file(kPages + "page/explicit_ro.xml", m_dir + "/explicit_ro.xml");
    fs::copy_file(kPages + "alto/missing_coords_ro.xml", m_dir + "/missing_coords_ro.xml");
    writeText(m_dir + "/own.xml", kOwnPage);
    writeText(m_dir + "/METS.xml", "<mets/>");  // eScriptorium's export manifest: not a page
    // The images the files name (readImage goes by content, so PNG bytes do for test.jpg).
    writePng(pageWithStrokes(1000, 1000, {{100, 130}, {240, 270}, {410, 440}, {550, 580}}),
             m_dir + "/test.jpg");
    writePng(pageWithStrokes(1000, 1000, {{150, 180}, {350, 380}, {550, 580}}),
             m_dir + "/bsb00084914_00007.jpg");
    writePng(pageWithStrokes(400, 200, {{30, 55}, {90, 115}, {140, 170}}), m_dir + "/own.png");
  }

  void everyTranscribedLineIsAnEntry() {
    QCOMPARE(QString::fromStdString(datasetKind("page:" + m_dir)), QString("page"));
    const auto ds = openDataset("page:" + m_dir);
    const auto* pages = dynamic_cast<const PageDataset*>(ds.get());
    QVERIFY(pages);
    QCOMPARE(pages->layoutFiles().size(), size_t(3));  // METS.xml left out
    // explicit_ro: 5 lines in document order (kraken's line_implicit); the ALTO file: 4; ours:
    // 2 of 3 (one has no text).
    QCOMPARE(ds->size(), size_t(11));
    QCOMPARE(pages->untranscribedLines(), size_t(1));
    QCOMPARE(ds->label(0), std::string("Line 1 in region 1"));
    QCOMPARE(ds->label(4), std::string("Line 1 in region 3"));
    QCOMPARE(ds->label(5), std::string("Line one"));
    QCOMPARE(ds->label(8), std::string("Line four"));
    QCOMPARE(ds->label(9), std::string("first line"));
    QCOMPARE(ds->label(10), std::string("boxed"));
    QVERIFY(QString::fromStdString(ds->entryName(10)).endsWith("own.xml: line 3 (o3)"));
    QVERIFY(QString::fromStdString(ds->describe())
                .contains("3 pages, 11 transcribed lines, 1 "
                          "without text"));
  }

  void linesAreCutAsKrakenCutsThem() {
    const auto ds = openDataset("page:" + m_dir);
    // A line without a baseline is the crop of its box: 280 x 50 pixels of the page.
    const Sample boxed = ds->get(10);
    QCOMPARE(boxed.label, std::string("boxed"));
    QCOMPARE(boxed.image.width, 280);
    QCOMPARE(boxed.image.height, 50);
    const GreyImage own = readImage(m_dir + "/own.png");
    for (int y = 0; y < 50; ++y)
      for (int x = 0; x < 280; ++x)
        QCOMPARE(boxed.image.pixels[static_cast<size_t>(y) * 280 + x],
                 own.pixels[static_cast<size_t>(y + 130) * 400 + x + 20]);
    // Baseline lines: the line kraken's extractor cuts along the baseline and boundary.
    const PageLayout layout = readPageLayout(m_dir + "/explicit_ro.xml");
    const GreyImage page = readImage(m_dir + "/test.jpg", true);
    KrakenInputSpec in;
    in.height = 0;
    in.padding = 0;
    for (size_t i = 0; i < 5; ++i) {
      const KrakenLine k =
          extractKrakenLine(page, krakenLineOf(layout.lines[i], layout.textDirection), in);
      const Sample s = ds->get(i);
      QCOMPARE(s.label, layout.lines[i].text);
      QCOMPARE(s.image.width, k.extracted.width);
      QCOMPARE(s.image.height, k.extracted.height);
      QVERIFY(s.image.pixels == k.extracted.pixels);
      // The boundary is 480 x 130 with a straight baseline: the cut is about as large.
      QVERIFY2(std::abs(s.image.width - 480) <= 2 && std::abs(s.image.height - 130) <= 2,
               qPrintable(QString("%1 x %2").arg(s.image.width).arg(s.image.height)));
    }
    // The ALTO file's lines too, and a loader over the whole dataset reads every entry.
    QVERIFY(ds->get(5).image.width > 400);
    std::string characters;
    for (size_t i = 0; i < ds->size(); ++i)
      for (char c : ds->label(i))
        if (characters.find(c) == std::string::npos) characters += c;
    LoaderOptions lo;
    lo.batchSize = 4;
    lo.shuffle = false;
    lo.threads = 1;
    lo.maxLength = 30;
    lo.charset = Charset(characters);
    lo.withUpsampled = false;
    DataLoader loader(ds, lo);
    size_t read = 0;
    while (auto batch = loader.next()) read += batch->labels.size();
    QCOMPARE(read, size_t(11));
    QCOMPARE(loader.skipped(), int64_t(0));
  }

  void badInputIsRefusedByName() {
    const std::string bad = m_tmp.filePath("bad").toStdString();
    fs::create_directories(bad);
    QVERIFY(errorOf([&] { PageDataset d(bad); }).contains("no PAGE-XML or ALTO files"));
    writeText(bad + "/broken.xml", "<PcGts><Page imageFilename=\"x.png\"");
    QString e = errorOf([&] { openDataset("page:" + bad); });
    QVERIFY2(e.contains("broken.xml"), qPrintable(e));
    fs::remove(bad + "/broken.xml");
    // A well-formed page whose image is not there.
    writeText(bad + "/lonely.xml", kOwnPage);
    e = errorOf([&] { openDataset("page:" + bad); });
    QVERIFY2(e.contains("lonely.xml") && e.contains("\"own.png\" is missing"), qPrintable(e));
    // kraken's invalid files: refused with the file named.
    e = errorOf([&] { PageDataset d(kPages + "alto/invalid/mu.xml"); });
    QVERIFY2(e.contains("mu.xml"), qPrintable(e));
    e = errorOf([&] { openDataset("page:" + m_tmp.filePath("nowhere").toStdString()); });
    QVERIFY2(e.contains("no such folder or XML file"), qPrintable(e));
  }
};

QTEST_APPLESS_MAIN(TestPageDataset)
#include "test_page_dataset.moc"
