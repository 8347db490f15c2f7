#pragma once
// The training step's CPU loops over parameters and gradients. Torch-free; built with
// -fno-math-errno so that the square roots vectorise (nothing else changes).
//
// adadeltaUpdate: ADADELTA's update of one parameter's elements [begin, end) in a single pass over
// its four arrays (Zeiler's rule with PyTorch's weight decay): g = grad + wd p; E[g^2] = rho E[g^2]
// + (1 - rho) g^2; dx = sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) g; E[dx^2] = rho E[dx^2] + (1 -
// rho) dx^2; p -= lr dx.
#include <cstdint>

namespace foveal::core::train {

void adadeltaUpdate(float* p, const float* grad, float* sq, float* acc, int64_t begin, int64_t end,
                    float lr, float rho, float eps, float wd);
void adadeltaUpdate(double* p, const double* grad, double* sq, double* acc, int64_t begin,
                    int64_t end, double lr, double rho, double eps, double wd);

/// The sum of x[i]^2 over [0, n), accumulated in double (the gradient norm's), in one pass.
double squaredSum(const float* x, int64_t n);

}  // namespace foveal::core::train
