#include "formats/page_layout.h"

#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <locale.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "base/safe_read.h"
#include "image/grey_image.h"
#include "image/image_checks.h"

namespace foveal::core {

namespace {

// A layout file: eScriptorium and Transkribus write a few MiB for a page with glyphs.
constexpr uint64_t kMaxLayoutFileBytes = uint64_t(256) << 20;

// ---- Python's string and number rules, as kraken's parser meets them ----------------------------

// The length of the whitespace character (str.isspace()) starting at s[i] in UTF-8, else 0.
size_t spaceAt(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return i + k < s.size() ? uint8_t(s[i + k]) : 0; };
  const uint8_t c = b(0);
  if (c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f)) return 1;
  if (c == 0xc2 && (b(1) == 0x85 || b(1) == 0xa0)) return 2;
  if (c == 0xe1 && b(1) == 0x9a && b(2) == 0x80) return 3;
  if (c == 0xe2 && b(1) == 0x80 &&
      ((b(2) >= 0x80 && b(2) <= 0x8a) || b(2) == 0xa8 || b(2) == 0xa9 || b(2) == 0xaf))
    return 3;
  if (c == 0xe2 && b(1) == 0x81 && b(2) == 0x9f) return 3;
  if (c == 0xe3 && b(1) == 0x80 && b(2) == 0x80) return 3;
  return 0;
}

// The length of the whitespace character ending at s[end - 1], else 0.
size_t spaceBefore(std::string_view s, size_t end) {
  for (size_t n = 1; n <= 3 && n <= end; ++n)
    if (spaceAt(s, end - n) == n) return n;
  return 0;
}

// str.strip()
std::string_view pyStrip(std::string_view s) {
  size_t a = 0, e = s.size();
  while (a < e) {
    const size_t n = spaceAt(s, a);
    if (n == 0) break;
    a += n;
  }
  while (e > a) {
    const size_t n = spaceBefore(s, e);
    if (n == 0) break;
    e -= n;
  }
  return s.substr(a, e - a);
}

bool isBlank(std::string_view s) { return pyStrip(s).empty(); }

// str.split(sep)
std::vector<std::string_view> pySplit(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) break;
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(s.substr(start));
  return out;
}

// str.split(): runs of whitespace.
std::vector<std::string_view> pySplitSpace(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t n;
    while (i < s.size() && (n = spaceAt(s, i)) > 0) i += n;
    if (i >= s.size()) break;
    const size_t start = i;
    while (i < s.size() && spaceAt(s, i) == 0) ++i;
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Digits with single underscores between them (Python's numeric literal grouping), the
// underscores removed; nullopt when an underscore is misplaced.
std::optional<std::string> withoutUnderscores(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 == s.size() || !isDigit(s[i - 1]) || !isDigit(s[i + 1]))
        return std::nullopt;
      continue;
    }
    out += s[i];
  }
  return out;
}

double cDouble(const std::string& s) {
  static const locale_t c = newlocale(LC_ALL_MASK, "C", locale_t(0));
  return strtod_l(s.c_str(), nullptr, c);
}

// int(s) for a str: surrounding whitespace, a sign, decimal digits (ASCII only; Python also takes
// other scripts' digits). nullopt where Python raises ValueError.
std::optional<double> pyInt(std::string_view raw) {
  std::string_view s = pyStrip(raw);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  const auto digits = withoutUnderscores(s);
  if (!digits || digits->empty()) return std::nullopt;
  double v = 0;
  for (char c : *digits) {
    if (!isDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return negative ? -v : v;
}

// float(s) for a str: nullopt where Python raises ValueError; inf and nan as Python reads them.
std::optional<double> pyFloat(std::string_view raw) {
  const std::string_view s = pyStrip(raw);
  std::string lower;
  for (char c : s) lower += char(c >= 'A' && c <= 'Z' ? c + 32 : c);
  std::string_view body = lower;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == "inf" || body == "infinity")
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  if (body == "nan") return std::numeric_limits<double>::quiet_NaN();
  // digits [. digits] | . digits, then [e [sign] digits]; underscores only between digits.
  size_t i = 0;
  const auto run = [&] {
    const size_t start = i;
    while (i < body.size() && (isDigit(body[i]) || body[i] == '_')) ++i;
    return body.substr(start, i - start);
  };
  const auto intPart = run();
  std::string_view fracPart;
  if (i < body.size() && body[i] == '.') {
    ++i;
    fracPart = run();
  }
  if (intPart.empty() && fracPart.empty()) return std::nullopt;
  std::string_view expPart;
  if (i < body.size() && body[i] == 'e') {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    expPart = run();
    if (expPart.empty()) return std::nullopt;
  }
  if (i != body.size()) return std::nullopt;
  if (!withoutUnderscores(intPart) || !withoutUnderscores(fracPart) || !withoutUnderscores(expPart))
    return std::nullopt;
  std::string text = negative ? "-" : "";
  for (char c : body)
    if (c != '_') text += c;
  return cDouble(text);
}

// ---- kraken's ordered dicts of tags -------------------------------------------------------------

// One `{key: value; ...}` entry of a tag (PAGE custom) or `{'type': label}` (ALTO).
using TagEntry = std::vector<std::pair<std::string, std::string>>;
using TagList = std::vector<TagEntry>;

// A Python dict from tag names to lists of entries, in insertion order.
struct TagDict {
  std::vector<std::pair<std::string, TagList>> items;

  TagList* find(const std::string& key) {
    for (auto& [k, v] : items)
      if (k == key) return &v;
    return nullptr;
  }
  const TagList* find(const std::string& key) const {
    return const_cast<TagDict*>(this)->find(key);
  }
  void set(const std::string& key, TagList value) {
    if (TagList* v = find(key))
      *v = std::move(value);
    else
      items.emplace_back(key, std::move(value));
  }
  std::optional<TagList> pop(const std::string& key) {
    for (auto it = items.begin(); it != items.end(); ++it)
      if (it->first == key) {
        TagList v = std::move(it->second);
        items.erase(it);
        return v;
      }
    return std::nullopt;
  }
  void update(const TagDict& other) {
    for (const auto& [k, v] : other.items) set(k, v);
  }
};

const std::string* entryValue(const TagEntry& e, const std::string& key) {
  const std::string* found = nullptr;
  for (const auto& [k, v] : e)
    if (k == key) found = &v;
  return found;
}

void setEntry(TagEntry& e, const std::string& key, std::string value) {
  for (auto& [k, v] : e)
    if (k == key) {
      v = std::move(value);
      return;
    }
  e.emplace_back(key, std::move(value));
}

// The tags as LayoutLine::tags writes them.
std::vector<std::string> flatTags(const TagDict& d) {
  std::vector<std::string> out;
  for (const auto& [key, list] : d.items)
    for (const auto& entry : list) {
      if (entry.empty()) out.push_back(key);
      for (const auto& [k, v] : entry)
        out.push_back(k == "type" ? key + "=" + v : key + "." + k + "=" + v);
    }
  return out;
}

// ---- the XML tree
// --------------------------------------------------------------------------------

using Node = const xmlNode*;

std::string nameOf(Node n) { return reinterpret_cast<const char*>(n->name); }
bool isElement(Node n) { return n && n->type == XML_ELEMENT_NODE; }
bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// el.get(name): an attribute without a namespace.
std::optional<std::string> attr(Node n, const char* name) {
  xmlAttr* a = xmlHasNsProp(n, reinterpret_cast<const xmlChar*>(name), nullptr);
  if (!a) return std::nullopt;
  xmlChar* v = xmlNodeListGetString(n->doc, a->children, 1);
  std::string out = v ? reinterpret_cast<const char*>(v) : "";
  xmlFree(v);
  return out;
}

// lxml's el.text: the text and CDATA before the first other child; nullopt when there is none.
std::optional<std::string> textOf(Node n) {
  std::optional<std::string> out;
  for (Node c = n->children; c; c = c->next) {
    if (c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE) break;
    if (!out) out.emplace();
    if (c->content) *out += reinterpret_cast<const char*>(c->content);
  }
  return out;
}

std::vector<Node> elementChildren(Node n, const char* local = nullptr) {
  std::vector<Node> out;
  for (Node c = n->children; c; c = c->next)
    if (isElement(c) && (!local || nameOf(c) == local)) out.push_back(c);
  return out;
}

// el.find('./{*}X')
Node child(Node n, const char* local) {
  for (Node c = n->children; c; c = c->next)
    if (isElement(c) && nameOf(c) == local) return c;
  return nullptr;
}

// el.find('./{*}Shape/{*}Polygon')
Node shapePolygon(Node n) {
  for (Node shape : elementChildren(n, "Shape"))
    if (Node p = child(shape, "Polygon")) return p;
  return nullptr;
}

// Every element below n in document order (n excluded), as el.iter() less el itself.
void descendants(Node n, std::vector<Node>& out) {
  for (Node c = n->children; c; c = c->next)
    if (isElement(c)) {
      out.push_back(c);
      descendants(c, out);
    }
}

// el.find('.//{*}X')
Node descendant(Node n, const char* local) {
  for (Node c = n->children; c; c = c->next)
    if (isElement(c)) {
      if (nameOf(c) == local) return c;
      if (Node d = descendant(c, local)) return d;
    }
  return nullptr;
}

long lineOf(Node n) { return xmlGetLineNo(n); }

// "line 12: <TextLine id="l1">" for messages.
std::string where(Node n) {
  std::string s = "line " + std::to_string(lineOf(n)) + ": <" + nameOf(n);
  for (const char* key : {"id", "ID"})
    if (const auto v = attr(n, key)) {
      s += std::string(" ") + key + "=\"" + *v + "\"";
      break;
    }
  return s + ">";
}

// ---- the parse
// -----------------------------------------------------------------------------------

struct ParseGuard {
  bool entityDeclared = false;
  std::string entity;
  long line = 0;
  std::string firstError;
  long firstErrorLine = 0;
};

ParseGuard* guardOf(void* ctx) {
  return static_cast<ParseGuard*>(static_cast<xmlParserCtxtPtr>(ctx)->_private);
}

// An entity declaration stops the parse before any entity is defined or expanded: a layout file
// never needs one, and a hostile one uses them to read other files or to grow without end.
void onEntityDecl(void* ctx, const xmlChar* name, int, const xmlChar*, const xmlChar*, xmlChar*) {
  auto* ctxt = static_cast<xmlParserCtxtPtr>(ctx);
  ParseGuard* g = guardOf(ctx);
  if (!g->entityDeclared) {
    g->entityDeclared = true;
    g->entity = name ? reinterpret_cast<const char*>(name) : "";
    g->line = xmlSAX2GetLineNumber(ctx);
  }
  xmlStopParser(ctxt);
}

void onUnparsedEntityDecl(void* ctx, const xmlChar* name, const xmlChar*, const xmlChar*,
                          const xmlChar*) {
  onEntityDecl(ctx, name, 0, nullptr, nullptr, nullptr);
}

// The external subset a DOCTYPE names is never read (no XML_PARSE_DTDLOAD; this makes sure).
void onExternalSubset(void*, const xmlChar*, const xmlChar*, const xmlChar*) {}
xmlParserInputPtr onResolveEntity(void*, const xmlChar*, const xmlChar*) { return nullptr; }

void onError(void* ctx, xmlErrorPtr e) {
  ParseGuard* g = guardOf(ctx);
  if (!e || e->level < XML_ERR_ERROR || !g->firstError.empty()) return;
  std::string msg = e->message ? e->message : "unknown error";
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  std::replace(msg.begin(), msg.end(), '\n', ' ');  // "not proper UTF-8, ...\nBytes: 0xE3 ..."
  g->firstError = msg.empty() ? "unknown error" : msg;
  g->firstErrorLine = e->line;
}

struct DocDeleter {
  void operator()(xmlDoc* d) const { xmlFreeDoc(d); }
};
using DocPtr = std::unique_ptr<xmlDoc, DocDeleter>;

DocPtr parseXml(const std::string& bytes, const std::string& origin) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw Error(origin + ": the layout file is too large");
  if (bytes.empty()) throw Error(origin + ": the layout file is empty");
  xmlInitParser();
  xmlParserCtxtPtr ctxt = xmlCreateMemoryParserCtxt(bytes.data(), static_cast<int>(bytes.size()));
  if (!ctxt) throw Error(origin + ": cannot parse the layout file (out of memory)");
  ParseGuard guard;
  ctxt->_private = &guard;
  // No XML_PARSE_NOENT (entities are not substituted), no DTDLOAD/DTDATTR/DTDVALID (no DTD is
  // read), no HUGE (libxml2's size and depth limits hold), no network.
  xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_BIG_LINES);
  ctxt->sax->entityDecl = onEntityDecl;
  ctxt->sax->unparsedEntityDecl = onUnparsedEntityDecl;
  ctxt->sax->externalSubset = onExternalSubset;
  ctxt->sax->resolveEntity = onResolveEntity;
  ctxt->sax->serror = onError;
  ctxt->sax->warning = nullptr;
  xmlParseDocument(ctxt);
  DocPtr doc(ctxt->myDoc);
  ctxt->myDoc = nullptr;
  // lxml (kraken's parser) refuses a document whose last error is an error, not only an
  // ill-formed one: an undefined namespace prefix is one.
  const bool wellFormed = ctxt->wellFormed != 0 && ctxt->lastError.level < XML_ERR_ERROR;
  xmlFreeParserCtxt(ctxt);
  if (guard.entityDeclared)
    throw Error(origin + ": line " + std::to_string(guard.line) +
                ": the DOCTYPE declares the entity \"" + guard.entity +
                "\"; a layout file needs none, and entities are refused (they can read other "
                "files or expand without end)");
  if (!wellFormed || !doc) {
    throw Error(origin + ": line " + std::to_string(guard.firstErrorLine) +
                ": not well-formed XML: " +
                (guard.firstError.empty() ? std::string("unknown error") : guard.firstError));
  }
  return doc;
}

// ---- coordinates
// ---------------------------------------------------------------------------------

using Points = std::vector<LayoutPoint>;

// itertools.groupby's keys: consecutive repeats merged.
Points mergeRepeats(const std::vector<double>& flat) {
  Points out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) {
    const LayoutPoint p{flat[i], flat[i + 1]};
    if (out.empty() || !(out.back() == p)) out.push_back(p);
  }
  return out;
}

// kraken's parse_page_coords: "x,y x,y ..." split at single spaces and commas, each an int;
// nullopt where it raises (kraken then treats the coordinates as missing).
std::optional<Points> pageCoords(const std::optional<std::string>& points) {
  if (!points) return std::nullopt;
  std::vector<double> flat;
  for (auto point : pySplit(*points, ' '))
    for (auto c : pySplit(point, ',')) {
      const auto v = pyInt(c);
      if (!v) return std::nullopt;
      flat.push_back(*v);
    }
  return mergeRepeats(flat);
}

enum class Parsed { Ok, Invalid, Overflow };

// kraken's parse_alto_pointstype: every number the regex [-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?
// finds, truncated to int. Invalid: no string or an odd count (ValueError); Overflow: a number
// too large for a float (int(inf) raises OverflowError, which kraken does not catch).
Parsed altoPoints(const std::optional<std::string>& coords, Points& out) {
  if (!coords) return Parsed::Invalid;
  const std::string& s = *coords;
  std::vector<double> flat;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    if (s[j] == '+' || s[j] == '-') ++j;
    bool ok = false;
    if (j < s.size() && isDigit(s[j])) {
      while (j < s.size() && isDigit(s[j])) ++j;
      if (j < s.size() && s[j] == '.') {
        ++j;
        while (j < s.size() && isDigit(s[j])) ++j;
      }
      ok = true;
    } else if (j + 1 < s.size() && s[j] == '.' && isDigit(s[j + 1])) {
      ++j;
      while (j < s.size() && isDigit(s[j])) ++j;
      ok = true;
    }
    if (!ok) {
      ++i;
      continue;
    }
    if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
      size_t k = j + 1;
      if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
      if (k < s.size() && isDigit(s[k])) {
        while (k < s.size() && isDigit(s[k])) ++k;
        j = k;
      }
    }
    const double v = cDouble(s.substr(i, j - i));
    if (std::isinf(v)) return Parsed::Overflow;
    flat.push_back(std::trunc(v));
    i = j;
  }
  if (flat.size() % 2) return Parsed::Invalid;
  out = mergeRepeats(flat);
  return Parsed::Ok;
}

// map(int, map(float, (HPOS, VPOS, WIDTH, HEIGHT))) as kraken unpacks it: the first value that
// fails decides (a missing or non-numeric one: Invalid; inf: Overflow).
Parsed altoBox(Node n, double (&v)[4]) {
  const char* names[4] = {"HPOS", "VPOS", "WIDTH", "HEIGHT"};
  for (int k = 0; k < 4; ++k) {
    const auto a = attr(n, names[k]);
    if (!a) return Parsed::Invalid;
    const auto f = pyFloat(*a);
    if (!f || std::isnan(*f)) return Parsed::Invalid;
    if (std::isinf(*f)) return Parsed::Overflow;
    v[k] = std::trunc(*f);
  }
  return Parsed::Ok;
}

// ---- what both formats share
// ---------------------------------------------------------------------

struct Reader {
  std::string origin;
  [[noreturn]] void refuse(Node n, const std::string& problem) const {
    throw Error(origin + ": " + where(n) + ": " + problem);
  }
};

// kraken's parse_page_custom: "key {a:b; c:d;} key2 {...}". Raises (kraken does not catch it)
// when a chunk has no or several '{'.
TagDict pageCustom(const Reader& r, Node n, const std::string& raw) {
  TagDict out;
  for (auto chunk : pySplit(pyStrip(raw), '}')) {
    if (isBlank(chunk)) continue;
    const auto parts = pySplit(chunk, '{');
    if (parts.size() != 2)
      r.refuse(n, "its custom attribute \"" + raw + "\" is not `key {name:value;}` (\"" +
                      std::string(chunk) + "}\" has " + std::to_string(parts.size() - 1) +
                      " '{'; kraken's parser fails on it)");
    TagEntry entry;
    for (auto val : pySplit(parts[1], ';')) {
      if (isBlank(val)) continue;
      const auto kv = pySplit(pyStrip(val), ':');
      std::string rest;
      for (size_t k = 1; k < kv.size(); ++k) rest += (k > 1 ? ":" : "") + std::string(kv[k]);
      setEntry(entry, std::string(kv[0]), std::string(pyStrip(rest)));
    }
    const std::string key(pyStrip(parts[0]));
    if (TagList* list = out.find(key))
      list->push_back(std::move(entry));
    else
      out.items.emplace_back(key, TagList{std::move(entry)});
  }
  return out;
}

// kraken's direction codes ('L', 'R') for PAGE readingDirection / ALTO BASEDIRECTION.
std::string pageDirection(const std::optional<std::string>& v) {
  if (!v) return {};
  if (*v == "left-to-right" || *v == "top-to-bottom") return "L";
  if (*v == "right-to-left" || *v == "bottom-to-top") return "R";
  return {};
}
std::string altoDirection(const std::optional<std::string>& v) {
  if (!v) return {};
  if (*v == "ltr" || *v == "ttb") return "L";
  if (*v == "rtl" || *v == "btt") return "R";
  return {};
}

// What parse_page / parse_alto return, before XMLPage._apply_result flattens the orders.
struct RawOrder {
  std::string id;
  bool isTotal = true;
  std::string description;
  std::vector<std::optional<std::string>> refs;  // nullopt: a leaf without a reference
};

struct Parsed1 {
  PageLayout layout;
  std::set<std::string> regionIds, missingRegionIds;
  bool hasRegionWithoutId = false;
  std::map<std::string, std::string> stringToLine;  // ALTO only
  std::vector<RawOrder> rawOrders;
  std::vector<std::pair<std::string, double>> transkribusRegions;  // PAGE only
};

// The image size when the file says 0: the image's own (kraken opens it with PIL).
void sizeFromImage(const Reader& r, Node page, PageLayout& layout) {
  const std::string given =
      std::to_string(layout.imageWidth) + " x " + std::to_string(layout.imageHeight);
  try {
    const std::string head = readFileHead(layout.imagePath, "image", kMaxImageFileBytes, 1 << 20);
    auto [w, h] = statedImageSize(std::vector<uint8_t>(head.begin(), head.end()));
    if (w <= 0 || h <= 0) {
      const GreyImage image = readImage(layout.imagePath);
      w = image.width;
      h = image.height;
    }
    if (w <= 0 || h <= 0 || w > std::numeric_limits<int>::max() ||
        h > std::numeric_limits<int>::max())
      throw Error(layout.imagePath + ": the image states no size");
    layout.imageWidth = static_cast<int>(w);
    layout.imageHeight = static_cast<int>(h);
  } catch (const Error& e) {
    r.refuse(page, "the image size is " + given + " and the image file " + layout.imagePath +
                       " cannot be read for it (" + e.what() + ")");
  }
}

int imageDimension(const Reader& r, Node page, const char* name, const std::string& what) {
  const auto a = attr(page, name);
  if (!a) r.refuse(page, std::string("no ") + name + " attribute (the " + what + " of the image)");
  const auto v = pyInt(*a);
  if (!v) r.refuse(page, std::string(name) + " \"" + *a + "\" is not an integer");
  if (*v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max())
    r.refuse(page, std::string(name) + " " + *a + " is out of range");
  return static_cast<int>(*v);
}

// The page's size: a 0 is replaced by the image file's as kraken replaces it; a negative one that
// remains is refused (kraken keeps it).
void imageSize(const Reader& r, Node page, const char* widthAttr, const char* heightAttr,
               PageLayout& layout) {
  layout.imageWidth = imageDimension(r, page, widthAttr, "width");
  layout.imageHeight = imageDimension(r, page, heightAttr, "height");
  if (layout.imageWidth == 0 || layout.imageHeight == 0) sizeFromImage(r, page, layout);
  if (layout.imageWidth < 0 || layout.imageHeight < 0)
    r.refuse(page, "a negative image size (" + std::to_string(layout.imageWidth) + " x " +
                       std::to_string(layout.imageHeight) + ")");
}

// Path(xml).parent.joinpath(name) as pathlib spells it: an absolute name stands alone, empty and
// "." components go, ".." stays.
std::string resolveImage(const std::string& origin, const std::string& name) {
  const std::string dir = std::filesystem::path(origin).parent_path().string();
  const std::string joined =
      (!name.empty() && name[0] == '/') || dir.empty() ? name : dir + "/" + name;
  std::string out = joined[0] == '/' ? "/" : "";
  for (auto part : pySplit(joined, '/')) {
    if (part.empty() || part == ".") continue;
    if (!out.empty() && out.back() != '/') out += '/';
    out += part;
  }
  return out.empty() ? "." : out;
}

// The leaves of a reading-order group as kraken's _parse_group collects them: its OrderedGroup
// and UnorderedGroup children in document order, anything else a leaf whose `refAttr` names a line
// or region. A comment or processing instruction there makes kraken's parser fail.
std::vector<std::optional<std::string>> groupRefs(const Reader& r, Node el, const char* refAttr,
                                                  bool& isLeaf) {
  const std::string name = nameOf(el);
  std::vector<std::optional<std::string>> out;
  isLeaf = !endsWith(name, "UnorderedGroup") && !endsWith(name, "OrderedGroup");
  if (isLeaf) {
    out.push_back(attr(el, refAttr));
    return out;
  }
  for (Node c = el->children; c; c = c->next) {
    if (c->type == XML_COMMENT_NODE || c->type == XML_PI_NODE)
      r.refuse(el, "a comment or processing instruction at line " + std::to_string(lineOf(c)) +
                       " inside the reading order (kraken's parser fails on it)");
    if (!isElement(c)) continue;
    bool leaf = false;
    const auto refs = groupRefs(r, c, refAttr, leaf);
    out.insert(out.end(), refs.begin(), refs.end());
  }
  return out;
}

// kraken's reading-order parse, the same for both formats (`ReadingOrder`'s groups).
void readOrders(const Reader& r, Node root, const char* idAttr, const char* refAttr,
                const std::function<std::string(Node)>& describe, Parsed1& p) {
  Node roEl = descendant(root, "ReadingOrder");
  if (!roEl) return;
  std::vector<Node> orders;
  for (Node c = roEl->children; c; c = c->next) {
    if (c->type == XML_COMMENT_NODE || c->type == XML_PI_NODE)
      r.refuse(roEl, "a comment or processing instruction at line " + std::to_string(lineOf(c)) +
                         " inside the reading order (kraken's parser fails on it)");
    if (isElement(c)) orders.push_back(c);
  }
  bool partial = false;
  if (orders.size() == 1 && endsWith(nameOf(orders[0]), "UnorderedGroup")) {
    Node top = orders[0];
    orders.clear();
    for (Node c = top->children; c; c = c->next) {
      if (c->type == XML_COMMENT_NODE || c->type == XML_PI_NODE)
        r.refuse(top, "a comment or processing instruction at line " + std::to_string(lineOf(c)) +
                          " inside the reading order (kraken's parser fails on it)");
      if (isElement(c)) orders.push_back(c);
    }
    partial = true;
  }
  for (Node ro : orders) {
    bool leaf = false;
    RawOrder o;
    o.refs = groupRefs(r, ro, refAttr, leaf);
    if (leaf && !o.refs[0])
      r.refuse(ro, std::string("a reading order that is neither a group nor has a ") + refAttr +
                       " attribute (kraken's parser fails on it)");
    o.isTotal = !partial;
    o.id = attr(ro, idAttr).value_or("");
    o.description = describe(ro);
    const auto same = std::find_if(p.rawOrders.begin(), p.rawOrders.end(),
                                   [&](const RawOrder& x) { return x.id == o.id; });
    if (same != p.rawOrders.end())
      *same = std::move(o);  // a dict: the later order of an id replaces the earlier, in place
    else
      p.rawOrders.push_back(std::move(o));
  }
}

// Registers a line; an id two lines share is refused (xsd:ID: kraken would read the later line in
// both places and lose the earlier).
void addLine(const Reader& r, Node n, LayoutLine line, std::map<std::string, size_t>& byId,
             PageLayout& layout) {
  if (!line.id.empty()) {
    if (byId.count(line.id))
      r.refuse(n, "a second TextLine with the id \"" + line.id + "\" (ids are unique)");
    byId[line.id] = layout.lines.size();
  }
  layout.lines.push_back(std::move(line));
}

// Registers a region that has an outline (`boundary`); one without is noted by its id.
void addRegion(const std::optional<std::string>& regionId, const std::string& type,
               const std::optional<Points>& boundary, const TagDict& tags, Parsed1& p) {
  if (boundary) {
    p.layout.regions.push_back({regionId.value_or(""), type, *boundary, flatTags(tags)});
    if (regionId)
      p.regionIds.insert(*regionId);
    else
      p.hasRegionWithoutId = true;
  } else if (regionId) {
    p.missingRegionIds.insert(*regionId);
  }
}

// Registers a region's line (none: the line is skipped), in the region when the region is kept.
void addRegionLine(const Reader& r, Node n, std::optional<LayoutLine> line, bool regionKept,
                   const std::optional<std::string>& regionId, std::map<std::string, size_t>& byId,
                   PageLayout& layout) {
  if (!line) return;
  if (regionKept) line->regionId = regionId.value_or("");
  addLine(r, n, std::move(*line), byId, layout);
}

// ---- PAGE
// ----------------------------------------------------------------------------------------

const std::vector<std::pair<std::string, std::string>>& pageRegionTypes() {
  static const std::vector<std::pair<std::string, std::string>> types = {
      {"TextRegion", "text"},
      {"ImageRegion", "image"},
      {"LineDrawingRegion", "line drawing"},
      {"GraphicRegion", "graphic"},
      {"TableRegion", "table"},
      {"ChartRegion", "chart"},
      {"MapRegion", "map"},
      {"SeparatorRegion", "separator"},
      {"MathsRegion", "maths"},
      {"ChemRegion", "chem"},
      {"MusicRegion", "music"},
      {"AdvertRegion", "advert"},
      {"NoiseRegion", "noise"},
      {"UnknownRegion", "unknown"},
      {"CustomRegion", "custom"}};
  return types;
}

// parse_page_langs reads every custom attribute it meets; only its failure matters here.
void checkCustom(const Reader& r, Node n) {
  if (const auto c = attr(n, "custom")) pageCustom(r, n, *c);
}

// A PAGE TextLine (a region's, in reading direction `regionDir` on a page's `pageDir`); none when
// it has neither a baseline nor an outline.
std::optional<LayoutLine> readPageLine(const Reader& r, Node line, const std::string& regionDir,
                                       const std::string& pageDir) {
  std::optional<Points> baseline, boundary;
  if (Node b = child(line, "Baseline")) baseline = pageCoords(attr(b, "points"));
  if (Node c = child(line, "Coords")) boundary = pageCoords(attr(c, "points"));
  if (!baseline && !boundary) return std::nullopt;  // kraken skips it in both modes
  LayoutLine l;
  l.id = attr(line, "id").value_or("");
  if (baseline) l.baseline = *baseline;
  if (boundary) {
    if (boundary->empty())
      r.refuse(line, "its Coords hold no point (kraken's box reading fails on it)");
    l.boundary = *boundary;
    double b[4] = {boundary->front().x, boundary->front().y, boundary->front().x,
                   boundary->front().y};
    for (const auto& q : *boundary) {
      b[0] = std::min(b[0], q.x), b[1] = std::min(b[1], q.y);
      b[2] = std::max(b[2], q.x), b[3] = std::max(b[3], q.y);
    }
    std::copy(b, b + 4, l.bbox);
    l.hasBox = true;
  }
  Node transcription = child(line, "TextEquiv");
  if (!transcription) transcription = line;
  std::vector<Node> all;
  descendants(transcription, all);
  for (Node u : all)
    if (nameOf(u) == "Unicode")
      if (const auto t = textOf(u)) l.text += *t;
  TagDict lineTags;
  if (const auto custom = attr(line, "custom")) {
    TagDict cs = pageCustom(r, line, *custom);
    if (const TagList* s = cs.find("structure"))
      if (!s->empty())
        if (const std::string* t = entryValue((*s)[0], "type"))
          if (!t->empty()) lineTags.set("type", TagList{TagEntry{{"type", *t}}});
    lineTags.update(cs);
  }
  l.baseDir = pageDirection(attr(line, "readingDirection"));
  if (l.baseDir.empty()) l.baseDir = regionDir.empty() ? pageDir : regionDir;
  checkCustom(r, line);  // parse_page_langs
  if (const TagList* split = lineTags.find("split"); split && split->size() == 1) {
    const std::string* t = entryValue((*split)[0], "type");
    if (!t) r.refuse(line, "its custom split has no type (kraken's parser fails on it)");
    l.split = *t;
    lineTags.pop("split");
  }
  l.tags = flatTags(lineTags);
  return l;
}

// A PAGE region (element `tag`) and its lines: the region is kept when it has an outline, its
// type from its type attribute, its custom structure, else its element.
void readPageRegion(const Reader& r, Node region, const std::string& tag,
                    const std::string& pageDir, std::map<std::string, size_t>& byId, Parsed1& p) {
  const auto regionId = attr(region, "id");
  std::optional<Points> coords;
  if (Node c = child(region, "Coords")) coords = pageCoords(attr(c, "points"));
  const bool hasCoords = coords.has_value();
  TagDict tags;
  std::string rtype = attr(region, "type").value_or("");
  checkCustom(r, region);  // parse_page_langs
  if (const auto custom = attr(region, "custom")) {
    const TagDict cs = pageCustom(r, region, *custom);
    if (const TagList* s = cs.find("structure"))
      if (rtype.empty() && !s->empty())
        if (const std::string* t = entryValue((*s)[0], "type")) rtype = *t;
    if (const TagList* ro = cs.find("readingOrder"))
      if (!ro->empty())
        if (const std::string* idx = entryValue((*ro)[0], "index"))
          if (hasCoords) {
            const auto v = pyInt(*idx);
            if (!v)
              r.refuse(region, "its custom readingOrder index \"" + *idx +
                                   "\" is not an integer (kraken's parser fails on it)");
            p.transkribusRegions.emplace_back(regionId.value_or(""), *v);
          }
    tags.update(cs);
  }
  if (rtype.empty()) {
    std::string fallback;
    for (const auto& [k, v] : pageRegionTypes())
      if (tag == k) fallback = v;
    if (fallback.empty())
      r.refuse(region, "a region element of no type PAGE names (kraken's parser fails on it)");
    rtype = fallback;
  }
  tags.set("type", TagList{TagEntry{{"type", rtype}}});
  addRegion(regionId, rtype, coords, tags, p);
  const std::string regionDir = pageDirection(attr(region, "readingDirection"));

  for (Node line : elementChildren(region, "TextLine"))
    addRegionLine(r, line, readPageLine(r, line, regionDir, pageDir), hasCoords, regionId, byId,
                  p.layout);
}

Parsed1 readPage(const Reader& r, Node root) {
  Parsed1 p;
  PageLayout& layout = p.layout;
  layout.format = "page";
  Node page = descendant(root, "Page");
  if (!page) throw Error(r.origin + ": no <Page> element (kraken finds no image filename)");
  const auto filename = attr(page, "imageFilename");
  if (!filename) r.refuse(page, "no imageFilename attribute (the page names no image)");
  const std::string pageDir = pageDirection(attr(page, "readingDirection"));
  checkCustom(r, page);
  layout.imageFilename = *filename;
  layout.imagePath = resolveImage(r.origin, *filename);
  imageSize(r, page, "imageWidth", "imageHeight", layout);

  std::map<std::string, size_t> byId;
  for (Node region : elementChildren(page)) {
    const std::string tag = nameOf(region);
    bool isRegion = false;
    for (const auto& [k, v] : pageRegionTypes()) isRegion = isRegion || endsWith(tag, k);
    if (isRegion) readPageRegion(r, region, tag, pageDir, byId, p);
  }
  readOrders(
      r, root, "id", "regionRef", [](Node ro) { return attr(ro, "caption").value_or(""); }, p);
  return p;
}

// ---- ALTO
// ----------------------------------------------------------------------------------------

const std::vector<std::pair<std::string, std::string>>& altoRegionTypes() {
  static const std::vector<std::pair<std::string, std::string>> types = {
      {"TextBlock", "text"},
      {"Illustration", "illustration"},
      {"GraphicalElement", "graphic"},
      {"ComposedBlock", "composed"}};
  return types;
}

struct AltoTag {
  std::optional<std::string> type, label;
};

// kraken's parse_alto_tagrefs: each TAGREFS id's TYPE (or "type") holds its LABEL.
TagDict altoTagrefs(const std::map<std::string, AltoTag>& tagMap,
                    const std::optional<std::string>& tagrefs) {
  TagDict tags;
  if (!tagrefs) return tags;
  for (auto ref : pySplitSpace(*tagrefs)) {
    const auto it = tagMap.find(std::string(ref));
    if (it == tagMap.end()) continue;
    const std::string type = it->second.type.value_or(""), label = it->second.label.value_or("");
    if (type.empty() && label.empty()) continue;
    const std::string key = type.empty() ? "type" : type;
    TagList value = tags.pop(key).value_or(TagList{});
    value.push_back(TagEntry{{"type", label}});
    tags.items.emplace_back(key, std::move(value));
  }
  return tags;
}

// The ALTO file's image: its measurement unit must be pixels, its fileName names the image, its
// Page gives the size.
void readAltoImage(const Reader& r, Node root, PageLayout& layout) {
  if (Node mu = descendant(root, "MeasurementUnit")) {
    const auto t = textOf(mu);
    if (!t) r.refuse(mu, "no measurement unit (kraken's parser fails on it)");
    if (pyStrip(*t) != "pixel")
      r.refuse(mu, "the measurement unit is \"" + std::string(pyStrip(*t)) +
                       "\", not \"pixel\" (kraken reads pixel coordinates only)");
  }
  Node fileName = descendant(root, "fileName");
  if (!fileName) throw Error(r.origin + ": no <fileName> element (the ALTO file names no image)");
  const auto name = textOf(fileName);
  if (!name || name->empty()) r.refuse(fileName, "names no image file");
  layout.imageFilename = *name;
  layout.imagePath = resolveImage(r.origin, *name);
  Node page = descendant(root, "Page");
  if (!page) throw Error(r.origin + ": no <Page> element in the ALTO file");
  imageSize(r, page, "WIDTH", "HEIGHT", layout);
}

// The blocks kraken reads: Layout/Page/PrintSpace's children of a region type.
std::vector<Node> altoRegions(Node root) {
  std::vector<Node> regions;
  for (Node l1 : elementChildren(root, "Layout"))
    for (Node pg : elementChildren(l1, "Page"))
      for (Node ps : elementChildren(pg, "PrintSpace"))
        for (Node el : elementChildren(ps))
          for (const auto& [k, v] : altoRegionTypes())
            if (endsWith(nameOf(el), k)) regions.push_back(el);
  return regions;
}

// The Tags' StructureTag, LayoutTag and OtherTag entries by ID.
std::map<std::string, AltoTag> altoTagMap(Node root) {
  std::map<std::string, AltoTag> tagMap;
  if (Node tagsEl = descendant(root, "Tags"))
    for (const char* kind : {"StructureTag", "LayoutTag", "OtherTag"})
      for (Node t : elementChildren(tagsEl, kind))
        if (const auto id = attr(t, "ID")) tagMap[*id] = {attr(t, "TYPE"), attr(t, "LABEL")};
  return tagMap;
}

// A block's outline: its Shape's Polygon, else its box; none when it has neither.
std::optional<Points> altoRegionBoundary(const Reader& r, Node region) {
  if (Node poly = shapePolygon(region)) {
    Points pts;
    const Parsed res = altoPoints(attr(poly, "POINTS"), pts);
    if (res != Parsed::Ok)
      r.refuse(poly, res == Parsed::Overflow
                         ? "a POINTS number too large (kraken's parser fails on it)"
                         : "its POINTS are missing or an odd count of numbers (kraken's parser "
                           "fails on them)");
    return pts;
  }
  double b[4];
  const Parsed res = altoBox(region, b);
  if (res == Parsed::Overflow)
    r.refuse(region, "a box coordinate too large (kraken's parser fails on it)");
  if (res == Parsed::Ok)
    return Points{
        {b[0], b[1]}, {b[0], b[1] + b[3]}, {b[0] + b[2], b[1] + b[3]}, {b[0] + b[2], b[1]}};
  return std::nullopt;
}

// A block's type: its TYPE attribute, else its tags' region (or type), else its element's.
TagList altoRegionType(const Reader& r, Node region, TagDict& regTags) {
  std::optional<TagList> tagType =
      regTags.find("region") ? regTags.pop("region") : regTags.pop("type");
  if (const auto t = attr(region, "TYPE")) return TagList{TagEntry{{"type", *t}}};
  if (tagType) return *tagType;
  std::string fallback;
  for (const auto& [k, v] : altoRegionTypes())
    if (nameOf(region) == k) fallback = v;
  if (fallback.empty())
    r.refuse(region, "a block element of no type ALTO names (kraken's parser fails on it)");
  return TagList{TagEntry{{"type", fallback}}};
}

// An ALTO TextLine (of a block in reading direction `regionDir`), its Strings' ids noted in
// `p`; none when it has neither a baseline nor a box.
std::optional<LayoutLine> readAltoLine(const Reader& r, Node line,
                                       const std::map<std::string, AltoTag>& tagMap,
                                       const std::string& regionDir, Parsed1& p) {
  LayoutLine l;
  l.id = attr(line, "ID").value_or("");
  Points baseline;
  const Parsed bres = altoPoints(attr(line, "BASELINE"), baseline);
  if (bres == Parsed::Overflow)
    r.refuse(line, "a BASELINE number too large (kraken's parser fails on it)");
  const bool hasBaseline = bres == Parsed::Ok;
  if (hasBaseline) {
    l.baseline = baseline;
    if (Node poly = shapePolygon(line)) {
      Points pts;
      const Parsed pres = altoPoints(attr(poly, "POINTS"), pts);
      if (pres == Parsed::Overflow)
        r.refuse(poly, "a POINTS number too large (kraken's parser fails on it)");
      if (pres == Parsed::Ok) l.boundary = pts;
    }
  }
  double b[4];
  const Parsed xres = altoBox(line, b);
  if (xres == Parsed::Overflow)
    r.refuse(line, "a box coordinate too large (kraken's box reading fails on it)");
  if (xres == Parsed::Ok) {
    l.bbox[0] = b[0], l.bbox[1] = b[1], l.bbox[2] = b[0] + b[2], l.bbox[3] = b[1] + b[3];
    l.hasBox = true;
  }
  if (!hasBaseline && !l.hasBox) return std::nullopt;  // kraken skips it in both modes
  std::vector<Node> all;
  descendants(line, all);
  for (Node s : all)
    if (nameOf(s) == "String" || nameOf(s) == "SP") {
      const auto content = attr(s, "CONTENT");
      l.text += content && !content->empty() ? *content : " ";
    }
  for (Node s : elementChildren(line, "String"))
    if (const auto sid = attr(s, "ID"); sid && !sid->empty()) p.stringToLine[*sid] = l.id;
  TagDict lineTags = altoTagrefs(tagMap, attr(line, "TAGREFS"));
  if (const TagList* split = lineTags.find("split"); split && split->size() == 1) {
    l.split = *entryValue((*split)[0], "type");
    lineTags.pop("split");
  }
  l.tags = flatTags(lineTags);
  l.baseDir = altoDirection(attr(line, "BASEDIRECTION"));
  if (l.baseDir.empty()) l.baseDir = regionDir;
  return l;
}

// An ALTO block and its lines: the block is kept when it has an outline.
void readAltoRegion(const Reader& r, Node region, const std::map<std::string, AltoTag>& tagMap,
                    std::map<std::string, size_t>& byId, Parsed1& p) {
  const auto regionId = attr(region, "ID");
  const std::string regionDir = altoDirection(attr(region, "BASEDIRECTION"));
  const std::optional<Points> boundary = altoRegionBoundary(r, region);
  TagDict regTags = altoTagrefs(tagMap, attr(region, "TAGREFS"));
  const TagList rtype = altoRegionType(r, region, regTags);
  const std::string typeName = rtype.empty() ? "" : *entryValue(rtype[0], "type");
  regTags.set("type", rtype);
  addRegion(regionId, typeName, boundary, regTags, p);

  for (Node line : elementChildren(region, "TextLine"))
    addRegionLine(r, line, readAltoLine(r, line, tagMap, regionDir, p), boundary.has_value(),
                  regionId, byId, p.layout);
}

// A reading order's description: its tags' types, "; " between them.
std::string altoOrderDescription(const std::map<std::string, AltoTag>& tagMap, Node ro) {
  const TagDict t = altoTagrefs(tagMap, attr(ro, "TAGREFS"));
  std::string d;
  if (const TagList* v = t.find("type"))
    for (const auto& e : *v) {
      if (!d.empty()) d += "; ";
      d += *entryValue(e, "type");
    }
  return d;
}

Parsed1 readAlto(const Reader& r, Node root) {
  Parsed1 p;
  p.layout.format = "alto";
  readAltoImage(r, root, p.layout);
  const std::vector<Node> regions = altoRegions(root);
  const std::map<std::string, AltoTag> tagMap = altoTagMap(root);
  std::map<std::string, size_t> byId;
  for (Node region : regions) readAltoRegion(r, region, tagMap, byId, p);
  readOrders(
      r, root, "ID", "REF", [&](Node ro) { return altoOrderDescription(tagMap, ro); }, p);
  return p;
}

// ---- XMLPage._apply_result: the orders, flattened
// ------------------------------------------------

void setOrder(std::vector<LayoutReadingOrder>& orders, LayoutReadingOrder o) {
  for (auto& x : orders)
    if (x.id == o.id) {
      x = std::move(o);
      return;
    }
  orders.push_back(std::move(o));
}

// validate_and_clean_order: unknown ids and repeats removed.
std::vector<std::string> cleaned(const std::vector<std::string>& ids,
                                 const std::function<bool(const std::string&)>& valid) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& id : ids)
    if (valid(id) && seen.insert(id).second) out.push_back(id);
  return out;
}

void flattenOrders(Parsed1& p, bool alto) {
  PageLayout& layout = p.layout;
  std::map<std::string, size_t> lineIndex;
  for (size_t i = 0; i < layout.lines.size(); ++i)
    if (!layout.lines[i].id.empty()) lineIndex[layout.lines[i].id] = i;
  const auto isLine = [&](const std::string& id) { return lineIndex.count(id) > 0; };
  const auto isRegion = [&](const std::string& id) { return p.regionIds.count(id) > 0; };

  LayoutReadingOrder lineImplicit{
      "line_implicit", "line", true, "Implicit line order derived from element sequence", {}};
  for (const auto& l : layout.lines) lineImplicit.ids.push_back(l.id);
  LayoutReadingOrder regionImplicit{
      "region_implicit", "region", true, "Implicit region order derived from element sequence", {}};
  for (const auto& reg : layout.regions) regionImplicit.ids.push_back(reg.id);
  layout.readingOrders = {lineImplicit, regionImplicit};
  if (!alto) {
    auto sorted = p.transkribusRegions;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    LayoutReadingOrder tr{
        "region_transkribus", "region", true, "Explicit region order from `custom` attribute", {}};
    std::set<std::string> distinct;
    for (const auto& [id, idx] : sorted) {
      tr.ids.push_back(id);
      distinct.insert(id);
    }
    tr.isTotal = distinct.size() == sorted.size();
    setOrder(layout.readingOrders, tr);
  }

  for (const RawOrder& raw : p.rawOrders) {
    std::vector<std::string> lines, regions;
    for (const auto& ref : raw.refs) {  // flatten_order_to_lines
      if (!ref) continue;
      const std::string& id = *ref;
      if (isLine(id)) {
        lines.push_back(id);
      } else if (isRegion(id)) {
        for (const auto& l : layout.lines)
          if (!l.regionId.empty() && l.regionId == id) lines.push_back(l.id);
      } else if (p.missingRegionIds.count(id)) {
      } else if (alto && p.stringToLine.count(id)) {
        const std::string& parent = p.stringToLine.at(id);
        if (lines.empty() || lines.back() != parent) lines.push_back(parent);
      }
    }
    for (const auto& ref : raw.refs) {  // flatten_order_to_regions
      if (!ref) continue;
      const std::string& id = *ref;
      const auto addRegion = [&](const std::string& rid) {
        if (!rid.empty() && (regions.empty() || regions.back() != rid)) regions.push_back(rid);
      };
      if (isRegion(id)) {
        addRegion(id);
      } else if (p.missingRegionIds.count(id)) {
      } else if (isLine(id)) {
        addRegion(layout.lines[lineIndex.at(id)].regionId);
      } else if (alto && p.stringToLine.count(id)) {
        const std::string& parent = p.stringToLine.at(id);
        if (isLine(parent)) addRegion(layout.lines[lineIndex.at(parent)].regionId);
      }
    }
    setOrder(layout.readingOrders,
             {raw.id, "line", raw.isTotal, raw.description, cleaned(lines, isLine)});
    setOrder(layout.readingOrders,
             {(raw.id.empty() ? std::string("None") : raw.id) + ":regions", "region", raw.isTotal,
              raw.description, cleaned(regions, isRegion)});
  }
}

}  // namespace

PageLayout parsePageLayout(const std::string& bytes, const std::string& origin) {
  const DocPtr doc = parseXml(bytes, origin);
  Node root = xmlDocGetRootElement(doc.get());
  if (!root) throw Error(origin + ": the layout file has no root element");
  const Reader r{origin};
  const std::string rootName = nameOf(root);
  Parsed1 p;
  if (endsWith(rootName, "alto")) {
    p = readAlto(r, root);
  } else if (endsWith(rootName, "PcGts")) {
    p = readPage(r, root);
  } else {
    r.refuse(root, "neither ALTO (<alto>) nor PAGE-XML (<PcGts>): not a page layout");
  }
  flattenOrders(p, p.layout.format == "alto");
  return std::move(p.layout);
}

PageLayout readPageLayout(const std::string& path) {
  return parsePageLayout(readRegularFile(path, "layout file", kMaxLayoutFileBytes), path);
}

}  // namespace foveal::core
