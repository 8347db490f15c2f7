#pragma once
// affine_sample.h's loops, for the translation units that instantiate them: affine_sample.cpp
// (any x86-64, lane-by-lane loads) and affine_sample_avx2.cpp (compiled for AVX2 and FMA:
// gathers). Internal linkage: each unit keeps its own copies.
#include <algorithm>
#include <cstring>

#include "model/affine_sample.h"
#if defined(__AVX2__)
#include <immintrin.h>
#endif

// Vectors pass between these always-inlined functions of internal linkage only, never across a
// call whose ABI the ISA could change.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace foveal::core {
namespace {

using Float8 = float __attribute__((vector_size(32)));
using Int8 = int32_t __attribute__((vector_size(32)));

// sharpener.cpp's axis() for eight grid coordinates: the first neighbour i0, the second's weight
// f, d coordinate / d g (size / 2, or 0 where clamped) and the lanes whose second neighbour is
// inside (next).
struct Axis8 {
  Int8 i0, next;
  Float8 f, grad;
};

[[gnu::always_inline]] inline Axis8 axis8(const Float8& g, int64_t size) {
  const float half = static_cast<float>(size) / 2.0f, last = static_cast<float>(size - 1);
  const Float8 c = (g + 1.0f) * half - 0.5f;
  const Int8 inside = (c >= 0.0f) & (c <= last);  // NaN: not inside
  const Float8 k = inside ? c : (c > last ? Float8{} + last : Float8{});
  Axis8 a;
  a.i0 = __builtin_convertvector(k, Int8);  // k >= 0: truncation is floor
  a.f = k - __builtin_convertvector(a.i0, Float8);
  a.grad = inside ? Float8{} + half : Float8{};
  a.next = a.i0 + 1 < static_cast<int32_t>(size);
  return a;
}

// p[index] in the lanes of mask, zero in the others (which are never read).
[[gnu::always_inline]] inline Float8 load8(const float* p, const Int8& index, const Int8& mask) {
#if defined(__AVX2__)
  return reinterpret_cast<Float8>(_mm256_mask_i32gather_ps(
      _mm256_setzero_ps(), p, reinterpret_cast<__m256i>(index), reinterpret_cast<__m256>(mask), 4));
#else
  Float8 v{};
  for (int l = 0; l < 8; ++l)
    if (mask[l]) v[l] = p[index[l]];
  return v;
#endif
}

// The four neighbours of eight sampling points in one plane (zero outside).
struct Corners8 {
  Float8 v00, v01, v10, v11;
};

[[gnu::always_inline]] inline Corners8 corners8(const float* p, int32_t sw, const Axis8& x,
                                                const Axis8& y) {
  const Int8 at = y.i0 * sw + x.i0, all = Int8{} - 1;
  return {load8(p, at, all), load8(p, at + 1, x.next), load8(p, at + sw, y.next),
          load8(p, at + sw + 1, x.next & y.next)};
}

// Asks for the cache lines of the source rectangle that image b's samples fall in (the box of
// the output grid's four corners mapped through theta, a neighbour wider). The sampler reads
// each image's few rows of a large upsampled batch once, long after they were last touched (the
// backward pass of an early decoding step): without it, waiting for them was more than half of
// the gradient's time.
inline void prefetchSource(const AffineSampleArgs& a, int64_t b) {
  if (a.w < 1 || a.h < 1) return;
  const float* t = a.theta + b * 6;
  const float x0 = a.xs[0], x1 = a.xs[a.w - 1], y0 = a.ys[0], y1 = a.ys[a.h - 1];
  float lo[2] = {1e30f, 1e30f}, hi[2] = {-1e30f, -1e30f};
  for (float gx : {x0, x1})
    for (float gy : {y0, y1})
      for (int r = 0; r < 2; ++r) {
        const float g = t[3 * r] * gx + t[3 * r + 1] * gy + t[3 * r + 2];
        lo[r] = std::min(lo[r], g);
        hi[r] = std::max(hi[r], g);
      }
  if (!(lo[0] <= hi[0] && lo[1] <= hi[1])) return;  // NaN
  const auto pixel = [](float g, int64_t size) {
    const float c = (g + 1.0f) * static_cast<float>(size) / 2.0f - 0.5f;
    return static_cast<int64_t>(std::clamp(c, 0.0f, static_cast<float>(size - 1)));
  };
  const int64_t c0 = pixel(lo[0], a.sw), c1 = std::min(pixel(hi[0], a.sw) + 1, a.sw - 1);
  const int64_t r0 = pixel(lo[1], a.sh), r1 = std::min(pixel(hi[1], a.sh) + 1, a.sh - 1);
  prefetchRectangle(a.planes(b), a.channels, a.sh, a.sw, r0, r1, c0, c1);
}

// fn(b, i, j, n, x, y, xv) for every block of eight output columns (n of them real) of every row
// of images [b0, b1), with the block's sampling coordinates.
template <class F>
[[gnu::always_inline]] inline void forEachBlock8(const AffineSampleArgs& a, const F& fn) {
  if (a.b0 < a.b1) prefetchSource(a, a.b0);
  for (int64_t b = a.b0; b < a.b1; ++b) {
    if (b + 1 < a.b1) prefetchSource(a, b + 1);
    const float* t = a.theta + b * 6;
    for (int64_t i = 0; i < a.h; ++i)
      for (int64_t j = 0; j < a.w; j += 8) {
        Float8 xv;
        std::memcpy(&xv, a.xs + j, sizeof(xv));
        const auto x = axis8(t[0] * xv + t[1] * a.ys[i] + t[2], a.sw);
        const auto y = axis8(t[3] * xv + t[4] * a.ys[i] + t[5], a.sh);
        fn(b, i, j, static_cast<size_t>(std::min<int64_t>(8, a.w - j)), x, y, xv);
      }
  }
}

[[gnu::always_inline]] inline void sampleRows(const AffineSampleArgs& a, float* out) {
  const int32_t sw = static_cast<int32_t>(a.sw);
  forEachBlock8(a, [&](int64_t b, int64_t i, int64_t j, size_t n, const Axis8& x, const Axis8& y,
                       const Float8&) {
    for (int64_t c = 0; c < a.channels; ++c) {
      const auto q = corners8(a.planes(b) + c * a.sh * a.sw, sw, x, y);
      const Float8 v = (1.0f - y.f) * ((1.0f - x.f) * q.v00 + x.f * q.v01) +
                       y.f * ((1.0f - x.f) * q.v10 + x.f * q.v11);
      std::memcpy(out + ((b * a.channels + c) * a.h + i) * a.w + j, &v, n * sizeof(float));
    }
  });
}

// Per image, six vector sums (one per entry of theta), added across lanes at the image's end.
[[gnu::always_inline]] inline void thetaGradRows(const AffineSampleArgs& a, const float* grad,
                                                 float* thetaGrad) {
  const int32_t sw = static_cast<int32_t>(a.sw);
  Float8 dt[6] = {};
  int64_t current = a.b0;
  const auto flush = [&](int64_t b) {
    for (int k = 0; k < 6; ++k) {
      float sum = 0.0f;
      for (int l = 0; l < 8; ++l) sum += dt[k][l];
      thetaGrad[b * 6 + k] = sum;
      dt[k] = Float8{};
    }
  };
  forEachBlock8(a, [&](int64_t b, int64_t i, int64_t j, size_t n, const Axis8& x, const Axis8& y,
                       const Float8& xv) {
    if (b != current) flush(current), current = b;
    Float8 gx{}, gy{};
    for (int64_t c = 0; c < a.channels; ++c) {
      Float8 d{};  // lanes past the row's end: no gradient
      std::memcpy(&d, grad + ((b * a.channels + c) * a.h + i) * a.w + j, n * sizeof(float));
      const auto q = corners8(a.planes(b) + c * a.sh * a.sw, sw, x, y);
      gx += d * ((1.0f - y.f) * (q.v01 - q.v00) + y.f * (q.v11 - q.v10));
      gy += d * ((1.0f - x.f) * (q.v10 - q.v00) + x.f * (q.v11 - q.v01));
    }
    gx *= x.grad;
    gy *= y.grad;
    dt[0] += gx * xv;
    dt[1] += gx * a.ys[i];
    dt[2] += gx;
    dt[3] += gy * xv;
    dt[4] += gy * a.ys[i];
    dt[5] += gy;
  });
  if (a.b1 > a.b0) flush(current);
}

}  // namespace
}  // namespace foveal::core
