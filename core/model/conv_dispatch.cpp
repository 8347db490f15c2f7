#include "model/conv_dispatch.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/ops/thnn_conv2d.h>
#include <torch/autograd.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/pooling.h>
#include <torch/version.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/cpu_features.h"
#include "base/env_switch.h"
#include "base/gradient_scope.h"
#include "base/kernel_routes.h"
#include "base/route_cache.h"
#include "model/autocast.h"
#include "model/winograd.h"

namespace foveal::core {

namespace {

// The window's four values as strided views of x (cropped to even sizes).
std::array<torch::Tensor, 4> quarters(const torch::Tensor& x) {
  const int64_t h = x.size(2) / 2 * 2, w = x.size(3) / 2 * 2;
  auto a = x.narrow(2, 0, h).narrow(3, 0, w);
  auto top = a.slice(2, 0, h, 2), bottom = a.slice(2, 1, h, 2);
  return {top.slice(3, 0, w, 2), top.slice(3, 1, w, 2), bottom.slice(3, 0, w, 2),
          bottom.slice(3, 1, w, 2)};
}

// Whether this file's pooling kernels take x (CPU float, 4-D, at least 2x2; fastConvolutions()).
bool poolsHere(const torch::Tensor& x) {
  return x.is_cpu() && x.dim() == 4 && x.scalar_type() == torch::kFloat && x.size(2) >= 2 &&
         x.size(3) >= 2 && fastConvolutions();
}

// Convolutions of one input channel or few (stride 1, zero padding), computed directly. Such a
// layer (1 -> 4..64 channels, 4 -> 4, 4 -> 8, 3x3) is tiny but runs at every decoding step of a
// sharp model (the STN localiser and the glimpse VGG) in both directions; im2col + GEMM
// (thnn_conv2d) and oneDNN spend most of that time rearranging memory. Here every loop is a
// row of the output against a shifted row of the zero-padded input, one input channel at a
// time, which the compiler vectorises; the weight gradient keeps one accumulator per output
// column (no horizontal sums in the inner loop) and one set per thread chunk, summed in chunk
// order (deterministic for a given thread count).

// The rows are computed eight output columns at a time, the last block too: the output planes
// of the kernels have rows of ows() columns (ow() rounded up to 8; the extra columns are
// scratch, dropped on the way out, and their gradient is zero), the padded input rows padW()
// (enough for ows(), the extra columns zero).
struct ConvShape {
  int64_t h, w, kh, kw, ph, pw, out_c;
  int64_t in_c = 1;
  int64_t taps() const { return kh * kw; }
  int64_t padH() const { return h + 2 * ph; }
  int64_t oh() const { return padH() - kh + 1; }
  int64_t ow() const { return w + 2 * pw - kw + 1; }
  int64_t ows() const { return (ow() + 7) / 8 * 8; }
  int64_t padW() const { return ows() + kw - 1; }
  int64_t padPlane() const { return padH() * padW(); }
  int64_t outPlanes() const { return out_c * oh() * ows(); }  // one image, kernel layout
};

// src (in_c planes of h rows of w values, rowStride apart; 0: w) into dst (in_c planes of padH x
// padW), zero border.
void padPlane(const float* src, float* dst, const ConvShape& s, int64_t rowStride = 0) {
  if (rowStride == 0) rowStride = s.w;
  std::fill(dst, dst + s.in_c * s.padPlane(), 0.0f);
  for (int64_t c = 0; c < s.in_c; ++c)
    for (int64_t y = 0; y < s.h; ++y)
      std::copy(src + (c * s.h + y) * rowStride, src + (c * s.h + y) * rowStride + s.w,
                dst + (c * s.padH() + y + s.ph) * s.padW() + s.pw);
}

// Eight output columns at a time as a GCC vector (AVX2 registers in the avx2 clone, two SSE
// ones in the default clone; no FMA in either, so both round alike). The row loops are
// templates on the kernel size so that a 3x3 kernel's nine input vectors and accumulators stay
// in registers (KH = KW = 0: any size up to kMaxTaps taps, read from the shape); they are
// inlined into the target clones below. Each takes one input channel: padded is that channel's
// plane, weight its taps for output channel 0 (output channel o's at o * wstride).
using Float8 = float __attribute__((vector_size(32)));
using Int8 = int32_t __attribute__((vector_size(32)));  // Float8's comparisons and lanes' indices
constexpr int64_t kMaxTaps = 25;                        // kernels up to 5x5 take the direct path

// OG output channels from og on, over all input channels (padded: the in_c padded planes),
// their OG accumulators in registers for each block of eight columns, so that the taps' products
// form OG independent chains; each output is bias + the products in (channel, tap) order.
template <int KH, int KW, int OG>
[[gnu::always_inline]] inline void forwardGroup(const float* padded, const float* weight,
                                                const float* bias, int64_t og, float* out,
                                                const ConvShape& s) {
  const int64_t kh = KH ? KH : s.kh, kw = KW ? KW : s.kw, taps = kh * kw;
  const int64_t oh = s.oh(), ows = s.ows(), pw = s.padW(), plane = s.padPlane();
  const int64_t wstride = s.in_c * taps;
  const float* w0 = weight + og * wstride;
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ows; x += 8) {
      Float8 acc[OG];
      for (int j = 0; j < OG; ++j) acc[j] = Float8{} + (bias ? bias[og + j] : 0.0f);
      for (int64_t c = 0; c < s.in_c; ++c) {
        const float* p = padded + c * plane + y * pw + x;
        const float* w = w0 + c * taps;
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            Float8 v;
            std::memcpy(&v, p + ky * pw + kx, sizeof(Float8));
            const int64_t k = ky * kw + kx;
            for (int j = 0; j < OG; ++j) acc[j] += w[j * wstride + k] * v;
          }
      }
      for (int j = 0; j < OG; ++j)
        std::memcpy(out + ((og + j) * oh + y) * ows + x, &acc[j], sizeof(Float8));
    }
}

// One output channel (the last of an odd count, or an input gradient of one channel: the
// glimpse VGG's first layer) over six accumulators, by tap row and channel parity, summed at the
// end: one chain through every channel's taps would wait on each addition.
template <int KH, int KW>
[[gnu::always_inline]] inline void forwardSingle(const float* padded, const float* weight,
                                                 const float* bias, int64_t og, float* out,
                                                 const ConvShape& s) {
  const int64_t kh = KH ? KH : s.kh, kw = KW ? KW : s.kw, taps = kh * kw;
  const int64_t oh = s.oh(), ows = s.ows(), pw = s.padW(), plane = s.padPlane();
  const float* w0 = weight + og * s.in_c * taps;
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ows; x += 8) {
      Float8 acc[6] = {};
      for (int64_t c = 0; c < s.in_c; ++c) {
        const float* p = padded + c * plane + y * pw + x;
        const float* w = w0 + c * taps;
        for (int64_t ky = 0; ky < kh; ++ky) {
          Float8& a = acc[(c & 1) * 3 + ky % 3];
          for (int64_t kx = 0; kx < kw; ++kx) {
            Float8 v;
            std::memcpy(&v, p + ky * pw + kx, sizeof(Float8));
            a += w[ky * kw + kx] * v;
          }
        }
      }
      const Float8 sum =
          ((acc[0] + acc[3]) + (acc[1] + acc[4])) + (acc[2] + acc[5]) + (bias ? bias[og] : 0.0f);
      std::memcpy(out + (og * oh + y) * ows + x, &sum, sizeof(Float8));
    }
}

// Every output channel, in groups of 8, then 4, 2 and 1.
template <int KH, int KW>
[[gnu::always_inline]] inline void forwardRows(const float* padded, const float* weight,
                                               const float* bias, float* out, const ConvShape& s) {
  int64_t og = 0;
  for (; og + 8 <= s.out_c; og += 8) forwardGroup<KH, KW, 8>(padded, weight, bias, og, out, s);
  if (og + 4 <= s.out_c) forwardGroup<KH, KW, 4>(padded, weight, bias, og, out, s), og += 4;
  if (og + 2 <= s.out_c) forwardGroup<KH, KW, 2>(padded, weight, bias, og, out, s), og += 2;
  if (og < s.out_c) forwardSingle<KH, KW>(padded, weight, bias, og, out, s);
}

// Weight gradient: added per output channel and tap to accV (8 column partial sums, output
// channel o's taps at o * wstride).
template <int KH, int KW>
[[gnu::always_inline]] inline void weightGradRows(const float* padded, const float* grad,
                                                  float* accV, int64_t wstride,
                                                  const ConvShape& s) {
  const int64_t kh = KH ? KH : s.kh, kw = KW ? KW : s.kw, taps = kh * kw;
  const int64_t oh = s.oh(), ows = s.ows(), pw = s.padW();
  Float8 acc[KH ? KH * KW : kMaxTaps];
  for (int64_t o = 0; o < s.out_c; ++o) {
    for (int64_t k = 0; k < taps; ++k) std::memcpy(&acc[k], accV + (o * wstride + k) * 8, 32);
    const float* g = grad + o * oh * ows;
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ows; x += 8) {
        Float8 gv;
        std::memcpy(&gv, g + y * ows + x, sizeof(Float8));
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            Float8 v;
            std::memcpy(&v, padded + (y + ky) * pw + kx + x, sizeof(Float8));
            acc[ky * kw + kx] += gv * v;
          }
      }
    for (int64_t k = 0; k < taps; ++k) std::memcpy(accV + (o * wstride + k) * 8, &acc[k], 32);
  }
}

// One image: padded holds its in_c padded planes, weight is [out_c, in_c, kh, kw], out its
// outPlanes() (rows of ows()).
FOVEAL_CPU_CLONES("avx2", "default")
void convPlaneForward(const float* padded, const float* weight, const float* bias, float* out,
                      const ConvShape& s) {
  if (s.kh == 3 && s.kw == 3)
    forwardRows<3, 3>(padded, weight, bias, out, s);
  else
    forwardRows<0, 0>(padded, weight, bias, out, s);
}

// Adds one image's weight gradient to accV (8 lanes per weight, laid out as the weight). padded:
// its in_c padded planes; grad: outPlanes(), zero in the extra columns. (The input gradient is a
// convolution of its own: see DirectConvFunction::backward.)
FOVEAL_CPU_CLONES("avx2", "default")
void convPlaneWeightGradient(const float* padded, const float* grad, float* accV,
                             const ConvShape& s) {
  const int64_t taps = s.taps(), wstride = s.in_c * taps;
  for (int64_t c = 0; c < s.in_c; ++c) {
    const float* p = padded + c * s.padPlane();
    float* av = accV + c * taps * 8;
    if (s.kh == 3 && s.kw == 3)
      weightGradRows<3, 3>(p, grad, av, wstride, s);
    else
      weightGradRows<0, 0>(p, grad, av, wstride, s);
  }
}

// The sum of n values (a multiple of 8: a plane of rows of ows() values), in eight lanes summed
// in lane order.
FOVEAL_CPU_CLONES("avx2", "default")
float laneSum(const float* v, int64_t n) {
  Float8 lanes{};
  for (int64_t k = 0; k < n; k += 8) {
    Float8 x;
    std::memcpy(&x, v + k, sizeof(Float8));
    lanes += x;
  }
  float sum = 0.0f;
  for (int l = 0; l < 8; ++l) sum += lanes[l];
  return sum;
}

// Max pooling, forward and backward, on planes of h rows of w values (rows `stride` apart), eight
// values at a time, with each value's window position (uint8) kept for the backward pass: the
// 2x2 stride-2 pool fused into a direct convolution (with its ReLU), the VGGs' 2x2 pools after
// oneDNN's convolutions and their height-only (2, 1) pools. max_pool2d's rule: the window's
// values in row-major order, a later one replacing the running maximum when greater or NaN (the
// first maximum takes the gradient). After a ReLU (Relu = true; the fused layer, which never
// stores the ReLU's output): a NaN does not replace, and a window whose maximum is not positive
// gives 0 and position kNoGradient (ReLU's gradient is zero there).
constexpr uint8_t kNoGradient = 255;
using Byte8 = uint8_t __attribute__((vector_size(8)));

// Whether v replaces the running maximum best (lanes of all ones where it does; an out-parameter:
// a vector return value would be an ABI question in the default clone).
template <bool Relu>
[[gnu::always_inline]] inline void replaces(const Float8& v, const Float8& best, Int8& take) {
  take = Relu ? v > best : (v > best) | (v != v);
}
template <bool Relu>
[[gnu::always_inline]] inline bool replaces(float v, float best) {
  return v > best || (!Relu && std::isnan(v));
}

// Copies of n <= `size` bytes: a whole vector's as one fixed-size move (the blocks of a row but
// its last), fewer through a call (memcpy of a variable size is one).
template <size_t size>
[[gnu::always_inline]] inline void copyPart(void* to, const void* from, size_t n) {
  if (n == size)
    std::memcpy(to, from, size);
  else
    std::memcpy(to, from, n);
}

// n <= 8 pooled gradient values from g and their windows' positions from at (lanes past n: zero
// and position pad).
[[gnu::always_inline]] inline void loadGradients(const float* g, const uint8_t* at, size_t n,
                                                 uint8_t pad, Float8& v, Int8& position) {
  v = Float8{};
  Byte8 b = Byte8{} + pad;
  copyPart<32>(&v, g, n * sizeof(float));
  copyPart<8>(&b, at, n);
  position = __builtin_convertvector(b, Int8);
}

// Eight windows' maxima over their four values v[0..3] (in the window's row-major order) and
// the position of each one's first maximum, as max_pool2d keeps it.
template <bool Relu>
[[gnu::always_inline]] inline void windowMaximum(const Float8 (&v)[4], Float8& best, Int8& at) {
  best = v[0];
  at = Int8{};
  for (int q = 1; q < 4; ++q) {
    Int8 take;
    replaces<Relu>(v[q], best, take);
    best = take ? v[q] : best;
    at = take ? Int8{} + q : at;
  }
}

// block(j, n) for a row of `count` values in blocks of n = 8 from j, then one(j) for the values
// left one at a time; in a row of fewer than eight (or always, where `partial`) a last block of
// n < 8 instead.
template <class Block, class One>
[[gnu::always_inline]] inline void forEachBlock(int64_t count, bool partial, const Block& block,
                                                const One& one) {
  int64_t j = 0;
  for (; j < count && (partial || count < 8 || j + 8 <= count); j += 8)
    block(j, std::min<int64_t>(8, count - j));
  for (; j < count; ++j) one(j);
}

// fn(r0, r1, dst, at) for the rows 2i and 2i + 1 of every plane of h rows (`stride` apart) and
// the pooled row of outW values and positions they give.
template <class F>
[[gnu::always_inline]] inline void forEachRowPair(const float* in, float* out, uint8_t* where,
                                                  int64_t planes, int64_t h, int64_t stride,
                                                  int64_t outW, const F& fn) {
  const int64_t ph = h / 2;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < ph; ++i) {
      const float* r0 = in + (p * h + 2 * i) * stride;
      fn(r0, r0 + stride, out + (p * ph + i) * outW, where + (p * ph + i) * outW);
    }
}

// 2x2 windows, stride 2 (ph = h / 2 rows of pw = w / 2 pooled values a plane): the two rows'
// sixteen values deinterleaved into the windows' four positions. slack: the input may be read up
// to 16 floats past the last plane's used end, and a last block of fewer than eight windows runs
// as a whole one keeping only its own values; otherwise as forEachBlock says.
template <bool Relu>
[[gnu::always_inline]] inline void pool2x2Planes(const float* in, float* out, uint8_t* where,
                                                 int64_t planes, int64_t h, int64_t w,
                                                 int64_t stride, bool slack) {
  const int64_t pw = w / 2;
  const Int8 evens{0, 2, 4, 6, 8, 10, 12, 14}, odds{1, 3, 5, 7, 9, 11, 13, 15};
  forEachRowPair(in, out, where, planes, h, stride, pw,
                 [&](const float* r0, const float* r1, float* dst, uint8_t* at) {
                   const auto block = [&](int64_t j, int64_t n) {
                     // A block of n < 8 windows from zero-padded copies of its 2n values a row
                     // (unless slack).
                     float part[2][16];  // zeroed only where used: not in a whole block
                     const float* top = r0 + 2 * j;
                     const float* bottom = r1 + 2 * j;
                     if (n < 8 && !slack) {
                       std::fill(&part[0][0], &part[0][0] + 32, 0.0f);
                       copyPart<64>(part[0], top, static_cast<size_t>(2 * n) * sizeof(float));
                       copyPart<64>(part[1], bottom, static_cast<size_t>(2 * n) * sizeof(float));
                       top = part[0];
                       bottom = part[1];
                     }
                     Float8 a0, a1, b0, b1;
                     std::memcpy(&a0, top, sizeof(Float8));
                     std::memcpy(&a1, top + 8, sizeof(Float8));
                     std::memcpy(&b0, bottom, sizeof(Float8));
                     std::memcpy(&b1, bottom + 8, sizeof(Float8));
                     const Float8 v[4] = {
                         __builtin_shuffle(a0, a1, evens), __builtin_shuffle(a0, a1, odds),
                         __builtin_shuffle(b0, b1, evens), __builtin_shuffle(b0, b1, odds)};
                     Float8 best;
                     Int8 k;
                     windowMaximum<Relu>(v, best, k);
                     if (Relu) {
                       const Int8 positive = best > 0.0f;
                       best = positive ? best : Float8{};
                       k = positive ? k : Int8{} + kNoGradient;
                     }
                     const Byte8 index = __builtin_convertvector(k, Byte8);
                     copyPart<32>(dst + j, &best, static_cast<size_t>(n) * sizeof(float));
                     copyPart<8>(at + j, &index, static_cast<size_t>(n));
                   };
                   forEachBlock(pw, slack, block, [&](int64_t j) {
                     const float v[4] = {r0[2 * j], r0[2 * j + 1], r1[2 * j], r1[2 * j + 1]};
                     float best = v[0];
                     uint8_t k = 0;
                     for (uint8_t q = 1; q < 4; ++q)
                       if (replaces<Relu>(v[q], best)) best = v[q], k = q;
                     if (Relu && !(best > 0.0f)) best = 0.0f, k = kNoGradient;
                     dst[j] = best;
                     at[j] = k;
                   });
                 });
}

// The input's gradient from the 2x2 pool's (pool2x2Planes' layout): every input value written,
// zero but at each window's position in where (none at kNoGradient), in the rows' extra columns
// (to stride) and in a last row or column the pool dropped; each plane's sum of the gradient that
// passes added to sums (null: not wanted).
[[gnu::always_inline]] inline void unpool2x2Planes(const float* grad, const uint8_t* where,
                                                   float* in, double* sums, int64_t planes,
                                                   int64_t h, int64_t w, int64_t stride) {
  const int64_t ph = h / 2, pw = w / 2;
  const Int8 low{0, 8, 1, 9, 2, 10, 3, 11}, high{4, 12, 5, 13, 6, 14, 7, 15};
  for (int64_t p = 0; p < planes; ++p) {
    Float8 passed{};
    for (int64_t i = 0; i < ph; ++i) {
      float* r0 = in + (p * h + 2 * i) * stride;
      float* r1 = r0 + stride;
      const float* g = grad + (p * ph + i) * pw;
      const uint8_t* at = where + (p * ph + i) * pw;
      float tail = 0.0f;
      const auto block = [&](int64_t j, int64_t n) {
        // A block of n < 8 values through copies (positions past them kNoGradient: zeros).
        Float8 v;
        Int8 k;
        loadGradients(g + j, at + j, static_cast<size_t>(n), kNoGradient, v, k);
        const Float8 zero{}, p0 = k == 0 ? v : zero, p1 = k == 1 ? v : zero, p2 = k == 2 ? v : zero,
                             p3 = k == 3 ? v : zero;
        passed += k != kNoGradient ? v : zero;
        const Float8 rows[2][2] = {
            {__builtin_shuffle(p0, p1, low), __builtin_shuffle(p0, p1, high)},
            {__builtin_shuffle(p2, p3, low), __builtin_shuffle(p2, p3, high)}};
        const size_t bytes = static_cast<size_t>(2 * n) * sizeof(float);
        copyPart<64>(r0 + 2 * j, rows[0], bytes);
        copyPart<64>(r1 + 2 * j, rows[1], bytes);
      };
      forEachBlock(pw, false, block, [&](int64_t j) {
        const uint8_t k = at[j];
        const float v = g[j];
        r0[2 * j] = k == 0 ? v : 0.0f;
        r0[2 * j + 1] = k == 1 ? v : 0.0f;
        r1[2 * j] = k == 2 ? v : 0.0f;
        r1[2 * j + 1] = k == 3 ? v : 0.0f;
        tail += k != kNoGradient ? v : 0.0f;
      });
      passed[0] += tail;
      std::fill(r0 + 2 * pw, r0 + stride, 0.0f);
      std::fill(r1 + 2 * pw, r1 + stride, 0.0f);
    }
    if (h % 2) std::fill(in + (p * h + h - 1) * stride, in + (p * h + h) * stride, 0.0f);
    if (sums) {
      float sum = 0.0f;
      for (int l = 0; l < 8; ++l) sum += passed[l];
      sums[p] += sum;
    }
  }
}

// ReLU and the 2x2 pool of one image's convolution planes (outPlanes(); the buffer holds
// kPoolSlack floats more), and the gradient's way back with the bias's gradient.
constexpr int64_t kPoolSlack = 16;

FOVEAL_CPU_CLONES("avx2", "default")
void reluPool(const float* conv, float* out, uint8_t* where, const ConvShape& s) {
  pool2x2Planes<true>(conv, out, where, s.out_c, s.oh(), s.ow(), s.ows(), true);
}

FOVEAL_CPU_CLONES("avx2", "default")
void unpoolGradient(const float* grad, const uint8_t* where, float* conv, double* biasSums,
                    const ConvShape& s) {
  unpool2x2Planes(grad, where, conv, biasSums, s.out_c, s.oh(), s.ow(), s.ows());
}

// Contiguous planes of h x w: the 2x2 pool (rows false) or the (2, 1) one (kernel and stride
// (2, 1): each value the greater of a pair of rows, position 0 or 1), forward and backward.
FOVEAL_CPU_CLONES("avx2", "default")
void poolPlanes(bool rows, const float* in, float* out, uint8_t* where, int64_t planes, int64_t h,
                int64_t w) {
  if (!rows) return pool2x2Planes<false>(in, out, where, planes, h, w, w, false);
  forEachRowPair(in, out, where, planes, h, w, w,
                 [&](const float* r0, const float* r1, float* dst, uint8_t* at) {
                   const auto block = [&](int64_t j, int64_t count) {
                     const size_t n = static_cast<size_t>(count);
                     Float8 a{}, b{};
                     copyPart<32>(&a, r0 + j, n * sizeof(float));
                     copyPart<32>(&b, r1 + j, n * sizeof(float));
                     Int8 take;
                     replaces<false>(b, a, take);
                     const Float8 best = take ? b : a;
                     const Byte8 index = __builtin_convertvector(take & 1, Byte8);
                     copyPart<32>(dst + j, &best, n * sizeof(float));
                     copyPart<8>(at + j, &index, n);
                   };
                   forEachBlock(w, false, block, [&](int64_t j) {
                     const bool take = replaces<false>(r1[j], r0[j]);
                     dst[j] = take ? r1[j] : r0[j];
                     at[j] = take ? 1 : 0;
                   });
                 });
}

FOVEAL_CPU_CLONES("avx2", "default")
void unpoolPlanes(bool rows, const float* grad, const uint8_t* where, float* in, int64_t planes,
                  int64_t h, int64_t w) {
  if (!rows) return unpool2x2Planes(grad, where, in, nullptr, planes, h, w, w);
  const int64_t ph = h / 2;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t i = 0; i < ph; ++i) {
      float* r0 = in + (p * h + 2 * i) * w;
      float* r1 = r0 + w;
      const float* g = grad + (p * ph + i) * w;
      const uint8_t* at = where + (p * ph + i) * w;
      const auto block = [&](int64_t j, int64_t count) {
        const size_t n = static_cast<size_t>(count);
        Float8 v;
        Int8 position;
        loadGradients(g + j, at + j, n, 0, v, position);
        const Int8 second = position == 1;
        const Float8 zero{}, top = second ? zero : v, bottom = second ? v : zero;
        copyPart<32>(r0 + j, &top, n * sizeof(float));
        copyPart<32>(r1 + j, &bottom, n * sizeof(float));
      };
      forEachBlock(w, false, block, [&](int64_t j) {
        r0[j] = at[j] ? 0.0f : g[j];
        r1[j] = at[j] ? g[j] : 0.0f;
      });
    }
    if (h % 2) std::fill(in + (p * h + h - 1) * w, in + (p * h + h) * w, 0.0f);
  }
}

// The 2x2 pool of channels-last images (h x w pixels of c channels each): a window's four
// pixels are four runs of c values, compared eight channels at a time (positions and rules as
// pool2x2Planes').
FOVEAL_CPU_CLONES("avx2", "default")
void pool2x2Pixels(const float* in, float* out, uint8_t* where, int64_t images, int64_t h,
                   int64_t w, int64_t c) {
  const int64_t ph = h / 2, pw = w / 2;
  for (int64_t b = 0; b < images; ++b)
    for (int64_t i = 0; i < ph; ++i)
      for (int64_t j = 0; j < pw; ++j) {
        const float* p0 = in + ((b * h + 2 * i) * w + 2 * j) * c;
        const float* const v[4] = {p0, p0 + c, p0 + w * c, p0 + (w + 1) * c};
        float* dst = out + ((b * ph + i) * pw + j) * c;
        uint8_t* at = where + ((b * ph + i) * pw + j) * c;
        const auto block = [&](int64_t k, int64_t count) {
          const size_t n = static_cast<size_t>(count);
          Float8 q[4];
          for (int r = 0; r < 4; ++r) {
            q[r] = Float8{};
            copyPart<32>(&q[r], v[r] + k, n * sizeof(float));
          }
          Float8 best;
          Int8 pos;
          windowMaximum<false>(q, best, pos);
          const Byte8 index = __builtin_convertvector(pos, Byte8);
          copyPart<32>(dst + k, &best, n * sizeof(float));
          copyPart<8>(at + k, &index, n);
        };
        forEachBlock(c, false, block, [&](int64_t k) {
          float best = v[0][k];
          uint8_t pos = 0;
          for (uint8_t r = 1; r < 4; ++r)
            if (replaces<false>(v[r][k], best)) best = v[r][k], pos = r;
          dst[k] = best;
          at[k] = pos;
        });
      }
}

// Its gradient: every input value written (a last row or column the pool dropped zero).
FOVEAL_CPU_CLONES("avx2", "default")
void unpool2x2Pixels(const float* grad, const uint8_t* where, float* in, int64_t images, int64_t h,
                     int64_t w, int64_t c) {
  const int64_t ph = h / 2, pw = w / 2;
  for (int64_t b = 0; b < images; ++b) {
    for (int64_t i = 0; i < ph; ++i) {
      for (int64_t j = 0; j < pw; ++j) {
        float* p0 = in + ((b * h + 2 * i) * w + 2 * j) * c;
        float* const v[4] = {p0, p0 + c, p0 + w * c, p0 + (w + 1) * c};
        const float* g = grad + ((b * ph + i) * pw + j) * c;
        const uint8_t* at = where + ((b * ph + i) * pw + j) * c;
        const auto block = [&](int64_t k, int64_t count) {
          const size_t n = static_cast<size_t>(count);
          Float8 gv;
          Int8 pos;
          loadGradients(g + k, at + k, n, 0, gv, pos);
          for (int r = 0; r < 4; ++r) {
            const Float8 part = pos == r ? gv : Float8{};
            copyPart<32>(v[r] + k, &part, n * sizeof(float));
          }
        };
        forEachBlock(c, false, block, [&](int64_t k) {
          for (int r = 0; r < 4; ++r) v[r][k] = at[k] == r ? g[k] : 0.0f;
        });
      }
      if (w % 2) {
        float* r0 = in + ((b * h + 2 * i) * w + w - 1) * c;
        std::fill(r0, r0 + c, 0.0f);
        std::fill(r0 + w * c, r0 + (w + 1) * c, 0.0f);
      }
    }
    if (h % 2) std::fill(in + (b * h + h - 1) * w * c, in + (b * h + h) * w * c, 0.0f);
  }
}

// Whether x is laid out channels last (and not also contiguous: one channel, or one pixel).
bool channelsLast(const torch::Tensor& x) {
  return x.dim() == 4 && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast);
}

// f(full, pooled, n) over a pool's batch in parallel chunks: channels last, whole images (the
// (2, 1) pool on rows of w x c values, the 2x2 one on pixels of c values); otherwise planes. full
// and pooled: the chunk's offsets into the input and the pooled tensors (plane: h x w values,
// pooledPlane: ph x pw), n: its images or planes.
template <class F>
void forEachPoolChunk(bool last, int64_t images, int64_t c, int64_t plane, int64_t pooledPlane,
                      const F& f) {
  const int64_t unit = last ? c : 1;
  at::parallel_for(0, last ? images : images * c, 1, [&](int64_t begin, int64_t end) {
    f(begin * unit * plane, begin * unit * pooledPlane, end - begin);
  });
}

// max_pool2d(x, 2) (Rows = false) or max_pool2d(x, {2, 1}) (Rows = true) of a contiguous CPU
// float x, no padding, floor: values and gradients max_pool2d's, the positions kept as bytes (an
// eighth of max_pool2d's int64 indices) and the backward pass this file's.
template <bool Rows>
class WindowPoolFunction : public torch::autograd::Function<WindowPoolFunction<Rows>> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    // Channels last (sequentialForward's layout between oneDNN's convolutions in training) stays
    // so: an image is then h rows of w pixels of c values.
    const bool last = channelsLast(x);
    const auto format = last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
    auto in = x.contiguous(format);
    const int64_t images = in.size(0), c = in.size(1), h = in.size(2), w = in.size(3);
    const int64_t ph = h / 2, pw = Rows ? w : w / 2;
    auto out = torch::empty({images, c, ph, pw}, in.options().memory_format(format));
    auto where = torch::empty({images * c * ph * pw}, in.options().dtype(torch::kUInt8));
    const float* src = in.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    uint8_t* at = where.data_ptr<uint8_t>();
    forEachPoolChunk(last, images, c, h * w, ph * pw, [&](int64_t full, int64_t pooled, int64_t n) {
      if (last && !Rows)
        pool2x2Pixels(src + full, dst + pooled, at + pooled, n, h, w, c);
      else
        poolPlanes(Rows, src + full, dst + pooled, at + pooled, n, h, last ? w * c : w);
    });
    ctx->save_for_backward({where});
    ctx->saved_data["h"] = h;
    ctx->saved_data["w"] = w;
    ctx->saved_data["last"] = last;
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto where = ctx->get_saved_variables()[0];
    const int64_t h = ctx->saved_data["h"].toInt(), w = ctx->saved_data["w"].toInt();
    const bool last = ctx->saved_data["last"].toBool();
    const auto format = last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
    const auto g = grads[0].contiguous(format);
    const int64_t images = g.size(0), c = g.size(1), ph = g.size(2), pw = g.size(3);
    auto gin = torch::empty({images, c, h, w}, g.options().memory_format(format));
    const float* gp = g.data_ptr<float>();
    const uint8_t* at = where.data_ptr<uint8_t>();
    float* dst = gin.data_ptr<float>();
    forEachPoolChunk(last, images, c, h * w, ph * pw, [&](int64_t full, int64_t pooled, int64_t n) {
      if (last && !Rows)
        unpool2x2Pixels(gp + pooled, at + pooled, dst + full, n, h, w, c);
      else
        unpoolPlanes(Rows, gp + pooled, at + pooled, dst + full, n, h, last ? w * c : w);
    });
    return {gin};
  }
};

// DirectConvFunction's input-gradient kernel: the weight transposed (in <-> out) and turned half
// a turn.
std::vector<float> turnedWeight(const float* wp, const ConvShape& s) {
  std::vector<float> turned(static_cast<size_t>(s.out_c * s.in_c * s.taps()));
  for (int64_t o = 0; o < s.out_c; ++o)
    for (int64_t c = 0; c < s.in_c; ++c)
      for (int64_t ky = 0; ky < s.kh; ++ky)
        for (int64_t kx = 0; kx < s.kw; ++kx)
          turned[static_cast<size_t>(((c * s.out_c + o) * s.kh + s.kh - 1 - ky) * s.kw + s.kw - 1 -
                                     kx)] = wp[((o * s.in_c + c) * s.kh + ky) * s.kw + kx];
  return turned;
}

// One image's output gradient gq in the kernels' layout (gconv's rows of s.ows(), unless it is
// there already) and, fused, through the pool's positions wh; its bias gradient added to ba
// (null: none). Returns where it is.
const float* kernelLayoutGradient(const float* gq, const uint8_t* wh, float* gconv, double* ba,
                                  bool fuse, bool inPlace, const ConvShape& s) {
  const int64_t oh = s.oh(), ow = s.ow(), ows = s.ows();
  if (fuse) {
    unpoolGradient(gq, wh, gconv, ba, s);
    return gconv;
  }
  if (!inPlace) {
    for (int64_t r = 0; r < s.out_c * oh; ++r)
      std::copy(gq + r * ow, gq + (r + 1) * ow, gconv + r * ows);
    gq = gconv;
  }
  for (int64_t o = 0; ba && o < s.out_c; ++o) ba[o] += laneSum(gq + o * oh * ows, oh * ows);
  return gq;
}

// One image's input gradient gi from its output gradient gq (kernels' layout): gq padded as t,
// convolved with the turned weight, the input's rows taken from offY and offX of the result.
void imageInputGradient(const float* gq, const float* turned, float* gpadded, float* ginRows,
                        float* gi, const ConvShape& s, const ConvShape& t, int64_t offY,
                        int64_t offX) {
  padPlane(gq, gpadded, t, s.ows());
  convPlaneForward(gpadded, turned, nullptr, ginRows, t);
  for (int64_t ch = 0; ch < s.in_c; ++ch)
    for (int64_t y = 0; y < s.h; ++y) {
      const float* row = ginRows + (ch * t.oh() + y + offY) * t.ows() + offX;
      std::copy(row, row + s.w, gi + (ch * s.h + y) * s.w);
    }
}

// The chunks' weight-gradient accumulators (8 lanes per weight), summed in order, in w's shape.
torch::Tensor summedWeightGradient(const std::vector<float>& acc, int64_t chunks, int64_t weights,
                                   const torch::Tensor& w) {
  const int64_t per = weights * 8;
  torch::Tensor gw = torch::zeros_like(w);
  for (int64_t c = 0; c < chunks; ++c) {
    float* gwp = gw.data_ptr<float>();
    const float* a = acc.data() + c * per;
    for (int64_t k = 0; k < weights; ++k) {
      float sum = 0.0f;
      for (int64_t l = 0; l < 8; ++l) sum += a[k * 8 + l];
      gwp[k] += sum;
    }
  }
  return gw;
}

// The chunks' bias-gradient sums, in order.
torch::Tensor summedBiasGradient(const std::vector<double>& biasAcc, int64_t chunks, int64_t outC,
                                 const torch::TensorOptions& options) {
  torch::Tensor gb = torch::zeros({outC}, options);
  float* gbp = gb.data_ptr<float>();
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t o = 0; o < outC; ++o) gbp[o] += static_cast<float>(biasAcc[c * outC + o]);
  return gb;
}

// conv(x) (stride 1, zero padding), or with fuse max_pool2d(relu(conv(x)), 2): a network's
// first layer and the two after it in one pass, without the full-size activation and its
// gradient in memory (3-4 passes over the largest tensor of a glimpse).
class DirectConvFunction : public torch::autograd::Function<DirectConvFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias, int64_t ph,
                               int64_t pw, bool fuse) {
    auto in = x.contiguous();
    auto w = weight.contiguous();
    // No bias: an empty tensor (autograd::Function takes no undefined inputs).
    auto b = bias.numel() > 0 ? bias.contiguous() : torch::Tensor();
    const ConvShape s{in.size(2), in.size(3), w.size(2), w.size(3), ph, pw, w.size(0), w.size(1)};
    const int64_t n = in.size(0), oh = s.oh(), ow = s.ow(), ows = s.ows();
    const int64_t plane = s.out_c * oh * ow;  // one image's output, unfused
    const int64_t pooled = s.out_c * (oh / 2) * (ow / 2);
    auto out = fuse ? torch::empty({n, s.out_c, oh / 2, ow / 2}, in.options())
                    : torch::empty({n, s.out_c, oh, ow}, in.options());
    auto where =
        fuse ? torch::empty(out.sizes(), in.options().dtype(torch::kUInt8)) : torch::Tensor();
    const float* src = in.data_ptr<float>();
    const float* wp = w.data_ptr<float>();
    const float* bp = b.defined() ? b.data_ptr<float>() : nullptr;
    float* dst = out.data_ptr<float>();
    uint8_t* wh = fuse ? where.data_ptr<uint8_t>() : nullptr;
    // Unfused with rows a multiple of 8: straight into the output.
    const bool inPlace = !fuse && ows == ow;
    at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> padded(static_cast<size_t>(s.in_c * s.padPlane()));
      std::vector<float> conv(inPlace ? 0 : static_cast<size_t>(s.outPlanes() + kPoolSlack));
      for (int64_t i = begin; i < end; ++i) {
        padPlane(src + i * s.in_c * s.h * s.w, padded.data(), s);
        if (inPlace) {
          convPlaneForward(padded.data(), wp, bp, dst + i * plane, s);
          continue;
        }
        convPlaneForward(padded.data(), wp, bp, conv.data(), s);
        if (fuse) {
          reluPool(conv.data(), dst + i * pooled, wh + i * pooled, s);
          continue;
        }
        for (int64_t r = 0; r < s.out_c * oh; ++r)
          std::copy(conv.data() + r * ows, conv.data() + r * ows + ow, dst + i * plane + r * ow);
      }
    });
    ctx->save_for_backward({in, w, fuse ? where : torch::empty({0})});
    ctx->saved_data["ph"] = ph;
    ctx->saved_data["pw"] = pw;
    ctx->saved_data["bias"] = b.defined();
    ctx->saved_data["fuse"] = fuse;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& in = saved[0];
    const auto& w = saved[1];
    const bool fuse = ctx->saved_data["fuse"].toBool();
    const ConvShape s{in.size(2),
                      in.size(3),
                      w.size(2),
                      w.size(3),
                      ctx->saved_data["ph"].toInt(),
                      ctx->saved_data["pw"].toInt(),
                      w.size(0),
                      w.size(1)};
    auto g = grads[0].contiguous();
    const int64_t n = in.size(0), oh = s.oh(), ow = s.ow(), ows = s.ows();
    const int64_t weights = s.out_c * s.in_c * s.taps(), per = weights * 8;
    const int64_t plane = s.out_c * oh * ow;
    const int64_t pooled = s.out_c * (oh / 2) * (ow / 2);
    const bool wantInput = ctx->needs_input_grad(0), wantWeight = ctx->needs_input_grad(1);
    const bool wantBias = ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2);
    const bool inPlace = !fuse && ows == ow;
    auto gin = wantInput ? torch::empty_like(in) : torch::Tensor();
    // The input gradient is a convolution too, gathered rather than scattered: of the output
    // gradient (out_c planes of oh x ow, padded by kh - 1 - ph and kw - 1 - pw) with the weight
    // transposed (in <-> out) and turned half a turn; it runs the forward kernels. Where the
    // padding exceeds kernel - 1 the convolution pads by nothing and the input's rows and columns
    // start offY and offX into its output.
    const int64_t th = std::max<int64_t>(s.kh - 1 - s.ph, 0),
                  tw = std::max<int64_t>(s.kw - 1 - s.pw, 0);
    const ConvShape t{oh, ow, s.kh, s.kw, th, tw, s.in_c, s.out_c};
    const int64_t offY = th - (s.kh - 1 - s.ph), offX = tw - (s.kw - 1 - s.pw);
    const float* wp = w.data_ptr<float>();
    const std::vector<float> turned = wantInput ? turnedWeight(wp, s) : std::vector<float>();
    // One weight-gradient accumulator set per chunk of images (8 vector lanes per weight);
    // chunks fixed by the thread count, summed in order. The bias gradient is the sum of the
    // convolution planes' gradient, per channel, in the same chunks.
    const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), n));
    std::vector<float> acc(wantWeight ? static_cast<size_t>(chunks * per) : 0, 0.0f);
    std::vector<double> biasAcc(static_cast<size_t>(chunks * s.out_c), 0.0);
    const float* src = in.data_ptr<float>();
    const float* gp = g.data_ptr<float>();
    const uint8_t* wh = fuse ? saved[2].data_ptr<uint8_t>() : nullptr;
    float* gi = wantInput ? gin.data_ptr<float>() : nullptr;
    at::parallel_for(0, chunks, 1, [&](int64_t cb, int64_t ce) {
      std::vector<float> padded(wantWeight ? static_cast<size_t>(s.in_c * s.padPlane()) : 0);
      // The output gradient in the kernels' layout (the extra columns stay zero).
      std::vector<float> gconv(inPlace ? 0 : static_cast<size_t>(s.outPlanes()), 0.0f);
      std::vector<float> gpadded(wantInput ? static_cast<size_t>(t.in_c * t.padPlane()) : 0);
      std::vector<float> ginRows(wantInput ? static_cast<size_t>(t.outPlanes()) : 0);
      for (int64_t c = cb; c < ce; ++c) {
        float* a = wantWeight ? acc.data() + c * per : nullptr;
        double* ba = biasAcc.data() + c * s.out_c;
        for (int64_t i = n * c / chunks; i < n * (c + 1) / chunks; ++i) {
          const float* gq = kernelLayoutGradient(gp + i * (fuse ? pooled : plane),
                                                 fuse ? wh + i * pooled : nullptr, gconv.data(),
                                                 wantBias ? ba : nullptr, fuse, inPlace, s);
          if (wantWeight) {
            padPlane(src + i * s.in_c * s.h * s.w, padded.data(), s);
            convPlaneWeightGradient(padded.data(), gq, a, s);
          }
          if (wantInput)
            imageInputGradient(gq, turned.data(), gpadded.data(), ginRows.data(),
                               gi + i * s.in_c * s.h * s.w, s, t, offY, offX);
        }
      }
    });
    torch::Tensor gw, gb;
    if (wantWeight) gw = summedWeightGradient(acc, chunks, weights, w);
    if (wantBias) gb = summedBiasGradient(biasAcc, chunks, s.out_c, w.options());
    return {gin, gw, gb, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// The convolution options hold padding and padding mode in c10::variant (LibTorch 1.x) or
// std::variant (2.x, which has no c10::get_if): the unqualified calls below find either
// library's get_if / holds_alternative by argument-dependent lookup. These two declarations,
// never defined and never chosen, only make the names templates in this file.
struct NotAVariant;
template <class T>
const T* get_if(const NotAVariant*);
template <class T>
bool holds_alternative(const NotAVariant&);

template <class Options>
const torch::ExpandingArray<2>* numericPadding(const Options& o) {
  return get_if<torch::ExpandingArray<2>>(&o.padding());
}

// Whether this file may compute conv(x) instead of the module: zero padding given as numbers, no
// groups or dilation, CPU float without autocast, fastConvolutions().
bool plainConvolution(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  const auto& o = conv.options;
  return numericPadding(o) && o.groups() == 1 && (*o.dilation())[0] == 1 &&
         (*o.dilation())[1] == 1 && holds_alternative<torch::enumtype::kZeros>(o.padding_mode()) &&
         x.is_cpu() && x.scalar_type() == torch::kFloat && x.dim() == 4 &&
         x.size(1) == o.in_channels() && conv.weight.scalar_type() == torch::kFloat &&
         !cpuAutocastEnabled() && fastConvolutions();
}

// ... of one input channel (thnn_conv2d where the direct kernel does not apply).
bool oneChannelConvolution(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  return conv.options.in_channels() == 1 && plainConvolution(conv, x);
}

// A layer of few channels (in x out at most kDirectPairs: a sharp model's STN localiser, 4 -> 4
// and 4 -> 8 at every decoding step) is as badly served by oneDNN as a one-channel one (3-13
// GFLOP/s at a training step's shapes; its blocking wants 8 or 16 channels): the direct kernel
// takes it channel by channel. At 8 -> 16 (the glimpse VGG's second layer) oneDNN was the faster
// in a sharp training step, so wider layers stay with it.
constexpr int64_t kDirectPairs = 32;

// ... and takes the direct kernel: stride 1, at most kMaxTaps taps, one input channel or few.
bool directConvolution(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  const auto& o = conv.options;
  return plainConvolution(conv, x) && (*o.stride())[0] == 1 && (*o.stride())[1] == 1 &&
         o.kernel_size()->at(0) * o.kernel_size()->at(1) <= kMaxTaps &&
         (o.in_channels() == 1 || o.in_channels() * o.out_channels() <= kDirectPairs);
}

// a == {v, v}
bool both(torch::IntArrayRef a, int64_t v) { return a.size() == 2 && a[0] == v && a[1] == v; }

// Wide 3x3 layers (stride 1, padding 1) by Winograd's F(4x4, 3x3) (winograd.h) where oneDNN has
// only direct convolutions (AVX2). From 256 channels in and out: measured one layer at a time at
// batch 32 against oneDNN (2026-11-27, the AMD EPYC VM), one thread: 256 -> 256 on 8x25
// 1.5-2.0x faster, 256 -> 512 and 512 -> 512 on 4x26 1.4-1.8x, 128 -> 128 and 128 -> 256 on 8x25
// 1.0-1.3x; two threads: 512 -> 512 1.6x, 256 -> 256 and 256 -> 512 1.2x, 128 -> 256 level,
// 128 -> 128 0.6x (the transforms, memory-bound, gain nothing from a second core); 64 -> 64 on
// 16x50 and narrower lost at both.
constexpr int64_t kWinogradChannels = 256;

// On one thread, from 64 channels in and 128 out: there oneDNN has no second core to gain from
// and Winograd's transforms are cheap beside its products. One layer at batch 32, one thread
// (2026-11-29, the AMD EPYC VM), oneDNN / Winograd ms, forward, input and weight gradient:
// 64 -> 128 on 16x50 43-59 / 28, 40 / 30, 55 / 29; 128 -> 256 on 8x25 40 / 21, 37 / 21, 54 /
// 21. A whole training step, side by side, one thread: full size 1.07-1.10x, width 0.25
// 1.08-1.09x, the full-size TRBA 1.06-1.09x. From 64 out width 0.25 gained more (1.11-1.13x) but
// width 0.125's 64 -> 64 on 4x25 lost 1-3 %, hence 128 out. In the same step on two threads the
// 128 threshold lost 1-8 %, so two threads and more keep kWinogradChannels.
constexpr int64_t kOneThreadWinogradIn = 64, kOneThreadWinogradOut = 128;

// A 3x3 stride-1 padding-1 layer of at least `in` and `out` channels that Winograd may take.
bool winogradShape(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x, int64_t in,
                   int64_t out) {
  const auto& o = conv.options;
  if (!plainConvolution(conv, x) || !winogradAllowed()) return false;
  const auto& padding = *numericPadding(o);
  return both(*o.kernel_size(), 3) && both(*o.stride(), 1) && both(*padding, 1) &&
         o.in_channels() >= in && o.out_channels() >= out;
}

bool winogradConvolution(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  if (at::get_num_threads() == 1)
    return winogradShape(conv, x, kOneThreadWinogradIn, kOneThreadWinogradOut);
  return winogradShape(conv, x, kWinogradChannels, kWinogradChannels);
}

// The weight gradients of the Winograd layers by Winograd too (F(3x3, 4x4)): 2.8-3.5x faster
// than oneDNN's on AVX2 for 256 and 512 channels (one layer, batch 32, 2026-11-29, the AMD EPYC
// VM). FOVEAL_WINOGRAD_WEIGHTS=0 leaves them to LibTorch's convolution_backward.
bool winogradWeightGradients() {
  static const bool on = !envSwitchOff("FOVEAL_WINOGRAD_WEIGHTS");
  return on;
}

// LibTorch's gradients (input, weight, bias, as `mask` asks) of a 3x3 stride-1 padding-1
// convolution of x by w with output gradient g.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> libraryBackward3x3(
    const torch::Tensor& g, const torch::Tensor& x, const torch::Tensor& w,
    std::array<bool, 3> mask) {
  return at::convolution_backward(g, x, w, std::vector<int64_t>{w.size(0)}, {1, 1}, {1, 1}, {1, 1},
                                  false, {0, 0}, 1, mask);
}

// Narrower 3x3 layers whose weight gradient alone goes to Winograd (winogradWeightsOnly): from 128
// channels in and out. One layer's weight gradient at batch 32 with channels-last tensors, against
// oneDNN's (2026-11-29, the AMD EPYC VM), one / two threads: 128 -> 256 on 8x25 1.8x / 1.9x,
// 128 -> 128 1.3x / 1.1x; 64 -> 128 on 16x50 1.2x / 1.0x, 64 -> 64 1.1x / 0.8x. Their forward and
// input gradient stay oneDNN's: Winograd's gain nothing from a second thread there (the
// transforms are bound by memory), oneDNN's nearly double.
constexpr int64_t kWinogradWeightsIn = 128, kWinogradWeightsOut = 128;

// Whether conv's weight (bias) gradient is recorded: the parameter requires grad and the thread
// is not in an explanation's InputGradientsOnly scope (base/gradient_scope.h), where convWith runs
// the layer on detached parameters.
bool recordsWeightGradient(const torch::nn::Conv2dImpl& conv) {
  return conv.weight.requires_grad() && !inputGradientsOnly();
}

bool recordsBiasGradient(const torch::nn::Conv2dImpl& conv) {
  return conv.options.bias() && conv.bias.requires_grad() && !inputGradientsOnly();
}

bool winogradWeightsOnly(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  return winogradWeightGradients() && recordsWeightGradient(conv) &&
         winogradShape(conv, x, kWinogradWeightsIn, kWinogradWeightsOut);
}

// LibTorch's convolution (oneDNN) forward and for the input gradient, Winograd's F(3x3, 4x4) for
// the weight gradient, the output gradient's sum for the bias's.
class WinogradWeightsFunction : public torch::autograd::Function<WinogradWeightsFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    const bool hasBias = bias.numel() > 0;
    ctx->save_for_backward({x, weight});
    ctx->saved_data["bias"] = hasBias;
    return torch::conv2d(x, weight, hasBias ? bias : torch::Tensor(), 1, 1);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &x = saved[0], &w = saved[1];
    const auto& g = grads[0];
    torch::Tensor gx, gw, gb;
    if (ctx->needs_input_grad(0))
      gx = std::get<0>(libraryBackward3x3(g, x, w, {true, false, false}));
    if (ctx->needs_input_grad(1)) gw = winogradWeightGradient3x3(x, g);
    if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)) gb = g.sum({0, 2, 3});
    return {gx, gw, gb};
  }
};

// Forward, input gradient and weight gradient by Winograd (the input gradient of a 3x3 stride-1
// padding-1 convolution is one, of the rotated and transposed weight; the weight gradient is
// F(3x3, 4x4), the input against the output gradient); the bias gradient the output gradient's
// sum.
class WinogradConvFunction : public torch::autograd::Function<WinogradConvFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    // bias: [O], or empty ([0]) for none (an undefined tensor cannot enter apply).
    const bool hasBias = bias.numel() > 0;
    // x only for the weight gradient (the bias's is the output gradient's sum).
    ctx->save_for_backward({weight.requires_grad() ? x : torch::empty({0}, x.options()), weight});
    ctx->saved_data["bias"] = hasBias;
    return winogradConv3x3(x, weight, hasBias ? bias : torch::Tensor());
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x = saved[0];
    const auto& w = saved[1];
    auto g = grads[0].contiguous();
    torch::Tensor gx, gw, gb;
    if (ctx->needs_input_grad(0)) gx = winogradConv3x3(g, w, {}, /*inputGradient=*/true);
    const bool wantW = ctx->needs_input_grad(1);
    const bool wantB = ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2);
    if (wantW && winogradWeightGradients()) {
      gw = winogradWeightGradient3x3(x, g);
    } else if (wantW) {
      gw = std::get<1>(libraryBackward3x3(g, x, w, {false, true, false}));
    }
    if (wantB) gb = g.sum({0, 2, 3});
    return {gx, gw, gb};
  }
};

// Unpadded stride-1 layers of small kernels and wide channels in training (the VGGs' last layer,
// 2x2 on a 2-row map) as matrix products over their columns: oneDNN's kernels for them on AVX2
// run at two thirds of a matrix product's speed. One VGG last layer, 512 -> 512 on 2x25 at batch
// 32, ms, oneDNN against the columns (2026-11-29, the AMD EPYC VM): one thread forward 28.5 /
// 18.8, both gradients 58.4 / 37.4; two threads 14.0 / 9.4 and 28.4 / 19.6; 256 channels at
// one thread 7.6 / 5.0 and 13.7 / 10.6. At 128 channels the forward lost 10 %, at 64 both
// passes lost or tied, hence from 256.
constexpr int64_t kColumnsChannels = 256;

bool columnsConvolution(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  const auto& o = conv.options;
  return plainConvolution(conv, x) && both(*o.kernel_size(), 2) && both(*o.stride(), 1) &&
         both(*numericPadding(o), 0) && o.in_channels() >= kColumnsChannels &&
         o.out_channels() >= kColumnsChannels && x.size(2) >= 2 && x.size(3) >= 2;
}

// The columns of x [N, C, H, W] for a kh x kw kernel, stride 1, no padding: col [C kh kw, N oh ow]
// with col[(c kh + i) kw + j][(n oh + r) ow + k] = x[n][c][r + i][k + j]; x contiguous. Or the
// reverse (`fold`): each column's value added back to the pixel it came from, into x (zeroed).
void columns(float* x, float* col, int64_t n, int64_t c, int64_t h, int64_t w, int64_t kh,
             int64_t kw, bool fold) {
  const int64_t oh = h - kh + 1, ow = w - kw + 1;
  at::parallel_for(0, c, 4, [&](int64_t begin, int64_t end) {
    for (int64_t cc = begin; cc < end; ++cc)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) {
          float* row = col + ((cc * kh + i) * kw + j) * n * oh * ow;
          for (int64_t img = 0; img < n; ++img)
            for (int64_t r = 0; r < oh; ++r) {
              float* pixels = x + ((img * c + cc) * h + r + i) * w + j;
              float* values = row + (img * oh + r) * ow;
              if (fold) {
                for (int64_t k = 0; k < ow; ++k) pixels[k] += values[k];
              } else {
                std::memcpy(values, pixels, static_cast<size_t>(ow) * sizeof(float));
              }
            }
        }
  });
}

// conv2d(x, weight, bias) for columnsConvolution's layers: the weight [O, C kh kw] times the
// columns, plus the bias; the weight gradient the output gradient times the columns' transpose,
// the input gradient the columns' gradient (the weight's transpose times the output gradient)
// folded back. The columns are kept for the weight gradient instead of x.
class ColumnsConvFunction : public torch::autograd::Function<ColumnsConvFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
    const int64_t o = weight.size(0), kh = weight.size(2), kw = weight.size(3);
    const int64_t oh = h - kh + 1, ow = w - kw + 1;
    auto in = x.contiguous();
    auto col = torch::empty({c * kh * kw, n * oh * ow}, x.options());
    columns(in.data_ptr<float>(), col.data_ptr<float>(), n, c, h, w, kh, kw, false);
    const auto w2 = weight.reshape({o, c * kh * kw});
    const bool hasBias = bias.numel() > 0;
    auto y = hasBias ? torch::addmm(bias.unsqueeze(1), w2, col) : torch::mm(w2, col);
    ctx->save_for_backward({weight.requires_grad() ? col : torch::empty({0}, x.options()), weight});
    ctx->saved_data["bias"] = hasBias;
    auto out = y.view({o, n, oh, ow}).permute({1, 0, 2, 3}).contiguous();
    // With one image the permuted view is contiguous already and contiguous() returns the view
    // itself: a Function's output that is a view cannot be changed in place (the in-place ReLU
    // after it failed: "is a view and is being modified inplace", explain on a CRNN at width 1).
    if (out.is_view()) out = out.clone();
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &col = saved[0], &weight = saved[1];
    const auto& g = grads[0];  // [N, O, oh, ow]: x's sizes follow from it and the weight's
    const int64_t o = weight.size(0), c = weight.size(1), kh = weight.size(2), kw = weight.size(3);
    const int64_t n = g.size(0), h = g.size(2) + kh - 1, w = g.size(3) + kw - 1;
    // [N, O, oh, ow] -> [O, N oh ow], as the columns' second dimension runs
    const auto g2 = g.permute({1, 0, 2, 3}).contiguous().view({o, -1});
    torch::Tensor gx, gw, gb;
    if (ctx->needs_input_grad(0)) {
      auto gcol = torch::mm(weight.reshape({o, c * kh * kw}).t(), g2);
      gx = torch::zeros({n, c, h, w}, g.options());
      columns(gx.data_ptr<float>(), gcol.data_ptr<float>(), n, c, h, w, kh, kw, true);
    }
    if (ctx->needs_input_grad(1)) gw = torch::mm(g2, col.t()).view(weight.sizes());
    if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2)) gb = g2.sum(1);
    return {gx, gw, gb};
  }
};

// conv's arithmetic with its own weight and bias, or those given (a folded batch norm's).
torch::Tensor directForward(torch::nn::Conv2dImpl& conv, const torch::Tensor& x, bool fuse,
                            const torch::Tensor& weight = {}, const torch::Tensor& bias = {}) {
  const auto& padding = *numericPadding(conv.options);
  const auto b = bias.defined()        ? bias
                 : conv.options.bias() ? conv.bias
                                       : torch::empty({0}, x.options());
  return DirectConvFunction::apply(x, weight.defined() ? weight : conv.weight, b, padding->at(0),
                                   padding->at(1), fuse);
}

// "conv 3x3 256->256 s1 on 8x25, batch 32, with gradients": the layer a route is noted for
// (base/kernel_routes.h). Only called while routes are recorded.
std::string convLayerName(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  const auto& o = conv.options;
  auto str = [](int64_t v) { return std::to_string(v); };
  std::string name = "conv " + str(o.kernel_size()->at(0)) + "x" + str(o.kernel_size()->at(1)) +
                     " " + str(o.in_channels()) + "->" + str(o.out_channels()) + " s" +
                     str(o.stride()->at(0));
  if (o.stride()->at(1) != o.stride()->at(0)) name += "x" + str(o.stride()->at(1));
  if (x.dim() == 4)
    name += " on " + str(x.size(2)) + "x" + str(x.size(3)) + ", batch " + str(x.size(0));
  if (!torch::GradMode::is_enabled()) return name + ", inference";
  return name + (inputGradientsOnly() ? ", input gradient only" : ", with gradients");
}

void noteConvRoute(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x, const char* route) {
  if (routeRecording()) noteRoute(convLayerName(conv, x), route);
}
}  // namespace

bool winogradAllowed() {
  static const bool on = !envSwitchOff("FOVEAL_WINOGRAD");
  return on;
}

torch::Tensor maxPool2x2(const torch::Tensor& x) {
  if (!poolsHere(x)) return torch::max_pool2d(x, {2, 2}, {2, 2});
  if (torch::GradMode::is_enabled() && x.requires_grad())
    return WindowPoolFunction<false>::apply(x);
  const auto q = quarters(x);
  return torch::maximum(torch::maximum(q[0], q[1]), torch::maximum(q[2], q[3]));
}

torch::Tensor maxPool2d(const torch::Tensor& x, torch::IntArrayRef kernel,
                        torch::IntArrayRef stride, torch::IntArrayRef padding) {
  if (both(kernel, 2) && both(stride, 2) && both(padding, 0)) return maxPool2x2(x);
  // The VGGs' height-only pools, (2, 1) windows and strides.
  if (kernel.size() == 2 && kernel[0] == 2 && kernel[1] == 1 && stride.size() == 2 &&
      stride[0] == 2 && stride[1] == 1 && both(padding, 0) && poolsHere(x))
    return WindowPoolFunction<true>::apply(x);
  return torch::max_pool2d(x, kernel, stride, padding);
}

namespace {
// The kernels convWith runs conv(x) on (plainConvolution(conv, x) holds): the direct kernel,
// Winograd's, thnn_conv2d for one input channel, LibTorch's convolution (oneDNN) with Winograd's
// weight gradient, matrix products over the columns, or LibTorch's convolution.
enum class ConvRoute { Direct, Winograd, OneChannel, WinogradWeights, Columns, Library };

ConvRoute fixedConvRoute(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  if (directConvolution(conv, x)) return ConvRoute::Direct;
  // Only where gradients are recorded (explanations, training): inference keeps the direct
  // convolutions, whose readings match the reference implementations' to 1e-6 (Winograd's
  // rounding moved strhub's TRBA's attention weights by 1.5e-4 through its TPS localiser).
  if (torch::GradMode::is_enabled() && winogradConvolution(conv, x)) return ConvRoute::Winograd;
  if (oneChannelConvolution(conv, x)) return ConvRoute::OneChannel;
  if (torch::GradMode::is_enabled() && winogradWeightsOnly(conv, x))
    return ConvRoute::WinogradWeights;
  if (torch::GradMode::is_enabled() && columnsConvolution(conv, x)) return ConvRoute::Columns;
  return ConvRoute::Library;
}

const char* convRouteName(ConvRoute route) {
  switch (route) {
    case ConvRoute::Direct:
      return "Foveal's direct kernel";
    case ConvRoute::Winograd:
      return "Foveal's Winograd F(4x4,3x3) forward and input gradient, F(3x3,4x4) weight gradient";
    case ConvRoute::OneChannel:
      return "thnn_conv2d (im2col + GEMM)";
    case ConvRoute::WinogradWeights:
      return "LibTorch's convolution (oneDNN) forward and input gradient, Foveal's Winograd "
             "weight gradient";
    case ConvRoute::Columns:
      return "Foveal's im2col matrix products";
    case ConvRoute::Library:
      break;
  }
  return "LibTorch's convolution (oneDNN)";
}

// conv(x) with the given weight and bias (undefined: none) on `route`; plainConvolution(conv, x)
// holds.
torch::Tensor runRoute(ConvRoute route, const torch::nn::Conv2dImpl& conv, const torch::Tensor& x,
                       const torch::Tensor& weight, const torch::Tensor& bias) {
  const auto& o = conv.options;
  const auto& padding = *numericPadding(o);
  auto orEmpty = [&](const torch::Tensor& b) {  // an undefined tensor cannot enter apply
    return b.defined() ? b : torch::empty({0}, x.options());
  };
  const std::vector<int64_t> kernel{o.kernel_size()->at(0), o.kernel_size()->at(1)},
      stride{o.stride()->at(0), o.stride()->at(1)}, pad{padding->at(0), padding->at(1)};
  switch (route) {
    case ConvRoute::Direct:
      return DirectConvFunction::apply(x, weight, orEmpty(bias), padding->at(0), padding->at(1),
                                       false);
    case ConvRoute::Winograd:
      return WinogradConvFunction::apply(x, weight, orEmpty(bias));
    case ConvRoute::OneChannel:
      return at::thnn_conv2d(x, weight, kernel, bias, stride, pad);
    case ConvRoute::WinogradWeights:
      return WinogradWeightsFunction::apply(x, weight, orEmpty(bias));
    case ConvRoute::Columns:
      return ColumnsConvFunction::apply(x, weight, orEmpty(bias));
    case ConvRoute::Library:
      break;
  }
  return torch::conv2d(x, weight, bias, stride, pad);
}

// Routes measured on the machine (issue 68; base/route_cache.h). The 3x3 stride-1 padding-1
// layers of 64 channels and more in and out, where gradients are recorded, can run on oneDNN's
// convolution, Foveal's Winograd or (weight gradient recorded) oneDNN's forward with Winograd's
// weight gradient; the fixed thresholds above were measured on AVX2 machines, where oneDNN has
// only direct kernels of 8-float vectors. The first time a process meets such a layer's shape
// class (channels, height, width and batch rounded up to powers of two, threads, which gradients)
// and the cache has no choice for it on this machine, each candidate runs forward and backward on
// random tensors of the layer's shape (one warm-up, then up to three alternating rounds; the
// best of each), and the fastest is kept, the fixed choice unless another is 5 % faster. Tuned
// once per machine, a few milliseconds (narrow layers) to a few hundred (a full-size TRBA's
// widest), never again.
constexpr int64_t kTunedMinChannels = 64;
constexpr double kTunedMargin = 0.95;  // another route must take under 95 % of the fixed one's time
// Bumped when a kernel changes enough to make earlier measurements stale.
constexpr const char* kTunedKernelsRevision = "2";  // 2: Winograd's products on oneDNN's matmul

const char* routeId(ConvRoute route) {
  switch (route) {
    case ConvRoute::Direct:
      return "direct";
    case ConvRoute::Winograd:
      return "winograd";
    case ConvRoute::OneChannel:
      return "thnn";
    case ConvRoute::WinogradWeights:
      return "onednn+winograd-weights";
    case ConvRoute::Columns:
      return "columns";
    case ConvRoute::Library:
      break;
  }
  return "onednn";
}

std::optional<ConvRoute> routeFromId(const std::string& id) {
  for (ConvRoute r : {ConvRoute::Direct, ConvRoute::Winograd, ConvRoute::OneChannel,
                      ConvRoute::WinogradWeights, ConvRoute::Columns, ConvRoute::Library})
    if (id == routeId(r)) return r;
  return std::nullopt;
}

const std::string& tuningMachine() {
  static const std::string machine =
      cpuFeatureSummary() + "; LibTorch " TORCH_VERSION "; Foveal kernels " + kTunedKernelsRevision;
  return machine;
}

int64_t powerOfTwoAtLeast(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

bool tunable(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  return torch::GradMode::is_enabled() && x.dim() == 4 &&
         winogradShape(conv, x, kTunedMinChannels, kTunedMinChannels);
}

std::string tuningKey(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  const auto& o = conv.options;
  const auto str = [](int64_t v) { return std::to_string(v); };
  return "conv 3x3 " + str(o.in_channels()) + "->" + str(o.out_channels()) + " on " +
         str(x.size(2)) + "x" + str(powerOfTwoAtLeast(x.size(3))) + ", batch " +
         str(powerOfTwoAtLeast(x.size(0))) + ", " + str(at::get_num_threads()) + " threads" +
         (x.requires_grad() ? ", input gradient" : "") +
         (recordsWeightGradient(conv) ? ", weight gradient" : "") + (o.bias() ? ", bias" : "");
}

// Seconds for one forward and backward pass of conv on `route` over `input` (x's shape and
// layout) with `weight` and `bias`, the gradients the layer records.
double timeRoute(ConvRoute route, const torch::nn::Conv2dImpl& conv, const torch::Tensor& x,
                 const torch::Tensor& input, const torch::Tensor& weight,
                 const torch::Tensor& bias) {
  std::vector<torch::Tensor> wrt;
  if (x.requires_grad()) wrt.push_back(input);
  if (recordsWeightGradient(conv)) wrt.push_back(weight);
  if (bias.defined() && recordsBiasGradient(conv)) wrt.push_back(bias);
  const auto once = [&] {
    const auto start = std::chrono::steady_clock::now();
    auto y = runRoute(route, conv, input, weight, bias);
    if (!wrt.empty()) torch::autograd::grad({y}, wrt, {torch::ones_like(y)});
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  return once();
}

struct RouteChoice {
  ConvRoute route;
  std::string evidence;  // the measured times; empty for a fixed choice
};

RouteChoice measureRoutes(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x,
                          ConvRoute fixed) {
  std::vector<ConvRoute> candidates{fixed};
  for (ConvRoute r : {ConvRoute::Library, ConvRoute::Winograd, ConvRoute::WinogradWeights})
    if (r != fixed && (r != ConvRoute::WinogradWeights ||
                       (recordsWeightGradient(conv) && winogradWeightGradients())))
      candidates.push_back(r);
  // The layer's shape and layout, values of the scale of a network's, from a generator of its
  // own: measuring leaves the process's random stream (a run's shuffling, dropout) as it was.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(68);
  const auto input = torch::randn(x.sizes(), gen, x.options().requires_grad(false))
                         .contiguous(x.suggest_memory_format())
                         .requires_grad_(x.requires_grad());
  const auto weight = (torch::randn(conv.weight.sizes(), gen, conv.weight.options()) * 0.05)
                          .requires_grad_(recordsWeightGradient(conv));
  const auto bias = conv.options.bias()
                        ? torch::zeros_like(conv.bias).requires_grad_(recordsBiasGradient(conv))
                        : torch::Tensor();
  std::vector<double> best(candidates.size(), 1e30);
  double warm = 0;
  for (size_t i = 0; i < candidates.size(); ++i)
    warm = std::max(warm, timeRoute(candidates[i], conv, x, input, weight, bias));
  // Up to three rounds, fewer where one pass is slow (a quarter of a second and more).
  const int rounds = warm > 0.25 ? 1 : 3;
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < candidates.size(); ++i)
      best[i] = std::min(best[i], timeRoute(candidates[i], conv, x, input, weight, bias));
  size_t pick = 0;
  for (size_t i = 1; i < candidates.size(); ++i)
    if (best[i] < kTunedMargin * best[0] && best[i] < best[pick]) pick = i;
  std::string evidence;
  char ms[32];
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::snprintf(ms, sizeof ms, " %.2f ms", best[i] * 1e3);
    evidence += (i ? ", " : "") + std::string(routeId(candidates[i])) + ms;
  }
  return {candidates[pick], evidence};
}

// The route of a tunable layer: the cached choice, or one measured now (one measurement at a time
// in the process: two threads meeting a new shape do not time each other's kernels).
RouteChoice tunedRoute(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x, ConvRoute fixed) {
  const std::string key = tuningKey(conv, x);
  if (auto cached = cachedRoute(tuningMachine(), key))
    if (auto r = routeFromId(cached->route)) return {*r, cached->evidence};
  static std::mutex measuring;
  std::lock_guard<std::mutex> lock(measuring);
  if (auto cached = cachedRoute(tuningMachine(), key))  // measured while this thread waited
    if (auto r = routeFromId(cached->route)) return {*r, cached->evidence};
  RouteChoice choice = measureRoutes(conv, x, fixed);
  storeRoute(tuningMachine(), key, {routeId(choice.route), choice.evidence});
  return choice;
}

RouteChoice chooseConvRoute(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  const ConvRoute fixed = fixedConvRoute(conv, x);
  if (fixed != ConvRoute::Direct && fixed != ConvRoute::OneChannel && tunable(conv, x) &&
      routeTuning())
    return tunedRoute(conv, x, fixed);
  return {fixed, {}};
}

ConvRoute convRoute(const torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  return chooseConvRoute(conv, x).route;
}

// conv(x) with the given weight and bias (undefined: none) in place of the module's, through the
// kernels chooseConvRoute picks; plainConvolution(conv, x) holds.
torch::Tensor convWith(torch::nn::Conv2dImpl& conv, const torch::Tensor& x,
                       const torch::Tensor& weight, const torch::Tensor& bias) {
  const RouteChoice choice = chooseConvRoute(conv, x);
  if (routeRecording())
    noteConvRoute(conv, x,
                  choice.evidence.empty() ? convRouteName(choice.route)
                                          : (std::string(convRouteName(choice.route)) +
                                             " (measured here: " + choice.evidence + ")")
                                                .c_str());
  // An explanation's parameters are constants: nothing is saved or computed for their gradients.
  if (inputGradientsOnly())
    return runRoute(choice.route, conv, x, weight.detach(),
                    bias.defined() ? bias.detach() : torch::Tensor());
  return runRoute(choice.route, conv, x, weight, bias);
}
}  // namespace

torch::Tensor convForward(torch::nn::Conv2dImpl& conv, const torch::Tensor& x) {
  if (!plainConvolution(conv, x)) {
    if (routeRecording())
      noteConvRoute(conv, x,
                    cpuAutocastEnabled() && x.is_cpu()
                        ? "LibTorch's convolution (oneDNN), bf16 under autocast"
                    : !x.is_cpu() ? "LibTorch's convolution on the device"
                                  : "LibTorch's convolution (module forward)");
    return conv.forward(x);
  }
  return convWith(conv, x, conv.weight, conv.options.bias() ? conv.bias : torch::Tensor());
}

namespace {
// A batch norm that can be folded into the convolution before it: evaluation mode, running
// statistics.
bool foldable(const torch::nn::BatchNorm2dImpl& bn) {
  return !bn.is_training() && bn.options.track_running_stats();
}

// bn(y) = (y - mean) * s + beta with s = gamma / sqrt(var + eps), per channel, folded into the
// convolution's weight and bias (differentiably: gradients still reach every parameter).
std::pair<torch::Tensor, torch::Tensor> foldBatchNorm(const torch::nn::Conv2dImpl& conv,
                                                      const torch::nn::BatchNorm2dImpl& bn) {
  const auto& b = bn.options;
  auto s = torch::rsqrt(bn.running_var + b.eps());
  if (b.affine()) s = s * bn.weight;
  auto bias = -bn.running_mean * s;
  if (conv.options.bias()) bias = bias + conv.bias * s;
  if (b.affine()) bias = bias + bn.bias;
  return {conv.weight * s.view({-1, 1, 1, 1}), bias};
}
}  // namespace

torch::Tensor convBatchNorm(torch::nn::Conv2dImpl& conv, torch::nn::BatchNorm2dImpl& bn,
                            const torch::Tensor& x) {
  if (!foldable(bn) || !plainConvolution(conv, x)) return bn.forward(convForward(conv, x));
  const auto [weight, bias] = foldBatchNorm(conv, bn);
  return convWith(conv, x, weight, bias);
}

namespace {
// A max pool without padding or dilation, floor mode.
bool isUnpaddedMaxPool(const torch::nn::MaxPool2dImpl& p) {
  return !p.options.ceil_mode() && both(*p.options.dilation(), 1) && both(*p.options.padding(), 0);
}

bool isPool2x2(torch::nn::Module& m) {
  auto* p = m.as<torch::nn::MaxPool2dImpl>();
  return p && !p->options.ceil_mode() && both(*p->options.dilation(), 1) &&
         both(*p->options.kernel_size(), 2) && both(*p->options.stride(), 2) &&
         both(*p->options.padding(), 0);
}
}  // namespace

namespace {
// Whether training runs oneDNN's convolutions channels last (FOVEAL_CHANNELS_LAST=0 keeps them
// channels first, for comparison).
bool channelsLastAllowed() {
  static const bool on = !envSwitchOff("FOVEAL_CHANNELS_LAST");
  return on;
}

constexpr int64_t kChannelsLastWidth = 64;
}  // namespace

torch::Tensor sequentialForward(torch::nn::SequentialImpl& seq, const torch::Tensor& x) {
  auto y = x;
  const size_t n = seq.size();
  for (size_t i = 0; i < n; ++i) {
    auto& m = *seq.ptr(i);
    // Where gradients are recorded, oneDNN's narrow convolutions (at most kChannelsLastWidth
    // channels out) take channels-last input: with the narrow networks' 8 to 64 channels its
    // channels-first kernels reorder every tensor to and from its blocked layout, in both
    // directions (training at width 0.125, one thread, the two layouts side by side: soft 6-17 %
    // faster channels last at batch 256 and 4-15 % at 64, sharp pooling 8-15 % at 256). Wider
    // layers were level (width 1), so a wide network, or a ResNet's wide downsampling, keeps its
    // layout and copies nothing. The layout then stays (the pools keep it) and the result is made
    // contiguous at the end.
    if (auto* c = m.as<torch::nn::Conv2dImpl>();
        c && channelsLastAllowed() && torch::GradMode::is_enabled() &&
        c->options.out_channels() <= kChannelsLastWidth && plainConvolution(*c, y) &&
        convRoute(*c, y) == ConvRoute::Library)
      y = y.contiguous(at::MemoryFormat::ChannelsLast);
    if (auto* c = m.as<torch::nn::Conv2dImpl>()) {
      // Conv(1 channel) -> ReLU -> 2x2 max pool, the first layer of the VGGs and localisers.
      if (i + 2 < n && directConvolution(*c, y) && seq.ptr(i + 1)->as<torch::nn::ReLUImpl>() &&
          isPool2x2(*seq.ptr(i + 2))) {
        noteConvRoute(*c, y, "Foveal's direct kernel, ReLU and 2x2 max pool fused");
        y = directForward(*c, y, true);
        i += 2;
      } else if (auto* bn = i + 3 < n ? seq.ptr(i + 1)->as<torch::nn::BatchNorm2dImpl>() : nullptr;
                 bn && foldable(*bn) && directConvolution(*c, y) &&
                 seq.ptr(i + 2)->as<torch::nn::ReLUImpl>() && isPool2x2(*seq.ptr(i + 3))) {
        // The same with a batch norm between, folded (the TPS localiser's first layer): its
        // full-size activation, ReLU and pool gradients are never stored.
        const auto [weight, bias] = foldBatchNorm(*c, *bn);
        noteConvRoute(*c, y, "Foveal's direct kernel, batch norm folded, ReLU and pool fused");
        y = directForward(*c, y, true, weight, bias);
        i += 3;
      } else if (auto* bn =
                     i + 1 < n ? seq.ptr(i + 1)->as<torch::nn::BatchNorm2dImpl>() : nullptr) {
        y = convBatchNorm(*c, *bn, y);
        i += 1;
      } else {
        y = convForward(*c, y);
      }
    } else if (auto* next = i + 1 < n ? seq.ptr(i + 1)->as<torch::nn::MaxPool2dImpl>() : nullptr;
               m.as<torch::nn::ReLUImpl>() && next && isUnpaddedMaxPool(*next)) {
      // pool(relu(y)) = relu(pool(y)) (the maximum commutes with the ReLU, the first maximum
      // of a window is the same), in values and gradients: the ReLU and its backward pass on a
      // quarter (2x2 windows) or half ((2, 1)) of the values, and the full-size ReLU output
      // never stored.
      const auto& o = next->options;
      y = torch::relu(maxPool2d(y, o.kernel_size(), o.stride(), o.padding()));
      i += 1;
    } else if (auto* p = m.as<torch::nn::MaxPool2dImpl>();
               p && !p->options.ceil_mode() &&
               *p->options.dilation() == std::array<int64_t, 2>{1, 1}) {
      y = maxPool2d(y, p->options.kernel_size(), p->options.stride(), p->options.padding());
    } else {
      y = (seq.begin() + static_cast<std::ptrdiff_t>(i))->forward(y);
    }
  }
  return y.contiguous();
}

}  // namespace foveal::core
