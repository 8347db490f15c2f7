#include "base/blas_kernels.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace foveal::core {

std::string blasKernels() {
  using CoreName = char* (*)();
  auto f = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (!f) return "none";
  const char* name = f();
  return name ? name : "unknown";
}

void chooseBlasKernels(char** argv) {
#if defined(__x86_64__) && defined(__linux__)
  if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("FOVEAL_BLAS_RESTARTED")) return;
  const std::string now = blasKernels();
  // OpenBLAS's generic x86-64 targets: what it falls back to for a CPU it does not know.
  if (now != "Prescott" && now != "Core2" && now != "Unknown" && now != "unknown") return;
  const char* better = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                           ? "SkylakeX"
                       : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "Haswell"
                                                                                         : nullptr;
  if (!better) return;
  setenv("OPENBLAS_CORETYPE", better, 1);
  setenv("FOVEAL_BLAS_RESTARTED", "1", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: go on with the generic kernels
#else
  (void)argv;
#endif
}

}  // namespace foveal::core
