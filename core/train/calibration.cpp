#include "train/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/text_metrics.h"
#include "data/dataset_factory.h"
#include "engines/tesseract_engine.h"
#include "image/chart_png.h"
#include "model/charset.h"
#include "model/kraken_bidi.h"
#include "model/kraken_codec.h"
#include "trace/model_session.h"
#include "train/evaluation.h"

namespace foveal::core::train {

using nlohmann::json;

ReliabilityDiagram makeReliabilityDiagram(int bins, const std::string& level) {
  if (bins < 1 || bins > 1000)
    throw Error("the number of calibration bins must be between 1 and 1000, not " +
                std::to_string(bins));
  ReliabilityDiagram d;
  d.level = level;
  for (int b = 0; b < bins; ++b)
    d.bins.push_back({static_cast<double>(b) / bins, static_cast<double>(b + 1) / bins});
  return d;
}

void ReliabilityDiagram::add(double confidence, bool right) {
  if (!(confidence >= 0.0 && confidence <= 1.0 + 1e-9))
    throw Error("a confidence of " + std::to_string(confidence) + " is not a probability");
  confidence = std::min(confidence, 1.0);
  if (bins.empty()) throw Error("a reliability diagram without bins");
  const size_t n = bins.size();
  const size_t b = std::min(n - 1, static_cast<size_t>(confidence * static_cast<double>(n)));
  bins[b].count += 1;
  bins[b].correct += right;
  bins[b].confidenceSum += confidence;
  count += 1;
  correct += right;
  confidenceSum += confidence;
}

double ReliabilityDiagram::ece() const {
  if (count == 0) return 0.0;
  double e = 0;
  for (const auto& b : bins)
    if (b.count)
      e += static_cast<double>(b.count) / static_cast<double>(count) *
           std::abs(b.accuracy() - b.meanConfidence());
  return e;
}

double ReliabilityDiagram::mce() const {
  double m = 0;
  for (const auto& b : bins)
    if (b.count) m = std::max(m, std::abs(b.accuracy() - b.meanConfidence()));
  return m;
}

CharacterConfidences characterConfidences(const Trace& trace, const std::string& truth,
                                          bool textScoring) {
  std::vector<const TraceStep*> steps;
  std::vector<size_t> lengths;
  std::string joined;
  for (const auto& st : trace.steps) {
    if (st.token == Charset::kEndName) continue;
    // Text scoring drops what is not a letter or digit: such a step is neither right nor wrong.
    const std::string key = textScoring ? normaliseForScoring(st.token) : st.token;
    if (key.empty()) continue;
    steps.push_back(&st);
    lengths.push_back(splitUtf8(key).size());
    joined += key;
  }
  const std::vector<bool> perPoint =
      correctPredictedCharacters(joined, textScoring ? normaliseForScoring(truth) : truth);
  CharacterConfidences out;
  size_t at = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    bool right = true;
    for (size_t k = 0; k < lengths[s]; ++k, ++at)
      right = right && at < perPoint.size() && perPoint[at];
    out.confidence.push_back(steps[s]->prob);
    out.correct.push_back(right);
  }
  return out;
}

namespace {

json diagramJson(const ReliabilityDiagram& d) {
  json bins = json::array();
  for (const auto& b : d.bins)
    bins.push_back({{"lower", b.lower},
                    {"upper", b.upper},
                    {"count", b.count},
                    {"correct", b.correct},
                    {"mean_confidence", b.meanConfidence()},
                    {"accuracy", b.accuracy()}});
  return {{"level", d.level},
          {"count", d.count},
          {"correct", d.correct},
          {"accuracy", d.accuracy()},
          {"mean_confidence", d.meanConfidence()},
          {"ece", d.ece()},
          {"mce", d.mce()},
          {"bins", bins}};
}

std::string diagramTable(const ReliabilityDiagram& d, const std::string& title) {
  std::ostringstream o;
  char line[200];
  o << title << " (" << d.count << ")\n";
  o << "  confidence      count   share  mean conf  accuracy      gap\n";
  for (const auto& b : d.bins) {
    const bool last = &b == &d.bins.back();
    if (b.count == 0) {
      std::snprintf(line, sizeof line,
                    "  [%.2f, %.2f%c  %7lld       -          -         -        -\n", b.lower,
                    b.upper, last ? ']' : ')', static_cast<long long>(b.count));
    } else {
      std::snprintf(line, sizeof line,
                    "  [%.2f, %.2f%c  %7lld  %5.1f%%     %6.4f    %6.4f  %+7.4f\n", b.lower,
                    b.upper, last ? ']' : ')', static_cast<long long>(b.count),
                    100.0 * static_cast<double>(b.count) / static_cast<double>(d.count),
                    b.meanConfidence(), b.accuracy(), b.accuracy() - b.meanConfidence());
    }
    o << line;
  }
  std::snprintf(line, sizeof line, "  accuracy %.4f  mean confidence %.4f  ECE %.4f  MCE %.4f\n",
                d.accuracy(), d.meanConfidence(), d.ece(), d.mce());
  o << line;
  return o.str();
}

// What both renderings of the diagram draw with.
class Painter {
 public:
  virtual ~Painter() = default;
  virtual void rect(double x, double y, double w, double h, Rgb fill) = 0;
  virtual void frame(double x, double y, double w, double h, Rgb stroke) = 0;
  virtual void line(double x0, double y0, double x1, double y1, Rgb stroke, bool dashed) = 0;
  virtual void text(double x, double y, const std::string& s, double size, Rgb colour,
                    ChartCanvas::Align align) = 0;
  virtual void verticalText(double x, double y, const std::string& s, double size, Rgb colour) = 0;
};

class SvgPainter : public Painter {
 public:
  std::ostringstream out;
  static std::string hex(Rgb c) {
    char s[8];
    std::snprintf(s, sizeof s, "#%02x%02x%02x", c.r, c.g, c.b);
    return s;
  }
  static std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '<')
        o += "&lt;";
      else if (c == '>')
        o += "&gt;";
      else if (c == '&')
        o += "&amp;";
      else
        o += c;
    }
    return o;
  }
  void rect(double x, double y, double w, double h, Rgb fill) override {
    out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h
        << "\" fill=\"" << hex(fill) << "\"/>\n";
  }
  void frame(double x, double y, double w, double h, Rgb stroke) override {
    out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h
        << "\" fill=\"none\" stroke=\"" << hex(stroke) << "\"/>\n";
  }
  void line(double x0, double y0, double x1, double y1, Rgb stroke, bool dashed) override {
    out << "<line x1=\"" << x0 << "\" y1=\"" << y0 << "\" x2=\"" << x1 << "\" y2=\"" << y1
        << "\" stroke=\"" << hex(stroke) << "\"" << (dashed ? " stroke-dasharray=\"6,4\"" : "")
        << "/>\n";
  }
  void text(double x, double y, const std::string& s, double size, Rgb colour,
            ChartCanvas::Align align) override {
    const char* anchor = align == ChartCanvas::Align::Centre  ? "middle"
                         : align == ChartCanvas::Align::Right ? "end"
                                                              : "start";
    out << "<text x=\"" << x << "\" y=\"" << y << "\" font-size=\"" << size * 1.4
        << "\" text-anchor=\"" << anchor << "\" fill=\"" << hex(colour) << "\">" << escape(s)
        << "</text>\n";
  }
  void verticalText(double x, double y, const std::string& s, double size, Rgb colour) override {
    out << "<text transform=\"translate(" << x << "," << y << ") rotate(-90)\" font-size=\""
        << size * 1.4 << "\" text-anchor=\"middle\" fill=\"" << hex(colour) << "\">" << escape(s)
        << "</text>\n";
  }
};

class PngPainter : public Painter {
 public:
  explicit PngPainter(ChartCanvas& c) : canvas(c) {}
  ChartCanvas& canvas;
  void rect(double x, double y, double w, double h, Rgb fill) override {
    canvas.fillRect(x, y, w, h, fill);
  }
  void frame(double x, double y, double w, double h, Rgb stroke) override {
    canvas.strokeRect(x, y, w, h, stroke);
  }
  void line(double x0, double y0, double x1, double y1, Rgb stroke, bool dashed) override {
    if (!dashed) {
      canvas.line(x0, y0, x1, y1, stroke);
      return;
    }
    const double len = std::hypot(x1 - x0, y1 - y0);
    for (double d = 0; d < len; d += 10) {
      const double e = std::min(len, d + 6);
      canvas.line(x0 + (x1 - x0) * d / len, y0 + (y1 - y0) * d / len, x0 + (x1 - x0) * e / len,
                  y0 + (y1 - y0) * e / len, stroke);
    }
  }
  void text(double x, double y, const std::string& s, double size, Rgb colour,
            ChartCanvas::Align align) override {
    canvas.text(x, y, s, size, colour, align);
  }
  void verticalText(double x, double y, const std::string& s, double size, Rgb colour) override {
    canvas.verticalText(x, y, s, size, colour);
  }
};

constexpr Rgb kInk{40, 40, 40}, kGrid{220, 220, 220}, kBar{74, 127, 181}, kGap{239, 154, 154},
    kGapLine{198, 40, 40}, kDiagonal{120, 120, 120};

// One reliability diagram in the panel (x, y, w, h).
void drawDiagram(Painter& p, const ReliabilityDiagram& d, const std::string& title, double x,
                 double y, double w, double h) {
  const double left = x + 64, top = y + 44, size = std::min(w - 84, h - 130);
  const double bottom = top + size;
  auto px = [&](double v) { return left + v * size; };
  auto py = [&](double v) { return bottom - v * size; };
  char s[160];
  std::snprintf(s, sizeof s, "%s: ECE %.3f, MCE %.3f (n = %lld)", title.c_str(), d.ece(), d.mce(),
                static_cast<long long>(d.count));
  p.text(left + size / 2, y + 26, s, 13, kInk, ChartCanvas::Align::Centre);
  for (int k = 0; k <= 5; ++k) {
    const double v = k / 5.0;
    p.line(px(v), top, px(v), bottom, kGrid, false);
    p.line(left, py(v), left + size, py(v), kGrid, false);
    std::snprintf(s, sizeof s, "%.1f", v);
    p.text(px(v), bottom + 18, s, 10, kInk, ChartCanvas::Align::Centre);
    p.text(left - 8, py(v) + 5, s, 10, kInk, ChartCanvas::Align::Right);
  }
  for (const auto& b : d.bins) {
    if (!b.count) continue;
    const double bx = px(b.lower) + 1, bw = std::max(1.0, (b.upper - b.lower) * size - 2);
    const double acc = b.accuracy(), conf = b.meanConfidence();
    p.rect(bx, py(acc), bw, py(0) - py(acc), kBar);
    // The gap to the bin's mean confidence: filled above an over-confident bin's bar, outlined
    // over an under-confident one's (the bar stays visible); the confidence itself a black line.
    const double hi = std::max(acc, conf), lo = std::min(acc, conf);
    if (conf > acc && py(lo) - py(hi) >= 1) p.rect(bx, py(hi), bw, py(lo) - py(hi), kGap);
    if (py(lo) - py(hi) >= 1) p.frame(bx, py(hi), bw, py(lo) - py(hi), kGapLine);
    p.line(bx, py(conf), bx + bw - 1, py(conf), kInk, false);
    char n[32];
    std::snprintf(n, sizeof n, "%lld", static_cast<long long>(b.count));
    p.text(bx + bw / 2, py(hi) - 4, n, 8, kDiagonal, ChartCanvas::Align::Centre);
  }
  p.line(px(0), py(0), px(1), py(1), kDiagonal, true);
  p.frame(left, top, size, size, kInk);
  p.text(left + size / 2, bottom + 40, "confidence", 12, kInk, ChartCanvas::Align::Centre);
  p.verticalText(left - 44, top + size / 2, "accuracy", 12, kInk);
  // The legend, under the axis.
  const double ly = bottom + 54;
  p.rect(left, ly, 14, 10, kBar);
  p.text(left + 20, ly + 10, "accuracy", 10, kInk, ChartCanvas::Align::Left);
  p.rect(left + 100, ly, 14, 10, kGap);
  p.frame(left + 100, ly, 14, 10, kGapLine);
  p.text(left + 120, ly + 10, "gap to the mean confidence (black line)", 10, kInk,
         ChartCanvas::Align::Left);
}

void drawReport(Painter& p, const CalibrationReport& r, double w, double h) {
  p.rect(0, 0, w, h, {255, 255, 255});
  drawDiagram(p, r.lines, "lines", 0, 0, w / 2, h);
  drawDiagram(p, r.characters, "characters", w / 2, 0, w / 2, h);
}

// kraken's steps are in the order its network reads (display order, left to right); its
// truths are in logical order: put the truth in the steps' order before aligning them.
std::string inReadingOrder(const ModelSession& s, const std::string& truth) {
  if (s.isEngine() || s.config().kraken.empty()) return truth;
  const BidiDisplayMap map =
      krakenDisplayMap(krakenCodepoints(truth, "the truth"), KrakenBaseDir::Auto);
  std::vector<KrakenChar> chars;
  for (char32_t cp : map.text) chars.push_back({cp, 0, 0, 0});
  return krakenText(chars);
}

std::string confidenceRuleOf(const ModelSession& s) {
  if (s.isEngine()) return "the engine's own";
  const auto& c = s.config();
  if (!c.kraken.empty()) return "kraken's: the mean of the characters' confidences";
  if (c.isCtc())
    return c.ctcConfidence == "easyocr" ? "EasyOCR's custom_mean of the non-blank columns"
                                        : "the product of every column's maximum";
  return "the product of the steps' probabilities";
}

}  // namespace

std::string CalibrationReport::toTable() const {
  std::ostringstream o;
  o << "calibration of " << model << " on " << dataset << ": " << images << " images";
  if (skipped) o << " (" << skipped << " skipped)";
  o << ", " << scoring << " scoring\nline confidence: " << confidenceRule
    << "; character confidence: each read character's probability\n\n";
  o << diagramTable(lines, "lines: confidence against the line read right");
  o << "\n";
  o << diagramTable(characters,
                    "characters: a read character's probability against it being right");
  return o.str();
}

std::string CalibrationReport::toJson() const {
  json j = {{"model", model},
            {"dataset", dataset},
            {"scoring", scoring},
            {"confidence_rule", confidenceRule},
            {"images", images},
            {"skipped", skipped},
            {"lines", diagramJson(lines)},
            {"characters", diagramJson(characters)}};
  if (!skippedExamples.empty()) j["skipped_examples"] = skippedExamples;
  return j.dump(2);
}

std::string CalibrationReport::svg() const {
  const double w = 1000, h = 520;
  SvgPainter p;
  drawReport(p, *this, w, h);
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
       "width=\""
    << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w << " " << h
    << "\" font-family=\"DejaVu Sans, sans-serif\">\n"
    << p.out.str() << "</svg>\n";
  return o.str();
}

void CalibrationReport::writePng(const std::string& path, int width, int height) const {
  ChartCanvas canvas(width, height);
  PngPainter p(canvas);
  drawReport(p, *this, width, height);
  canvas.writePng(path);
}

void writeCalibrationPlot(const CalibrationReport& report, const std::string& path) {
  auto endsWith = [&](const char* suffix) {
    const std::string s(suffix);
    if (path.size() < s.size()) return false;
    std::string tail = path.substr(path.size() - s.size());
    std::transform(tail.begin(), tail.end(), tail.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return tail == s;
  };
  if (endsWith(".png"))
    report.writePng(path);
  else if (endsWith(".svg"))
    writeFileAtomically(path, report.svg(), "reliability diagram");
  else
    throw Error(path + ": the reliability diagram is written as .png or .svg");
}

CalibrationReport evaluateCalibration(const std::string& model, const std::string& dataset,
                                      const CalibrationOptions& o) {
  auto session = ModelSession::open(model, o.importOptions);
  const auto ds = data::openDataset(dataset);
  CalibrationReport r;
  r.model = model;
  r.dataset = dataset;
  r.lines = makeReliabilityDiagram(o.bins, "line");
  r.characters = makeReliabilityDiagram(o.bins, "character");
  r.confidenceRule = confidenceRuleOf(*session);
  const std::string charset = session->isEngine() ? std::string() : session->config().charset;
  const bool text =
      session->isEngine() && o.scoring == "auto" ? true : wantsTextScoring(charset, o.scoring);
  r.scoring = text ? "text" : "exact";
  std::unique_ptr<Charset> cs;
  if (!session->isEngine()) cs = std::make_unique<Charset>(session->config().makeCharset());
  TraceOptions topt;
  topt.beamWidth = o.beamWidth;
  if (ds->endless() && o.limit <= 0)
    throw Error(dataset + ": an endless stream needs a limit (--limit N)");
  const int64_t total = o.limit > 0 ? std::min<int64_t>(o.limit, static_cast<int64_t>(ds->size()))
                                    : static_cast<int64_t>(ds->size());
  auto skip = [&](size_t i, const std::string& why) {
    ++r.skipped;
    if (r.skippedExamples.size() < 5) r.skippedExamples.push_back(ds->entryName(i) + ": " + why);
  };
  for (int64_t n = 0; n < total; ++n) {
    const size_t i = static_cast<size_t>(n);
    data::Sample s;
    try {
      s = ds->get(i);
    } catch (const Error& e) {
      skip(i, e.what());
      continue;
    }
    if (s.label.empty()) {
      skip(i, "empty label");
      continue;
    }
    if (cs && !cs->covers(s.label)) {
      skip(i, "label outside the charset");
      continue;
    }
    const Trace tr = session->trace(s.image, ds->entryName(i), topt);
    r.lines.add(std::clamp(tr.confidence, 0.0, 1.0),
                scorePrediction(tr.prediction, s.label, text).correct);
    const CharacterConfidences chars =
        characterConfidences(tr, inReadingOrder(*session, s.label), text);
    for (size_t k = 0; k < chars.confidence.size(); ++k)
      r.characters.add(std::clamp(chars.confidence[k], 0.0, 1.0), chars.correct[k]);
    ++r.images;
    if (o.progress && !o.progress(n + 1, total)) throw EvalCancelled();
  }
  if (r.images == 0)
    throw Error(dataset + ": " + model + " can read none of its " + std::to_string(total) +
                " entries" + (r.skippedExamples.empty() ? "" : " (" + r.skippedExamples[0] + ")"));
  return r;
}

}  // namespace foveal::core::train
