// A page exported with Foveal's readings (core/formats/page_export.h) and the single-image writers
// (core/formats/ocr_formats.h) held against the published schemas: PAGE-XML 2019-07-15 and ALTO
// v4 (../shared/fixtures/schemas), validated by libxml2's XML Schema validator with every
// external load refused but the schema files themselves (no network). kraken's own page files
// (../shared/fixtures/kraken/pages) are exported with readings, validated, and read back by
// readPageLayout: the lines, their ids, texts, baselines and reading orders survive.
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlschemas.h>

#include <QtTest/QtTest>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "base/error.h"
#include "formats/model_format.h"
#include "formats/ocr_formats.h"
#include "formats/page_export.h"
#include "formats/page_layout.h"
#include "image/grey_image.h"
#include "trace/kraken_lines.h"
#include "trace/model_session.h"

using namespace foveal::core;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(FOVEAL_SOURCE_DIR) + "/../shared/fixtures/";
const std::string kSchemas = kFixtures + "schemas/";
const std::string kKraken = kFixtures + "kraken/";

// Only files under the schema folder load: an xsd:import of a URL (or a document's DTD or entity)
// is refused, so validation never reaches the network.
xmlParserInputPtr localOnly(const char* url, const char* id, xmlParserCtxtPtr ctxt) {
  const std::string u = url ? url : "";
  const std::string path = u.rfind("file://", 0) == 0 ? u.substr(7) : u;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(kSchemas, ec);
  const fs::path file = fs::weakly_canonical(path, ec);
  if (!path.empty() && path.find("://") == std::string::npos && file.parent_path() == dir &&
      fs::is_regular_file(file, ec))
    return xmlNewInputFromFile(ctxt, file.c_str());
  (void)id;
  std::fprintf(stderr, "refused to load %s\n", u.c_str());
  return nullptr;
}

void collect(void* ctx, const xmlError* e) {
  auto* out = static_cast<std::string*>(ctx);
  if (out->size() < 4000)
    *out += "line " + std::to_string(e->line) + ": " + (e->message ? e->message : "?");
}
void collectMutable(void* ctx, xmlError* e) { collect(ctx, e); }

// A compiled schema; validate() gives "" or the validator's messages.
class Schema {
 public:
  explicit Schema(const std::string& file) {
    const std::string path = kSchemas + file;
    xmlSchemaParserCtxtPtr p = xmlSchemaNewParserCtxt(path.c_str());
    xmlSchemaSetParserStructuredErrors(p, collectMutable, &m_error);
    m_schema = xmlSchemaParse(p);
    xmlSchemaFreeParserCtxt(p);
  }
  ~Schema() {
    if (m_schema) xmlSchemaFree(m_schema);
  }
  Schema(const Schema&) = delete;
  Schema& operator=(const Schema&) = delete;
  bool ok() const { return m_schema != nullptr; }
  const std::string& loadError() const { return m_error; }

  std::string validate(const std::string& doc) const {
    std::string errors;
    xmlDocPtr d = xmlReadMemory(doc.data(), static_cast<int>(doc.size()), "export.xml", nullptr,
                                XML_PARSE_NONET);
    if (!d) return "not well-formed XML";
    xmlSchemaValidCtxtPtr v = xmlSchemaNewValidCtxt(m_schema);
    xmlSchemaSetValidStructuredErrors(v, collectMutable, &errors);
    const int rc = xmlSchemaValidateDoc(v, d);
    xmlSchemaFreeValidCtxt(v);
    xmlFreeDoc(d);
    if (rc != 0 && errors.empty()) errors = "invalid (code " + std::to_string(rc) + ")";
    return errors;
  }

 private:
  xmlSchemaPtr m_schema = nullptr;
  std::string m_error;
};

// The number of elements called `name` in a document.
int countElements(const std::string& doc, const std::string& name) {
  int n = 0;
  for (size_t at = doc.find("<" + name); at != std::string::npos; at = doc.find("<" + name, at + 1))
    if (doc[at + 1 + name.size()] == ' ' || doc[at + 1 + name.size()] == '>' ||
        doc[at + 1 + name.size()] == '/')
      ++n;
  return n;
}

// A reading of a layout's line by hand: the characters of `text` (its words single-spaced), each
// with a cut along the line's box, the first sticking out of the page.
LineReading handReading(const LayoutLine& line, const std::string& text) {
  LineReading r;
  double x0 = 0, y0 = 0, x1 = 100, y1 = 30;
  if (line.hasBox) x0 = line.bbox[0], y0 = line.bbox[1], x1 = line.bbox[2], y1 = line.bbox[3];
  const auto chars = splitUtf8(text);
  const double w = (x1 - x0) / std::max<size_t>(1, chars.size());
  for (size_t k = 0; k < chars.size(); ++k) {
    TraceStep s;
    s.token = chars[k];
    s.prob = 0.5 + 0.4 * static_cast<double>(k % 3) / 2;
    s.columns = {int(k)};
    r.trace.steps.push_back(s);
    const double a = x0 + w * static_cast<double>(k) - (k == 0 ? 7 : 0);
    r.cuts.push_back(
        {PointF{a, y0 - 3}, PointF{a + w, y0}, PointF{a + w, y1}, PointF{a, y1 + 0.4}});
  }
  r.trace.prediction = text;
  r.trace.confidence = 0.75;
  r.empty = chars.empty();
  return r;
}

std::vector<std::string> fixturePages() {
  std::vector<std::string> out;
  for (const char* dir : {"pages/page", "pages/alto"})
    for (const auto& e : fs::directory_iterator(kKraken + dir))
      if (e.path().extension() == ".xml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The explicit orders of a layout: id -> ids (the implicit ones are the document order).
std::map<std::string, std::vector<std::string>> explicitOrders(const PageLayout& l,
                                                               const std::string& level) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& o : l.readingOrders)
    if (o.level == level && o.id != "line_implicit" && o.id != "region_implicit" &&
        o.id != "region_transkribus" && !o.ids.empty())
      out[o.id] = o.ids;
  return out;
}

std::string join(const std::vector<std::string>& ids) {
  std::string s;
  for (const auto& i : ids) s += (s.empty() ? "" : " ") + i;
  return s;
}

}  // namespace

class TestPageExport : public QObject {
  Q_OBJECT
  std::unique_ptr<Schema> m_page, m_alto42, m_alto43, m_alto44;
  QTemporaryDir m_dir;

  void checkValid(const std::string& doc, const Schema& schema, const char* what) {
    const std::string errors = schema.validate(doc);
    if (!errors.empty()) {
      std::ofstream(m_dir.filePath("invalid.xml").toStdString()) << doc;
      QFAIL(qPrintable(
          QString("%1 does not validate (kept as %2): %3")
              .arg(what, m_dir.filePath("invalid.xml"), QString::fromStdString(errors))));
    }
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    if (!fs::exists(kSchemas + "pagecontent-2019-07-15.xsd"))
      QSKIP("no ../shared/fixtures/schemas");
    xmlSetExternalEntityLoader(localOnly);
    m_page = std::make_unique<Schema>("pagecontent-2019-07-15.xsd");
    m_alto42 = std::make_unique<Schema>("alto-4-2.xsd");
    m_alto43 = std::make_unique<Schema>("alto-4-3.xsd");
    m_alto44 = std::make_unique<Schema>("alto-4-4.xsd");
    for (const auto* s : {m_page.get(), m_alto42.get(), m_alto43.get(), m_alto44.get()})
      QVERIFY2(s->ok(), s->loadError().c_str());
  }

  // The validator can fail: a TextLine without its Coords, a negative point, an ALTO TextLine
  // without a String are refused.
  void validatorRefusesInvalidDocuments() {
    PageLayout layout = readPageLayout(kKraken + "pages/page/explicit_ro.xml");
    std::vector<LineReading> readings;
    for (const auto& l : layout.lines) readings.push_back(handReading(l, "ab c"));
    const std::string page =
        toPageXmlPage(layout, readings, {"Foveal", "", "2026-01-02T03:04:05Z"});
    QVERIFY(m_page->validate(page).empty());
    std::string broken = page;
    const auto at = broken.find("<Coords points=\"10,10 ");
    QVERIFY(at != std::string::npos);
    broken.replace(at, std::string("<Coords points=\"10,10 ").size(), "<Coords points=\"-10,10 ");
    QVERIFY(!m_page->validate(broken).empty());
    broken = page;
    const auto line = broken.find("<TextLine id=\"l1\">");
    const auto coords = broken.find("<Coords", line);
    broken.erase(coords, broken.find("/>", coords) + 2 - coords);
    QVERIFY(!m_page->validate(broken).empty());

    const std::string alto = toAltoPage(layout, readings);
    QVERIFY(m_alto43->validate(alto).empty());
    broken = alto;
    const auto s0 = broken.find("<String");
    const auto s1 = broken.find("</TextLine>", s0);
    broken.erase(s0, s1 - s0);
    QVERIFY(!m_alto43->validate(broken).empty());
  }

  // Every fixture page of kraken's, with a reading per line, as PAGE-XML and ALTO: valid, and
  // read back with the same lines, ids, texts, baselines and explicit reading orders.
  void fixturePagesExportAndReadBack_data() {
    QTest::addColumn<QString>("path");
    for (const auto& p : fixturePages())
      QTest::newRow(fs::path(p)
                        .parent_path()
                        .filename()
                        .string()
                        .append("/")
                        .append(fs::path(p).filename().string())
                        .c_str())
          << QString::fromStdString(p);
  }
  void fixturePagesExportAndReadBack() {
    QFETCH(QString, path);
    const PageLayout layout = readPageLayout(path.toStdString());  // some hold no line
    std::vector<LineReading> readings;
    for (size_t i = 0; i < layout.lines.size(); ++i)
      readings.push_back(i % 4 == 3
                             ? LineReading{}  // an empty reading now and then
                             : handReading(layout.lines[i], "é<&> " + std::to_string(i) + " xy"));
    const std::string page = toPageXmlPage(layout, readings, {"Foveal", "model \"m\" & co", ""});
    const std::string alto = toAltoPage(layout, readings, {"Foveal", "model \"m\" & co", ""});
    checkValid(page, *m_page, "the PAGE-XML export");
    checkValid(alto, *m_alto43, "the ALTO export (4.3)");
    checkValid(alto, *m_alto44, "the ALTO export (4.4)");

    // Each character a glyph with its cut: PAGE Glyphs and ALTO Glyphs, one per character.
    int chars = 0;
    for (const auto& r : readings)
      for (const auto& s : r.trace.steps) chars += s.token != " ";
    QCOMPARE(countElements(page, "Glyph"), chars);
    QCOMPARE(countElements(alto, "Glyph"), chars);

    // Read back (resolved against the fixture's folder, where kraken's zero_dims.png is).
    const std::string origin = fs::path(path.toStdString()).parent_path().string() + "/export.xml";
    for (const auto& [doc, format] : {std::pair{page, "page"}, std::pair{alto, "alto"}}) {
      const PageLayout back = parsePageLayout(doc, origin);
      QCOMPARE(back.format, std::string(format));
      QCOMPARE(back.imageFilename, layout.imageFilename);
      QCOMPARE(back.imageWidth, layout.imageWidth);
      QCOMPARE(back.imageHeight, layout.imageHeight);
      QCOMPARE(back.lines.size(), layout.lines.size());
      for (size_t i = 0; i < layout.lines.size(); ++i) {
        const auto& a = layout.lines[i];
        const auto& b = back.lines[i];
        if (!a.id.empty()) QCOMPARE(b.id, a.id);
        // kraken reads an ALTO String with an empty CONTENT as a space (and ALTO's TextLine
        // holds at least one String): an empty reading comes back as " " from ALTO.
        const std::string text =
            readings[i].trace.prediction.empty() && std::string(format) == "alto"
                ? " "
                : readings[i].trace.prediction;
        QCOMPARE(QString::fromStdString(b.text), QString::fromStdString(text));
        QCOMPARE(b.baseline.size() >= 2, a.baseline.size() >= 2);
        if (a.baseline.size() >= 2 && a.baseline.front().x >= 0 && a.baseline.front().y >= 0) {
          QCOMPARE(b.baseline.front().x, std::round(a.baseline.front().x));
          QCOMPARE(b.baseline.front().y, std::round(a.baseline.front().y));
        }
        QVERIFY(b.hasBox);
        if (!a.regionId.empty()) QCOMPARE(b.regionId, a.regionId);
      }
      // Explicit orders, by id: PAGE keeps the region orders, ALTO the line orders.
      const std::string level = std::string(format) == "page" ? "region" : "line";
      const auto want = explicitOrders(layout, level), got = explicitOrders(back, level);
      QCOMPARE(got.size(), want.size());
      for (const auto& [id, ids] : want) {
        QVERIFY2(got.count(id), id.c_str());
        QCOMPARE(QString::fromStdString(join(got.at(id))), QString::fromStdString(join(ids)));
      }
    }
  }

  // A real reading: kraken's overfit model on its Syriac line through a baseline layout (the
  // one tests/e2e/kraken_trace.sh reads), every step's cut a Glyph; valid in both formats.
  void krakenReadingExports() {
    const std::string xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<PcGts xmlns=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15\">"
        "<Metadata><Creator>t</Creator><Created>2026-12-01T00:00:00</Created>"
        "<LastChange>2026-12-01T00:00:00</LastChange></Metadata>"
        "<Page imageFilename=\"000236.png\" imageWidth=\"2544\" imageHeight=\"156\">"
        "<TextRegion id=\"r1\"><Coords points=\"0,0 2543,0 2543,155 0,155\"/>"
        "<TextLine id=\"l1\"><Coords points=\"0,0 2543,0 2543,155 0,155\"/>"
        "<Baseline points=\"0,10 2543,10\"/></TextLine></TextRegion></Page></PcGts>";
    const PageLayout layout = parsePageLayout(xml, kKraken + "lines/baseline.xml");
    auto session =
        ModelSession::open(kKraken + "models/overfit.mlmodel", ImportOptions{{"padding", "1"}});
    const auto image = readImage(kKraken + "lines/000236.png", true);
    const auto r =
        session->traceLine(image, krakenLineOf(layout.lines[0], layout.textDirection), "l1");
    QVERIFY(!r.empty);
    QCOMPARE(r.cuts.size(), r.trace.steps.size());
    const std::string page = toPageXmlPage(layout, {r});
    const std::string alto = toAltoPage(layout, {r});
    checkValid(page, *m_page, "the PAGE-XML export of a kraken reading");
    checkValid(alto, *m_alto43, "the ALTO export of a kraken reading");
    checkValid(alto, *m_alto44, "the ALTO export of a kraken reading");
    int chars = 0;
    for (const auto& s : r.trace.steps) chars += s.token != " ";
    QCOMPARE(countElements(page, "Glyph"), chars);
    QCOMPARE(parsePageLayout(page, kKraken + "lines/x.xml").lines[0].text, r.trace.prediction);
    // ALTO's words follow kraken's display order (the prediction's, the steps reordered with
    // their cuts), one SP between words: the prediction with its runs of spaces made one.
    std::string squeezed;
    for (const char ch : r.trace.prediction)
      if (ch != ' ' || (!squeezed.empty() && squeezed.back() != ' ')) squeezed += ch;
    while (!squeezed.empty() && squeezed.back() == ' ') squeezed.pop_back();
    QVERIFY(r.trace.prediction != [&] {
      std::string steps;
      for (const auto& s : r.trace.steps) steps += s.token;
      return steps;
    }());  // the Syriac line's display order is not its frames' order
    QCOMPARE(QString::fromStdString(parsePageLayout(alto, kKraken + "lines/x.xml").lines[0].text),
             QString::fromStdString(squeezed));
    // The glyph polygons are the cuts: the first glyph's is that of the step the prediction's
    // first character came from (the Syriac line is read right to left: the last step's).
    size_t k0 = r.trace.steps.size();
    while (k0 > 0 && r.trace.steps[k0 - 1].token == " ") --k0;
    QVERIFY(k0 > 0 && k0 <= r.cuts.size());
    QCOMPARE(r.trace.steps[k0 - 1].token, splitUtf8(squeezed).front());
    const auto& c = r.cuts[k0 - 1];
    const std::string first = std::to_string(std::clamp(std::lround(c[0].x), 0L, 2544L)) + "," +
                              std::to_string(std::clamp(std::lround(c[0].y), 0L, 156L));
    QVERIFY2(page.find("<Glyph id=\"l1_w0_g0\">\n            <Coords points=\"" + first) !=
                 std::string::npos,
             first.c_str());
  }

  // Words' confidences are the mean of their characters' (kraken's serialiser), characters'
  // their own; "ab c" by hand: a 0.5, b 0.7, c 0.5 (after the space's 0.9).
  void confidencesAreKrakens() {
    const PageLayout layout = readPageLayout(kKraken + "pages/page/explicit_ro.xml");
    std::vector<LineReading> readings;
    for (const auto& l : layout.lines) readings.push_back(handReading(l, "ab c"));
    const std::string page = toPageXmlPage(layout, readings);
    const std::string alto = toAltoPage(layout, readings);
    QVERIFY(page.find("<TextEquiv conf=\"0.6\"><Unicode>ab</Unicode>") != std::string::npos);
    QVERIFY(page.find("<TextEquiv conf=\"0.7\"><Unicode>b</Unicode>") != std::string::npos);
    QVERIFY(page.find("<TextEquiv conf=\"0.75\"><Unicode>ab c</Unicode>") != std::string::npos);
    QVERIFY(alto.find("CONTENT=\"ab\" HPOS=") != std::string::npos);
    QVERIFY(alto.find("WC=\"0.6\"") != std::string::npos);
    QVERIFY(alto.find("GC=\"0.7\"") != std::string::npos);
  }

  void readingsMustMatchTheLines() {
    const PageLayout layout = readPageLayout(kKraken + "pages/page/explicit_ro.xml");
    try {
      toPageXmlPage(layout, {LineReading{}});
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("1 readings for the 5 lines"), e.what());
    }
  }

  // Ids that are not xsd:IDs, empty or repeated are replaced, and the reading order follows.
  void invalidIdsAreReplaced() {
    const std::string xml =
        "<PcGts xmlns=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15\">"
        "<Page imageFilename=\"a.png\" imageWidth=\"100\" imageHeight=\"50\">"
        "<ReadingOrder><OrderedGroup id=\"g\"><RegionRefIndexed index=\"0\" regionRef=\"2 b\"/>"
        "<RegionRefIndexed index=\"1\" regionRef=\"x\"/></OrderedGroup></ReadingOrder>"
        "<TextRegion id=\"x\"><Coords points=\"0,0 50,0 50,50 0,50\"/>"
        "<TextLine id=\"1line\"><Coords points=\"0,0 50,0 50,20 0,20\"/></TextLine></TextRegion>"
        "<TextRegion id=\"2 b\"><Coords points=\"50,0 100,0 100,50 50,50\"/>"
        "<TextLine><Coords points=\"50,0 99,0 99,20 50,20\"/></TextLine></TextRegion>"
        "</Page></PcGts>";
    const PageLayout layout = parsePageLayout(xml, m_dir.filePath("ids.xml").toStdString());
    QCOMPARE(layout.lines.size(), size_t(2));
    std::vector<LineReading> readings = {handReading(layout.lines[0], "a"),
                                         handReading(layout.lines[1], "b")};
    const std::string page = toPageXmlPage(layout, readings);
    checkValid(page, *m_page, "a page with invalid ids");
    checkValid(toAltoPage(layout, readings), *m_alto43, "a page with invalid ids (ALTO)");
    const PageLayout back = parsePageLayout(page, m_dir.filePath("back.xml").toStdString());
    QCOMPARE(back.lines[0].id, std::string("foveal_line_0"));
    QCOMPARE(back.lines[1].id, std::string("foveal_line_1"));
    QCOMPARE(explicitOrders(back, "region").begin()->second,
             (std::vector<std::string>{"foveal_region_0", "x"}));
  }

  // What the single-image writers write validates too: ALTO (declared 4.2) against 4.2 and 4.4,
  // PAGE-XML against 2019-07-15, for a sharp model (STN quads), a soft one, a beam search, a
  // kraken line and a hand-made trace with every kind of label and boxes outside the image.
  void singleImageWritersValidate_data() {
    QTest::addColumn<QString>("what");
    for (const char* w : {"sharp-chain", "soft", "beam", "kraken", "hand", "empty"})
      QTest::newRow(w) << w;
  }
  void singleImageWritersValidate() {
    QFETCH(QString, what);
    Trace trace;
    const std::string imagePath = FOVEAL_SAMPLES_DIR "/images/digits-46214.pgm";
    if (what == "sharp-chain" || what == "soft" || what == "beam") {
      auto s = ModelSession::open(std::string(FOVEAL_SAMPLES_DIR "/models/") +
                                  (what == "soft" ? "soft" : "sharp-chain") + ".fvm");
      TraceOptions opt;
      if (what == "beam") opt.beamWidth = 3;
      trace = s->trace(readImage(imagePath), imagePath, opt);
    } else if (what == "kraken") {
      auto s =
          ModelSession::open(kKraken + "models/overfit.mlmodel", ImportOptions{{"padding", "1"}});
      trace = s->trace(readImage(kKraken + "lines/000236.png", true), "000236.png");
    } else {
      trace.source = "straße/画像 <1> & 'two'.png";
      trace.modelDescription = "hand-made";
      trace.imageW = 60;
      trace.imageH = 20;
      trace.confidence = 0.5;
      if (what == "hand")
        for (const char* t : {"é", "ß", " ", "中", "<", "&", "fi", "<end>"}) {
          TraceStep st;
          st.token = t;
          st.prob = 0.7;
          st.topk = {{t, 1, 0.7}, {"\"", 2, 0.2}, {"<end>", 0, 0.1}};
          st.box = {-5.0 + 10.0 * double(trace.steps.size()), -3, 12, 30};
          StnTrace stn;
          stn.quad = {PointF{st.box.x - 2, -4}, PointF{st.box.x + 13, -1},
                      PointF{st.box.x + 12, 25}, PointF{st.box.x - 3, 22}};
          st.stn = {stn};
          trace.steps.push_back(st);
        }
    }
    const std::string alto = toAlto(trace), page = toPageXml(trace);
    checkValid(alto, *m_alto42, "toAlto (4.2)");
    checkValid(alto, *m_alto44, "toAlto (4.4)");
    checkValid(page, *m_page, "toPageXml");
  }
};

QTEST_GUILESS_MAIN(TestPageExport)
#include "test_page_export.moc"
