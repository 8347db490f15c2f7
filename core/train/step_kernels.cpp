#include "train/step_kernels.h"

#include <cmath>

#include "base/cpu_features.h"

namespace foveal::core::train {

namespace {
template <typename S>
inline void update(S* p, const S* grad, S* sq, S* acc, int64_t begin, int64_t end, S lr, S rho,
                   S eps, S wd) {
  for (int64_t i = begin; i < end; ++i) {
    const S g = grad[i] + wd * p[i];
    const S s = rho * sq[i] + (S(1) - rho) * g * g;
    sq[i] = s;
    const S d = std::sqrt(acc[i] + eps) / std::sqrt(s + eps) * g;
    acc[i] = rho * acc[i] + (S(1) - rho) * d * d;
    p[i] -= lr * d;
  }
}
}  // namespace

FOVEAL_CPU_CLONES("avx2", "default")
void adadeltaUpdate(float* p, const float* grad, float* sq, float* acc, int64_t begin, int64_t end,
                    float lr, float rho, float eps, float wd) {
  update<float>(p, grad, sq, acc, begin, end, lr, rho, eps, wd);
}

FOVEAL_CPU_CLONES("avx2", "default")
void adadeltaUpdate(double* p, const double* grad, double* sq, double* acc, int64_t begin,
                    int64_t end, double lr, double rho, double eps, double wd) {
  update<double>(p, grad, sq, acc, begin, end, lr, rho, eps, wd);
}

double squaredSum(const float* x, int64_t n) {
  // Eight running sums: independent additions, where one sum would wait on each.
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) {
      const double v = x[i + k];
      s[k] += v * v;
    }
  for (; i < n; ++i) {
    const double v = x[i];
    s[0] += v * v;
  }
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

}  // namespace foveal::core::train
