#include "formats/page_export.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

#include "base/error.h"
#include "formats/ocr_formats.h"
#include "model/charset.h"
#include "model/kraken_codec.h"

namespace foveal::core {

namespace {

struct IPoint {
  long x = 0, y = 0;
};
using IPolygon = std::vector<IPoint>;
struct IBox {
  long x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// A page's coordinates in whole pixels inside the image (PAGE allows only non-negative integers).
struct Frame {
  long w = 0, h = 0;
  IPoint point(double x, double y) const {
    long ix = std::lround(std::isfinite(x) ? x : 0.0), iy = std::lround(std::isfinite(y) ? y : 0.0);
    ix = std::max(0L, w > 0 ? std::min(ix, w) : ix);
    iy = std::max(0L, h > 0 ? std::min(iy, h) : iy);
    return {ix, iy};
  }
  template <class P>
  IPolygon polygon(const std::vector<P>& points) const {
    IPolygon out;
    for (const auto& p : points) {
      const IPoint q = point(p.x, p.y);
      if (out.empty() || out.back().x != q.x || out.back().y != q.y) out.push_back(q);
    }
    return out;
  }
};

IBox extent(const IPolygon& p) {
  IBox b{p.front().x, p.front().y, p.front().x, p.front().y};
  for (const auto& q : p) {
    b.x0 = std::min(b.x0, q.x), b.y0 = std::min(b.y0, q.y);
    b.x1 = std::max(b.x1, q.x), b.y1 = std::max(b.y1, q.y);
  }
  return b;
}

IBox unite(const IBox& a, const IBox& b) {
  return {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1)};
}

IPolygon rect(const IBox& b) { return {{b.x0, b.y0}, {b.x1, b.y0}, {b.x1, b.y1}, {b.x0, b.y1}}; }

// "x,y x,y ...": PAGE's points and ALTO's recommended PointsType; at least two points (PAGE's
// pattern asks for them), a single point repeated.
std::string points(IPolygon p) {
  if (p.size() == 1) p.push_back(p.front());
  std::string s;
  for (const auto& q : p)
    s += (s.empty() ? "" : " ") + std::to_string(q.x) + "," + std::to_string(q.y);
  return s;
}

std::string conf(double p) {
  return xmlNumber(std::clamp(std::isfinite(p) ? p : 0.0, 0.0, 1.0), 4);
}

bool isSpace(const std::string& t) { return t == " " || t == "\t" || t == "\u00a0"; }

// xsd:ID is an NCName: a letter or '_' first, then letters, digits, '.', '-', '_' (non-ASCII
// bytes are taken as letters: UTF-8 names are what eScriptorium's ids never hold anyway).
bool isNcName(const std::string& s) {
  if (s.empty()) return false;
  const auto letter = [](unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; };
  if (!letter(static_cast<unsigned char>(s[0]))) return false;
  for (unsigned char c : s)
    if (!letter(c) && !std::isdigit(c) && c != '.' && c != '-') return false;
  return true;
}

// Unique, valid ids for what is written; `of` maps a layout id to the one written.
struct Ids {
  std::set<std::string> used;
  std::map<std::string, int> next;  // per prefix
  std::string take(const std::string& wanted, const std::string& prefix) {
    if (isNcName(wanted) && !used.count(wanted)) {
      used.insert(wanted);
      return wanted;
    }
    std::string id;
    do id = prefix + std::to_string(next[prefix]++);
    while (used.count(id));
    used.insert(id);
    return id;
  }
};

// One character of a reading: its token, probability and cut on the page.
struct Glyph {
  std::string token;
  double prob = 0;
  IPolygon cut;  // may be empty when the reading has no cut for it
};
struct Word {
  std::vector<Glyph> glyphs;
  std::string text() const {
    std::string t;
    for (const auto& g : glyphs) t += g.token;
    return t;
  }
  // kraken's serialiser's word confidence: the mean of its characters' (as a line's, so the
  // trace's for a kraken reading).
  double confidence() const {
    double sum = 0;
    for (const auto& g : glyphs) sum += g.prob;
    return glyphs.empty() ? 0.0 : sum / static_cast<double>(glyphs.size());
  }
  bool hasBox() const {
    return std::any_of(glyphs.begin(), glyphs.end(), [](const Glyph& g) { return !g.cut.empty(); });
  }
  IBox box() const {
    IBox b{};
    bool first = true;
    for (const auto& g : glyphs)
      if (!g.cut.empty()) {
        b = first ? extent(g.cut) : unite(b, extent(g.cut));
        first = false;
      }
    return b;
  }
};

// What is written of one line.
struct LineOut {
  const LayoutLine* line = nullptr;
  const LineReading* reading = nullptr;
  std::string id;
  IPolygon boundary;  // never empty
  IPolygon baseline;  // may be empty
  std::vector<Word> words;
};
struct BlockOut {
  const LayoutRegion* region = nullptr;  // null: the lines' own block
  std::string id;
  IPolygon boundary;
  std::vector<size_t> lines;
};

// kraken's steps are in the order of the network's frames and its prediction in display order
// (rpred's bidi_reordering, model/kraken_codec.h krakenReorder): when the prediction is the
// steps' code points reordered for display, the glyphs follow it (kraken's record reorders its
// cuts and confidences with its text, and serialises them so), mirrored glyphs substituted.
// Otherwise (any other model: its prediction is its steps) they stay as they are.
std::vector<Glyph> inReadingOrder(const std::vector<Glyph>& seq, const std::string& prediction) {
  std::u32string cps;
  try {
    for (const auto& g : seq) {
      const std::u32string u = krakenCodepoints(g.token, "a reading");
      if (u.size() != 1) return seq;
      cps += u;
    }
    if (cps.empty()) return seq;
    const BidiDisplayMap d = krakenDisplayMap(cps, KrakenBaseDir::Auto);
    if (d.text == cps || d.text != krakenCodepoints(prediction, "a reading") ||
        d.order.size() != d.text.size())
      return seq;
    std::vector<Glyph> out;
    for (size_t j = 0; j < d.order.size(); ++j) {
      if (d.order[j] < 0 || static_cast<size_t>(d.order[j]) >= seq.size()) return seq;
      Glyph g = seq[static_cast<size_t>(d.order[j])];
      g.token = krakenText({KrakenChar{d.text[j], 0, 0, 0}});
      out.push_back(g);
    }
    return out;
  } catch (const Error&) {
    return seq;
  }
}

struct PageOut {
  Frame frame;
  std::vector<LineOut> lines;
  std::vector<BlockOut> blocks;
  std::map<std::string, std::string> regionIds, lineIds;  // layout id -> written id
};

// A reading's glyphs: its steps up to the end token, blanks left out, each with its cut, in
// reading order.
std::vector<Glyph> readingGlyphs(const LineReading& r, const Frame& frame) {
  std::vector<Glyph> seq;
  for (size_t k = 0; k < r.trace.steps.size(); ++k) {
    const auto& s = r.trace.steps[k];
    if (s.token == Charset::kEndName) break;
    if (s.token.empty() || s.token == Charset::kBlankName) continue;
    seq.push_back({s.token, s.prob, k < r.cuts.size() ? frame.polygon(r.cuts[k]) : IPolygon{}});
  }
  return inReadingOrder(seq, r.trace.prediction);
}

// The glyphs cut into words at the spaces.
std::vector<Word> wordsOf(const std::vector<Glyph>& seq) {
  std::vector<Word> words;
  Word word;
  for (const auto& g : seq) {
    if (isSpace(g.token)) {
      if (!word.glyphs.empty()) words.push_back(word);
      word = {};
      continue;
    }
    word.glyphs.push_back(g);
  }
  if (!word.glyphs.empty()) words.push_back(word);
  return words;
}

// One line as written: its id, its outline (its boundary, else its box, else its baseline's
// extent, else a point) and its words.
LineOut prepareLine(const LayoutLine& l, const LineReading& r, const Frame& frame, Ids& ids) {
  LineOut o;
  o.line = &l;
  o.reading = &r;
  o.id = ids.take(l.id, "foveal_line_");
  o.boundary = frame.polygon(l.boundary);
  o.baseline = frame.polygon(l.baseline);
  if (o.boundary.empty() && l.hasBox)
    o.boundary =
        rect(extent({frame.point(l.bbox[0], l.bbox[1]), frame.point(l.bbox[2], l.bbox[3])}));
  if (o.boundary.empty() && !o.baseline.empty()) o.boundary = rect(extent(o.baseline));
  if (o.boundary.empty()) o.boundary = {{0, 0}};
  o.words = wordsOf(readingGlyphs(r, frame));
  return o;
}

// Lines into their regions' blocks; a run of lines without a region gets a block of its own,
// placed before the next region that holds lines. A block without an outline gets its lines'.
std::vector<BlockOut> orderBlocks(const PageLayout& layout, const PageOut& out,
                                  const std::map<std::string, size_t>& regionIndex, Ids& ids) {
  std::vector<BlockOut> ordered;
  std::vector<bool> placed(out.blocks.size(), false);
  for (size_t i = 0; i < out.lines.size(); ++i) {
    const auto& l = *out.lines[i].line;
    const auto it = l.regionId.empty() ? regionIndex.end() : regionIndex.find(l.regionId);
    if (it == regionIndex.end()) {
      if (ordered.empty() || ordered.back().region) {
        BlockOut b;
        b.id = ids.take("", "foveal_region_");
        ordered.push_back(b);
      }
      ordered.back().lines.push_back(i);
      continue;
    }
    const size_t ri = it->second;
    if (!placed[ri]) {
      for (size_t j = 0; j <= ri; ++j)  // the regions before it without lines keep their place
        if (!placed[j] && (j == ri || [&] {
              for (const auto& x : out.lines)
                if (x.line->regionId == layout.regions[j].id) return false;
              return true;
            }())) {
          placed[j] = true;
          ordered.push_back(out.blocks[j]);
        }
    }
    for (auto& b : ordered)
      if (b.region == &layout.regions[ri]) b.lines.push_back(i);
  }
  for (size_t j = 0; j < out.blocks.size(); ++j)
    if (!placed[j]) ordered.push_back(out.blocks[j]);
  for (auto& b : ordered) {
    if (!b.boundary.empty()) continue;
    IBox e{};
    for (size_t k = 0; k < b.lines.size(); ++k)
      e = k == 0 ? extent(out.lines[b.lines[k]].boundary)
                 : unite(e, extent(out.lines[b.lines[k]].boundary));
    b.boundary = rect(e);
  }
  return ordered;
}

PageOut prepare(const PageLayout& layout, const std::vector<LineReading>& readings) {
  if (readings.size() != layout.lines.size())
    throw Error("page export: " + std::to_string(readings.size()) + " readings for the " +
                std::to_string(layout.lines.size()) + " lines of the layout of " +
                layout.imageFilename);
  PageOut out;
  out.frame = {layout.imageWidth, layout.imageHeight};
  Ids ids;
  // Regions first (their ids are kept before any line's), then lines.
  std::map<std::string, size_t> regionIndex;
  for (size_t i = 0; i < layout.regions.size(); ++i) {
    const auto& r = layout.regions[i];
    BlockOut b;
    b.region = &r;
    b.id = ids.take(r.id, "foveal_region_");
    b.boundary = out.frame.polygon(r.boundary);
    if (!r.id.empty() && !regionIndex.count(r.id)) {
      regionIndex[r.id] = i;
      out.regionIds[r.id] = b.id;
    }
    out.blocks.push_back(b);
  }
  for (size_t i = 0; i < layout.lines.size(); ++i) {
    const auto& l = layout.lines[i];
    out.lines.push_back(prepareLine(l, readings[i], out.frame, ids));
    if (!l.id.empty()) out.lineIds.emplace(l.id, out.lines.back().id);
  }
  out.blocks = orderBlocks(layout, out, regionIndex, ids);
  return out;
}

// The PAGE element kraken's reader maps a region type to (page_layout.cpp's table), for a region
// without lines.
std::string pageRegionElement(const std::string& type) {
  static const std::map<std::string, std::string> m = {
      {"image", "ImageRegion"},         {"line drawing", "LineDrawingRegion"},
      {"graphic", "GraphicRegion"},     {"table", "TableRegion"},
      {"chart", "ChartRegion"},         {"map", "MapRegion"},
      {"separator", "SeparatorRegion"}, {"maths", "MathsRegion"},
      {"chem", "ChemRegion"},           {"music", "MusicRegion"},
      {"advert", "AdvertRegion"},       {"noise", "NoiseRegion"},
      {"unknown", "UnknownRegion"},     {"custom", "CustomRegion"}};
  const auto it = m.find(type);
  return it == m.end() ? "TextRegion" : it->second;
}

// kraken's `custom` structure type, when it can be written (PAGE's custom syntax has no escape).
std::string structureCustom(const std::string& type) {
  if (type.empty() || type == "text" || type.find_first_of("{};:") != std::string::npos) return {};
  return " custom=\"" + xmlEscape("structure {type:" + type + ";}") + "\"";
}

std::string description(const PageExportOptions& o) {
  return o.modelDescription.empty() ? "read by " + o.software
                                    : "read by " + o.software + " with " + o.modelDescription;
}

// The explicit reading orders kraken found (not the implicit ones, which document order gives).
bool isImplicit(const LayoutReadingOrder& o) {
  return o.id == "line_implicit" || o.id == "region_implicit" || o.id == "region_transkribus";
}

// Ids for the other elements written: none may clash with a region's or line's.
Ids idsBeside(const PageOut& p) {
  Ids ids;
  for (const auto& b : p.blocks) ids.used.insert(b.id);
  for (const auto& l : p.lines) ids.used.insert(l.id);
  return ids;
}

// An explicit reading order's ids as written (`written`: layout id -> written id); none for an
// implicit order or one of another level than `level`.
std::vector<std::string> writtenRefs(const LayoutReadingOrder& ro, const std::string& level,
                                     const std::map<std::string, std::string>& written) {
  std::vector<std::string> refs;
  if (ro.level != level || isImplicit(ro)) return refs;
  for (const auto& id : ro.ids)
    if (const auto it = written.find(id); it != written.end()) refs.push_back(it->second);
  return refs;
}

// `text`'s lines, each indented by `by`.
std::string indented(const std::string& text, const std::string& by) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    out += by + text.substr(at, end - at + 1);
    at = end + 1;
  }
  return out;
}

// The explicit region orders, with the regions written. PAGE's ReadingOrder holds one group:
// one total order is an OrderedGroup; several, or partial ones, OrderedGroups in an
// UnorderedGroup (which kraken reads as partial orders, each with its id).
void writePageReadingOrder(std::ostream& o, const PageLayout& layout, const PageOut& p) {
  Ids ids = idsBeside(p);  // a group's id must not clash with a region's or line's
  std::vector<std::string> groups;
  bool partial = false;
  for (const auto& ro : layout.readingOrders) {
    const std::vector<std::string> refs = writtenRefs(ro, "region", p.regionIds);
    if (refs.empty()) continue;
    std::string gid = ro.id;
    if (gid.size() > 8 && gid.compare(gid.size() - 8, 8, ":regions") == 0)
      gid.resize(gid.size() - 8);
    std::string g =
        "<OrderedGroup id=\"" + ids.take(gid, "foveal_ro_") + "\"" +
        (ro.description.empty() ? "" : " caption=\"" + xmlEscape(ro.description) + "\"") + ">\n";
    for (size_t k = 0; k < refs.size(); ++k)
      g += "  <RegionRefIndexed index=\"" + std::to_string(k) + "\" regionRef=\"" + refs[k] +
           "\"/>\n";
    groups.push_back(g + "</OrderedGroup>\n");
    partial = partial || !ro.isTotal;
  }
  if (groups.size() == 1 && !partial) {
    o << "    <ReadingOrder>\n" << indented(groups[0], "      ") << "    </ReadingOrder>\n";
  } else if (!groups.empty()) {
    o << "    <ReadingOrder>\n      <UnorderedGroup id=\"" << ids.take("", "foveal_ro_") << "\">\n";
    for (const auto& g : groups) o << indented(g, "        ");
    o << "      </UnorderedGroup>\n    </ReadingOrder>\n";
  }
}

// A PAGE TextLine: its outline and baseline, its words with their glyphs, its reading.
void writePageLine(std::ostream& o, const LineOut& l) {
  const auto& trace = l.reading->trace;
  o << "      <TextLine id=\"" << l.id << "\">\n        <Coords points=\"" << points(l.boundary)
    << "\"/>\n";
  if (l.baseline.size() >= 2) o << "        <Baseline points=\"" << points(l.baseline) << "\"/>\n";
  for (size_t w = 0; w < l.words.size(); ++w) {
    const Word& word = l.words[w];
    const std::string wid = l.id + "_w" + std::to_string(w);
    // A word without cuts (a reading whose steps have none) is outlined by its line.
    o << "        <Word id=\"" << wid << "\">\n          <Coords points=\""
      << points(word.hasBox() ? rect(word.box()) : l.boundary) << "\"/>\n";
    for (size_t k = 0; k < word.glyphs.size(); ++k) {
      const Glyph& g = word.glyphs[k];
      o << "          <Glyph id=\"" << wid << "_g" << k << "\">\n            <Coords points=\""
        << points(g.cut.empty() ? (word.hasBox() ? rect(word.box()) : l.boundary) : g.cut)
        << "\"/>\n            <TextEquiv conf=\"" << conf(g.prob) << "\"><Unicode>"
        << xmlEscape(g.token) << "</Unicode></TextEquiv>\n          </Glyph>\n";
    }
    o << "          <TextEquiv conf=\"" << conf(word.confidence()) << "\"><Unicode>"
      << xmlEscape(word.text()) << "</Unicode></TextEquiv>\n        </Word>\n";
  }
  o << "        <TextEquiv" << (l.reading->empty ? "" : " conf=\"" + conf(trace.confidence) + "\"")
    << "><Unicode>" << xmlEscape(trace.prediction) << "</Unicode></TextEquiv>\n      </TextLine>\n";
}

std::string altoPos(const IBox& b) {
  return " HPOS=\"" + std::to_string(b.x0) + "\" VPOS=\"" + std::to_string(b.y0) + "\" WIDTH=\"" +
         std::to_string(b.x1 - b.x0) + "\" HEIGHT=\"" + std::to_string(b.y1 - b.y0) + "\"";
}

std::string altoShape(const std::string& indent, const IPolygon& poly) {
  return indent + "<Shape><Polygon POINTS=\"" + points(poly) + "\"/></Shape>\n";
}

// Explicit line orders, with the lines written, each an OrderedGroup of ElementRefs; partial
// ones (kraken's orders under a top-level UnorderedGroup) all in one UnorderedGroup.
void writeAltoReadingOrder(std::ostream& o, const PageLayout& layout, const PageOut& p, Ids& ids) {
  std::string orders;
  bool partial = false;
  for (const auto& ro : layout.readingOrders) {
    const std::vector<std::string> refs = writtenRefs(ro, "line", p.lineIds);
    if (refs.empty()) continue;
    orders += "      <OrderedGroup ID=\"" + ids.take(ro.id, "foveal_ro_") + "\">\n";
    for (const auto& r : refs)
      orders +=
          "        <ElementRef ID=\"" + ids.take("", "foveal_ref_") + "\" REF=\"" + r + "\"/>\n";
    orders += "      </OrderedGroup>\n";
    partial = partial || !ro.isTotal;
  }
  if (partial)
    o << "  <ReadingOrder>\n    <UnorderedGroup ID=\"" << ids.take("", "foveal_ro_") << "\">\n"
      << orders << "    </UnorderedGroup>\n  </ReadingOrder>\n";
  else if (!orders.empty())
    o << "  <ReadingOrder>\n" << orders << "  </ReadingOrder>\n";
}

// An ALTO TextLine: its outline and baseline, its words as Strings (with their Glyphs) between
// SPs.
void writeAltoLine(std::ostream& o, const LineOut& l, Ids& ids) {
  o << "          <TextLine ID=\"" << l.id << "\"" << altoPos(extent(l.boundary));
  if (l.baseline.size() >= 2) o << " BASELINE=\"" << points(l.baseline) << "\"";
  o << ">\n" << altoShape("            ", l.boundary);
  if (l.words.empty())  // ALTO's TextLine holds at least one String
    o << "            <String ID=\"" << ids.take("", "foveal_string_") << "\" CONTENT=\"\""
      << altoPos(extent(l.boundary)) << "/>\n";
  for (size_t w = 0; w < l.words.size(); ++w) {
    const Word& word = l.words[w];
    const IBox wb = word.hasBox() ? word.box() : extent(l.boundary);
    if (w > 0) {
      const IBox prev = l.words[w - 1].hasBox() ? l.words[w - 1].box() : wb;
      o << "            <SP ID=\"" << ids.take("", "foveal_sp_") << "\" HPOS=\"" << prev.x1
        << "\" VPOS=\"" << prev.y0 << "\" WIDTH=\"" << std::max(0L, wb.x0 - prev.x1) << "\"/>\n";
    }
    o << "            <String ID=\"" << ids.take("", "foveal_string_") << "\" CONTENT=\""
      << xmlEscape(word.text()) << "\"" << altoPos(wb) << " WC=\"" << conf(word.confidence())
      << "\">\n";
    for (const auto& g : word.glyphs) {
      // ALTO's Glyph CONTENT is one character; a multi-character label keeps its place in
      // the String alone (as formats/ocr_formats.cpp's toAlto).
      if (splitUtf8(g.token).size() != 1) continue;
      const IBox gb = g.cut.empty() ? wb : extent(g.cut);
      o << "              <Glyph ID=\"" << ids.take("", "foveal_glyph_") << "\" CONTENT=\""
        << xmlEscape(g.token) << "\"" << altoPos(gb) << " GC=\"" << conf(g.prob) << "\">\n"
        << altoShape("                ", g.cut.empty() ? rect(gb) : g.cut)
        << "              </Glyph>\n";
    }
    o << "            </String>\n";
  }
  o << "          </TextLine>\n";
}

}  // namespace

std::string toPageXmlPage(const PageLayout& layout, const std::vector<LineReading>& readings,
                          const PageExportOptions& options) {
  const PageOut p = prepare(layout, readings);
  const std::string when = options.createdUtc.empty() ? utcNow() : options.createdUtc;
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       "<PcGts xmlns=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15\" "
       "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
       "xsi:schemaLocation=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15 "
       "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15/pagecontent.xsd\">\n"
       "  <Metadata>\n    <Creator>"
    << xmlEscape(options.software) << "</Creator>\n    <Created>" << when
    << "</Created>\n    <LastChange>" << when << "</LastChange>\n    <Comments>"
    << xmlEscape(description(options)) << "</Comments>\n  </Metadata>\n  <Page imageFilename=\""
    << xmlEscape(layout.imageFilename) << "\" imageWidth=\"" << layout.imageWidth
    << "\" imageHeight=\"" << layout.imageHeight << "\">\n";
  writePageReadingOrder(o, layout, p);
  for (const auto& b : p.blocks) {
    const std::string type = b.region ? b.region->type : "text";
    const std::string element = b.lines.empty() ? pageRegionElement(type) : "TextRegion";
    o << "    <" << element << " id=\"" << b.id << "\""
      << (element == "TextRegion" ? structureCustom(type) : "") << ">\n      <Coords points=\""
      << points(b.boundary) << "\"/>\n";
    for (size_t li : b.lines) writePageLine(o, p.lines[li]);
    o << "    </" << element << ">\n";
  }
  o << "  </Page>\n</PcGts>\n";
  return o.str();
}

std::string toAltoPage(const PageLayout& layout, const std::vector<LineReading>& readings,
                       const PageExportOptions& options) {
  const PageOut p = prepare(layout, readings);
  Ids ids = idsBeside(p);
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       "<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\" "
       "xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
       "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
       "xsi:schemaLocation=\"http://www.loc.gov/standards/alto/ns-v4# "
       "http://www.loc.gov/alto/v4/alto-4-3.xsd\">\n"
       "  <Description>\n    <MeasurementUnit>pixel</MeasurementUnit>\n"
       "    <sourceImageInformation>\n      <fileName>"
    << xmlEscape(layout.imageFilename)
    << "</fileName>\n    </sourceImageInformation>\n    <OCRProcessing ID=\""
    << ids.take("OCR_0", "foveal_ocr_")
    << "\">\n      <ocrProcessingStep>\n        <processingStepSettings>"
    << xmlEscape(description(options))
    << "</processingStepSettings>\n        <processingSoftware>\n          <softwareName>"
    << xmlEscape(options.software)
    << "</softwareName>\n        </processingSoftware>\n      </ocrProcessingStep>\n"
       "    </OCRProcessing>\n  </Description>\n";
  writeAltoReadingOrder(o, layout, p, ids);

  const IBox pageBox{0, 0, layout.imageWidth, layout.imageHeight};
  o << "  <Layout>\n    <Page ID=\"" << ids.take("page_0", "foveal_page_") << "\" WIDTH=\""
    << layout.imageWidth << "\" HEIGHT=\"" << layout.imageHeight
    << "\" PHYSICAL_IMG_NR=\"0\">\n      <PrintSpace" << altoPos(pageBox) << ">\n";
  for (const auto& b : p.blocks) {
    const std::string type = b.region ? b.region->type : "text";
    const std::string element = !b.lines.empty() || type == "text"          ? "TextBlock"
                                : type == "image" || type == "illustration" ? "Illustration"
                                                                            : "GraphicalElement";
    o << "        <" << element << " ID=\"" << b.id << "\"" << altoPos(extent(b.boundary)) << ">\n"
      << altoShape("          ", b.boundary);
    for (size_t li : b.lines) writeAltoLine(o, p.lines[li], ids);
    o << "        </" << element << ">\n";
  }
  o << "      </PrintSpace>\n    </Page>\n  </Layout>\n</alto>\n";
  return o.str();
}

}  // namespace foveal::core
