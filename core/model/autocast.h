#pragma once
// Autocast across LibTorch versions: 2.4 made autocast per device type and deprecated the
// CUDA-only and CPU-only calls (each use of those prints a warning, hundreds a training run).
//
// CudaAutocastScope: bf16 autocast on CUDA for a scope (a forward pass), restoring the previous
// state: what the trainer and `foveal-cli bench` use on a GPU. Does nothing when off (and on the
// CPU, where bf16 training convolutions have their own switch, setCpuBf16Convolutions()).
// CpuBf16AutocastScope: the CPU's, for the backbone's training convolutions.
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define FOVEAL_AUTOCAST_PER_DEVICE 1
#else
#define FOVEAL_AUTOCAST_PER_DEVICE 0
#endif

namespace foveal::core {

/// Whether CPU autocast is on in this thread.
inline bool cpuAutocastEnabled() {
#if FOVEAL_AUTOCAST_PER_DEVICE
  return at::autocast::is_autocast_enabled(at::kCPU);
#else
  return at::autocast::is_cpu_enabled();
#endif
}

/// CPU autocast to bf16 for a scope, then off again with the previous CPU autocast type and the
/// cast cache cleared, also when the scope ends by an exception.
class CpuBf16AutocastScope {
 public:
  CpuBf16AutocastScope() {
#if FOVEAL_AUTOCAST_PER_DEVICE
    m_prev = at::autocast::get_autocast_dtype(at::kCPU);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, true);
#else
    m_prev = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(true);
#endif
  }
  ~CpuBf16AutocastScope() {
#if FOVEAL_AUTOCAST_PER_DEVICE
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::set_autocast_dtype(at::kCPU, m_prev);
#else
    at::autocast::set_cpu_enabled(false);
    at::autocast::set_autocast_cpu_dtype(m_prev);
#endif
    at::autocast::clear_cache();
  }
  CpuBf16AutocastScope(const CpuBf16AutocastScope&) = delete;
  CpuBf16AutocastScope& operator=(const CpuBf16AutocastScope&) = delete;

 private:
  at::ScalarType m_prev;
};

class CudaAutocastScope {
 public:
  explicit CudaAutocastScope(bool on) : m_on(on) {
    if (!m_on) return;
#if FOVEAL_AUTOCAST_PER_DEVICE
    m_prev = at::autocast::is_autocast_enabled(at::kCUDA);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    m_prev = at::autocast::is_enabled();
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
#endif
  }
  ~CudaAutocastScope() {
    if (!m_on) return;
#if FOVEAL_AUTOCAST_PER_DEVICE
    at::autocast::set_autocast_enabled(at::kCUDA, m_prev);
#else
    at::autocast::set_enabled(m_prev);
#endif
    at::autocast::clear_cache();
  }
  CudaAutocastScope(const CudaAutocastScope&) = delete;
  CudaAutocastScope& operator=(const CudaAutocastScope&) = delete;

 private:
  bool m_on;
  bool m_prev = false;
};

}  // namespace foveal::core
