// affine_sample.h's loops compiled for AVX2 and FMA (this file only: CMakeLists.txt), called by
// affine_sample.cpp where the CPU has both.
#include "model/affine_sample_kernels.h"

namespace foveal::core {

void sampleAffineFloatAvx2(const AffineSampleArgs& a, float* out) { sampleRows(a, out); }

void sampleAffineThetaGradFloatAvx2(const AffineSampleArgs& a, const float* grad,
                                    float* thetaGrad) {
  thetaGradRows(a, grad, thetaGrad);
}

}  // namespace foveal::core
