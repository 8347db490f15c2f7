#include "base/heap_tuning.h"

#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "base/env_switch.h"

namespace foveal::core {

namespace {
std::string& settings() {
  static std::string s = "glibc defaults";
  return s;
}
}  // namespace

std::string tuneHeapForTensors() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers' runtimes bring their own allocator: glibc's thresholds would change nothing.
  settings() = "the sanitizer's allocator";
#elif defined(__GLIBC__)
  if (envSwitchSet("FOVEAL_DEFAULT_MALLOC")) {
    settings() = "glibc defaults (FOVEAL_DEFAULT_MALLOC)";
    return settings();
  }
  for (const char* name :
       {"GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"})
    if (std::getenv(name)) {
      settings() = std::string("the environment's (") + name + ")";
      return settings();
    }
  // Setting either turns glibc's dynamic thresholds off: both are set, the mmap threshold at the
  // ceiling the dynamic one would reach (blocks above it are still mapped and unmapped alone).
  constexpr int mmapMiB = 32, trimMiB = 1024;
  const bool ok = mallopt(M_MMAP_THRESHOLD, mmapMiB << 20) == 1 &&
                  mallopt(M_TRIM_THRESHOLD, trimMiB << 20) == 1;
  settings() = ok ? "tuned (mmap " + std::to_string(mmapMiB) + " MiB, trim " +
                        std::to_string(trimMiB / 1024) + " GiB)"
                  : "glibc defaults (mallopt refused)";
#else
  settings() = "the C library's defaults (not glibc)";
#endif
  return settings();
}

std::string heapSettings() { return settings(); }

}  // namespace foveal::core
