#include "trace/localisation.h"

#include <algorithm>

#include "base/error.h"

namespace foveal::core {

std::string toString(FocusRule rule) {
  switch (rule) {
    case FocusRule::AlphaMean:
      return "alpha-mean";
    case FocusRule::Selected:
      return "selected";
    case FocusRule::StnQuad:
      return "stn-quad";
    case FocusRule::Columns:
      return "columns";
  }
  return "?";
}

bool contains(const Box& box, const PointF& p) {
  return p.x >= box.x && p.x < box.x + box.w && p.y >= box.y && p.y < box.y + box.h;
}

double intersectionOverUnion(const Box& a, const Box& b) {
  const double w = std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x);
  const double h = std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y);
  const double inter = w > 0 && h > 0 ? w * h : 0.0;
  const double uni = a.w * a.h + b.w * b.h - inter;
  return uni > 0 ? inter / uni : 0.0;
}

Box boundingBox(const Quad& quad) {
  double x0 = quad[0].x, x1 = quad[0].x, y0 = quad[0].y, y1 = quad[0].y;
  for (const auto& p : quad) {
    x0 = std::min(x0, p.x);
    x1 = std::max(x1, p.x);
    y0 = std::min(y0, p.y);
    y1 = std::max(y1, p.y);
  }
  return {x0, y0, x1 - x0, y1 - y0};
}

Box clipToImage(const Box& box, int imageW, int imageH) {
  const double x0 = std::clamp(box.x, 0.0, double(imageW)),
               x1 = std::clamp(box.x + box.w, 0.0, double(imageW));
  const double y0 = std::clamp(box.y, 0.0, double(imageH)),
               y1 = std::clamp(box.y + box.h, 0.0, double(imageH));
  return {x0, y0, x1 - x0, y1 - y0};
}

std::vector<Box> scaleBoxes(const std::vector<Box>& boxes, double sx, double sy) {
  std::vector<Box> out;
  out.reserve(boxes.size());
  for (const auto& b : boxes) out.push_back({b.x * sx, b.y * sy, b.w * sx, b.h * sy});
  return out;
}

namespace {

PointF boxCentre(const Box& b) { return {b.x + b.w / 2, b.y + b.h / 2}; }

const Box& regionAt(const std::vector<Box>& regions, int i) {
  if (i < 0 || static_cast<size_t>(i) >= regions.size())
    throw Error("localisation: region " + std::to_string(i) + " of " +
                std::to_string(regions.size()));
  return regions[static_cast<size_t>(i)];
}

}  // namespace

StepLocation locateStep(const TraceStep& step, const std::vector<double>& alpha,
                        const std::vector<Box>& regions, FocusRule rule, int imageW, int imageH,
                        const std::vector<PointF>& centres) {
  if (!centres.empty() && centres.size() != regions.size())
    throw Error("localisation: " + std::to_string(centres.size()) + " centres for " +
                std::to_string(regions.size()) + " regions");
  auto centre = [&](size_t i) { return centres.empty() ? boxCentre(regions[i]) : centres[i]; };
  StepLocation loc;
  switch (rule) {
    case FocusRule::AlphaMean: {
      if (alpha.size() != regions.size() || regions.empty())
        throw Error("localisation: alpha over " + std::to_string(alpha.size()) +
                    " regions, the model has " + std::to_string(regions.size()));
      double sum = 0, x = 0, y = 0;
      size_t best = 0;
      for (size_t i = 0; i < regions.size(); ++i) {
        const PointF c = centre(i);
        x += alpha[i] * c.x;
        y += alpha[i] * c.y;
        sum += alpha[i];
        if (alpha[i] > alpha[best]) best = i;
      }
      loc.focus = sum > 0 ? PointF{x / sum, y / sum} : centre(best);
      loc.box = regions[best];
      break;
    }
    case FocusRule::Selected:
      regionAt(regions, step.region);  // throws when out of range
      loc.focus = centre(static_cast<size_t>(step.region));
      loc.box = regionAt(regions, step.region);
      break;
    case FocusRule::StnQuad: {
      if (step.stn.empty()) throw Error("localisation: a sharp step without an STN quad");
      const Quad& q = step.stn.back().quad;
      loc.focus = {(q[0].x + q[1].x + q[2].x + q[3].x) / 4,
                   (q[0].y + q[1].y + q[2].y + q[3].y) / 4};
      loc.box = boundingBox(q);
      break;
    }
    case FocusRule::Columns: {
      if (step.columns.empty()) throw Error("localisation: a CTC step without emitting columns");
      double x = 0, y = 0, x0 = 0, y0 = 0, x1 = 0, y1 = 0;
      for (size_t k = 0; k < step.columns.size(); ++k) {
        const Box& r = regionAt(regions, step.columns[k]);
        const PointF c = centre(static_cast<size_t>(step.columns[k]));
        x += c.x;
        y += c.y;
        x0 = k ? std::min(x0, r.x) : r.x;
        y0 = k ? std::min(y0, r.y) : r.y;
        x1 = k ? std::max(x1, r.x + r.w) : r.x + r.w;
        y1 = k ? std::max(y1, r.y + r.h) : r.y + r.h;
      }
      const double n = static_cast<double>(step.columns.size());
      loc.focus = {x / n, y / n};
      loc.box = {x0, y0, x1 - x0, y1 - y0};
      break;
    }
  }
  loc.box = clipToImage(loc.box, imageW, imageH);
  return loc;
}

void locateSteps(Trace& trace, FocusRule rule) {
  trace.focusRule = toString(rule);
  for (size_t t = 0; t < trace.steps.size(); ++t) {
    auto& s = trace.steps[t];
    const StepLocation loc = locateStep(s, trace.attention(t), trace.regions, rule, trace.imageW,
                                        trace.imageH, trace.regionCentres);
    s.focus = loc.focus;
    s.box = loc.box;
  }
}

ImageLocalisation scoreLocalisation(const std::vector<StepLocation>& located,
                                    const std::vector<Box>& truth) {
  ImageLocalisation r;
  r.steps = static_cast<int64_t>(truth.size());
  for (size_t t = 0; t < truth.size() && t < located.size(); ++t) {
    if (contains(truth[t], located[t].focus)) ++r.hits;
    r.iouSum += intersectionOverUnion(located[t].box, truth[t]);
  }
  return r;
}

std::vector<int> stepHits(const Trace& trace) {
  std::vector<int> out(trace.steps.size(), -1);
  for (size_t t = 0; t < trace.steps.size() && t < trace.truthBoxes.size(); ++t)
    out[t] = contains(trace.truthBoxes[t], trace.steps[t].focus) ? 1 : 0;
  return out;
}

void LocalisationStats::add(const ImageLocalisation& image, bool readCorrectly) {
  if (image.steps == 0) return;
  ++images;
  steps += image.steps;
  hits += image.hits;
  iouSum += image.iouSum;
  if (readCorrectly) {
    ++correctImages;
    correctSteps += image.steps;
    correctHits += image.hits;
    correctIouSum += image.iouSum;
  }
}

void LocalisationStats::add(const LocalisationStats& o) {
  images += o.images;
  steps += o.steps;
  hits += o.hits;
  iouSum += o.iouSum;
  correctImages += o.correctImages;
  correctSteps += o.correctSteps;
  correctHits += o.correctHits;
  correctIouSum += o.correctIouSum;
}

}  // namespace foveal::core
