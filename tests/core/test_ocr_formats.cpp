// The OCR page formats (core/formats/ocr_formats.h) held against what real tools do: Foveal's
// hOCR and ALTO for the sample image have the element structure, attribute names and coordinate
// conventions of Tesseract's own hOCR and ALTO for the same image (the test runs `tesseract`);
// PAGE-XML follows the 2019-07-15 schema's content models and attributes (written down below from
// PRImA-Research-Lab/PAGE-XML, pagecontent.xsd); every coordinate lies inside the image; the
// documents are well-formed UTF-8 with non-ASCII labels.
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QStringDecoder>
#include <QXmlStreamReader>
#include <QtTest/QtTest>
#include <map>
#include <set>

#include "base/error.h"
#include "formats/ocr_formats.h"
#include "trace/model_session.h"

using namespace foveal::core;

namespace {

const char* kImagePng = FOVEAL_SAMPLES_DIR "/images/digits-46214.png";
const char* kImagePgm = FOVEAL_SAMPLES_DIR "/images/digits-46214.pgm";
// Tesseract restricted to digits reads the sample as one word ("4624": it merges "21"), as the
// model reads it as one; without it, "462 \\Y": two words.
const char* kDigitsOnly = "tessedit_char_whitelist=0123456789";

// A parsed XML element: local name, attributes, text, children.
struct Node {
  QString name, ns, text;
  std::map<QString, QString> attrs;
  std::vector<Node> children;

  std::vector<const Node*> all(const QString& n) const {
    std::vector<const Node*> out;
    collect(n, out);
    return out;
  }
  void collect(const QString& n, std::vector<const Node*>& out) const {
    if (name == n) out.push_back(this);
    for (const auto& c : children) c.collect(n, out);
  }
  QString attr(const QString& a) const {
    const auto it = attrs.find(a);
    return it == attrs.end() ? QString() : it->second;
  }
  bool has(const QString& a) const { return attrs.count(a) > 0; }
};

// Parses a whole document; fails the test (through the returned error) when it is not well-formed.
Node parse(const QByteArray& bytes, QString* error) {
  QXmlStreamReader xml(bytes);
  Node root;
  std::vector<Node*> stack;
  while (!xml.atEnd()) {
    const auto t = xml.readNext();
    if (t == QXmlStreamReader::StartElement) {
      Node n;
      n.name = xml.name().toString();
      n.ns = xml.namespaceUri().toString();
      for (const auto& a : xml.attributes())
        n.attrs[a.qualifiedName().toString()] = a.value().toString();
      if (stack.empty()) {
        root = n;
        stack.push_back(&root);
      } else {
        stack.back()->children.push_back(n);
        stack.push_back(&stack.back()->children.back());
      }
    } else if (t == QXmlStreamReader::EndElement) {
      stack.pop_back();
    } else if (t == QXmlStreamReader::Characters && !stack.empty()) {
      stack.back()->text += xml.text();
    }
  }
  if (xml.hasError()) *error = xml.errorString() + " at line " + QString::number(xml.lineNumber());
  return root;
}

// hOCR's title properties: "bbox 1 2 3 4; x_wconf 9" -> {bbox: "1 2 3 4", x_wconf: "9"}.
std::map<QString, QString> titleProperties(const QString& title) {
  std::map<QString, QString> out;
  for (const auto& part : title.split(';', Qt::SkipEmptyParts)) {
    const auto p = part.trimmed();
    const int space = p.indexOf(' ');
    out[space < 0 ? p : p.left(space)] = space < 0 ? QString() : p.mid(space + 1);
  }
  return out;
}

std::set<QString> keys(const std::map<QString, QString>& m) {
  std::set<QString> out;
  for (const auto& [k, v] : m) out.insert(k);
  return out;
}

QString setString(const std::set<QString>& s) {
  QStringList l(s.begin(), s.end());
  return l.join(',');
}

std::array<double, 4> numbers4(const QString& s) {
  const auto p = s.split(' ', Qt::SkipEmptyParts);
  std::array<double, 4> out{};
  for (int i = 0; i < 4 && i < p.size(); ++i) out[i] = p[i].toDouble();
  return out;
}

// Runs `tesseract IMAGE BASE --psm 7 [config...] FORMAT` and returns the file it wrote.
QByteArray runTesseract(const QString& image, const QString& base, const QStringList& config,
                        const QString& format, const QString& suffix) {
  QProcess p;
  QStringList args = {image, base, "--psm", "7"};
  for (const auto& c : config) args << "-c" << c;
  args << format;
  p.start("tesseract", args);
  if (!p.waitForFinished(120000) || p.exitCode() != 0)
    qWarning("tesseract failed: %s", p.readAllStandardError().constData());
  QFile f(base + suffix);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll();
}

// A trace by hand: every kind of label a format must carry, boxes partly outside the image.
Trace handTrace() {
  Trace tr;
  tr.source = "straße/画像 <1> & 'two'.png";
  tr.modelDescription = "hand-made";
  tr.stages = "none-vgg-bilstm-attention(sharp)";
  tr.focusRule = "stn-quad";
  tr.imageW = 60;
  tr.imageH = 20;
  tr.confidence = 0.5;
  const std::vector<std::string> tokens = {"é", "ß", " ", "中", "<", "&", "<end>"};
  for (size_t i = 0; i < tokens.size(); ++i) {
    TraceStep s;
    s.token = tokens[i];
    s.prob = 0.9 - 0.1 * static_cast<double>(i);
    s.topk = {{s.token, 1, s.prob}, {"\"", 2, 0.05}, {"<end>", 0, 0.01}};
    s.box = {-5.0 + 10.0 * static_cast<double>(i), -3, 12, 30};  // sticks out on every side
    StnTrace stn;
    stn.quad = {PointF{s.box.x - 2, -4}, PointF{s.box.x + 13, -1}, PointF{s.box.x + 12, 25},
                PointF{s.box.x - 3, 22}};
    s.stn = {stn};
    tr.steps.push_back(s);
  }
  return tr;
}

bool validUtf8(const QByteArray& bytes) {
  auto decode = QStringDecoder(QStringDecoder::Utf8);
  const QString s = decode(bytes);
  return !decode.hasError() && s.toUtf8() == bytes;
}

// PAGE-XML 2019-07-15: the content model of each element Foveal writes (its children in the
// schema's sequence order, with their occurrence bounds) and its attributes, from pagecontent.xsd.
struct Particle {
  QString name;
  int min, max;  // max -1: unbounded
};
struct ElementModel {
  std::vector<Particle> sequence;
  std::set<QString> required, allowed;
};
const QString kPageNs = "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15";

std::map<QString, ElementModel> pageSchema() {
  std::map<QString, ElementModel> m;
  m["PcGts"] = {{{"Metadata", 1, 1}, {"Page", 1, 1}}, {}, {"pcGtsId"}};
  m["Metadata"] = {{{"Creator", 1, 1},
                    {"Created", 1, 1},
                    {"LastChange", 1, 1},
                    {"Comments", 0, 1},
                    {"UserDefined", 0, 1},
                    {"MetadataItem", 0, -1}},
                   {},
                   {"externalRef"}};
  for (const auto* leaf : {"Creator", "Created", "LastChange", "Comments", "Unicode", "PlainText"})
    m[leaf] = {};
  std::vector<Particle> page = {
      {"AlternativeImage", 0, -1}, {"Border", 0, 1},      {"PrintSpace", 0, 1},
      {"ReadingOrder", 0, 1},      {"Layers", 0, 1},      {"Relations", 0, 1},
      {"TextStyle", 0, 1},         {"UserDefined", 0, 1}, {"Labels", 0, -1}};
  // The regions are a repeated choice: the matcher below takes them as one repeated group.
  page.push_back({"<region>", 0, -1});
  m["Page"] = {page,
               {"imageFilename", "imageWidth", "imageHeight"},
               {"imageFilename", "imageWidth", "imageHeight", "imageXResolution",
                "imageYResolution", "imageResolutionUnit", "custom", "orientation", "type",
                "primaryLanguage", "secondaryLanguage", "primaryScript", "secondaryScript",
                "readingDirection", "textLineOrder", "conf"}};
  m["TextRegion"] = {
      {{"AlternativeImage", 0, -1},
       {"Coords", 1, 1},
       {"UserDefined", 0, 1},
       {"Labels", 0, -1},
       {"Roles", 0, 1},
       {"<region>", 0, -1},
       {"TextLine", 0, -1},
       {"TextEquiv", 0, -1},
       {"TextStyle", 0, 1}},
      {"id"},
      {"id", "custom", "comments", "continuation", "orientation", "type", "leading",
       "readingDirection", "textLineOrder", "readingOrientation", "indented", "align",
       "primaryLanguage", "secondaryLanguage", "primaryScript", "secondaryScript", "production"}};
  m["TextLine"] = {{{"AlternativeImage", 0, -1},
                    {"Coords", 1, 1},
                    {"Baseline", 0, 1},
                    {"Word", 0, -1},
                    {"TextEquiv", 0, -1},
                    {"TextStyle", 0, 1},
                    {"UserDefined", 0, 1},
                    {"Labels", 0, -1}},
                   {"id"},
                   {"id", "primaryLanguage", "primaryScript", "secondaryScript", "readingDirection",
                    "production", "custom", "comments", "index"}};
  m["Word"] = {{{"AlternativeImage", 0, -1},
                {"Coords", 1, 1},
                {"Glyph", 0, -1},
                {"TextEquiv", 0, -1},
                {"TextStyle", 0, 1},
                {"UserDefined", 0, 1},
                {"Labels", 0, -1}},
               {"id"},
               {"id", "language", "primaryScript", "secondaryScript", "readingDirection",
                "production", "custom", "comments"}};
  m["Glyph"] = {{{"AlternativeImage", 0, -1},
                 {"Coords", 1, 1},
                 {"Graphemes", 0, 1},
                 {"TextEquiv", 0, -1},
                 {"TextStyle", 0, 1},
                 {"UserDefined", 0, 1},
                 {"Labels", 0, -1}},
                {"id"},
                {"id", "ligature", "symbol", "script", "production", "custom", "comments"}};
  m["Coords"] = {{}, {"points"}, {"points", "conf"}};
  m["TextEquiv"] = {{{"PlainText", 0, 1}, {"Unicode", 1, 1}},
                    {},
                    {"index", "conf", "dataType", "dataTypeDetails", "comments"}};
  return m;
}

// The schema's region choice (TextRegion, ImageRegion, ... CustomRegion).
bool isRegion(const QString& n) { return n.endsWith("Region"); }

// Checks `node` and its subtree against the schema table; returns the first problem.
QString checkPageNode(const Node& node, const std::map<QString, ElementModel>& schema) {
  if (node.ns != kPageNs) return node.name + ": namespace " + node.ns;
  const auto it = schema.find(node.name);
  if (it == schema.end()) return "element " + node.name + " is not one Foveal may write";
  const auto& model = it->second;
  for (const auto& r : model.required)
    if (!node.has(r)) return node.name + ": required attribute " + r + " missing";
  for (const auto& [a, v] : node.attrs) {
    if (a.startsWith("xmlns") || (node.name == "PcGts" && a == "xsi:schemaLocation")) continue;
    if (!model.allowed.count(a)) return node.name + ": attribute " + a + " is not in the schema";
  }
  size_t c = 0;
  for (const auto& p : model.sequence) {
    int n = 0;
    while (c < node.children.size() &&
           (p.name == "<region>" ? isRegion(node.children[c].name)
                                 : node.children[c].name == p.name) &&
           (p.max < 0 || n < p.max)) {
      ++n;
      ++c;
    }
    if (n < p.min) return node.name + ": expected " + p.name + " at child " + QString::number(c);
  }
  if (c != node.children.size())
    return node.name + ": child " + node.children[c].name + " out of the schema's order";
  for (const auto& ch : node.children) {
    const auto problem = checkPageNode(ch, schema);
    if (!problem.isEmpty()) return problem;
  }
  return {};
}

struct Pt {
  long x, y;
};
std::vector<Pt> points(const QString& s) {
  std::vector<Pt> out;
  for (const auto& p : s.split(' ', Qt::SkipEmptyParts)) {
    const auto xy = p.split(',');
    out.push_back({xy[0].toLong(), xy[1].toLong()});
  }
  return out;
}

// PAGE's rules beyond the content model: points pattern, inside the image and inside the
// parent's outline (its bounding box), confidences in [0, 1], indices >= 0 and distinct, ids
// unique, dateTimes.
QString checkPageRules(const Node& root) {
  const QRegularExpression pointsPattern("^([0-9]+,[0-9]+ )+([0-9]+,[0-9]+)$");
  const QRegularExpression dateTime(
      R"(^-?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$)");
  const auto pages = root.all("Page");
  if (pages.size() != 1) return "one Page expected";
  const long W = pages[0]->attr("imageWidth").toLong(), H = pages[0]->attr("imageHeight").toLong();
  for (const char* t : {"Created", "LastChange"})
    for (const auto* n : root.all(t))
      if (!dateTime.match(n->text).hasMatch()) return QString(t) + " is not a dateTime: " + n->text;
  std::set<QString> ids;
  std::function<QString(const Node&, std::array<long, 4>)> walk =
      [&](const Node& n, std::array<long, 4> parent) -> QString {
    if (n.has("id") && !ids.insert(n.attr("id")).second) return "duplicate id " + n.attr("id");
    std::array<long, 4> own = parent;
    std::set<long> indices;
    for (const auto& c : n.children) {
      if (c.name == "Coords") {
        const auto s = c.attr("points");
        if (!pointsPattern.match(s).hasMatch()) return n.name + ": points '" + s + "'";
        const auto pts = points(s);
        if (pts.size() < 3) return n.name + ": fewer than 3 points";
        own = {W, H, 0, 0};
        for (const auto& p : pts) {
          if (p.x < 0 || p.y < 0 || p.x > W || p.y > H)
            return n.name + " " + n.attr("id") + ": point outside the image: " + s;
          if (p.x < parent[0] || p.y < parent[1] || p.x > parent[2] || p.y > parent[3])
            return n.name + " " + n.attr("id") + ": point outside its parent: " + s;
          own = {std::min(own[0], p.x), std::min(own[1], p.y), std::max(own[2], p.x),
                 std::max(own[3], p.y)};
        }
      }
      if (c.name == "TextEquiv") {
        bool ok = false;
        const double conf = c.attr("conf").toDouble(&ok);
        if (c.has("conf") && (!ok || conf < 0 || conf > 1))
          return "TextEquiv conf " + c.attr("conf");
        const long index = c.attr("index").toLong(&ok);
        if (c.has("index") && (!ok || index < 0 || !indices.insert(index).second))
          return n.name + ": TextEquiv index " + c.attr("index");
      }
    }
    for (const auto& c : n.children) {
      const auto problem = walk(c, own);
      if (!problem.isEmpty()) return problem;
    }
    return {};
  };
  return walk(root, {0, 0, W, H});
}

// The text of the TextEquiv with index 0 among `n`'s children.
QString mainText(const Node& n) {
  for (const auto& c : n.children)
    if (c.name == "TextEquiv" && c.attr("index") == "0")
      for (const auto& u : c.children)
        if (u.name == "Unicode") return u.text;
  return "<none>";
}

}  // namespace

class TestOcrFormats : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  std::shared_ptr<ModelSession> m_sharp, m_soft;
  GreyImage m_image;
  QString m_imagePath;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_sharp = ModelSession::open(FOVEAL_SAMPLES_DIR "/models/sharp-chain.fvm");
    m_soft = ModelSession::open(FOVEAL_SAMPLES_DIR "/models/soft.fvm");
    m_imagePath = hasImageCodecs() ? kImagePng : kImagePgm;
    m_image = readImage(m_imagePath.toStdString());
  }

  // Foveal's hOCR has the structure of Tesseract's with hocr_char_boxes and lstm_choice_mode=2:
  // in each ocrx_word, a character's ocrx_cinfo (x_bboxes; x_conf) followed by an ocrx_cinfo
  // "lstm_choices_*" holding the step's choices, each an ocrx_cinfo "choice_*" titled x_confs,
  // the chosen character first; the same title properties; boxes in the same pixel frame.
  void hocrHasTesseractsStructureAndCoordinates() {
    if (QStandardPaths::findExecutable("tesseract").isEmpty())
      QSKIP("the tesseract program is not installed (Debian: tesseract-ocr tesseract-ocr-eng)");
    const QByteArray theirs =
        runTesseract(m_imagePath, m_dir.filePath("tess"),
                     {"hocr_char_boxes=1", "lstm_choice_mode=2", kDigitsOnly}, "hocr", ".hocr");
    QVERIFY(!theirs.isEmpty());
    const auto trace = m_sharp->trace(m_image, m_imagePath.toStdString());
    QCOMPARE(trace.prediction, std::string("46214"));
    const QByteArray ours = QByteArray::fromStdString(toHocr(trace));
    QVERIFY(validUtf8(ours));

    struct Shape {
      std::set<QString> pageKeys, wordKeys, charKeys, choiceKeys;
      std::vector<std::array<double, 4>> charBoxes;
      std::vector<QString> chars, firstChoices;
      QString pageBox;
      int words = 0;
      QString problem;
    };
    auto shape = [](const QByteArray& bytes) {
      Shape s;
      QString error;
      const Node root = parse(bytes, &error);
      if (!error.isEmpty()) {
        s.problem = error;
        return s;
      }
      std::function<void(const Node&)> walk = [&](const Node& n) {
        const QString cls = n.attr("class");
        if (cls == "ocr_page") {
          const auto p = titleProperties(n.attr("title"));
          s.pageKeys = keys(p);
          s.pageBox = p.count("bbox") ? p.at("bbox") : QString();
        }
        if (cls == "ocrx_word") {
          ++s.words;
          const auto wk = keys(titleProperties(n.attr("title")));
          s.wordKeys.insert(wk.begin(), wk.end());
          bool expectChar = true;
          for (const auto& c : n.children) {
            if (c.attr("class") != "ocrx_cinfo") {
              s.problem = "a child of ocrx_word is not an ocrx_cinfo: " + c.name;
              return;
            }
            if (expectChar) {
              const auto p = titleProperties(c.attr("title"));
              if (!p.count("x_bboxes")) s.problem = "a character without x_bboxes";
              const auto ck = keys(p);
              s.charKeys.insert(ck.begin(), ck.end());
              s.charBoxes.push_back(numbers4(p.count("x_bboxes") ? p.at("x_bboxes") : QString()));
              s.chars.push_back(c.text);
            } else {
              if (!c.attr("id").startsWith("lstm_choices_"))
                s.problem = "after a character: " + c.attr("id") + ", not lstm_choices_";
              for (const auto& ch : c.children) {
                if (ch.attr("class") != "ocrx_cinfo" || !ch.attr("id").startsWith("choice_"))
                  s.problem = "a choice is not an ocrx_cinfo choice_*";
                const auto chk = keys(titleProperties(ch.attr("title")));
                s.choiceKeys.insert(chk.begin(), chk.end());
              }
              if (!c.children.empty()) s.firstChoices.push_back(c.children.front().text);
            }
            expectChar = !expectChar;
          }
          return;
        }
        for (const auto& c : n.children) walk(c);
      };
      walk(root);
      return s;
    };
    const Shape t = shape(theirs), f = shape(ours);
    QVERIFY2(t.problem.isEmpty(), qPrintable("tesseract's hOCR: " + t.problem));
    QVERIFY2(f.problem.isEmpty(), qPrintable("Foveal's hOCR: " + f.problem));
    QVERIFY(t.words >= 1 && f.words == 1);
    QCOMPARE(f.pageBox, t.pageBox);  // "0 0 160 32": x0 y0 x1 y1, the image's own frame
    QCOMPARE(f.pageBox, QString("0 0 160 32"));
    // The properties Foveal writes are Tesseract's (it writes a few more on its page).
    for (const auto& [ours_, theirs_, what] : {std::tuple{f.wordKeys, t.wordKeys, "ocrx_word"},
                                               {f.charKeys, t.charKeys, "ocrx_cinfo"},
                                               {f.choiceKeys, t.choiceKeys, "choice"}}) {
      QVERIFY2(ours_ == theirs_, qPrintable(QString(what) + ": Foveal " + setString(ours_) +
                                            ", tesseract " + setString(theirs_)));
    }
    for (const auto& k : f.pageKeys) QVERIFY2(t.pageKeys.count(k), qPrintable(k));
    QCOMPARE(f.chars.size(), size_t(5));
    QCOMPARE(f.firstChoices, f.chars);  // the chosen character leads its choices
    QCOMPARE(t.firstChoices, t.chars);
    // The same frame. Every box of either lies inside the image, left to right; Foveal's k-th
    // box is centred in digit k's 32-px slot; and where both engines read the same character
    // (the first and the last "4": Tesseract merges the "21" into one box), their boxes are centred
    // on the same digit.
    QVERIFY2(t.charBoxes.size() >= 3, "tesseract found fewer than 3 characters");
    for (const auto* boxes : {&t.charBoxes, &f.charBoxes})
      for (size_t k = 0; k < boxes->size(); ++k) {
        const auto& b = (*boxes)[k];
        QVERIFY(b[0] >= 0 && b[1] >= 0 && b[2] <= 160 && b[3] <= 32 && b[0] < b[2] && b[1] < b[3]);
        if (k > 0) QVERIFY(b[0] > (*boxes)[k - 1][0]);
      }
    auto centre = [](const std::array<double, 4>& b) { return (b[0] + b[2]) / 2; };
    for (size_t k = 0; k < f.charBoxes.size(); ++k) {
      const double cx = centre(f.charBoxes[k]);
      QVERIFY2(cx >= 32.0 * k - 4 && cx <= 32.0 * (k + 1) + 4,
               qPrintable(QString("Foveal's box %1: centre %2 outside slot %1").arg(k).arg(cx)));
    }
    QCOMPARE(t.chars.front(), f.chars.front());
    QCOMPARE(t.chars.back(), f.chars.back());
    QVERIFY(std::abs(centre(t.charBoxes.front()) - centre(f.charBoxes.front())) < 12);
    QVERIFY(std::abs(centre(t.charBoxes.back()) - centre(f.charBoxes.back())) < 12);
  }

  // Foveal's ALTO has Tesseract's element paths (Tesseract adds a ComposedBlock around the
  // TextBlock, which ALTO leaves optional) and its attribute names, plus ALTO v4's CC, Glyph and
  // Variant; Page and PrintSpace measure the image as Tesseract's do, and HPOS/VPOS/WIDTH/HEIGHT
  // are left, top, width and height of the same lines.
  void altoHasTesseractsStructureAndCoordinates() {
    if (QStandardPaths::findExecutable("tesseract").isEmpty())
      QSKIP("the tesseract program is not installed (Debian: tesseract-ocr tesseract-ocr-eng)");
    const QByteArray theirs =
        runTesseract(m_imagePath, m_dir.filePath("tess"), {kDigitsOnly}, "alto", ".xml");
    QVERIFY(!theirs.isEmpty());
    auto trace = m_sharp->trace(m_image, m_imagePath.toStdString());
    const QByteArray ours = QByteArray::fromStdString(toAlto(trace));
    QVERIFY(validUtf8(ours));
    QString error;
    const Node t = parse(theirs, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const Node f = parse(ours, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(f.name, QString("alto"));
    QCOMPARE(f.ns, QString("http://www.loc.gov/standards/alto/ns-v4#"));
    QVERIFY(t.ns.startsWith("http://www.loc.gov/standards/alto/ns-v"));

    // Element paths and the attribute names seen on each element.
    auto paths = [](const Node& root) {
      std::map<QString, std::set<QString>> out;
      std::function<void(const Node&, QString)> walk = [&](const Node& n, QString path) {
        if (n.name != "ComposedBlock") {  // its attributes are its own, not its parent's
          path += "/" + n.name;
          auto& a = out[path];
          for (const auto& [k, v] : n.attrs)
            if (!k.startsWith("xmlns") && !k.startsWith("xsi:")) a.insert(k);
        }
        for (const auto& c : n.children) walk(c, path);
      };
      walk(root, "");
      return out;
    };
    const auto tp = paths(t), fp = paths(f);
    for (const auto& [path, attrs] : tp) {
      QVERIFY2(fp.count(path), qPrintable("Foveal's ALTO lacks " + path));
      for (const auto& a : attrs)
        QVERIFY2(fp.at(path).count(a), qPrintable("Foveal's " + path + " lacks @" + a));
    }
    const QString string = "/alto/Layout/Page/PrintSpace/TextBlock/TextLine/String";
    const std::map<QString, std::set<QString>> v4Additions = {
        {string, {"CC"}},
        {string + "/Glyph", {"ID", "CONTENT", "GC", "HPOS", "VPOS", "WIDTH", "HEIGHT"}},
        {string + "/Glyph/Variant", {"CONTENT", "VC"}},
        {"/alto/Description/OCRProcessing/ocrProcessingStep/processingStepSettings", {}}};
    for (const auto& [path, attrs] : fp) {
      const bool known = tp.count(path) || v4Additions.count(path);
      QVERIFY2(known, qPrintable("Foveal writes " + path + ", which Tesseract does not"));
      for (const auto& a : attrs) {
        const bool theirsToo = tp.count(path) && tp.at(path).count(a);
        const bool added = v4Additions.count(path) && v4Additions.at(path).count(a);
        QVERIFY2(theirsToo || added, qPrintable(path + "@" + a + " is not Tesseract's"));
      }
    }
    // The frame: the page is the image, in pixels, from the top-left corner.
    const auto* tpage = t.all("Page").front();
    const auto* fpage = f.all("Page").front();
    QCOMPARE(fpage->attr("WIDTH"), tpage->attr("WIDTH"));
    QCOMPARE(fpage->attr("HEIGHT"), tpage->attr("HEIGHT"));
    QCOMPARE(f.all("MeasurementUnit").front()->text, t.all("MeasurementUnit").front()->text);
    const auto* tps = t.all("PrintSpace").front();
    const auto* fps = f.all("PrintSpace").front();
    for (const char* a : {"HPOS", "VPOS", "WIDTH", "HEIGHT"}) QCOMPARE(fps->attr(a), tps->attr(a));
    // Both engines' lines cover the digits: the same span of the image, give or take a margin.
    const auto* tl = t.all("TextLine").front();
    const auto* fl = f.all("TextLine").front();
    const double tx0 = tl->attr("HPOS").toDouble(), tx1 = tx0 + tl->attr("WIDTH").toDouble();
    const double fx0 = fl->attr("HPOS").toDouble(), fx1 = fx0 + fl->attr("WIDTH").toDouble();
    const double overlap = std::min(tx1, fx1) - std::max(tx0, fx0);
    QVERIFY2(overlap > 0.7 * (tx1 - tx0),
             qPrintable(QString("lines %1..%2 (tesseract) and %3..%4 (foveal)")
                            .arg(tx0)
                            .arg(tx1)
                            .arg(fx0)
                            .arg(fx1)));
    // Every box inside the page; a String holds its glyphs; CC has a digit per character.
    const auto* str = f.all("String").front();
    QCOMPARE(str->attr("CONTENT"), QString("46214"));
    QCOMPARE(str->attr("CC").split(' ').size(), 5);
    for (const auto& d : str->attr("CC").split(' '))
      QVERIFY(QRegularExpression("^[0-9]$").match(d).hasMatch());
    const auto glyphs = f.all("Glyph");
    QCOMPARE(glyphs.size(), size_t(5));
    for (const char* e : {"TextBlock", "TextLine", "String", "Glyph"})
      for (const auto* n : f.all(e)) {
        const double x = n->attr("HPOS").toDouble(), y = n->attr("VPOS").toDouble();
        const double w = n->attr("WIDTH").toDouble(), h = n->attr("HEIGHT").toDouble();
        QVERIFY2(x >= 0 && y >= 0 && w >= 0 && h >= 0 && x + w <= 160 && y + h <= 32,
                 qPrintable(QString(e) + " outside the page"));
      }
    for (const auto* g : glyphs) {
      const double x = g->attr("HPOS").toDouble(), w = g->attr("WIDTH").toDouble();
      QVERIFY(x >= str->attr("HPOS").toDouble() &&
              x + w <= str->attr("HPOS").toDouble() + str->attr("WIDTH").toDouble());
      const double gc = g->attr("GC").toDouble();
      QVERIFY(gc > 0 && gc <= 1);
    }
  }

  // A beam search's other readings become ALTO ALTERNATIVEs and PAGE TextEquivs by rank.
  void beamReadingsAreAlternatives() {
    TraceOptions opt;
    opt.beamWidth = 3;
    const auto trace = m_sharp->trace(m_image, "digits.png", opt);
    QVERIFY(trace.hypotheses.size() >= 2);
    QString error;
    const Node alto = parse(QByteArray::fromStdString(toAlto(trace)), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const auto alts = alto.all("ALTERNATIVE");
    QCOMPARE(alts.size(), trace.hypotheses.size() - 1);
    QCOMPARE(alts[0]->text, QString::fromStdString(trace.hypotheses[1].reading));
    const Node page =
        parse(QByteArray::fromStdString(toPageXml(trace, "2026-01-02T03:04:05Z")), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    const auto* line = page.all("TextLine").front();
    std::vector<QString> texts;
    for (const auto& c : line->children)
      if (c.name == "TextEquiv") {
        QCOMPARE(c.attr("index").toInt(), int(texts.size()));
        texts.push_back(c.children.front().text);
      }
    QCOMPARE(texts.size(), trace.hypotheses.size());
    QCOMPARE(texts[0], QString::fromStdString(trace.prediction));
    QCOMPARE(texts[1], QString::fromStdString(trace.hypotheses[1].reading));
  }

  // PAGE-XML for a sharp model (glyph outlines are STN quads) and a soft one (boxes): the
  // schema's content models and attributes, its points pattern, coordinates inside the image
  // and inside the parent's outline, confidences in [0, 1].
  void pageXmlFollowsThe2019Schema_data() {
    QTest::addColumn<bool>("sharp");
    QTest::newRow("sharp-chain") << true;
    QTest::newRow("soft") << false;
  }
  void pageXmlFollowsThe2019Schema() {
    QFETCH(bool, sharp);
    const auto trace = (sharp ? m_sharp : m_soft)->trace(m_image, m_imagePath.toStdString());
    const QByteArray doc = QByteArray::fromStdString(toPageXml(trace));
    QVERIFY(validUtf8(doc));
    QString error;
    const Node root = parse(doc, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(root.name, QString("PcGts"));
    const auto problem = checkPageNode(root, pageSchema());
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    const auto rules = checkPageRules(root);
    QVERIFY2(rules.isEmpty(), qPrintable(rules));
    const auto* page = root.all("Page").front();
    QCOMPARE(page->attr("imageWidth"), QString("160"));
    QCOMPARE(page->attr("imageHeight"), QString("32"));
    QCOMPARE(page->attr("imageFilename"), m_imagePath);
    const auto glyphs = root.all("Glyph");
    QCOMPARE(glyphs.size(), trace.prediction.size());
    QString glyphText;
    for (const auto* g : glyphs) glyphText += mainText(*g);
    QCOMPARE(glyphText, QString::fromStdString(trace.prediction));
    QCOMPARE(mainText(*root.all("TextLine").front()), QString::fromStdString(trace.prediction));
    // A glyph's polygon is its STN quad for a sharp model: not always a rectangle.
    if (sharp) {
      const auto pts = points(glyphs[0]->children.front().attr("points"));
      const auto& q = trace.steps[0].stn.back().quad;
      QCOMPARE(pts.size(), size_t(4));
      for (int k = 0; k < 4; ++k) {
        QCOMPARE(pts[k].x, std::clamp(std::lround(q[k].x), 0L, 160L));
        QCOMPARE(pts[k].y, std::clamp(std::lround(q[k].y), 0L, 32L));
      }
    }
    // The first glyph's alternatives: the step's top-k without the chosen token or <end>.
    int equivs = 0;
    for (const auto& c : glyphs[0]->children) equivs += c.name == "TextEquiv";
    int expected = 1;
    for (const auto& k : trace.steps[0].topk)
      expected += k.token != trace.steps[0].token && k.token != "<end>";
    QCOMPARE(equivs, expected);
  }

  // Non-ASCII labels, markup characters and a space in the reading; boxes and quads that stick
  // out of the image: every format is well-formed UTF-8, carries the labels verbatim, and keeps
  // every coordinate inside the image.
  void nonAsciiLabelsAndCoordinatesInsideTheImage() {
    const Trace tr = handTrace();
    const QString word1 = QString::fromUtf8("éß"), word2 = QString::fromUtf8("中<&");
    for (auto format : {OcrFormat::Hocr, OcrFormat::Alto, OcrFormat::Page}) {
      const QByteArray doc = QByteArray::fromStdString(toOcrDocument(tr, format));
      const QString name = QString::fromStdString(toString(format));
      QVERIFY2(doc.startsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"), qPrintable(name));
      QVERIFY2(validUtf8(doc), qPrintable(name));
      QString error;
      const Node root = parse(doc, &error);
      QVERIFY2(error.isEmpty(), qPrintable(name + ": " + error));
      if (format == OcrFormat::Hocr) {
        QStringList words;
        for (const auto* n : root.all("span"))
          if (n->attr("class") == "ocrx_word") {
            QString w;
            for (const auto& c : n->children)
              if (titleProperties(c.attr("title")).count("x_bboxes")) {
                w += c.text;
                const auto b = numbers4(titleProperties(c.attr("title"))["x_bboxes"]);
                QVERIFY(b[0] >= 0 && b[1] >= 0 && b[2] <= 60 && b[3] <= 20);
              }
            words << w;
          }
        QCOMPARE(words, QStringList({word1, word2}));
        QVERIFY(root.all("title").front()->text == QString::fromStdString(tr.source));
      } else if (format == OcrFormat::Alto) {
        const auto strings = root.all("String");
        QCOMPARE(strings.size(), size_t(2));
        QCOMPARE(strings[0]->attr("CONTENT"), word1);
        QCOMPARE(strings[1]->attr("CONTENT"), word2);
        QCOMPARE(root.all("SP").size(), size_t(1));
        QCOMPARE(root.all("fileName").front()->text, QString::fromStdString(tr.source));
        for (const auto* g : root.all("Glyph")) {
          QCOMPARE(g->attr("CONTENT").size(), 1);  // one character, as ALTO requires
          for (const auto& v : g->children) QCOMPARE(v.attr("CONTENT"), QString("\""));
        }
        for (const char* e : {"TextBlock", "TextLine", "String", "Glyph", "SP"})
          for (const auto* n : root.all(e)) {
            const double x = n->attr("HPOS").toDouble(), y = n->attr("VPOS").toDouble();
            QVERIFY(x >= 0 && y >= 0 && x + n->attr("WIDTH").toDouble() <= 60 &&
                    y + n->attr("HEIGHT").toDouble() <= 20);
          }
      } else {
        QVERIFY2(checkPageNode(root, pageSchema()).isEmpty(),
                 qPrintable(checkPageNode(root, pageSchema())));
        const auto rules = checkPageRules(root);
        QVERIFY2(rules.isEmpty(), qPrintable(rules));
        const auto words = root.all("Word");
        QCOMPARE(words.size(), size_t(2));
        QCOMPARE(mainText(*words[0]), word1);
        QCOMPARE(mainText(*words[1]), word2);
        QCOMPARE(mainText(*root.all("TextLine").front()), word1 + " " + word2);
        QCOMPARE(root.all("Page").front()->attr("imageFilename"),
                 QString::fromStdString(tr.source));
      }
    }
  }

  // Issue 65, 8: control characters in a reading (a charset may hold them) vanished from every
  // XML format (CONTENT="", no word said); they are written as U+FFFD, the documents stay
  // well-formed, and XmlReplacements counts them for the warning the CLI and the window give.
  void controlCharactersBecomeReplacementCharacters() {
    Trace tr = handTrace();
    tr.steps[0].token = "\x07";                     // BEL where "é" was
    tr.steps[0].topk[0].token = tr.steps[0].token;  // (the token itself: not an alternative)
    tr.steps[3].token = "\x1b";                     // ESC where "中" was
    tr.steps[3].topk[0].token = tr.steps[3].token;
    tr.steps[1].topk[1].token = "\x01";  // an alternative
    const QString fffd = QString(QChar(0xFFFD));
    const QString word1 = fffd + QString::fromUtf8("ß"), word2 = fffd + "<&";
    for (auto format : {OcrFormat::Hocr, OcrFormat::Alto, OcrFormat::Page}) {
      const QByteArray doc = QByteArray::fromStdString(toOcrDocument(tr, format));
      const QString name = QString::fromStdString(toString(format));
      for (char c : doc)
        QVERIFY2(static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t' || c == '\r',
                 qPrintable(name + ": a control character written"));
      QString error;
      const Node root = parse(doc, &error);
      QVERIFY2(error.isEmpty(), qPrintable(name + ": " + error));
      if (format == OcrFormat::Alto) {
        const auto strings = root.all("String");
        QCOMPARE(strings.size(), size_t(2));
        QCOMPARE(strings[0]->attr("CONTENT"), word1);
        QCOMPARE(strings[1]->attr("CONTENT"), word2);
      } else if (format == OcrFormat::Page) {
        const auto words = root.all("Word");
        QCOMPARE(words.size(), size_t(2));
        QCOMPARE(mainText(*words[0]), word1);
        QCOMPARE(mainText(*words[1]), word2);
      } else {
        QVERIFY2(doc.count("\xEF\xBF\xBD") >= 2, qPrintable(name));
      }
    }
    XmlReplacements r;
    r.add(tr);
    QCOMPARE(r.reading, size_t(2));
    QCOMPARE(r.alternatives, size_t(1));
    QCOMPARE(QString::fromStdString(xmlReplacementWarning(tr)),
             QString::fromStdString(tr.source) +
                 ": 2 control characters of the reading and 1 of its alternatives written as "
                 "U+FFFD (XML 1.0 forbids them; the JSON trace keeps them)");
    QVERIFY(xmlReplacementWarning(handTrace()).empty());
    QCOMPARE(xmlEscape("a\tb\x7f\x02"), std::string("a\tb\x7f\xEF\xBF\xBD"));
  }

  // An empty reading still makes valid documents (no line, no word).
  void emptyReading() {
    Trace tr = handTrace();
    tr.steps.erase(tr.steps.begin(), tr.steps.end() - 1);  // only <end>
    QString error;
    const Node page = parse(QByteArray::fromStdString(toPageXml(tr)), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(checkPageNode(page, pageSchema()).isEmpty());
    QVERIFY(checkPageRules(page).isEmpty());
    QVERIFY(page.all("TextLine").empty());
    const Node alto = parse(QByteArray::fromStdString(toAlto(tr)), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(alto.all("TextLine").empty());
    parse(QByteArray::fromStdString(toHocr(tr)), &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
  }

  void formatNames() {
    QVERIFY(ocrFormatFromString("alto") == OcrFormat::Alto);
    QCOMPARE(ocrFileSuffix(OcrFormat::Page), std::string(".page.xml"));
    try {
      ocrFormatFromString("xml");
      QFAIL("no error");
    } catch (const Error& e) {
      QCOMPARE(std::string(e.what()),
               std::string("unknown OCR format 'xml' (choose hocr, alto or page)"));
    }
  }
};

QTEST_APPLESS_MAIN(TestOcrFormats)
#include "test_ocr_formats.moc"
