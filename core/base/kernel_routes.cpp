#include "base/kernel_routes.h"

#include <mutex>

#include <nlohmann/json.hpp>

namespace foveal::core {

namespace detail {
std::atomic<bool> g_routeRecording{false};
}

namespace {
std::mutex g_mutex;
std::vector<RouteUse> g_routes;  // guarded by g_mutex; few entries (one per layer and route)
}  // namespace

void setRouteRecording(bool on) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (on) g_routes.clear();
  detail::g_routeRecording.store(on, std::memory_order_relaxed);
}

void noteRoute(const std::string& layer, const std::string& route) {
  if (!routeRecording()) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& r : g_routes)
    if (r.layer == layer && r.route == route) {
      ++r.count;
      return;
    }
  g_routes.push_back({layer, route, 1});
}

std::vector<RouteUse> recordedRoutes() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_routes;
}

std::string formatRoutes(const std::vector<RouteUse>& routes) {
  if (routes.empty()) return "  (none recorded)\n";
  std::string out;
  for (const auto& r : routes)
    out += "  " + r.layer + ": " + r.route + " (x" + std::to_string(r.count) + ")\n";
  return out;
}

std::string routesJson(const std::vector<RouteUse>& routes) {
  // Each string quoted and escaped by nlohmann's writer; the spacing of the CLI's other JSON.
  auto quoted = [](const std::string& s) { return nlohmann::json(s).dump(); };
  std::string out = "[";
  for (size_t i = 0; i < routes.size(); ++i) {
    if (i) out += ", ";
    out += "{\"layer\": " + quoted(routes[i].layer) + ", \"route\": " + quoted(routes[i].route) +
           ", \"count\": " + std::to_string(routes[i].count) + "}";
  }
  return out + "]";
}

}  // namespace foveal::core
