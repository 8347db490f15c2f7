#pragma once
// The LSTM gates' nonlinearities as Foveal's fused LSTM loops compute them (lstm_inference,
// lstm_autograd): in float a polynomial exp without branches, so that the loops vectorise
// (relative error ~1e-7); in double the library's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace foveal::core::lstm_math {

// exp on [-87, 88] (clamped): Cody-Waite reduction by ln 2 and a degree-6 polynomial (Cephes'
// coefficients), no branches, so that the loops around it vectorise.
inline float expClamped(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  float n = x * 1.44269504088896341f + 12582912.0f;  // round to nearest via 1.5 * 2^23
  n -= 12582912.0f;
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  // A NaN x (a model whose weights overflow) stays NaN through r and y; its exponent is taken as
  // 0, since converting NaN to an integer, and shifting what it gives, is undefined (UBSan, issue
  // 65). Otherwise n is in [-126, 127] and n + 127 is positive.
  const float k = n == n ? n : 0.0f;
  const int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return y * scale;
}

inline float sigmoid(float x) { return 1.0f / (1.0f + expClamped(-x)); }
inline float tanhApprox(float x) { return 2.0f / (1.0f + expClamped(-2.0f * x)) - 1.0f; }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double tanhApprox(double x) { return std::tanh(x); }

}  // namespace foveal::core::lstm_math
