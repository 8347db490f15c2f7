#include "trace/ctc_alignment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "model/charset.h"
#include "model/ctc_lattice.h"
#include "trace/trace.h"

namespace foveal::core {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

double logAdd(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double hi = std::max(a, b);
  return hi + std::log1p(std::exp(std::min(a, b) - hi));
}

void checkSizes(const std::vector<double>& logProbs, int frames, int classes, const char* what) {
  if (frames < 0 || classes < 1 ||
      logProbs.size() != static_cast<size_t>(frames) * static_cast<size_t>(classes))
    throw Error(std::string(what) + ": expected " + std::to_string(frames) + " x " +
                std::to_string(classes) + " log probabilities, got " +
                std::to_string(logProbs.size()));
}

void checkLabels(const std::vector<int>& labels, int classes, int blank, const char* what) {
  if (blank < 0 || blank >= classes)
    throw Error(std::string(what) + ": the blank " + std::to_string(blank) + " is not one of the " +
                std::to_string(classes) + " classes");
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == blank)
      throw Error(std::string(what) + ": label " + std::to_string(i) + " is the blank");
    if (labels[i] < 0 || labels[i] >= classes)
      throw Error(std::string(what) + ": label " + std::to_string(i) + " is class " +
                  std::to_string(labels[i]) + ", not one of the " + std::to_string(classes) +
                  " classes");
  }
}

std::string tooFewFrames(const std::string& what, const std::vector<int>& labels, int frames) {
  const int need = ctcMinimumFrames(labels);
  const int repeats = need - static_cast<int>(labels.size());
  return what + " needs at least " + std::to_string(need) + " frames (" +
         std::to_string(labels.size()) + " classes" +
         (repeats ? " and " + std::to_string(repeats) + " blank" + (repeats > 1 ? "s" : "") +
                        " between repeated ones"
                  : std::string()) +
         ") but the line gives only " + std::to_string(frames);
}

}  // namespace

int ctcMinimumFrames(const std::vector<int>& labels) {
  int n = static_cast<int>(labels.size());
  for (size_t i = 1; i < labels.size(); ++i) n += labels[i] == labels[i - 1];
  return n;
}

std::vector<int> ctcCollapse(const std::vector<int>& path, int blank) {
  std::vector<int> out;
  int previous = -1;
  for (int c : path) {
    if (c != blank && c != previous) out.push_back(c);
    previous = c;
  }
  return out;
}

double ctcPathLogProb(const std::vector<double>& logProbs, int frames, int classes,
                      const std::vector<int>& path) {
  checkSizes(logProbs, frames, classes, "CTC path");
  if (path.size() != static_cast<size_t>(frames))
    throw Error("CTC path: " + std::to_string(path.size()) + " classes for " +
                std::to_string(frames) + " frames");
  double sum = 0;
  for (int t = 0; t < frames; ++t) {
    const int c = path[static_cast<size_t>(t)];
    if (c < 0 || c >= classes)
      throw Error("CTC path: frame " + std::to_string(t) + " has class " + std::to_string(c) +
                  ", not one of the " + std::to_string(classes) + " classes");
    sum += logProbs[static_cast<size_t>(t) * classes + c];
  }
  return sum;
}

CtcViterbiPath ctcViterbi(const std::vector<double>& logProbs, int frames, int classes,
                          const std::vector<int>& labels, int blank) {
  checkSizes(logProbs, frames, classes, "CTC alignment");
  checkLabels(labels, classes, blank, "CTC alignment");
  if (ctcMinimumFrames(labels) > frames) throw Error(tooFewFrames("the truth", labels, frames));
  CtcViterbiPath out;
  if (frames == 0) return out;  // and no labels: the empty path
  const auto best = ctcBestLatticePath(logProbs, frames, classes, labels, blank);
  // Enough frames always leave a finite end; a -inf log p (a class of probability 0) does not.
  if (best.states.empty()) throw Error("CTC alignment: every path of the truth has probability 0");
  const std::vector<int> ext = ctcExtendedLabel(labels, blank);
  out.logProb = best.logProb;
  out.frameClass.assign(static_cast<size_t>(frames), blank);
  out.frameLabel.assign(static_cast<size_t>(frames), -1);
  out.spans.assign(labels.size(), {-1, -1});
  for (int t = frames - 1; t >= 0; --t) {
    const int j = best.states[static_cast<size_t>(t)];
    out.frameClass[static_cast<size_t>(t)] = ext[static_cast<size_t>(j)];
    if (j % 2 == 1) {
      const int label = j / 2;
      out.frameLabel[static_cast<size_t>(t)] = label;
      auto& span = out.spans[static_cast<size_t>(label)];
      if (span.second < 0) span.second = t;
      span.first = t;
    }
  }
  return out;
}

double ctcLogLikelihood(const std::vector<double>& logProbs, int frames, int classes,
                        const std::vector<int>& labels, int blank) {
  checkSizes(logProbs, frames, classes, "CTC likelihood");
  checkLabels(labels, classes, blank, "CTC likelihood");
  if (ctcMinimumFrames(labels) > frames) return kNegInf;
  if (frames == 0) return 0.0;
  const std::vector<int> ext = ctcExtendedLabel(labels, blank);
  const int s = static_cast<int>(ext.size());
  std::vector<double> alpha(static_cast<size_t>(s), kNegInf), next(alpha.size());
  auto lp = [&](int t, int c) { return logProbs[static_cast<size_t>(t) * classes + c]; };
  alpha[0] = lp(0, ext[0]);
  if (s > 1) alpha[1] = lp(0, ext[1]);
  for (int t = 1; t < frames; ++t) {
    for (int j = 0; j < s; ++j) {
      double v = alpha[static_cast<size_t>(j)];
      if (j >= 1) v = logAdd(v, alpha[static_cast<size_t>(j - 1)]);
      if (j >= 2 && ext[j] != blank && ext[j] != ext[j - 2])
        v = logAdd(v, alpha[static_cast<size_t>(j - 2)]);
      next[static_cast<size_t>(j)] = v == kNegInf ? kNegInf : v + lp(t, ext[j]);
    }
    alpha.swap(next);
  }
  return s > 1 ? logAdd(alpha[static_cast<size_t>(s - 1)], alpha[static_cast<size_t>(s - 2)])
               : alpha[0];
}

CtcAlignment alignTranscription(const std::string& truth, const std::vector<TruthUnit>& units,
                                const std::vector<double>& logProbs, int frames, int classes,
                                const std::vector<int>& shownPath, int blank,
                                const FrameSpanMapper& locate,
                                const std::vector<std::string>& classText) {
  std::vector<int> labels, unitOf;
  for (size_t u = 0; u < units.size(); ++u) {
    if (units[u].labels.empty())
      throw Error("CTC alignment: \"" + units[u].text + "\" is spelled by no class");
    for (int c : units[u].labels) {
      labels.push_back(c);
      unitOf.push_back(static_cast<int>(u));
    }
  }
  if (ctcMinimumFrames(labels) > frames)
    throw Error(tooFewFrames("the truth \"" + truth + "\"", labels, frames));
  const CtcViterbiPath best = ctcViterbi(logProbs, frames, classes, labels, blank);
  CtcAlignment a;
  a.truth = truth;
  a.frames = frames;
  a.blank = blank;
  a.path = best.frameClass;
  a.logProb = best.logProb;
  a.logLikelihood = ctcLogLikelihood(logProbs, frames, classes, labels, blank);
  if (shownPath.size() == static_cast<size_t>(frames)) {
    a.shownPath = shownPath;
    a.shownLogProb = ctcPathLogProb(logProbs, frames, classes, shownPath);
  }
  auto lp = [&](int t, int c) { return logProbs[static_cast<size_t>(t) * classes + c]; };
  a.pathChar.assign(static_cast<size_t>(frames), -1);
  for (int t = 0; t < frames; ++t) {
    const int label = best.frameLabel[static_cast<size_t>(t)];
    if (label >= 0) a.pathChar[static_cast<size_t>(t)] = unitOf[static_cast<size_t>(label)];
    a.blankProb.push_back(std::exp(lp(t, blank)));
    a.pathProb.push_back(std::exp(lp(t, a.path[static_cast<size_t>(t)])));
  }
  if (locate)
    for (int t = 0; t < frames; ++t) a.frameX.push_back(locate({t}, units.size()).focus.x);
  auto name = [&](int c) {
    return c >= 0 && static_cast<size_t>(c) < classText.size() ? classText[static_cast<size_t>(c)]
                                                               : "#" + std::to_string(c);
  };
  for (size_t t = 0; t < a.shownPath.size(); ++t) {
    const int c = a.shownPath[t];
    a.shownText.push_back(c == blank ? std::string() : name(c));
    a.shownProb.push_back(std::exp(lp(static_cast<int>(t), c)));
  }

  for (size_t u = 0; u < units.size(); ++u) {
    AlignedChar ch;
    ch.text = units[u].text;
    ch.labels = units[u].labels;
    for (int t = 0; t < frames; ++t)
      if (a.pathChar[static_cast<size_t>(t)] == static_cast<int>(u)) {
        ch.frames.push_back(t);
        const double v = lp(t, a.path[static_cast<size_t>(t)]);
        ch.logProb += v;
        ch.prob = std::max(ch.prob, std::exp(v));
      }
    ch.firstFrame = ch.frames.front();
    ch.lastFrame = ch.frames.back();
    if (locate) {
      const auto where = locate(ch.frames, units.size());
      ch.box = where.box;
      ch.focus = where.focus;
    }
    if (!a.shownPath.empty()) {
      // What the shown path emitted over these frames: a run that reaches into them from the
      // left still counts once, as greedy decoding emits it once.
      std::vector<int> seen;
      for (int t : ch.frames) seen.push_back(a.shownPath[static_cast<size_t>(t)]);
      ch.readLabels = ctcCollapse(seen, blank);
      for (int c : ch.readLabels) ch.readText += name(c);
    }
    std::vector<double> row;
    for (int t = 0; t < frames; ++t) row.push_back(std::exp(lp(t, ch.labels.front())));
    a.charProbs.push_back(std::move(row));
    a.chars.push_back(std::move(ch));
  }
  return a;
}

std::vector<TruthUnit> charsetUnits(const Charset& charset, const std::string& truth) {
  std::vector<TruthUnit> units;
  std::vector<std::string> outside;
  for (const auto& cp : splitUtf8(truth)) {
    TruthUnit u;
    u.text = cp;
    if (!charset.covers(cp)) {
      if (std::find(outside.begin(), outside.end(), cp) == outside.end()) outside.push_back(cp);
      continue;
    }
    u.labels = charset.encode(cp);
    units.push_back(std::move(u));
  }
  if (!outside.empty()) {
    std::string list;
    for (const auto& c : outside) list += (list.empty() ? "'" : ", '") + c + "'";
    throw Error(
        "the truth \"" + truth + "\" has " +
        (outside.size() == 1 ? "a character" : std::to_string(outside.size()) + " characters") +
        " outside the model's charset: " + list);
  }
  return units;
}

Trace alignedTrace(const Trace& trace) {
  const CtcAlignment& a = trace.alignment;
  if (!a.ok())
    throw Error(a.error.empty() ? "the trace has no forced alignment" : "no alignment: " + a.error);
  Trace out = trace;
  out.steps.clear();
  out.maps.clear();
  out.hypotheses.clear();
  out.hypothesis = 0;
  out.beamWidth = 1;
  out.prediction = a.truth;
  out.confidence = std::exp(a.logProb);
  StepMap& posterior = out.addMap(kAttentionMap, "posterior over columns");
  double entropySum = 0;
  for (size_t c = 0; c < a.chars.size(); ++c) {
    const AlignedChar& ch = a.chars[c];
    TraceStep st;
    // The shown step that covers most of these frames lends what the alignment does not make.
    size_t bestOverlap = 0;
    for (const auto& shown : trace.steps) {
      size_t overlap = 0;
      for (int f : shown.columns) overlap += std::count(ch.frames.begin(), ch.frames.end(), f);
      if (overlap > bestOverlap) {
        bestOverlap = overlap;
        st = shown;
      }
    }
    st.stn.clear();
    st.contextWeights.clear();
    st.token = ch.text;
    st.tokenIndex = ch.labels.front();
    st.columns = ch.frames;
    st.box = ch.box;
    st.focus = ch.focus;
    st.prob = ch.prob;
    // The emitting frame where the character is most probable speaks for it (as buildCtcSteps).
    int best = ch.frames.front();
    const auto& row = a.charProbs[c];
    for (int f : ch.frames)
      if (row[static_cast<size_t>(f)] > row[static_cast<size_t>(best)]) best = f;
    st.region = best;
    if (static_cast<size_t>(best) < trace.columnTopk.size())
      st.topk = trace.columnTopk[static_cast<size_t>(best)];
    double sum = 0;
    for (double v : row) sum += v;
    std::vector<double> normalised(row.size(), 0.0);
    if (sum > 0)
      for (size_t f = 0; f < row.size(); ++f) normalised[f] = row[f] / sum;
    // The alignment's frames may be fewer than the trace's regions (kraken's batch padding).
    normalised.resize(std::max(normalised.size(), trace.regions.size()), 0.0);
    st.entropy = entropy(normalised);
    entropySum += st.entropy;
    posterior.steps.push_back(std::move(normalised));
    out.steps.push_back(std::move(st));
  }
  out.meanEntropy = out.steps.empty() ? 0.0 : entropySum / static_cast<double>(out.steps.size());
  return out;
}

namespace {

nlohmann::json boxJson(const Box& b) { return {b.x, b.y, b.w, b.h}; }

}  // namespace

std::string CtcAlignment::toJson(int indent) const {
  nlohmann::json j;
  j["truth"] = truth;
  if (!error.empty()) {
    j["error"] = error;
    return j.dump(indent);
  }
  j["frames"] = frames;
  j["log_prob"] = logProb;
  j["log_likelihood"] = logLikelihood;
  j["shown_log_prob"] = shownLogProb;
  j["agrees"] = agrees();
  j["path"] = path;
  j["shown_path"] = shownPath;
  nlohmann::json cs = nlohmann::json::array();
  for (const auto& c : chars)
    cs.push_back({{"text", c.text},
                  {"labels", c.labels},
                  {"frames", {c.firstFrame, c.lastFrame}},
                  {"box", boxJson(c.box)},
                  {"focus", {c.focus.x, c.focus.y}},
                  {"log_prob", c.logProb},
                  {"prob", c.prob},
                  {"read", c.readText}});
  j["chars"] = cs;
  return j.dump(indent);
}

std::string CtcAlignment::framesTable() const {
  std::ostringstream o;
  if (!ok()) return o.str();
  o << " frame  shown   p(shown) p(blank)  forced  p(forced)\n";
  char line[160];
  for (int t = 0; t < frames; ++t) {
    const size_t f = static_cast<size_t>(t);
    const int c = pathChar[f];
    const std::string shown =
        f < shownText.size() && !shownText[f].empty() ? shownText[f] : std::string("-");
    const std::string forced = c >= 0 ? chars[static_cast<size_t>(c)].text : std::string("-");
    const double pf = pathProb[f];
    const double ps = f < shownProb.size() ? shownProb[f] : 0.0;
    const bool differ = f < shownPath.size() && shownPath[f] != path[f];
    std::snprintf(line, sizeof line, " %5d  %-6s  %7.4f  %7.4f  %-6s  %7.4f%s\n", t, shown.c_str(),
                  ps, blankProb[f], forced.c_str(), pf, differ ? "  *" : "");
    o << line;
  }
  return o.str();
}

std::string CtcAlignment::toTable() const {
  std::ostringstream o;
  if (!error.empty()) {
    o << "alignment  of \"" << truth << "\": " << error << "\n";
    return o.str();
  }
  char line[200];
  std::snprintf(line, sizeof line,
                "alignment  of \"%s\" over %d frames: forced path log p %.4f, shown path log p "
                "%.4f, log p(truth) %.4f (every path)\n",
                truth.c_str(), frames, logProb, shownLogProb, logLikelihood);
  o << line;
  o << " char  frames     box(x,w)        log p      p  read there\n";
  for (const auto& c : chars) {
    std::snprintf(line, sizeof line, " %-4s  %3d-%-3d  %6.1f,%-6.1f  %9.4f  %5.3f  ",
                  c.text.c_str(), c.firstFrame, c.lastFrame, c.box.x, c.box.w, c.logProb, c.prob);
    o << line;
    const bool right = c.readLabels == c.labels;
    o << (c.readText.empty() ? std::string("(blank)") : "\"" + c.readText + "\"")
      << (right ? "" : "  <- misread") << "\n";
  }
  return o.str();
}

}  // namespace foveal::core
