#include "model/affine_sample.h"

#include "model/affine_sample_kernels.h"

namespace foveal::core {

#if defined(__x86_64__)
// affine_sample_avx2.cpp
void sampleAffineFloatAvx2(const AffineSampleArgs& a, float* out);
void sampleAffineThetaGradFloatAvx2(const AffineSampleArgs& a, const float* grad, float* thetaGrad);

namespace {
bool avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
}  // namespace
#endif

void sampleAffineFloat(const AffineSampleArgs& a, float* out) {
#if defined(__x86_64__)
  if (avx2()) return sampleAffineFloatAvx2(a, out);
#endif
  sampleRows(a, out);
}

void sampleAffineThetaGradFloat(const AffineSampleArgs& a, const float* grad, float* thetaGrad) {
#if defined(__x86_64__)
  if (avx2()) return sampleAffineThetaGradFloatAvx2(a, grad, thetaGrad);
#endif
  thetaGradRows(a, grad, thetaGrad);
}

}  // namespace foveal::core
