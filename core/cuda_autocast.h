#pragma once
// bf16 autocast on CUDA for a scope (a forward pass), restoring the previous state: what the
// trainer and `foveal-cli bench` use on a GPU. Does nothing when off (and on the CPU, where bf16
// training convolutions have their own switch, setCpuBf16Convolutions()).
#include <ATen/autocast_mode.h>

namespace foveal::core {

class CudaAutocastScope {
 public:
  explicit CudaAutocastScope(bool on) : m_on(on) {
    if (!m_on) return;
    m_prev = at::autocast::is_enabled();
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
  }
  ~CudaAutocastScope() {
    if (!m_on) return;
    at::autocast::set_enabled(m_prev);
    at::autocast::clear_cache();
  }
  CudaAutocastScope(const CudaAutocastScope&) = delete;
  CudaAutocastScope& operator=(const CudaAutocastScope&) = delete;

 private:
  bool m_on;
  bool m_prev = false;
};

}  // namespace foveal::core
