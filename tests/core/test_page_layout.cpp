// Page layouts (core/formats/page_layout.h) read as kraken reads them: kraken's own ALTO and
// PAGE-XML test files (../shared/fixtures/kraken/pages, from eScriptorium, Transkribus and the
// BSB) give the line counts, ids, reading orders, base directions, tags, splits, image sizes and
// refusals that kraken's tests/test_xml.py asserts; small files written here pin kraken's rules
// for baselines against boxes, missing coordinates and malformed attributes; hostile files
// (entities, a DOCTYPE naming /etc/passwd) and truncated ones are refused or harmless.
#include <QTemporaryDir>
#include <QtTest/QtTest>
#include <chrono>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "formats/page_layout.h"

using namespace foveal::core;

namespace {

const std::string kPages = std::string(FOVEAL_SOURCE_DIR) + "/../shared/fixtures/kraken/pages/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const LayoutReadingOrder* order(const PageLayout& l, const std::string& id) {
  for (const auto& o : l.readingOrders)
    if (o.id == id) return &o;
  return nullptr;
}

const LayoutLine* line(const PageLayout& l, const std::string& id) {
  for (const auto& x : l.lines)
    if (x.id == id) return &x;
  return nullptr;
}

std::vector<std::string> lineIds(const PageLayout& l) {
  std::vector<std::string> ids;
  for (const auto& x : l.lines) ids.push_back(x.id);
  return ids;
}

std::vector<std::string> regionIds(const PageLayout& l) {
  std::vector<std::string> ids;
  for (const auto& r : l.regions) ids.push_back(r.id);
  return ids;
}

using Ids = std::vector<std::string>;

// The base directions of the lines with a baseline, one letter each ('-': none).
std::string baseDirs(const PageLayout& l) {
  std::string s;
  for (const auto& x : l.lines)
    if (!x.baseline.empty()) s += x.baseDir.empty() ? "-" : x.baseDir;
  return s;
}

// The error parsing `xml` gives, or "" when it reads.
std::string refusal(const std::string& xml, const std::string& origin = "/tmp/inline.xml") {
  try {
    parsePageLayout(xml, origin);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

const char* kPageHead =
    "<PcGts xmlns=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15\">"
    "<Page imageFilename=\"page.png\" imageWidth=\"200\" imageHeight=\"100\">";
const char* kPageTail = "</Page></PcGts>";
const char* kAltoHead =
    "<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\"><Description>"
    "<MeasurementUnit>pixel</MeasurementUnit><sourceImageInformation><fileName>page.png"
    "</fileName></sourceImageInformation></Description><Layout><Page WIDTH=\"200\" "
    "HEIGHT=\"100\"><PrintSpace>";
const char* kAltoTail = "</PrintSpace></Page></Layout></alto>";

std::string page(const std::string& body) { return kPageHead + body + kPageTail; }
std::string alto(const std::string& body) { return kAltoHead + body + kAltoTail; }

}  // namespace

class TestPageLayout : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // test_page_parsing, test_page_basedirection, test_page_split_parsing, test_page_order_levels.
  void pageTranskribus() {
    const PageLayout l = readPageLayout(kPages + "page/cPAS-2000.xml");
    QCOMPARE(l.format, std::string("page"));
    QCOMPARE(l.lines.size(), size_t(97));
    QCOMPARE(l.regions.size(), size_t(4));
    QCOMPARE(l.imageFilename, std::string("cPAS-2000.jpg"));
    QCOMPARE(l.imagePath, kPages + "page/cPAS-2000.jpg");
    QCOMPARE(l.imageWidth, 3631);
    QCOMPARE(l.imageHeight, 4734);
    QCOMPARE(l.textDirection, std::string("horizontal-lr"));
    for (const auto& x : l.lines) QVERIFY(!x.baseline.empty() && !x.boundary.empty());
    QCOMPARE(baseDirs(l), "RLL" + std::string(46, 'R') + std::string(48, 'L'));
    std::vector<std::string> splits(97);
    splits[0] = "train", splits[4] = "validation", splits[24] = "train", splits[25] = "invalid";
    for (size_t i = 0; i < 97; ++i) QCOMPARE(l.lines[i].split, splits[i]);
    // The lines are in document order (kraken's line_implicit); Transkribus's custom indices
    // give a region order only (kraken reads no line order from them).
    QCOMPARE(l.lines[0].id, std::string("line_1546920829350_13719"));
    QCOMPARE(l.lines[0].regionId, std::string("region_1546920829334_13716"));
    QCOMPARE(l.lines[0].baseline.front().x, 3218.0);
    QCOMPARE(l.lines[0].baseline.front().y, 359.0);
    QCOMPARE(order(l, "line_implicit")->ids, lineIds(l));
    QCOMPARE(order(l, "region_implicit")->level, std::string("region"));
    QCOMPARE(order(l, "region_transkribus")->level, std::string("region"));
    QCOMPARE(order(l, "region_transkribus")->ids, regionIds(l));
    QVERIFY(!order(l, "line_transkribus"));
    QCOMPARE(l.regions[1].type, std::string("Machine\\u0020Printed\\u0020text"));
    QCOMPARE(l.regions[0].tags, (Ids{"readingOrder.index=0", "structure=Image/Drawing/Figure",
                                     "type=Image/Drawing/Figure"}));
    QCOMPARE(l.lines[3].tags, (Ids{"readingOrder.index=2", "language=deu"}));
  }

  // test_alto_parsing, test_alto_basedirection, test_alto_tag_parsing, the two line types.
  void altoEscriptorium() {
    const PageLayout l = readPageLayout(kPages + "alto/bsb00084914_00007.xml");
    QCOMPARE(l.format, std::string("alto"));
    QCOMPARE(l.regions.size(), size_t(5));
    QCOMPARE(l.imageFilename, std::string("bsb00084914_00007.jpg"));
    QCOMPARE(l.imageWidth, 3177);
    QCOMPARE(l.imageHeight, 4308);
    // kraken reads 30 lines with baselines and 31 boxes: the one more has a box and no BASELINE.
    QCOMPARE(l.lines.size(), size_t(31));
    std::vector<const LayoutLine*> withBaseline;
    for (const auto& x : l.lines)
      if (!x.baseline.empty()) withBaseline.push_back(&x);
    QCOMPARE(withBaseline.size(), size_t(30));
    const LayoutLine* boxOnly = line(l, "eSc_line_192879");
    QVERIFY(boxOnly && boxOnly->baseline.empty() && boxOnly->hasBox);
    QCOMPARE(boxOnly->bbox[0], 801.0);
    QCOMPARE(boxOnly->bbox[1], 1321.0);
    QCOMPARE(boxOnly->bbox[2], 2731.0);
    QCOMPARE(boxOnly->bbox[3], 1453.0);
    for (const auto& x : l.lines) QVERIFY(x.hasBox);
    QCOMPARE(baseDirs(l), "LL" + std::string(23, 'R') + "----R");
    std::vector<Ids> tags(30);
    tags[2] = {"type=heading"};
    tags[11] = {"label_0=foo", "label_1=bar"};
    tags[12] = {"label_1=bar", "label_1=baz"};
    tags[23] = {"language=eng"};
    tags[28] = {"language=deu", "language=eng"};
    for (size_t i = 0; i < 30; ++i) QCOMPARE(withBaseline[i]->tags, tags[i]);
    QCOMPARE(withBaseline[2]->split, std::string("train"));
    QCOMPARE(withBaseline[12]->split, std::string("test"));
    QCOMPARE(withBaseline[13]->split, std::string("validation"));
    // test_alto_ro_string_refs_flattened: og_0 refers to Strings; flattened to their lines, it
    // holds every line kraken reads with a baseline, and only lines.
    const LayoutReadingOrder* og = order(l, "og_0");
    QVERIFY(og);
    QCOMPARE(og->level, std::string("line"));
    QVERIFY(!og->isTotal);  // under the top-level UnorderedGroup
    size_t baselineLines = 0;
    for (const auto& id : og->ids) {
      QVERIFY(line(l, id));
      baselineLines += !line(l, id)->baseline.empty();
    }
    QCOMPARE(baselineLines, size_t(30));
    const LayoutReadingOrder* ogRegions = order(l, "og_0:regions");
    QVERIFY(ogRegions && ogRegions->level == "region" && !ogRegions->ids.empty());
    const Ids regions = regionIds(l);
    for (const auto& id : ogRegions->ids)
      QVERIFY(std::count(regions.begin(), regions.end(), id) == 1);
    QCOMPARE(order(l, "line_implicit")->level, std::string("line"));
    QCOMPARE(order(l, "region_implicit")->level, std::string("region"));
    // The text: String CONTENTs, an SP a space.
    QVERIFY(!withBaseline[0]->text.empty());
  }

  // test_page_explicit_ro_parsing, ..._region_level, test_get_sorted_lines_by_region.
  void pageExplicitOrder() {
    const PageLayout l = readPageLayout(kPages + "page/explicit_ro.xml");
    QCOMPARE(l.lines.size(), size_t(5));
    QCOMPARE(l.regions.size(), size_t(3));
    QCOMPARE(lineIds(l), (Ids{"l1", "l2", "l3", "l4", "l5"}));
    const LayoutReadingOrder* ro = order(l, "ro_1");
    QVERIFY(ro);
    QCOMPARE(ro->level, std::string("line"));
    QVERIFY(ro->isTotal);
    QCOMPARE(ro->ids, (Ids{"l3", "l4", "l1", "l2", "l5"}));
    QCOMPARE(order(l, "ro_1:regions")->ids, (Ids{"r2", "r1", "r3"}));
    QCOMPARE(order(l, "ro_1:regions")->level, std::string("region"));
    QCOMPARE(line(l, "l1")->regionId, std::string("r1"));
    QCOMPARE(line(l, "l2")->regionId, std::string("r1"));
    QCOMPARE(line(l, "l1")->text, std::string("Line 1 in region 1"));
  }

  // test_page_explicit_ro_unordered_group.
  void pageUnorderedGroup() {
    const PageLayout l = readPageLayout(kPages + "page/explicit_ro_unordered.xml");
    const LayoutReadingOrder* main = order(l, "ro_main");
    const LayoutReadingOrder* margin = order(l, "ro_margin");
    QVERIFY(main && margin);
    QVERIFY(!main->isTotal && !margin->isTotal);
    QCOMPARE(main->ids, (Ids{"l1", "l2"}));
    QCOMPARE(margin->ids, (Ids{"l3"}));
  }

  // test_alto_missing_region_coords_*: the region goes, its line stays without a region, and the
  // explicit order skips it.
  void altoMissingCoords() {
    const PageLayout l = readPageLayout(kPages + "alto/missing_coords_ro.xml");
    QCOMPARE(lineIds(l), (Ids{"tl_1", "tl_2", "tl_3", "tl_4"}));
    QCOMPARE(line(l, "tl_3")->regionId, std::string());
    QCOMPARE(regionIds(l), (Ids{"tb_1", "tb_2"}));
    QCOMPARE(order(l, "region_implicit")->ids, (Ids{"tb_1", "tb_2"}));
    QCOMPARE(order(l, "line_implicit")->ids, (Ids{"tl_1", "tl_2", "tl_3", "tl_4"}));
    QCOMPARE(order(l, "og_test")->ids, (Ids{"tl_1", "tl_2", "tl_4"}));
    QCOMPARE(order(l, "og_test:regions")->ids, (Ids{"tb_1", "tb_2"}));
    QCOMPARE(line(l, "tl_1")->text, std::string("Line one"));
    // A region without a Shape is the rectangle of HPOS, VPOS, WIDTH, HEIGHT.
    QCOMPARE(l.regions[0].boundary,
             (std::vector<LayoutPoint>{{10, 10}, {10, 210}, {490, 210}, {490, 10}}));
  }

  // test_page_missing_region_coords_*.
  void pageMissingCoords() {
    const PageLayout l = readPageLayout(kPages + "page/missing_coords_ro.xml");
    QCOMPARE(l.lines.size(), size_t(4));
    QCOMPARE(line(l, "l3")->regionId, std::string());
    QCOMPARE(regionIds(l), (Ids{"r1", "r2"}));
    QCOMPARE(order(l, "region_implicit")->ids, (Ids{"r1", "r2"}));
    const auto& ro = order(l, "ro_test")->ids;
    QVERIFY(std::find(ro.begin(), ro.end(), "l3") == ro.end());
    for (const char* id : {"l1", "l2", "l4"})
      QVERIFY(std::find(ro.begin(), ro.end(), id) != ro.end());
    QCOMPARE(order(l, "ro_test:regions")->ids, (Ids{"r1", "r2"}));
    // test_page_missing_region_coords_transkribus_ro
    const PageLayout t = readPageLayout(kPages + "page/missing_coords_transkribus.xml");
    QCOMPARE(order(t, "region_transkribus")->ids, (Ids{"r1", "r2"}));
  }

  // test_alto_fallback_region_boundaries: Shape, else the rectangle, else no region.
  void altoRegionBoundaries() {
    const PageLayout l = readPageLayout(kPages + "alto/reg_test.xml");
    QCOMPARE(l.regions.size(), size_t(2));
    for (const auto& r : l.regions) QCOMPARE(r.type, std::string("text"));
    QCOMPARE(l.regions[0].boundary,
             (std::vector<LayoutPoint>{{812, 606}, {2755, 648}, {2723, 3192}, {808, 3240}}));
    QCOMPARE(l.regions[1].boundary,
             (std::vector<LayoutPoint>{{596, 2850}, {596, 3008}, {729, 3008}, {729, 2850}}));
  }

  // test_*_zero_dims_fallback_to_image_size: a size of 0 is the image file's.
  void zeroDimensions() {
    for (const char* f : {"alto/zero_dims.xml", "page/zero_dims.xml"}) {
      const PageLayout l = readPageLayout(kPages + f);
      QCOMPARE(l.imageWidth, 123);
      QCOMPARE(l.imageHeight, 45);
      QVERIFY(l.lines.empty());
    }
  }

  // The invalid files kraken refuses, refused with the element and its line named.
  void invalidFiles_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("words");
    QTest::newRow("alto dims") << "alto/invalid/dims.xml"
                               << QStringList{"line 152", "<Page", "WIDTH \"bar\"", "integer"};
    QTest::newRow("alto image") << "alto/invalid/image.xml"
                                << QStringList{"line 8", "<fileName>", "names no image"};
    QTest::newRow("alto unit") << "alto/invalid/mu.xml"
                               << QStringList{"line 6", "<MeasurementUnit>", "\"mm\"", "pixel"};
    QTest::newRow("alto zero, no image")
        << "alto/invalid/zero_dims_missing_image.xml"
        << QStringList{"line 10", "<Page ID=\"p1\">", "0 x 0", "missing_zero_dims.png"};
    QTest::newRow("page dims") << "page/invalid/dims.xml"
                               << QStringList{"line 8", "<Page>", "imageWidth \"foo\""};
    QTest::newRow("page image") << "page/invalid/image.xml"
                                << QStringList{"line 8", "<Page>", "imageFilename"};
    QTest::newRow("page zero, no image")
        << "page/invalid/zero_dims_missing_image.xml"
        << QStringList{"line 3", "<Page>", "0 x 0", "missing_zero_dims.png"};
  }
  void invalidFiles() {
    QFETCH(QString, file);
    QFETCH(QStringList, words);
    const std::string path = kPages + file.toStdString();
    try {
      readPageLayout(path);
      QFAIL("read an invalid file");
    } catch (const Error& e) {
      const QString msg = QString::fromStdString(e.what());
      QVERIFY2(msg.startsWith(QString::fromStdString(path) + ": "), qPrintable(msg));
      for (const auto& w : words) QVERIFY2(msg.contains(w), qPrintable(msg + " lacks " + w));
    }
  }

  // kraken's two line modes together: a line with a baseline is a baseline line (Coords its
  // boundary); without one, a box; with neither, not a line. PAGE numbers are integers: a
  // baseline with a decimal point is no baseline.
  void pageBaselineOrBox() {
    const PageLayout l = parsePageLayout(
        page("<TextRegion id=\"r\"><Coords points=\"0,0 200,0 200,100 0,100\"/>"
             "<TextLine id=\"a\"><Baseline points=\"1,20 1,20 99,20\"/>"
             "<Coords points=\"1,1 99,1 99,25 1,25\"/><TextEquiv><Unicode>one</Unicode>"
             "</TextEquiv></TextLine>"
             "<TextLine id=\"b\"><Coords points=\"5,30 90,28 95,50 5,52\"/><Word><TextEquiv>"
             "<Unicode>w</Unicode></TextEquiv></Word></TextLine>"
             "<TextLine id=\"c\"><Baseline points=\"1.5,60 99,60\"/><Coords points=\"1,55 99,70\"/>"
             "</TextLine>"
             "<TextLine id=\"d\"/>"
             "<TextLine id=\"e\"><Baseline points=\"1,90 99,90\"/></TextLine></TextRegion>"),
        "/data/pages/p.xml");
    QCOMPARE(lineIds(l), (Ids{"a", "b", "c", "e"}));
    QCOMPARE(l.imagePath, std::string("/data/pages/page.png"));
    const LayoutLine& a = l.lines[0];
    QCOMPARE(a.baseline, (std::vector<LayoutPoint>{{1, 20}, {99, 20}}));  // repeats merged
    QCOMPARE(a.boundary.size(), size_t(4));
    QCOMPARE(a.text, std::string("one"));
    const LayoutLine& b = l.lines[1];
    QVERIFY(b.baseline.empty() && b.hasBox);
    QCOMPARE((std::vector<double>(b.bbox, b.bbox + 4)), (std::vector<double>{5, 28, 95, 52}));
    QCOMPARE(b.text, std::string("w"));  // no TextEquiv of its own: its words'
    QVERIFY(l.lines[2].baseline.empty() && l.lines[2].hasBox);
    QVERIFY(!l.lines[3].baseline.empty() && !l.lines[3].hasBox && l.lines[3].boundary.empty());
  }

  // ALTO: BASELINE's numbers are read whatever separates them and truncated; a line's box is
  // HPOS/VPOS/WIDTH/HEIGHT as floats; a line without BASELINE nor box is no line.
  void altoBaselineOrBox() {
    const PageLayout l = parsePageLayout(
        alto("<TextBlock ID=\"b\" BASEDIRECTION=\"rtl\" HPOS=\"0\" VPOS=\"0\" WIDTH=\"200\" "
             "HEIGHT=\"100\"><TextLine ID=\"a\" BASELINE=\"(1.9, 20) (99, 20.7)\">"
             "<Shape><Polygon POINTS=\"1,1 99,1 99,25 1,25\"/></Shape><String ID=\"s1\" "
             "CONTENT=\"two\"/><SP/><String ID=\"s2\" CONTENT=\"words\"/></TextLine>"
             "<TextLine ID=\"c\" HPOS=\"2.9\" VPOS=\"30\" WIDTH=\"90\" HEIGHT=\"20\" "
             "BASEDIRECTION=\"ltr\"/>"
             "<TextLine ID=\"d\" HPOS=\"x\" VPOS=\"30\" WIDTH=\"90\" HEIGHT=\"20\"/></TextBlock>"),
        "p.xml");
    QCOMPARE(lineIds(l), (Ids{"a", "c"}));
    QCOMPARE(l.imagePath, std::string("page.png"));
    QCOMPARE(l.lines[0].baseline, (std::vector<LayoutPoint>{{1, 20}, {99, 20}}));
    QCOMPARE(l.lines[0].text, std::string("two words"));
    QCOMPARE(l.lines[0].baseDir, std::string("R"));  // the block's
    QVERIFY(l.lines[1].baseline.empty() && l.lines[1].hasBox && l.lines[1].boundary.empty());
    QCOMPARE(l.lines[1].bbox[0], 2.0);
    QCOMPARE(l.lines[1].bbox[2], 92.0);
    QCOMPARE(l.lines[1].baseDir, std::string("L"));
  }

  // What kraken's parser fails on is refused, naming the element.
  void krakenRefusals_data() {
    QTest::addColumn<QString>("xml");
    QTest::addColumn<QStringList>("words");
    const auto q = [](const std::string& s) { return QString::fromStdString(s); };
    QTest::newRow("not a layout") << "<html><body/></html>"
                                  << QStringList{"line 1", "<html>", "neither ALTO"};
    QTest::newRow("undefined namespace prefix")  // lxml refuses it as kraken parses
        << q(page("<x:TextRegion id=\"r\"/>"))
        << QStringList{"line 1", "not well-formed", "prefix x"};
    QTest::newRow("custom without {") << q(page("<TextRegion id=\"r\" custom=\"a{b{c}\"/>"))
                                      << QStringList{"<TextRegion id=\"r\">", "custom"};
    QTest::newRow("custom index not a number")
        << q(page("<TextRegion id=\"r\" custom=\"readingOrder {index:one;}\">"
                  "<Coords points=\"0,0 1,1\"/></TextRegion>"))
        << QStringList{"<TextRegion id=\"r\">", "\"one\""};
    QTest::newRow("split without type")
        << q(page("<TextRegion id=\"r\"><TextLine id=\"l\" custom=\"split {foo:bar;}\">"
                  "<Baseline points=\"1,1 2,2\"/></TextLine></TextRegion>"))
        << QStringList{"<TextLine id=\"l\">", "split"};
    QTest::newRow("one-number Coords")
        << q(page("<TextRegion id=\"r\"><TextLine id=\"l\"><Baseline points=\"1,1 2,2\"/>"
                  "<Coords points=\"5\"/></TextLine></TextRegion>"))
        << QStringList{"<TextLine id=\"l\">", "no point"};
    QTest::newRow("comment in the reading order")
        << q(page("<ReadingOrder><OrderedGroup id=\"g\"><!-- x --><RegionRef regionRef=\"r\"/>"
                  "</OrderedGroup></ReadingOrder>"))
        << QStringList{"<OrderedGroup id=\"g\">", "comment"};
    QTest::newRow("region type unknown")
        << q(page("<MyTextRegion id=\"q\"><Coords points=\"0,0 1,1\"/></MyTextRegion>"))
        << QStringList{"<MyTextRegion id=\"q\">"};
    QTest::newRow("two lines, one id")
        << q(page("<TextRegion id=\"r\"><TextLine id=\"l\"><Baseline points=\"1,1 2,2\"/>"
                  "</TextLine><TextLine id=\"l\"><Baseline points=\"1,1 2,2\"/></TextLine>"
                  "</TextRegion>"))
        << QStringList{"<TextLine id=\"l\">", "second TextLine"};
    QTest::newRow("odd region polygon")
        << q(alto("<TextBlock ID=\"b\"><Shape><Polygon POINTS=\"1 2 3\"/></Shape></TextBlock>"))
        << QStringList{"<Polygon>", "odd"};
    QTest::newRow("infinite box")
        << q(alto("<TextBlock ID=\"b\" HPOS=\"inf\" VPOS=\"1\" WIDTH=\"2\" HEIGHT=\"3\"/>"))
        << QStringList{"<TextBlock ID=\"b\">", "too large"};
    QTest::newRow("float page size")
        << q(std::string(kAltoHead).replace(std::string(kAltoHead).find("\"200\""), 5,
                                            "\"200.0\"") +
             kAltoTail)
        << QStringList{"<Page>", "WIDTH \"200.0\""};
    QTest::newRow("negative page size")
        << q(std::string(kPageHead).replace(std::string(kPageHead).find("\"100\""), 5, "\"-1\"") +
             kPageTail)
        << QStringList{"<Page>", "negative"};
  }
  void krakenRefusals() {
    QFETCH(QString, xml);
    QFETCH(QStringList, words);
    const QString msg = QString::fromStdString(refusal(xml.toStdString()));
    QVERIFY2(msg.startsWith("/tmp/inline.xml: "), qPrintable(msg));
    for (const auto& w : words) QVERIFY2(msg.contains(w), qPrintable(msg + " lacks " + w));
  }

  // Entities are refused before any is expanded or read; a DOCTYPE's external subset is never
  // loaded; XInclude is not processed.
  void hostileFiles() {
    const std::string body =
        "<Page imageFilename=\"p.png\" imageWidth=\"9\" imageHeight=\"9\"><TextRegion id=\"r\">"
        "<TextLine id=\"l\"><Baseline points=\"1,1 2,2\"/><TextEquiv><Unicode>";
    const std::string end = "</Unicode></TextEquiv></TextLine></TextRegion></Page></PcGts>";
    const std::string xxe =
        "<!DOCTYPE PcGts [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><PcGts>" + body + "&xxe;" +
        end;
    QVERIFY(refusal(xxe).find("declares the entity \"xxe\"") != std::string::npos);
    const std::string param =
        "<!DOCTYPE PcGts [<!ENTITY % p SYSTEM \"file:///etc/passwd\"> %p;]><PcGts>" + body + end;
    QVERIFY(refusal(param).find("entity \"p\"") != std::string::npos);
    std::string laughs = "<!DOCTYPE PcGts [<!ENTITY a0 \"lol\">";
    for (int i = 1; i < 12; ++i) {
      laughs += "<!ENTITY a" + std::to_string(i) + " \"";
      for (int k = 0; k < 10; ++k) laughs += "&a" + std::to_string(i - 1) + ";";
      laughs += "\">";
    }
    laughs += "]><PcGts>" + body + "&a11;" + end;
    const auto t0 = std::chrono::steady_clock::now();
    QVERIFY(refusal(laughs).find("entity \"a0\"") != std::string::npos);
    QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
    // A DOCTYPE that only names a file is harmless: the file is not read.
    const PageLayout doc = parsePageLayout(
        "<!DOCTYPE PcGts SYSTEM \"/etc/passwd\"><PcGts>" + body + "text" + end, "p.xml");
    QCOMPARE(doc.lines.size(), size_t(1));
    QCOMPARE(doc.lines[0].text, std::string("text"));
    const PageLayout xi = parsePageLayout(
        "<PcGts>" + body +
            "<xi:include xmlns:xi=\"http://www.w3.org/2001/XInclude\" href=\"/etc/passwd\" "
            "parse=\"text\"/>" +
            end,
        "p.xml");
    QCOMPARE(xi.lines[0].text, std::string());
    QVERIFY(refusal("<PcGts>" + body + "&undeclared;" + end).find("not well-formed") !=
            std::string::npos);
  }

  // A file cut short, an empty one, a folder and a missing one are refused naming the file.
  void truncatedAndUnreadable() {
    const std::string whole = slurp(kPages + "page/cPAS-2000.xml");
    QVERIFY(whole.size() > 20000);
    QTemporaryDir dir;
    const std::string cut = dir.path().toStdString() + "/cut.xml";
    std::ofstream(cut, std::ios::binary) << whole.substr(0, 20000);
    try {
      readPageLayout(cut);
      QFAIL("read a truncated file");
    } catch (const Error& e) {
      const std::string msg = e.what();
      QVERIFY2(msg.rfind(cut + ": line ", 0) == 0, msg.c_str());
      QVERIFY2(msg.find("not well-formed XML") != std::string::npos, msg.c_str());
      QVERIFY2(msg.find("Premature end of data") != std::string::npos, msg.c_str());
    }
    const std::string empty = dir.path().toStdString() + "/empty.xml";
    std::ofstream(empty).flush();
    QVERIFY_THROWS_EXCEPTION(Error, readPageLayout(empty));
    QVERIFY(refusal("", "e.xml").find("e.xml: the layout file is empty") == 0);
    for (const std::string& bad : {dir.path().toStdString(), dir.path().toStdString() + "/no.xml"})
      try {
        readPageLayout(bad);
        QFAIL("read what is not a file");
      } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).rfind(bad + ": ", 0) == 0, e.what());
      }
  }
};

QTEST_APPLESS_MAIN(TestPageLayout)
#include "test_page_layout.moc"
