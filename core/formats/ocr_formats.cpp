#include "formats/ocr_formats.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <locale>
#include <sstream>

#include "base/error.h"
#include "model/charset.h"

namespace foveal::core {

namespace {

using IntBox = std::array<long, 4>;  // x0 y0 x1 y1, right and bottom exclusive

bool isSpecialToken(const std::string& t) {
  return t == Charset::kEndName || t == Charset::kGoName || t == Charset::kBlankName || t == "[s]";
}

bool isSpace(const std::string& t) { return t == " " || t == "\t" || t == "\u00a0"; }

std::string num(double v, int decimals) { return xmlNumber(v, decimals); }

}  // namespace

// A number in the C locale (the GUI runs under the user's locale, where printf may write "0,5"),
// with at most `decimals` decimals and no trailing zeros.
std::string xmlNumber(double v, int decimals) {
  std::ostringstream o;
  o.imbue(std::locale::classic());
  o.setf(std::ios::fixed);
  o.precision(decimals);
  o << v;
  std::string s = o.str();
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

namespace {

IntBox clampBox(IntBox b, long w, long h) {
  b[0] = std::clamp(b[0], 0L, w);
  b[2] = std::clamp(b[2], b[0], w);
  b[1] = std::clamp(b[1], 0L, h);
  b[3] = std::clamp(b[3], b[1], h);
  return b;
}

IntBox unite(const IntBox& a, const IntBox& b) {
  return {std::min(a[0], b[0]), std::min(a[1], b[1]), std::max(a[2], b[2]), std::max(a[3], b[3])};
}

std::string bbox(const IntBox& b) {
  return std::to_string(b[0]) + " " + std::to_string(b[1]) + " " + std::to_string(b[2]) + " " +
         std::to_string(b[3]);
}

// The alternatives of a step: its top-k without the chosen token and the decoder's own classes.
std::vector<TokenProb> alternatives(const TraceStep& s) {
  std::vector<TokenProb> out;
  for (const auto& k : s.topk)
    if (k.token != s.token && !isSpecialToken(k.token)) out.push_back(k);
  return out;
}

// The reading laid out as the formats see it: characters (the steps before the end token),
// grouped into words at spaces, each with its box in whole pixels inside the image.
struct Layout {
  struct Word {
    std::vector<const TraceStep*> chars;
    std::vector<IntBox> boxes;
    IntBox box{0, 0, 0, 0};
    double confidence = 0;
    std::string text() const {
      std::string t;
      for (const auto* c : chars) t += c->token;
      return t;
    }
  };
  std::vector<Word> words;
  IntBox line{0, 0, 0, 0};
  IntBox page{0, 0, 0, 0};
};

Layout layOut(const Trace& trace) {
  Layout l;
  l.page = {0, 0, trace.imageW, trace.imageH};
  Layout::Word word;
  auto flush = [&] {
    if (word.chars.empty()) return;
    word.box = word.boxes.front();
    double p = 1;
    for (size_t k = 0; k < word.chars.size(); ++k) {
      word.box = unite(word.box, word.boxes[k]);
      p *= word.chars[k]->prob;
    }
    word.confidence = p;
    l.line = l.words.empty() ? word.box : unite(l.line, word.box);
    l.words.push_back(word);
    word = {};
  };
  for (const auto& s : trace.steps) {
    if (s.token == Charset::kEndName) break;
    if (isSpace(s.token)) {
      flush();
      continue;
    }
    word.chars.push_back(&s);
    word.boxes.push_back(clampBox(hocrBox(s.box), trace.imageW, trace.imageH));
  }
  flush();
  // One word: the reading's own confidence (the trace's rule, as it always was in hOCR).
  if (l.words.size() == 1) l.words.front().confidence = trace.confidence;
  return l;
}

// The other readings of a beam search (not the one the steps show), best first.
std::vector<const BeamHypothesis*> otherReadings(const Trace& trace) {
  std::vector<const BeamHypothesis*> out;
  for (size_t i = 0; i < trace.hypotheses.size(); ++i)
    if (static_cast<int>(i) != trace.hypothesis) out.push_back(&trace.hypotheses[i]);
  return out;
}

}  // namespace

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {
// The C0 controls XML 1.0 does not allow, in content or attributes (all but tab, LF, CR).
bool xmlForbidden(char c) {
  return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
}
constexpr const char* kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD in UTF-8
}  // namespace

std::string xmlEscape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // XML 1.0 forbids the other C0 controls: U+FFFD shows where one was (dropped, a
        // reading's character vanished without a word: issue 65).
        if (xmlForbidden(c))
          out += kReplacementCharacter;
        else
          out += c;
    }
  }
  return out;
}

size_t xmlForbiddenCount(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), xmlForbidden));
}

void XmlReplacements::add(const Trace& trace) {
  // The words and glyphs are the steps' tokens (the prediction is their text).
  if (trace.steps.empty()) reading += xmlForbiddenCount(trace.prediction);
  for (const auto& s : trace.steps) {
    reading += xmlForbiddenCount(s.token);
    for (const auto& t : s.topk)
      if (t.token != s.token) alternatives += xmlForbiddenCount(t.token);
  }
  for (const auto& h : trace.hypotheses)
    if (h.reading != trace.prediction) alternatives += xmlForbiddenCount(h.reading);
}

std::string XmlReplacements::warning() const {
  if (reading == 0 && alternatives == 0) return {};
  auto count = [](size_t n) {
    return std::to_string(n) + (n == 1 ? " control character" : " control characters");
  };
  std::string w = reading ? count(reading) + " of the reading" : std::string();
  if (alternatives)
    w += (w.empty() ? count(alternatives) : " and " + std::to_string(alternatives)) +
         " of its alternatives";
  return w + " written as U+FFFD (XML 1.0 forbids them; the JSON trace keeps them)";
}

std::string xmlReplacementWarning(const Trace& trace) {
  XmlReplacements r;
  r.add(trace);
  const std::string w = r.warning();
  return w.empty() || trace.source.empty() ? w : trace.source + ": " + w;
}

std::string toString(OcrFormat format) {
  switch (format) {
    case OcrFormat::Alto:
      return "alto";
    case OcrFormat::Page:
      return "page";
    case OcrFormat::Hocr:
      break;
  }
  return "hocr";
}

OcrFormat ocrFormatFromString(const std::string& name) {
  for (auto f : {OcrFormat::Hocr, OcrFormat::Alto, OcrFormat::Page})
    if (toString(f) == name) return f;
  throw Error("unknown OCR format '" + name + "' (choose hocr, alto or page)");
}

std::string ocrFileSuffix(OcrFormat format) {
  switch (format) {
    case OcrFormat::Alto:
      return ".alto.xml";
    case OcrFormat::Page:
      return ".page.xml";
    case OcrFormat::Hocr:
      break;
  }
  return ".hocr";
}

std::string toOcrDocument(const Trace& trace, OcrFormat format) {
  switch (format) {
    case OcrFormat::Alto:
      return toAlto(trace);
    case OcrFormat::Page:
      return toPageXml(trace);
    case OcrFormat::Hocr:
      break;
  }
  return toHocr(trace);
}

std::string toHocr(const Trace& trace) {
  const Layout l = layOut(trace);
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\"\n"
       "    \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n"
       "<html xmlns=\"http://www.w3.org/1999/xhtml\" xml:lang=\"en\" lang=\"en\">\n"
       " <head>\n"
       "  <title>"
    << xmlEscape(trace.source)
    << "</title>\n"
       "  <meta http-equiv=\"Content-Type\" content=\"text/html;charset=utf-8\"/>\n"
       "  <meta name=\"ocr-system\" content=\"foveal\"/>\n"
       "  <meta name=\"ocr-capabilities\" content=\"ocr_page ocr_line ocrx_word ocrx_cinfo\"/>\n"
       "  <meta name=\"foveal-model\" content=\""
    << xmlEscape(trace.modelDescription) << "\"/>\n  <meta name=\"foveal-focus-rule\" content=\""
    << xmlEscape(trace.focusRule)
    << "\"/>\n"
       " </head>\n"
       " <body>\n"
       "  <div class=\"ocr_page\" id=\"page_1\" title=\"image &quot;"
    << xmlEscape(trace.source) << "&quot;; bbox " << bbox(l.page) << "\">\n";
  if (!l.words.empty())
    o << "   <span class=\"ocr_line\" id=\"line_1_1\" title=\"bbox " << bbox(l.line) << "\">";
  int choice = 1;
  for (size_t w = 0; w < l.words.size(); ++w) {
    const auto& word = l.words[w];
    const std::string wid = "1_" + std::to_string(w + 1);
    int timestep = 1;
    o << "\n    <span class=\"ocrx_word\" id=\"word_" << wid << "\" title=\"bbox " << bbox(word.box)
      << "; x_wconf " << std::lround(100.0 * word.confidence) << "\">";
    for (size_t k = 0; k < word.chars.size(); ++k) {
      const auto& s = *word.chars[k];
      o << "\n     <span class=\"ocrx_cinfo\" title=\"x_bboxes " << bbox(word.boxes[k])
        << "; x_conf " << num(100.0 * s.prob, 2) << "\">" << xmlEscape(s.token) << "</span>";
      // The step's top-k as Tesseract writes its LSTM choices (lstm_choice_mode=2): the chosen
      // token first, then the others, each with its probability in percent.
      std::vector<TokenProb> choices = {{s.token, s.tokenIndex, s.prob}};
      for (const auto& a : alternatives(s)) choices.push_back(a);
      o << "\n     <span class=\"ocrx_cinfo\" id=\"lstm_choices_" << wid << "_" << k + 1 << "\">";
      for (const auto& c : choices)
        o << "\n      <span class=\"ocrx_cinfo\" id=\"choice_" << wid << "_" << choice++
          << "\" title=\"x_confs " << num(100.0 * c.prob, 2) << "\">" << xmlEscape(c.token)
          << "</span>";
      o << "</span>";
      // The step's timesteps (a CTC model's columns, Tesseract's LSTM timesteps) as Tesseract
      // writes them with lstm_choice_mode=1: an ocr_symbol holding a timestep span per column,
      // each holding that column's choices, the blank as empty text.
      if (!s.columns.empty()) {
        o << "\n     <span class=\"ocr_symbol\" id=\"symbol_" << wid << "_" << k + 1 << "\">";
        for (int c : s.columns) {
          if (c < 0 || static_cast<size_t>(c) >= trace.columnTopk.size()) continue;
          o << "\n      <span class=\"ocrx_cinfo\" id=\"timestep" << wid << "_" << timestep++
            << "\">";
          for (const auto& tp : trace.columnTopk[static_cast<size_t>(c)])
            o << "\n       <span class=\"ocrx_cinfo\" id=\"choice_" << wid << "_" << choice++
              << "\" title=\"x_confs " << num(100.0 * tp.prob, 2) << "\">"
              << (tp.token == Charset::kBlankName ? std::string() : xmlEscape(tp.token))
              << "</span>";
          o << "</span>";
        }
        o << "</span>";
      }
    }
    o << "\n    </span>";
  }
  if (!l.words.empty()) o << "\n   </span>\n";
  o << "  </div>\n </body>\n</html>\n";
  return o.str();
}

std::string toAlto(const Trace& trace) {
  const Layout l = layOut(trace);
  auto pos = [](const IntBox& b) {
    return " HPOS=\"" + std::to_string(b[0]) + "\" VPOS=\"" + std::to_string(b[1]) + "\" WIDTH=\"" +
           std::to_string(b[2] - b[0]) + "\" HEIGHT=\"" + std::to_string(b[3] - b[1]) + "\"";
  };
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       "<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\" "
       "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
       "xsi:schemaLocation=\"http://www.loc.gov/standards/alto/ns-v4# "
       "http://www.loc.gov/alto/v4/alto-4-2.xsd\">\n"
       "\t<Description>\n"
       "\t\t<MeasurementUnit>pixel</MeasurementUnit>\n"
       "\t\t<sourceImageInformation>\n"
       "\t\t\t<fileName>"
    << xmlEscape(trace.source)
    << "</fileName>\n"
       "\t\t</sourceImageInformation>\n"
       "\t\t<OCRProcessing ID=\"OCR_0\">\n"
       "\t\t\t<ocrProcessingStep>\n"
       "\t\t\t\t<processingStepSettings>"
    << xmlEscape("model: " + trace.modelDescription + "; stages: " + trace.stages + "; decoding: " +
                 (trace.beamWidth > 1 ? "beam search, width " + std::to_string(trace.beamWidth)
                                      : std::string("greedy")) +
                 "; boxes: " + trace.focusRule)
    << "</processingStepSettings>\n"
       "\t\t\t\t<processingSoftware>\n"
       "\t\t\t\t\t<softwareName>Foveal</softwareName>\n"
       "\t\t\t\t</processingSoftware>\n"
       "\t\t\t</ocrProcessingStep>\n"
       "\t\t</OCRProcessing>\n"
       "\t</Description>\n"
       "\t<Layout>\n"
       "\t\t<Page WIDTH=\""
    << trace.imageW << "\" HEIGHT=\"" << trace.imageH
    << "\" PHYSICAL_IMG_NR=\"0\" ID=\"page_0\">\n"
       "\t\t\t<PrintSpace"
    << pos(l.page) << ">\n";
  if (!l.words.empty()) {
    o << "\t\t\t\t<TextBlock ID=\"block_0\"" << pos(l.line) << ">\n"
      << "\t\t\t\t\t<TextLine ID=\"line_0\"" << pos(l.line) << ">\n";
    const auto others = otherReadings(trace);
    int glyph = 0;
    for (size_t w = 0; w < l.words.size(); ++w) {
      const auto& word = l.words[w];
      if (w > 0) {
        const auto& prev = l.words[w - 1].box;
        o << "\t\t\t\t\t\t<SP HPOS=\"" << prev[2] << "\" VPOS=\"" << prev[1] << "\" WIDTH=\""
          << std::max(0L, word.box[0] - prev[2]) << "\"/>\n";
      }
      std::string cc;
      for (const auto* c : word.chars) {
        if (!cc.empty()) cc += ' ';
        cc += std::to_string(std::lround(9.0 * (1.0 - std::clamp(c->prob, 0.0, 1.0))));
      }
      o << "\t\t\t\t\t\t<String ID=\"string_" << w << "\"" << pos(word.box) << " WC=\""
        << num(std::clamp(word.confidence, 0.0, 1.0), 4) << "\" CC=\"" << cc << "\" CONTENT=\""
        << xmlEscape(word.text()) << "\">\n";
      if (l.words.size() == 1)
        for (const auto* h : others)
          o << "\t\t\t\t\t\t\t<ALTERNATIVE PURPOSE=\"beam search reading, log p "
            << num(h->logProb, 4) << "\">" << xmlEscape(h->reading) << "</ALTERNATIVE>\n";
      for (size_t k = 0; k < word.chars.size(); ++k) {
        const auto& s = *word.chars[k];
        // ALTO's Glyph CONTENT is exactly one character; an engine's multi-character symbol
        // (Tesseract may read a ligature as "fi") keeps its box in the String alone.
        if (splitUtf8(s.token).size() != 1) continue;
        std::vector<TokenProb> alts;
        for (const auto& a : alternatives(s))
          if (!a.token.empty()) alts.push_back(a);
        o << "\t\t\t\t\t\t\t<Glyph ID=\"glyph_" << glyph++ << "\" CONTENT=\"" << xmlEscape(s.token)
          << "\" GC=\"" << num(std::clamp(s.prob, 0.0, 1.0), 4) << "\"" << pos(word.boxes[k])
          << (alts.empty() ? "/>\n" : ">\n");
        for (const auto& a : alts)
          o << "\t\t\t\t\t\t\t\t<Variant CONTENT=\"" << xmlEscape(a.token) << "\" VC=\""
            << num(std::clamp(a.prob, 0.0, 1.0), 4) << "\"/>\n";
        if (!alts.empty()) o << "\t\t\t\t\t\t\t</Glyph>\n";
      }
      o << "\t\t\t\t\t\t</String>\n";
    }
    o << "\t\t\t\t\t</TextLine>\n\t\t\t\t</TextBlock>\n";
  }
  o << "\t\t\t</PrintSpace>\n\t\t</Page>\n\t</Layout>\n</alto>\n";
  return o.str();
}

namespace {

std::string pageRect(const IntBox& b) {
  return std::to_string(b[0]) + "," + std::to_string(b[1]) + " " + std::to_string(b[2]) + "," +
         std::to_string(b[1]) + " " + std::to_string(b[2]) + "," + std::to_string(b[3]) + " " +
         std::to_string(b[0]) + "," + std::to_string(b[3]);
}

// A glyph's outline: the last STN's quad (sharp models look through it), else its box; its
// points clamped into the image (W x H), as the schema asks of every outline.
std::string glyphOutline(const TraceStep& s, const IntBox& box, long W, long H, IntBox& extent) {
  if (s.stn.empty()) {
    extent = box;
    return pageRect(box);
  }
  std::string pts;
  extent = {W, H, 0, 0};
  for (const auto& p : s.stn.back().quad) {
    const long x = std::clamp(std::lround(p.x), 0L, W), y = std::clamp(std::lround(p.y), 0L, H);
    extent = {std::min(extent[0], x), std::min(extent[1], y), std::max(extent[2], x),
              std::max(extent[3], y)};
    pts += (pts.empty() ? "" : " ") + std::to_string(x) + "," + std::to_string(y);
  }
  return pts;
}

std::string textEquiv(const std::string& indent, int index, double conf, const std::string& text) {
  return indent + "<TextEquiv index=\"" + std::to_string(index) + "\" conf=\"" +
         num(std::clamp(conf, 0.0, 1.0), 4) + "\"><Unicode>" + xmlEscape(text) +
         "</Unicode></TextEquiv>\n";
}

struct WordOut {
  std::vector<std::string> glyphPoints;
  IntBox box;
};

// Word and line outlines must hold their glyphs' points: grow them by the quads' extents.
std::vector<WordOut> pageWords(const Layout& l, long W, long H, IntBox& line) {
  std::vector<WordOut> words;
  line = l.line;
  for (size_t w = 0; w < l.words.size(); ++w) {
    WordOut out;
    out.box = l.words[w].box;
    for (size_t k = 0; k < l.words[w].chars.size(); ++k) {
      IntBox extent;
      out.glyphPoints.push_back(
          glyphOutline(*l.words[w].chars[k], l.words[w].boxes[k], W, H, extent));
      out.box = unite(out.box, extent);
    }
    line = w == 0 ? out.box : unite(line, out.box);
    words.push_back(out);
  }
  if (l.words.empty()) line = l.page;
  return words;
}

}  // namespace

std::string toPageXml(const Trace& trace, const std::string& createdUtc) {
  const Layout l = layOut(trace);
  const long W = trace.imageW, H = trace.imageH;
  IntBox line;
  const std::vector<WordOut> words = pageWords(l, W, H, line);

  std::string reading;
  for (size_t w = 0; w < l.words.size(); ++w) reading += (w ? " " : "") + l.words[w].text();

  const std::string when = createdUtc.empty() ? utcNow() : createdUtc;
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
       "<PcGts xmlns=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15\" "
       "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
       "xsi:schemaLocation=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15 "
       "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15/pagecontent.xsd\">\n"
       "  <Metadata>\n"
       "    <Creator>Foveal</Creator>\n"
       "    <Created>"
    << when << "</Created>\n    <LastChange>" << when
    << "</LastChange>\n"
       "    <Comments>"
    << xmlEscape("model: " + trace.modelDescription + "; stages: " + trace.stages +
                 "; glyph outlines: " + (trace.hasStn() ? "STN quads" : "step boxes") + " (" +
                 trace.focusRule + ")")
    << "</Comments>\n"
       "  </Metadata>\n"
       "  <Page imageFilename=\""
    << xmlEscape(trace.source) << "\" imageWidth=\"" << W << "\" imageHeight=\"" << H << "\">\n"
    << "    <TextRegion id=\"r0\">\n      <Coords points=\"" << pageRect(line) << "\"/>\n";
  if (!l.words.empty()) {
    o << "      <TextLine id=\"r0_l0\">\n        <Coords points=\"" << pageRect(line) << "\"/>\n";
    for (size_t w = 0; w < l.words.size(); ++w) {
      const auto& word = l.words[w];
      const std::string wid = "r0_l0_w" + std::to_string(w);
      o << "        <Word id=\"" << wid << "\">\n          <Coords points=\""
        << pageRect(words[w].box) << "\"/>\n";
      for (size_t k = 0; k < word.chars.size(); ++k) {
        const auto& s = *word.chars[k];
        o << "          <Glyph id=\"" << wid << "_g" << k << "\">\n            <Coords points=\""
          << words[w].glyphPoints[k] << "\"/>\n"
          << textEquiv("            ", 0, s.prob, s.token);
        int index = 1;
        for (const auto& a : alternatives(s))
          o << textEquiv("            ", index++, a.prob, a.token);
        o << "          </Glyph>\n";
      }
      o << textEquiv("          ", 0, word.confidence, word.text()) << "        </Word>\n";
    }
    o << textEquiv("        ", 0, trace.confidence, reading);
    int index = 1;
    for (const auto* h : otherReadings(trace))
      o << textEquiv("        ", index++, std::exp(h->logProb), h->reading);
    o << "      </TextLine>\n";
  }
  o << textEquiv("      ", 0, trace.confidence, reading);
  o << "    </TextRegion>\n  </Page>\n</PcGts>\n";
  return o.str();
}

}  // namespace foveal::core
