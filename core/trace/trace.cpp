#include "trace/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "formats/ocr_formats.h"
#include "model/charset.h"

namespace foveal::core {

using nlohmann::json;

double entropy(const std::vector<double>& p) {
  double h = 0;
  for (double v : p)
    if (v > 0) h -= v * std::log(v);
  return h;
}

std::string toString(MapLayout layout) {
  return layout == MapLayout::Pixels ? "pixels" : "regions";
}

std::string toString(StepPatch patch) {
  switch (patch) {
    case StepPatch::AlphaWeighted:
      return "alpha-weighted";
    case StepPatch::Stn:
      return "stn";
    case StepPatch::Region:
      break;
  }
  return "region";
}

const StepMap* Trace::map(const std::string& name) const {
  for (const auto& m : maps)
    if (m.name == name) return &m;
  return nullptr;
}

std::vector<std::string> Trace::mapNames() const {
  std::vector<std::string> names;
  for (const auto& m : maps) names.push_back(m.name);
  return names;
}

const std::vector<double>& Trace::stepMap(const std::string& name, size_t step) const {
  static const std::vector<double> none;
  const StepMap* m = map(name);
  return m && step < m->steps.size() ? m->steps[step] : none;
}

StepMap& Trace::addMap(std::string name, std::string label, MapLayout layout) {
  StepMap m;
  m.name = std::move(name);
  m.label = std::move(label);
  m.layout = layout;
  maps.push_back(std::move(m));
  return maps.back();
}

static json boxJson(const Box& b) { return {{"x", b.x}, {"y", b.y}, {"w", b.w}, {"h", b.h}}; }

static json quadJson(const Quad& q) {
  json a = json::array();
  for (const auto& p : q) a.push_back({p.x, p.y});
  return a;
}

static json topkJson(const std::vector<TokenProb>& topk) {
  json a = json::array();
  for (const auto& t : topk)
    a.push_back({{"token", t.token}, {"index", t.index}, {"prob", t.prob}});
  return a;
}

static json pointsJson(const std::vector<PointF>& points) {
  json a = json::array();
  for (const auto& p : points) a.push_back({p.x, p.y});
  return a;
}

// Every map by name; attention's values are each step's "alpha" (the field readers of the JSON
// have always read), every other map's are under the step's "maps" (stepJson).
static json mapsJson(const std::vector<StepMap>& maps) {
  json a = json::array();
  for (const auto& m : maps) {
    json e = {{"name", m.name}, {"label", m.label}, {"layout", toString(m.layout)}};
    if (m.layout == MapLayout::Pixels) e["size"] = {m.width, m.height};
    a.push_back(e);
  }
  return a;
}

static json stepJson(const Trace& trace, size_t t) {
  const TraceStep& s = trace.steps[t];
  json st;
  st["token"] = s.token;
  st["token_index"] = s.tokenIndex;
  st["prob"] = s.prob;
  st["topk"] = topkJson(s.topk);
  st["alpha"] = trace.attention(t);
  for (const auto& m : trace.maps)
    if (m.name != kAttentionMap) st["maps"][m.name] = trace.stepMap(m.name, t);
  st["entropy"] = s.entropy;
  st["region"] = s.region;
  json stn = json::array();
  for (const auto& k : s.stn)
    stn.push_back({{"quad", quadJson(k.quad)}, {"patch_size", {k.patch.width, k.patch.height}}});
  st["stn"] = stn;
  if (!s.contextWeights.empty()) st["context_weights"] = s.contextWeights;
  if (!s.columns.empty()) st["columns"] = s.columns;
  st["focus"] = {s.focus.x, s.focus.y};
  st["box"] = boxJson(s.box);
  return st;
}

std::string Trace::toJson(int indent) const {
  json j;
  j["source"] = source;
  j["model"] = {{"kind", modelKind}, {"description", modelDescription}};
  j["prediction"] = prediction;
  j["confidence"] = confidence;
  j["image"] = {{"width", imageW}, {"height", imageH}};
  j["mean_entropy"] = meanEntropy;
  j["decoding"] = beamWidth > 1 ? "beam" : "greedy";
  j["beam_width"] = beamWidth;
  if (!hypotheses.empty()) {
    json hs = json::array();
    for (const auto& h : hypotheses)
      hs.push_back({{"reading", h.reading},
                    {"log_prob", h.logProb},
                    {"tokens", h.tokens},
                    {"regions", h.regions}});
    j["hypotheses"] = hs;
    j["hypothesis"] = hypothesis;
  }
  json regs = json::array();
  for (const auto& r : regions) regs.push_back(boxJson(r));
  j["regions"] = regs;
  j["grid"] = {{"rows", gridRows}, {"columns", gridColumns}};
  j["region_centres"] = pointsJson(regionCentres);
  j["maps"] = mapsJson(maps);
  j["patch"] = toString(patch);
  json steps_ = json::array();
  for (size_t t = 0; t < steps.size(); ++t) steps_.push_back(stepJson(*this, t));
  j["steps"] = steps_;
  if (!focusRule.empty()) j["focus_rule"] = focusRule;
  if (!decodingNote.empty()) j["decoding_note"] = decodingNote;
  if (!inputPass.empty())
    j["input_pass"] = {{"pass", contrastPass ? "contrast" : "first"}, {"why", inputPass}};
  if (!truthBoxes.empty()) {
    json tb = json::array();
    for (const auto& b : truthBoxes) tb.push_back(boxJson(b));
    j["truth_boxes"] = tb;
  }
  if (!alignment.empty()) j["alignment"] = json::parse(alignment.toJson(-1));
  j["decoder"] = decoder;
  if (!stages.empty()) j["stages"] = stages;
  if (!fiducials.empty()) {
    j["fiducials"] = pointsJson(fiducials);
    j["rectified_size"] = {rectified.width, rectified.height};
  }
  if (!columnTopk.empty()) {
    json cols = json::array();
    for (const auto& c : columnTopk) cols.push_back(topkJson(c));
    j["column_topk"] = cols;
  }
  return j.dump(indent);
}

std::string Trace::toTable() const {
  std::ostringstream o;
  o << "image      " << source << " (" << imageW << "x" << imageH << ")\n";
  o << "model      " << modelDescription << "\n";
  o << "prediction \"" << prediction << "\"  confidence " << std::fixed << std::setprecision(4)
    << confidence << "  mean entropy " << meanEntropy;
  if (beamWidth > 1) o << "  (beam search, width " << beamWidth << ")";
  o << "\n";
  if (!hypotheses.empty()) {
    o << "beam       the " << hypotheses.size() << " best readings (log p; * the steps below)\n";
    for (size_t h = 0; h < hypotheses.size(); ++h) {
      char line[64];
      std::snprintf(line, sizeof line, "  %c %3zu  %9.4f  ",
                    static_cast<int>(h) == hypothesis ? '*' : ' ', h + 1, hypotheses[h].logProb);
      o << line << '"' << hypotheses[h].reading << "\"\n";
    }
  }
  if (!stages.empty()) o << "stages     " << stages << "\n";
  if (!inputPass.empty()) o << "pass       " << inputPass << "\n";
  if (!decodingNote.empty()) o << "note       " << decodingNote << "\n";
  if (gridRows > 1)
    o << "grid       " << gridRows << " x " << gridColumns << " cells (region r * " << gridColumns
      << " + c is row r, column c)\n";
  if (!fiducials.empty()) {
    o << "fiducials ";
    char p[48];
    for (const auto& f : fiducials) {
      std::snprintf(p, sizeof p, " (%.1f,%.1f)", f.x, f.y);
      o << p;
    }
    o << "\n";
  }
  o << "\n";
  const bool grid = gridRows > 1 && gridColumns > 0;
  o << " step  token     p      entropy  " << (grid ? "  cell " : "region")
    << "  box(x,w)       focus(x,y)     top-5\n";
  for (size_t t = 0; t < steps.size(); ++t) {
    const auto& s = steps[t];
    const Box& b = s.box;  // the step's character box (localisation), beside its focus point
    char line[160], region[32];
    if (grid)
      std::snprintf(region, sizeof region, "%d,%d", s.region / gridColumns, s.region % gridColumns);
    else
      std::snprintf(region, sizeof region, "%d", s.region);
    std::snprintf(line, sizeof line, " %4zu  %-7s %6.3f  %7.3f  %6s  %6.1f,%-6.1f  %6.1f,%-6.1f  ",
                  t, s.token.c_str(), s.prob, s.entropy, region, b.x, b.w, s.focus.x, s.focus.y);
    o << line;
    if (!s.columns.empty()) {
      std::snprintf(line, sizeof line, "columns %d-%d  ", s.columns.front(), s.columns.back());
      o << line;
    }
    for (size_t k = 0; k < s.topk.size(); ++k) {
      std::snprintf(line, sizeof line, "%s%s:%.2f", k ? " " : "", s.topk[k].token.c_str(),
                    s.topk[k].prob);
      o << line;
    }
    o << "\n";
    for (size_t k = 0; k < s.stn.size(); ++k) {
      const auto& q = s.stn[k].quad;
      std::snprintf(line, sizeof line,
                    "        stn%zu quad (%.1f,%.1f) (%.1f,%.1f) (%.1f,%.1f) (%.1f,%.1f)\n", k + 1,
                    q[0].x, q[0].y, q[1].x, q[1].y, q[2].x, q[2].y, q[3].x, q[3].y);
      o << line;
    }
  }
  return o.str();
}

std::array<long, 4> hocrBox(const Box& b) {
  return {std::lround(b.x), std::lround(b.y), std::lround(b.x + b.w), std::lround(b.y + b.h)};
}

std::string Trace::toHocr() const { return core::toHocr(*this); }

std::string Trace::toCsv() const {
  auto quote = [](const std::string& in) {
    std::string out = "\"";
    for (char c : in) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  std::ostringstream o;
  o << std::setprecision(8);
  // The columns the GUI's export always had, then the step's focus and box.
  o << "step,token,prob,entropy,region,topk";
  for (size_t i = 0; i < regions.size(); ++i) o << ",alpha_" << i;
  const size_t stns = steps.empty() ? 0 : steps[0].stn.size();
  for (size_t k = 0; k < stns; ++k)
    for (int c = 0; c < 4; ++c) o << ",stn" << k + 1 << "_x" << c << ",stn" << k + 1 << "_y" << c;
  o << ",focus_x,focus_y,box_x,box_y,box_w,box_h\n";
  for (size_t t = 0; t < steps.size(); ++t) {
    const auto& s = steps[t];
    std::string topk;
    for (const auto& k : s.topk) {
      std::ostringstream e;
      e << std::setprecision(6) << k.token << ":" << k.prob;
      topk += (topk.empty() ? "" : " ") + e.str();
    }
    o << t << "," << quote(s.token) << "," << s.prob << "," << s.entropy << "," << s.region << ","
      << quote(topk);
    // CTC steps have an alpha per column, attention steps one per region: as many as regions.
    const auto& alpha = attention(t);
    for (size_t i = 0; i < regions.size(); ++i) o << "," << (i < alpha.size() ? alpha[i] : 0.0);
    for (size_t k = 0; k < stns; ++k)
      for (const auto& c : k < s.stn.size() ? s.stn[k].quad : Quad{}) o << "," << c.x << "," << c.y;
    o << "," << s.focus.x << "," << s.focus.y << "," << s.box.x << "," << s.box.y << "," << s.box.w
      << "," << s.box.h << "\n";
  }
  return o.str();
}

double attentionConfidence(const Charset& charset, const std::vector<int>& tokens,
                           const std::vector<double>& probs) {
  const bool dtrb = charset.layout() == ClassLayout::GoEnd;  // not GoEndPad: strhub's rule
  double c = 1.0;
  size_t t = 0;
  for (; t < tokens.size() && t < probs.size(); ++t) {
    const bool end = tokens[t] == charset.endIndex();
    if (end && dtrb) return t == 0 ? probs[0] : c;
    c *= probs[t];
    if (end) break;
  }
  return c;
}

double ctcConfidence(const std::string& rule, const std::vector<int>& argmax,
                     const std::vector<double>& maxima, int blank) {
  if (rule == "easyocr") {
    double product = 1.0;
    size_t n = 0;
    for (size_t i = 0; i < argmax.size() && i < maxima.size(); ++i)
      if (argmax[i] != blank) {
        product *= maxima[i];
        ++n;
      }
    if (n == 0) return 0.0;  // EasyOCR: np.array([0]), whose custom_mean is 0
    return std::pow(product, 2.0 / std::sqrt(static_cast<double>(n)));
  }
  if (rule == "kraken") {
    // kraken gives each character the largest probability of its run of frames (greedy_decoder)
    // and a line none: Foveal's line confidence is their mean (1 for an empty reading).
    const auto runs = ctcRunMaxima(argmax, maxima, blank);
    if (runs.empty()) return 1.0;
    double sum = 0.0;
    for (const double m : runs) sum += m;
    return sum / static_cast<double>(runs.size());
  }
  double product = 1.0;
  for (double m : maxima) product *= m;
  return product;
}

std::vector<double> ctcRunMaxima(const std::vector<int>& argmax, const std::vector<double>& maxima,
                                 int blank) {
  std::vector<double> runs;
  for (size_t i = 0; i < argmax.size() && i < maxima.size(); ++i) {
    if (argmax[i] == blank) continue;
    if (i == 0 || argmax[i] != argmax[i - 1])
      runs.push_back(maxima[i]);  // a character starts
    else
      runs.back() = std::max(runs.back(), maxima[i]);
  }
  return runs;
}

}  // namespace foveal::core
