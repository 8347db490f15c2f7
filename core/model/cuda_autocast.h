#pragma once
// bf16 autocast on CUDA for a scope (a forward pass), restoring the previous state: what the
// trainer and `foveal-cli bench` use on a GPU. Does nothing when off (and on the CPU, where bf16
// training convolutions have their own switch, setCpuBf16Convolutions()).
#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace foveal::core {

class CudaAutocastScope {
 public:
  explicit CudaAutocastScope(bool on) : m_on(on) {
    if (!m_on) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    // 2.4 made autocast per device type and deprecated the CUDA-only calls.
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
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
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
