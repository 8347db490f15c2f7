#pragma once
// The kernel routes measured on this machine (issue 68). Where two kernels can compute a layer
// and which is faster depends on the CPU (Foveal's AVX2 Winograd against oneDNN's AVX-512 direct
// kernels, say), the dispatcher times both the first time it meets a shape and keeps the faster
// (model/conv_dispatch.cpp). The choices live here, in memory and in a small text file so that
// the next process on the machine does not measure again:
//
//   $FOVEAL_ROUTE_CACHE, or $XDG_CACHE_HOME/foveal/kernel-routes.tsv, or
//   ~/.cache/foveal/kernel-routes.tsv
//
// one line per choice, "MACHINE<TAB>KEY<TAB>ROUTE<TAB>EVIDENCE": MACHINE says what the
// measurement is valid for (the CPU's model and instruction sets, the LibTorch and Foveal
// versions), KEY the layer's shape, ROUTE the kernel's id, EVIDENCE the times that decided it.
// Lines of another machine are kept (a home folder shared by several hosts) and ignored; a line
// that does not parse is skipped with one warning naming the file and line. FOVEAL_ROUTE_CACHE=""
// keeps the choices in memory only; a file that cannot be written is said once and the choices
// stay in memory. Torch-free.
#include <optional>
#include <string>

namespace foveal::core {

struct TunedRoute {
  std::string route;     // the kernel's id ("winograd", "onednn", ...)
  std::string evidence;  // the times that chose it ("winograd 12.1 ms, onednn 15.3 ms")
};

/// Whether routes are measured at all (FOVEAL_ROUTE_TUNING=0: the fixed thresholds, as measured
/// on the development machines; the test suites run so, for reproducible kernels).
bool routeTuning();
/// Overrides FOVEAL_ROUTE_TUNING for this process (tests).
void setRouteTuning(bool on);

/// The file the choices persist in ("" for none: memory only).
std::string routeCacheFile();
/// Uses `path` from now on ("" for memory only) and forgets what was read or measured (tests).
void setRouteCacheFile(const std::string& path);

/// The choice stored for (machine, key), from memory or, the first time, the file.
std::optional<TunedRoute> cachedRoute(const std::string& machine, const std::string& key);
/// Stores a choice in memory and, merged with what the file holds by then, in the file.
void storeRoute(const std::string& machine, const std::string& key, const TunedRoute& route);

}  // namespace foveal::core
