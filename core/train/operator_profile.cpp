#include "train/operator_profile.h"

#include <torch/csrc/autograd/profiler_legacy.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace foveal::core::train {

namespace {

namespace prof = torch::autograd::profiler;

std::string shapeText(const std::vector<std::vector<int64_t>>& shapes) {
  std::string t;
  for (const auto& shape : shapes) {
    if (shape.empty()) continue;
    t += " [";
    for (size_t i = 0; i < shape.size(); ++i) t += (i ? "," : "") + std::to_string(shape[i]);
    t += "]";
  }
  return t;
}

void sortAndTotal(OperatorProfile& p, std::map<std::string, OperatorTime>& byKey) {
  p.operators.clear();
  p.totalMs = 0;
  for (auto& [key, op] : byKey) {
    p.totalMs += op.selfMs;
    p.operators.push_back(std::move(op));
  }
  std::sort(p.operators.begin(), p.operators.end(),
            [](const OperatorTime& a, const OperatorTime& b) { return a.selfMs > b.selfMs; });
}

// Self time per operator and input shapes from the legacy profiler's push / pop events: each
// range's time less the time of the ranges it encloses, on each thread.
OperatorProfile selfTimes(const prof::thread_event_lists& lists) {
  std::map<std::string, OperatorTime> byKey;
  for (const auto& events : lists) {
    std::vector<std::pair<const prof::LegacyEvent*, double>> open;  // range, children's time
    for (const auto& e : events) {
      if (e.kind() == prof::EventKind::PushRange) {
        open.emplace_back(&e, 0.0);
      } else if (e.kind() == prof::EventKind::PopRange && !open.empty()) {
        const auto [start, children] = open.back();
        open.pop_back();
        const double us = start->cpuElapsedUs(e);
        const std::string key = start->name() + shapeText(start->shapes());
        auto& op = byKey[key];
        op.name = key;
        op.calls += 1;
        op.selfMs += (us - children) / 1000.0;
        if (!open.empty()) open.back().second += us;
      }
    }
  }
  OperatorProfile p;
  sortAndTotal(p, byKey);
  return p;
}

}  // namespace

void OperatorProfile::merge(const OperatorProfile& other) {
  std::map<std::string, OperatorTime> byKey;
  for (const OperatorProfile* side : {static_cast<const OperatorProfile*>(this), &other})
    for (const auto& op : side->operators) {
      auto& sum = byKey[op.name];
      sum.name = op.name;
      sum.calls += op.calls;
      sum.selfMs += op.selfMs;
    }
  const double total = totalMs + other.totalMs;
  sortAndTotal(*this, byKey);
  totalMs = total;
}

void OperatorProfile::keep(int n) {
  if (n >= 0 && operators.size() > static_cast<size_t>(n)) operators.resize(static_cast<size_t>(n));
}

std::string OperatorProfile::toText(const std::string& heading) const {
  char line[160];
  std::snprintf(line, sizeof line, "%s: %.0f ms of operators' self time\n%10s %7s %6s  ",
                heading.c_str(), totalMs, "self ms", "calls", "share");
  std::string t = std::string(line) + "operator [input shapes]\n";
  for (const auto& op : operators) {
    std::snprintf(line, sizeof line, "%10.1f %7ld %5.1f%%  ", op.selfMs, op.calls,
                  totalMs > 0 ? 100.0 * op.selfMs / totalMs : 0.0);
    t += line + op.name + "\n";
  }
  return t;
}

std::string OperatorProfile::toJson() const {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : operators)
    ops.push_back({{"name", op.name}, {"calls", op.calls}, {"self_ms", op.selfMs}});
  return nlohmann::json{{"profiled_ms", totalMs}, {"operators", ops}}.dump();
}

OperatorRecorder::OperatorRecorder(bool enabled) : m_on(enabled) {
  if (m_on)
    prof::enableProfilerLegacy(torch::profiler::impl::ProfilerConfig(
        torch::profiler::impl::ProfilerState::CPU, /*report_input_shapes=*/true,
        /*profile_memory=*/false));
}

OperatorRecorder::~OperatorRecorder() {
  if (m_on) prof::disableProfilerLegacy();
}

OperatorProfile OperatorRecorder::finish() {
  if (!m_on) return {};
  m_on = false;
  return selfTimes(prof::disableProfilerLegacy());
}

}  // namespace foveal::core::train
