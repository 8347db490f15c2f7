#include "train/cut_accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "data/dataset_factory.h"
#include "model/charset.h"
#include "trace/localisation.h"
#include "trace/model_session.h"
#include "train/evaluation.h"

namespace foveal::core::train {

using nlohmann::json;

void CutStats::add(const CutStats& o) {
  chars += o.chars;
  iouSum += o.iouSum;
  boxed += o.boxed;
  widthRatioSum += o.widthRatioSum;
  offsetSum += o.offsetSum;
  absOffsetSum += o.absOffsetSum;
  centreInside += o.centreInside;
}

namespace {

CutStats scoreOne(const Box* box, const Box& truth) {
  CutStats s;
  s.chars = 1;
  if (!box) return s;
  s.boxed = 1;
  s.iouSum = intersectionOverUnion(*box, truth);
  const double w = std::max(1e-9, truth.w);
  s.widthRatioSum = box->w / w;
  const double offset = ((box->x + box->w / 2) - (truth.x + truth.w / 2)) / w;
  s.offsetSum = offset;
  s.absOffsetSum = std::abs(offset);
  s.centreInside = contains(truth, {box->x + box->w / 2, box->y + box->h / 2});
  return s;
}

// Scores `boxes` against `truth` index by index into `kind`.
void addImage(CutKind& kind, const std::vector<Box>& boxes, const std::vector<Box>& truth,
              bool right) {
  const size_t n = truth.size();
  for (size_t i = 0; i < n; ++i) {
    const CutStats s = scoreOne(i < boxes.size() ? &boxes[i] : nullptr, truth[i]);
    kind.all.add(s);
    if (right) kind.right.add(s);
    if (right || kind.aligned) kind.thirds[std::min<size_t>(2, 3 * i / n)].add(s);
  }
}

json statsJson(const CutStats& s) {
  return {{"chars", s.chars},
          {"mean_iou", s.meanIou()},
          {"centre_in_box", s.centreHits()},
          {"width_ratio", s.meanWidthRatio()},
          {"centre_offset", s.meanOffset()},
          {"abs_centre_offset", s.meanAbsOffset()}};
}

// kraken's kind of cut: from the first emitting frame to the last, one frame stride wide
// around each (rpred's _scale_val of the frames), instead of their receptive fields.
Box frameSpan(const Trace& tr, double stride, const std::vector<int>& frames) {
  const auto& c = tr.regionCentres;
  const double x0 = std::clamp(c[static_cast<size_t>(frames.front())].x - stride / 2, 0.0,
                               static_cast<double>(tr.imageW));
  const double x1 = std::clamp(c[static_cast<size_t>(frames.back())].x + stride / 2, 0.0,
                               static_cast<double>(tr.imageW));
  return Box{x0, 0.0, std::max(0.0, x1 - x0), static_cast<double>(tr.imageH)};
}

// A CTC model's other cuts of one image: its greedy frames' spans, and the forced alignment's
// boxes and spans (an image it does not align is counted in r.unaligned).
void addCtcCuts(CutReport& r, const Trace& tr, const std::vector<Box>& truth, bool right) {
  const auto& c = tr.regionCentres;
  const double stride = c.size() >= 2 ? std::abs(c[1].x - c[0].x) : 0.0;
  std::vector<Box> spans;
  for (const auto& st : tr.steps)
    if (!st.columns.empty() && static_cast<size_t>(st.columns.back()) < c.size())
      spans.push_back(frameSpan(tr, stride, st.columns));
  addImage(r.kinds[2], spans, truth, right);
  if (!tr.alignment.ok()) {
    ++r.unaligned;
    return;
  }
  std::vector<Box> forced, forcedSpans;
  for (const auto& ch : tr.alignment.chars) {
    forced.push_back(ch.box);
    if (static_cast<size_t>(ch.lastFrame) < c.size())
      forcedSpans.push_back(frameSpan(tr, stride, ch.frames));
  }
  addImage(r.kinds[1], forced, truth, right);
  addImage(r.kinds[3], forcedSpans, truth, right);
}

}  // namespace

CutStats scoreCuts(const std::vector<Box>& boxes, const std::vector<Box>& truth) {
  CutStats out;
  for (size_t i = 0; i < truth.size(); ++i)
    out.add(scoreOne(i < boxes.size() ? &boxes[i] : nullptr, truth[i]));
  return out;
}

CutReport measureCuts(const std::string& model, const std::string& dataset, const CutOptions& o) {
  auto session = ModelSession::open(model, o.importOptions);
  if (session->isEngine()) throw Error(model + ": --cuts measures a model's own boxes");
  const auto ds = data::openDataset(dataset);
  const auto& cfg = session->config();
  const Charset charset = cfg.makeCharset();
  const bool text = wantsTextScoring(cfg.charset, "auto");
  CutReport r;
  r.model = model;
  r.kind = cfg.isCtc() ? "ctc" : cfg.attention;
  r.stages = cfg.stageString();
  r.dataset = dataset;
  if (cfg.isCtc())
    r.kinds = {CutKind{"greedy", false, {}, {}, {}}, CutKind{"forced", true, {}, {}, {}},
               CutKind{"greedy-frames", false, {}, {}, {}},
               CutKind{"forced-frames", true, {}, {}, {}}};
  else
    r.kinds = {CutKind{"attention", false, {}, {}, {}}};
  if (ds->endless() && o.limit <= 0) throw Error(dataset + ": an endless stream needs a limit");
  const size_t total =
      o.limit > 0 ? std::min<size_t>(static_cast<size_t>(o.limit), ds->size()) : ds->size();
  for (size_t i = 0; i < total; ++i) {
    std::vector<Box> truth;
    data::Sample s;
    try {
      truth = ds->charBoxes(i);
      if (truth.empty()) {
        ++r.skipped;
        continue;
      }
      s = ds->get(i);
    } catch (const Error&) {
      ++r.skipped;
      continue;
    }
    if (!charset.covers(s.label) || splitUtf8(s.label).size() != truth.size()) {
      ++r.skipped;
      continue;
    }
    TraceOptions topt;
    if (cfg.isCtc()) topt.truth = s.label;
    const Trace tr = session->trace(s.image, ds->entryName(i), topt);
    const bool right = scorePrediction(tr.prediction, s.label, text).correct;
    ++r.images;
    r.right += right;
    std::vector<Box> steps;
    for (const auto& st : tr.steps) steps.push_back(st.box);
    addImage(r.kinds[0], steps, truth, right);
    if (cfg.isCtc()) addCtcCuts(r, tr, truth, right);
  }
  if (r.images == 0)
    throw Error(dataset + ": no entry with true character boxes that " + model + " can read");
  return r;
}

std::string CutReport::toJson() const {
  json kindsJ = json::array();
  for (const auto& k : kinds)
    kindsJ.push_back(
        {{"boxes", k.name},
         {"aligned", k.aligned},
         {"all", statsJson(k.all)},
         {"read_right", statsJson(k.right)},
         {"thirds", {statsJson(k.thirds[0]), statsJson(k.thirds[1]), statsJson(k.thirds[2])}}});
  return json{{"model", model},     {"kind", kind},           {"stages", stages},
              {"dataset", dataset}, {"images", images},       {"read_right", right},
              {"skipped", skipped}, {"unaligned", unaligned}, {"cuts", kindsJ}}
      .dump(2);
}

std::string cutTable(const std::vector<CutReport>& reports) {
  std::ostringstream o;
  o << "model                        boxes          images  right   IoU   IoU(ok)  centre-in  "
       "width  offset  |offset|  offset by third (first, middle, last)\n";
  char line[320];
  for (const auto& r : reports)
    for (const auto& k : r.kinds) {
      std::string name = r.model;
      const size_t slash = name.find_last_of('/');
      if (slash != std::string::npos) name = name.substr(slash + 1);
      std::snprintf(
          line, sizeof line,
          "%-28s %-13s %7lld  %5.1f%%  %5.3f  %5.3f    %5.1f%%    %5.2f  %+6.3f  %6.3f    "
          "%+6.3f %+6.3f %+6.3f\n",
          name.c_str(), k.name.c_str(), static_cast<long long>(r.images),
          r.images ? 100.0 * static_cast<double>(r.right) / r.images : 0.0, k.all.meanIou(),
          k.right.meanIou(), 100 * k.all.centreHits(), k.shape().meanWidthRatio(),
          k.shape().meanOffset(), k.shape().meanAbsOffset(), k.thirds[0].meanOffset(),
          k.thirds[1].meanOffset(), k.thirds[2].meanOffset());
      o << line;
    }
  o << "\nIoU: mean over every true character (a step the reading lacks counts 0); IoU(ok): over "
       "the images read right;\ncentre-in: the box's centre inside the true box; width: box "
       "width / true width; offset: (box centre - true\ncentre) / true width, + to the right, "
       "mean over the characters (|offset| its magnitude); width, offset\nand thirds over the "
       "images read right (forced: over every image, its boxes are the true characters')\n";
  return o.str();
}

}  // namespace foveal::core::train
