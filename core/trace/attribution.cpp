#include "trace/attribution.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace foveal::core {

namespace {
struct MethodName {
  AttributionMethod method;
  const char* name;
  const char* label;
};
constexpr MethodName kMethods[] = {
    {AttributionMethod::Saliency, "saliency", "Saliency"},
    {AttributionMethod::GradientInput, "grad-input", "Gradient x input"},
    {AttributionMethod::IntegratedGradients, "ig", "Integrated gradients"},
    {AttributionMethod::Occlusion, "occlusion", "Occlusion"},
};
}  // namespace

std::string toString(AttributionMethod method) {
  for (const auto& m : kMethods)
    if (m.method == method) return m.name;
  return "?";
}

std::string attributionLabel(AttributionMethod method) {
  for (const auto& m : kMethods)
    if (m.method == method) return m.label;
  return "?";
}

AttributionMethod attributionMethodFromString(const std::string& name) {
  std::string names;
  for (const auto& m : kMethods) {
    if (name == m.name) return m.method;
    names += std::string(names.empty() ? "" : ", ") + m.name;
  }
  throw Error("unknown attribution method '" + name + "' (known: " + names + ")");
}

std::vector<AttributionMethod> attributionMethods() {
  std::vector<AttributionMethod> out;
  for (const auto& m : kMethods) out.push_back(m.method);
  return out;
}

double StepAttribution::completenessError() const {
  if (std::isnan(baselineValue)) return std::numeric_limits<double>::quiet_NaN();
  double total = imageTotal;
  for (double a : tokenAttribution) total += a;
  const double expected = value - baselineValue;
  return std::abs(total - expected) / std::max(std::abs(expected), 1e-12);
}

void addToTrace(Trace& trace, const Explanation& e) {
  const std::string name = toString(e.method);
  for (auto it = trace.maps.begin(); it != trace.maps.end(); ++it)
    if (it->name == name) {
      trace.maps.erase(it);
      break;
    }
  StepMap& m = trace.addMap(name, attributionLabel(e.method), MapLayout::Pixels);
  m.width = e.width;
  m.height = e.height;
  m.steps = e.maps;
  m.steps.resize(trace.steps.size());
}

std::string explanationJson(const Explanation& e, const Trace& trace, bool withMaps, int indent) {
  using nlohmann::json;
  auto number = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json j;
  j["source"] = trace.source;
  j["prediction"] = trace.prediction;
  j["method"] = toString(e.method);
  j["width"] = e.width;
  j["height"] = e.height;
  j["seconds"] = e.seconds;
  json steps = json::array();
  for (const auto& s : e.steps) {
    json o;
    o["step"] = s.step;
    o["token"] = static_cast<size_t>(s.step) < trace.steps.size()
                     ? trace.steps[static_cast<size_t>(s.step)].token
                     : std::string();
    o["target"] = s.target;
    if (s.contrast >= 0) o["contrast"] = s.contrast;
    o["value"] = number(s.value);
    o["map_sum"] = number(s.imageTotal);
    if (!std::isnan(s.baselineValue)) {
      o["baseline_value"] = number(s.baselineValue);
      o["completeness_error"] = number(s.completenessError());
    }
    if (!s.tokenAttribution.empty()) {
      o["token_attribution"] = s.tokenAttribution;
      o["image_share"] = number(s.imageShare);
      o["guessed"] = s.imageShare < kGuessedShare;
    }
    if (withMaps && static_cast<size_t>(s.step) < e.maps.size())
      o["map"] = e.maps[static_cast<size_t>(s.step)];
    steps.push_back(std::move(o));
  }
  j["steps"] = std::move(steps);
  return j.dump(indent);
}

}  // namespace foveal::core
