#pragma once
// Which kernel each layer ran on (issue 68): the CPU paths choose per CPU and per shape (oneDNN's
// direct or Winograd convolution and the ISA of its implementation, Foveal's direct, Winograd or
// column kernels, the fused LSTM and attention paths, oneDNN's matmul or LibTorch's), and the
// benchmarks print what was chosen. Recording is off unless a benchmark turns it on; the callers
// test routeRecording() before building any text, so the hot paths pay one relaxed atomic load.
// Torch-free.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace foveal::core {

namespace detail {
extern std::atomic<bool> g_routeRecording;
}

/// Whether routes are being recorded in this process.
inline bool routeRecording() { return detail::g_routeRecording.load(std::memory_order_relaxed); }

/// Start (clearing what was recorded) or stop recording.
void setRouteRecording(bool on);

/// `layer` (what it computes and its shape: "conv 3x3 256->256 s1 on 8x25") ran on `route`
/// ("Winograd F(4x4,3x3), Foveal's"). Does nothing while recording is off. Thread-safe.
void noteRoute(const std::string& layer, const std::string& route);

struct RouteUse {
  std::string layer;
  std::string route;
  int64_t count = 0;  // how many times the layer ran on it since recording started
};

/// What was recorded since setRouteRecording(true), each (layer, route) once, in first-use order.
std::vector<RouteUse> recordedRoutes();

/// Every recorded route as indented lines ("  conv 3x3 256->256 s1 on 8x25: Winograd ... (x12)"),
/// for the benchmarks' text output; "  (none recorded)" when there is none.
std::string formatRoutes(const std::vector<RouteUse>& routes);

/// The routes as a JSON array: [{"layer": "...", "route": "...", "count": N}, ...].
std::string routesJson(const std::vector<RouteUse>& routes);

/// RAII: records routes for a scope (a benchmark of one model) and keeps them after it ends.
class RouteRecording {
 public:
  RouteRecording() { setRouteRecording(true); }
  ~RouteRecording() { setRouteRecording(false); }
  RouteRecording(const RouteRecording&) = delete;
  RouteRecording& operator=(const RouteRecording&) = delete;
};

}  // namespace foveal::core
