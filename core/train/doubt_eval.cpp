#include "train/doubt_eval.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/safe_read.h"
#include "base/utf8.h"
#include "data/dataset_factory.h"
#include "image/chart_png.h"
#include "image/colour_png.h"
#include "model/charset.h"
#include "model/kraken_bidi.h"
#include "model/kraken_codec.h"
#include "trace/model_session.h"
#include "train/evaluation.h"

namespace foveal::core::train {

namespace {

using nlohmann::json;

// Every class in the top-k: the output entropy and the CTC columns' entropy are then exact.
constexpr int kAllClasses = 1 << 20;

// The truth in the order the steps read. A reading shown reordered for display (kraken's records:
// the network reads right-to-left text from the left, rpred gives it back in logical order) has
// steps whose text reorders into the prediction: the truth is then reordered the same way, as
// kraken reorders its training lines (trace/truth_alignment.h does the same for forced
// alignment). Any other reading is its steps' text in order, and the truth stays as it is.
std::string truthInStepOrder(const Trace& trace, const std::vector<std::string>& characterTokens,
                             const std::string& truth) {
  std::string text;
  for (const auto& t : characterTokens) text += t;
  if (text == trace.prediction || truth.empty()) return truth;
  try {
    const std::u32string steps = krakenCodepoints(text, "the steps");
    for (auto base : {KrakenBaseDir::Auto, KrakenBaseDir::R, KrakenBaseDir::L})
      if (utf8Of(krakenDisplayMap(steps, base).text) == trace.prediction)
        return utf8Of(krakenDisplayMap(krakenCodepoints(truth, "the truth"), base).text);
  } catch (const Error&) {  // not UTF-8: compared as it is
  }
  return truth;
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// One image's scored steps, kept until the images before it are in (the report then takes them
// in image order whatever the number of workers).
struct ImageResult {
  std::vector<DoubtSignalInfo> signals;
  std::vector<DoubtStep> steps;  // values in `signals`' order
  int unattached = 0;
  bool wrong = false;
};

ImageResult readImage(const ModelSession& session, const data::Dataset& data, int64_t i,
                      bool textScoring, int end, const DoubtOptions& o) {
  const size_t index = static_cast<size_t>(i);
  const auto sample = data.get(index);
  const std::string entry = data.entryName(index);
  TraceOptions to;
  to.topk = kAllClasses;
  to.beamWidth = o.beamWidth;
  const Trace trace = session.trace(sample.image, entry, to);
  Explanation explanation;
  const Explanation* attribution = nullptr;
  if (!o.attribution.empty() && !trace.steps.empty()) {
    AttributionOptions ao;
    ao.method = attributionMethodFromString(o.attribution);
    ao.igSteps = o.igSteps;
    ao.tokens = ao.method == AttributionMethod::IntegratedGradients && !trace.isCtc();
    explanation = session.explain(sample.image, trace, ao);
    attribution = &explanation;
  }
  const DoubtSignals signals = doubtSignals(trace, attribution);
  std::vector<std::string> tokens;
  for (const auto& st : trace.steps) tokens.push_back(st.token);
  const bool endStep =
      !trace.isCtc() && !trace.steps.empty() && trace.steps.back().tokenIndex == end;
  const std::vector<std::string> characters(tokens.begin(), tokens.end() - (endStep ? 1 : 0));
  const std::string truth = truthInStepOrder(trace, characters, sample.label);
  if (endStep && !o.endSteps) tokens.pop_back();  // labelled as if the reading had none
  auto labels = labelSteps(tokens, endStep && o.endSteps, truth, textScoring);
  labels.labels.resize(trace.steps.size(), StepLabel::Unscored);
  ImageResult r;
  r.signals = signals.signals;
  r.unattached = labels.unattached;
  r.wrong = labels.unattached > 0;
  for (size_t s = 0; s < trace.steps.size(); ++s) {
    if (labels.labels[s] == StepLabel::Unscored) continue;
    DoubtStep step;
    step.image = index;
    step.entry = entry;
    step.step = static_cast<int>(s);
    step.token = trace.steps[s].token;
    step.wrong = labels.labels[s] == StepLabel::Wrong;
    r.wrong = r.wrong || step.wrong;
    for (const auto& v : signals.values) step.values.push_back(v[s]);
    r.steps.push_back(std::move(step));
  }
  return r;
}

// Adds an image's steps to the report, its signals placed by name (a signal new to the report is
// appended, NaN for the steps before it).
void addImage(DoubtReport& report, ImageResult r) {
  ++report.images;
  report.unattached += r.unattached;
  report.wrongImages += r.wrong;
  std::vector<size_t> slot;
  for (const auto& s : r.signals) {
    size_t k = 0;
    while (k < report.signals.size() && report.signals[k].name != s.name) ++k;
    if (k == report.signals.size()) {
      report.signals.push_back(s);
      for (auto& st : report.steps) st.values.push_back(std::numeric_limits<double>::quiet_NaN());
    }
    slot.push_back(k);
  }
  for (auto& st : r.steps) {
    std::vector<double> values(report.signals.size(), std::numeric_limits<double>::quiet_NaN());
    for (size_t k = 0; k < slot.size(); ++k) values[slot[k]] = st.values[k];
    st.values = std::move(values);
    report.steps.push_back(std::move(st));
  }
}

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string csvNumber(double v) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// How the combined score took the signal `name` (combinedFeature).
const char* featureName(const std::vector<DoubtSignalInfo>& signals, const std::string& name) {
  for (const auto& s : signals)
    if (s.name == name)
      return s.scale == DoubtScale::Unit ? "logit" : s.scale == DoubtScale::Positive ? "log" : "x";
  return "x";
}

}  // namespace

DoubtReport evaluateDoubt(const std::string& modelPath, const std::string& dataset,
                          const DoubtOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  if (!o.attribution.empty()) attributionMethodFromString(o.attribution);  // throws naming it
  if (o.beamWidth < 1 || o.beamWidth > kMaxBeamWidth)
    throw Error("--beam must be between 1 and " + std::to_string(kMaxBeamWidth));
  auto session = ModelSession::open(modelPath, o.importOptions);
  auto data = data::openDataset(dataset);
  if (data->endless() && o.limit <= 0) throw Error(dataset + ": an endless stream needs --limit");
  const int64_t n = o.limit > 0 ? std::min<int64_t>(o.limit, static_cast<int64_t>(data->size()))
                                : static_cast<int64_t>(data->size());
  DoubtReport report;
  report.model = modelPath;
  report.dataset = dataset;
  report.beamWidth = o.beamWidth;
  report.attribution = o.attribution;
  report.endSteps = o.endSteps;
  report.textScoring = wantsTextScoring(session->config().charset, o.scoring);
  const int end = session->config().makeCharset().endIndex();
  const int workers = static_cast<int>(
      std::min<int64_t>(n, o.workers > 0 ? o.workers : std::max(1, computeThreads())));
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) {
      addImage(report, readImage(*session, *data, i, report.textScoring, end, o));
      if (o.progress && !o.progress(i + 1, n)) break;
    }
  } else {
    // Several images at once, each worker with its own model and dataset and one compute
    // thread: a digit model's passes are too small to keep two threads busy, separate images
    // are not (as eval --faithfulness does).
    const int threadsBefore = computeThreads();
    std::mutex lock;
    std::map<int64_t, ImageResult> pending;
    int64_t next = 0, committed = 0;
    bool stop = false;
    std::exception_ptr failure;
    auto work = [&](int w) {
      try {
        at::set_num_threads(1);
        std::shared_ptr<ModelSession> own;
        data::DatasetPtr ownData;
        if (w > 0) {
          own = ModelSession::open(modelPath, o.importOptions);
          ownData = data::openDataset(dataset);
        }
        const ModelSession& s = own ? *own : *session;
        const data::Dataset& d = ownData ? *ownData : *data;
        for (;;) {
          int64_t i;
          {
            std::lock_guard<std::mutex> g(lock);
            if (stop || next >= n) break;
            i = next++;
          }
          auto r = readImage(s, d, i, report.textScoring, end, o);
          std::lock_guard<std::mutex> g(lock);
          pending.emplace(i, std::move(r));
          for (auto it = pending.find(committed); !stop && it != pending.end();
               it = pending.find(committed)) {
            addImage(report, std::move(it->second));
            pending.erase(it);
            ++committed;
            if (o.progress && !o.progress(committed, n)) stop = true;
          }
        }
      } catch (...) {
        std::lock_guard<std::mutex> g(lock);
        if (!failure) failure = std::current_exception();
        stop = true;
      }
    };
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) threads.emplace_back(work, w);
    for (auto& t : threads) t.join();
    at::set_num_threads(threadsBefore);
    if (failure) std::rethrow_exception(failure);
  }
  report.scores = scoreDoubt(report.signals, report.steps);
  report.seconds = since(started);
  return report;
}

std::string DoubtReport::toTable() const {
  std::ostringstream o;
  char line[512];
  std::snprintf(
      line, sizeof line,
      "doubt signals: %s on %s, %lld images (%lld read wrong), %s, %s scoring%s, "
      "%.1f s\n",
      model.c_str(), dataset.c_str(), static_cast<long long>(images),
      static_cast<long long>(wrongImages),
      beamWidth > 1 ? ("beam search width " + std::to_string(beamWidth)).c_str() : "greedy",
      textScoring ? "text" : "exact", endSteps ? "" : ", character steps only", seconds);
  o << line;
  const auto& s = scores;
  std::snprintf(line, sizeof line,
                "reported on half the images (by id): %lld images, %lld steps, %lld wrong "
                "(%.1f %%); the combined score fitted on the other: %lld images, %lld steps, "
                "%lld wrong\n",
                static_cast<long long>(s.reportImages), static_cast<long long>(s.reportSteps),
                static_cast<long long>(s.reportWrong),
                s.reportSteps ? 100.0 * static_cast<double>(s.reportWrong) /
                                    static_cast<double>(s.reportSteps)
                              : 0.0,
                static_cast<long long>(s.fitImages), static_cast<long long>(s.fitSteps),
                static_cast<long long>(s.fitWrong));
  o << line;
  if (unattached > 0)
    o << unattached << " deleted characters had no step to carry them (empty readings)\n";
  o << "a step is wrong when substituted or inserted, or when a deleted truth character "
       "precedes it (the end step\nwhen a reading stops early); doubtful: which way the signal "
       "flags; flag: the best balanced accuracy's\nthreshold (flag at >= for high, <= for low; "
       "none: flagging\nnothing is best); top 5 %: the "
       "share wrong among the 5 % most doubtful; every figure over the reported half\n\n";
  size_t width = 8;
  for (const auto& sc : s.scores) width = std::max(width, sc.signal.size());
  std::snprintf(line, sizeof line, "%-*s  %8s  %6s  %5s  %6s  %8s  %10s  %8s\n",
                static_cast<int>(width), "signal", "doubtful", "steps", "wrong", "AUROC", "bal.acc",
                "flag", "top 5 %");
  o << line;
  for (const auto& sc : s.scores) {
    std::snprintf(
        line, sizeof line, "%-*s  %8s  %6lld  %5lld  %6s  %8s  %10s  %8s\n",
        static_cast<int>(width), sc.signal.c_str(), sc.higherIsDoubtful ? "high" : "low",
        static_cast<long long>(sc.steps), static_cast<long long>(sc.wrong),
        fixed(sc.auroc, 3).c_str(), fixed(sc.balancedAccuracy, 3).c_str(),
        std::isfinite(sc.balancedAccuracy) && !std::isfinite(sc.threshold)
            ? "none"
            : fixed(sc.threshold, 4).c_str(),
        std::isfinite(sc.precisionTop5) ? (fixed(100 * sc.precisionTop5, 1) + " %").c_str() : "-");
    o << line;
  }
  if (!s.combinedNote.empty()) {
    o << "\ncombined score: not fitted (" << s.combinedNote << ")\n";
  } else {
    o << "\ncombined score: logistic regression on the signals as features f (logit x for the "
         "[0, 1] ones, log x for\nentropies), standardised over the fitting half (z = (f - "
         "mean) / sd; a missing value at the mean),\nridge 1, "
      << s.combined.iterations << " Newton iterations; P(wrong) = sigmoid(b + sum w z)\n";
    std::snprintf(line, sizeof line, "  %-*s  %6s  %9s  %12s  %12s\n", static_cast<int>(width),
                  "weight", "f", "w", "mean", "sd");
    o << line;
    std::snprintf(line, sizeof line, "  %-*s  %6s  %9.4f\n", static_cast<int>(width), "b (bias)",
                  "", s.combined.bias);
    o << line;
    for (size_t k = 0; k < s.combinedSignals.size(); ++k) {
      std::snprintf(line, sizeof line, "  %-*s  %6s  %9.4f  %12.6g  %12.6g\n",
                    static_cast<int>(width), s.combinedSignals[k].c_str(),
                    featureName(signals, s.combinedSignals[k]), s.combined.weights[k],
                    s.combined.mean[k], s.combined.scale[k]);
      o << line;
    }
  }
  return o.str();
}

std::string DoubtReport::toJson() const {
  json j;
  j["model"] = model;
  j["dataset"] = dataset;
  j["images"] = images;
  j["wrong_images"] = wrongImages;
  j["scoring"] = textScoring ? "text" : "exact";
  j["beam_width"] = beamWidth;
  j["end_steps"] = endSteps;
  if (!attribution.empty()) j["attribution"] = attribution;
  j["seconds"] = seconds;
  j["unattached_deletions"] = unattached;
  j["reported"] = {{"images", scores.reportImages},
                   {"steps", scores.reportSteps},
                   {"wrong", scores.reportWrong}};
  j["fitted"] = {
      {"images", scores.fitImages}, {"steps", scores.fitSteps}, {"wrong", scores.fitWrong}};
  json list = json::array();
  for (const auto& sc : scores.scores)
    list.push_back({{"signal", sc.signal},
                    {"auroc", number(sc.auroc)},
                    {"balanced_accuracy", number(sc.balancedAccuracy)},
                    {"precision_top5", number(sc.precisionTop5)},
                    {"threshold", number(sc.threshold)},
                    {"higher_is_doubtful", sc.higherIsDoubtful},
                    {"steps", sc.steps},
                    {"wrong", sc.wrong}});
  j["signals"] = list;
  json c;
  if (!scores.combinedNote.empty()) {
    c["fitted"] = false;
    c["why"] = scores.combinedNote;
  } else {
    c["fitted"] = true;
    c["bias"] = scores.combined.bias;
    c["iterations"] = scores.combined.iterations;
    json w = json::array();
    for (size_t k = 0; k < scores.combinedSignals.size(); ++k)
      w.push_back({{"signal", scores.combinedSignals[k]},
                   {"feature", featureName(signals, scores.combinedSignals[k])},
                   {"weight", scores.combined.weights[k]},
                   {"mean", scores.combined.mean[k]},
                   {"sd", scores.combined.scale[k]}});
    c["weights"] = w;
  }
  j["combined"] = c;
  return j.dump(2);
}

std::string DoubtReport::summaryCsv(bool header) const {
  std::ostringstream o;
  if (header)
    o << "model,dataset,signal,higher_is_doubtful,steps,wrong,auroc,balanced_accuracy,threshold,"
         "precision_top5\n";
  for (const auto& sc : scores.scores)
    o << csvField(model) << ',' << csvField(dataset) << ',' << sc.signal << ','
      << (sc.higherIsDoubtful ? 1 : 0) << ',' << sc.steps << ',' << sc.wrong << ','
      << csvNumber(sc.auroc) << ',' << csvNumber(sc.balancedAccuracy) << ','
      << csvNumber(sc.threshold) << ',' << csvNumber(sc.precisionTop5) << '\n';
  return o.str();
}

std::string doubtStepsCsv(const std::vector<DoubtReport>& reports) {
  std::vector<std::string> names;  // every report's signals, in order of first appearance
  for (const auto& r : reports)
    for (const auto& s : r.signals)
      if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
  std::ostringstream o;
  o << "model,dataset,image,entry,split,step,token,wrong";
  for (const auto& n : names) o << ',' << n;
  o << ',' << kCombinedSignal << '\n';
  for (const auto& r : reports) {
    std::vector<int> column(names.size(), -1);  // the report's signal in each column
    for (size_t k = 0; k < r.signals.size(); ++k)
      column[static_cast<size_t>(std::find(names.begin(), names.end(), r.signals[k].name) -
                                 names.begin())] = static_cast<int>(k);
    std::vector<double> combined(r.steps.size(), std::numeric_limits<double>::quiet_NaN());
    for (size_t i = 0; i < r.scores.reported.size(); ++i)
      combined[r.scores.reported[i]] = r.scores.combinedScore[i];
    for (size_t i = 0; i < r.steps.size(); ++i) {
      const auto& st = r.steps[i];
      o << csvField(r.model) << ',' << csvField(r.dataset) << ',' << st.image << ','
        << csvField(st.entry) << ',' << doubtSplit(st.entry) << ',' << st.step << ','
        << csvField(st.token) << ',' << (st.wrong ? 1 : 0);
      for (int k : column)
        o << ',' << (k < 0 ? std::string() : csvNumber(st.values[static_cast<size_t>(k)]));
      o << ',' << csvNumber(combined[i]) << '\n';
    }
  }
  return o.str();
}

// ---------------------------------------------------------------------------------------------
// The ROC plot, drawn on core's chart canvas (image/chart_png.h) and written as a PNG.

namespace {

constexpr std::array<Rgb, 12> kPalette = {{{31, 119, 180},
                                           {255, 127, 14},
                                           {44, 160, 44},
                                           {214, 39, 40},
                                           {148, 103, 189},
                                           {140, 86, 75},
                                           {227, 119, 194},
                                           {127, 127, 127},
                                           {188, 189, 34},
                                           {23, 190, 207},
                                           {90, 60, 0},
                                           {0, 70, 140}}};

std::string stem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string s = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = s.rfind('.');
  return dot == std::string::npos || dot == 0 ? s : s.substr(0, dot);
}

}  // namespace

void writeDoubtRocPlot(const std::vector<DoubtReport>& reports, const std::string& path) {
  if (reports.empty()) throw Error(path + ": no ROC curve to plot");
  if (!ChartCanvas::available())
    throw Error(path + ": this build cannot draw PNG charts (it has no OpenCV)");
  constexpr int kPlot = 320, kLeft = 64, kTop = 44, kLegend = 330, kPanelH = kTop + kPlot + 60;
  constexpr int kPanelW = kLeft + kPlot + 28 + kLegend;
  ChartCanvas c(kPanelW, kPanelH * static_cast<int>(reports.size()));
  const Rgb black{0, 0, 0}, grid{225, 225, 225}, grey{150, 150, 150};
  for (size_t p = 0; p < reports.size(); ++p) {
    const DoubtReport& r = reports[p];
    const double oy = kPanelH * static_cast<double>(p);
    const double x0 = kLeft, y0 = oy + kTop;
    c.text(12, oy + 24, stem(r.model) + " on " + r.dataset, 12, black);
    c.text(kPanelW - 12.0, oy + 24,
           std::to_string(r.scores.reportSteps) + " steps, " +
               std::to_string(r.scores.reportWrong) + " wrong (the reported half)",
           9, grey, ChartCanvas::Align::Right);
    for (int k = 0; k <= 5; ++k) {  // grid and ticks every 0.2
      const double f = k / 5.0;
      char tick[8];
      std::snprintf(tick, sizeof tick, "%.1f", f);
      if (k > 0 && k < 5) {
        c.line(x0 + f * kPlot, y0, x0 + f * kPlot, y0 + kPlot, grid);
        c.line(x0, y0 + f * kPlot, x0 + kPlot, y0 + f * kPlot, grid);
      }
      c.text(x0 + f * kPlot, y0 + kPlot + 16, tick, 8, black, ChartCanvas::Align::Centre);
      c.text(x0 - 6, y0 + (1 - f) * kPlot + 4, tick, 8, black, ChartCanvas::Align::Right);
    }
    c.line(x0, y0 + kPlot, x0 + kPlot, y0, grey);  // chance
    c.text(x0 + kPlot / 2.0, y0 + kPlot + 38, "false positive rate (right steps flagged)", 9, black,
           ChartCanvas::Align::Centre);
    c.verticalText(18, y0 + kPlot / 2.0, "true positive rate (wrong steps flagged)", 9, black);
    const double lx = x0 + kPlot + 28;
    double ly = y0 + 10;
    c.text(lx + 34, ly, "signal", 9, black);
    c.text(lx + kLegend - 12, ly, "AUROC", 9, black, ChartCanvas::Align::Right);
    ly += 20;
    size_t colour = 0;
    for (const auto& sc : r.scores.scores) {
      // The per-head signals stay in the tables: a dozen heads would hide the other curves.
      if (sc.signal.rfind("head", 0) == 0 || sc.roc.size() < 2) continue;
      const bool combined = sc.signal == kCombinedSignal;
      const Rgb col = combined ? black : kPalette[colour++ % kPalette.size()];
      const int thick = combined ? 3 : 2;
      for (size_t i = 1; i < sc.roc.size(); ++i)
        c.line(x0 + sc.roc[i - 1].falsePositiveRate * kPlot,
               y0 + (1 - sc.roc[i - 1].truePositiveRate) * kPlot,
               x0 + sc.roc[i].falsePositiveRate * kPlot,
               y0 + (1 - sc.roc[i].truePositiveRate) * kPlot, col, thick);
      c.line(lx, ly - 4, lx + 26, ly - 4, col, thick);
      c.text(lx + 34, ly, sc.signal, 9, black);
      c.text(lx + kLegend - 12, ly, fixed(sc.auroc, 3), 9, black, ChartCanvas::Align::Right);
      ly += 18;
    }
    c.strokeRect(x0, y0, kPlot, kPlot, black);
  }
  writeColourPng(c.image(), path);
}

namespace {

double finiteWeight(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number() || !std::isfinite(j[key].get<double>()))
    throw Error(where + ": \"" + key + "\" is not a finite number");
  return j[key].get<double>();
}

CombinedDoubt combinedOf(const json& report, const std::string& where) {
  CombinedDoubt c;
  c.model = report.value("model", "");
  c.dataset = report.value("dataset", "");
  const json& comb = report["combined"];
  c.logistic.bias = finiteWeight(comb, "bias", where);
  if (!comb.contains("weights") || !comb["weights"].is_array())
    throw Error(where + ": the combined score has no \"weights\" list");
  for (const auto& w : comb["weights"]) {
    if (!w.is_object() || !w.contains("signal") || !w["signal"].is_string())
      throw Error(where + ": a weight without its \"signal\" name");
    c.signals.push_back(w["signal"].get<std::string>());
    c.logistic.weights.push_back(finiteWeight(w, "weight", where));
    c.logistic.mean.push_back(finiteWeight(w, "mean", where));
    const double sd = finiteWeight(w, "sd", where);
    if (sd <= 0)
      throw Error(where + ": the spread (\"sd\") of " + c.signals.back() + " is not positive");
    c.logistic.scale.push_back(sd);
  }
  return c;
}

}  // namespace

std::vector<CombinedDoubt> readCombinedDoubt(const std::string& path) {
  const std::string text = readRegularFile(path, "doubt report", kMaxSmallFileBytes);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(path + ": not JSON (" + std::string(e.what()) + ")");
  }
  if (j.is_object()) j = json::array({j});
  if (!j.is_array())
    throw Error(path + ": not the output of foveal-cli eval --doubt --json (a list of reports)");
  std::vector<CombinedDoubt> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const json& r = j[i];
    const std::string where = path + ", report " + std::to_string(i + 1);
    if (!r.is_object() || !r.contains("signals") || !r.contains("combined") ||
        !r["combined"].is_object())
      throw Error(where +
                  ": not a report of foveal-cli eval --doubt --json (no \"combined\" score)");
    if (!r["combined"].value("fitted", false)) continue;
    out.push_back(combinedOf(r, where));
  }
  if (out.empty())
    throw Error(path + ": no report in it has a fitted combined score (too few wrong steps?)");
  return out;
}

std::vector<double> combinedDoubt(const CombinedDoubt& combined, const DoubtSignals& signals) {
  const size_t steps = signals.values.empty() ? 0 : signals.values.front().size();
  std::vector<int> index;
  for (const auto& name : combined.signals) index.push_back(signals.indexOf(name));
  std::vector<double> out(steps);
  std::vector<double> x(combined.signals.size());
  for (size_t t = 0; t < steps; ++t) {
    for (size_t k = 0; k < index.size(); ++k)
      x[k] = index[k] < 0 ? std::numeric_limits<double>::quiet_NaN()
                          : combinedFeature(signals.signals[static_cast<size_t>(index[k])],
                                            signals.values[static_cast<size_t>(index[k])][t]);
    out[t] = combined.logistic.predict(x);
  }
  return out;
}

}  // namespace foveal::core::train
