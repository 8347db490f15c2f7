#include "trace.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace foveal::core {

using nlohmann::json;

double entropy(const std::vector<double>& p) {
  double h = 0;
  for (double v : p)
    if (v > 0) h -= v * std::log(v);
  return h;
}

static json quadJson(const Quad& q) {
  json a = json::array();
  for (const auto& p : q) a.push_back({p.x, p.y});
  return a;
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
  json regs = json::array();
  for (const auto& r : regions) regs.push_back({{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}});
  j["regions"] = regs;
  json steps_ = json::array();
  for (const auto& s : steps) {
    json st;
    st["token"] = s.token;
    st["token_index"] = s.tokenIndex;
    st["prob"] = s.prob;
    json tk = json::array();
    for (const auto& t : s.topk)
      tk.push_back({{"token", t.token}, {"index", t.index}, {"prob", t.prob}});
    st["topk"] = tk;
    st["alpha"] = s.alpha;
    st["entropy"] = s.entropy;
    st["region"] = s.region;
    json stn = json::array();
    for (const auto& k : s.stn)
      stn.push_back({{"quad", quadJson(k.quad)}, {"patch_size", {k.patch.width, k.patch.height}}});
    st["stn"] = stn;
    if (!s.contextWeights.empty()) st["context_weights"] = s.contextWeights;
    if (!s.columns.empty()) st["columns"] = s.columns;
    steps_.push_back(st);
  }
  j["steps"] = steps_;
  j["decoder"] = decoder;
  if (!stages.empty()) j["stages"] = stages;
  if (!fiducials.empty()) {
    json f = json::array();
    for (const auto& p : fiducials) f.push_back({p.x, p.y});
    j["fiducials"] = f;
    j["rectified_size"] = {rectified.width, rectified.height};
  }
  if (!columnTopk.empty()) {
    json cols = json::array();
    for (const auto& c : columnTopk) {
      json tk = json::array();
      for (const auto& t : c)
        tk.push_back({{"token", t.token}, {"index", t.index}, {"prob", t.prob}});
      cols.push_back(tk);
    }
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
  if (!stages.empty()) o << "stages     " << stages << "\n";
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
  o << " step  token     p      entropy  region  box(x,w)       top-5\n";
  for (size_t t = 0; t < steps.size(); ++t) {
    const auto& s = steps[t];
    const Box& b = regions.at(static_cast<size_t>(s.region));
    char line[160];
    std::snprintf(line, sizeof line, " %4zu  %-7s %6.3f  %7.3f  %6d  %6.1f,%-6.1f  ", t,
                  s.token.c_str(), s.prob, s.entropy, s.region, b.x, b.w);
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

}  // namespace foveal::core
