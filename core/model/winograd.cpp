#include "model/winograd.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/cpu_features.h"
#include "model/dnnl_matmul.h"

namespace foveal::core {

namespace {

constexpr int64_t kLanes = 8;  // channels per vector block
constexpr int64_t kTile = 4;   // output tile side; the input tile is 6x6

int64_t roundUp(int64_t v) { return (v + kLanes - 1) / kLanes * kLanes; }

struct Vec {  // eight channels' values at one position
  float v[kLanes];
};

// B^T d for one column (or row) of six values, eight channels at once: t[i] = sum_k B^T[i][k]
// d[k] (Lavin and Gray's F(4x4, 3x3) matrices).
inline void inputRows(const Vec* d, int64_t stride, Vec* t, int64_t tstride) {
  for (int64_t l = 0; l < kLanes; ++l) {
    const float d0 = d[0].v[l], d1 = d[stride].v[l], d2 = d[2 * stride].v[l],
                d3 = d[3 * stride].v[l], d4 = d[4 * stride].v[l], d5 = d[5 * stride].v[l];
    t[0].v[l] = 4.0f * d0 - 5.0f * d2 + d4;
    t[tstride].v[l] = -4.0f * (d1 + d2) + d3 + d4;
    t[2 * tstride].v[l] = 4.0f * (d1 - d2) - d3 + d4;
    t[3 * tstride].v[l] = 2.0f * (d3 - d1) - d2 + d4;
    t[4 * tstride].v[l] = 2.0f * (d1 - d3) - d2 + d4;
    t[5 * tstride].v[l] = 4.0f * d1 - 5.0f * d3 + d5;
  }
}

// A e for four values (F(4x4, 3x3)'s A, six rows of four): the weight gradient's transform of
// an output gradient's tile. The weight gradient is the correlation of the input with the output
// gradient, Winograd's F(3x3, 4x4); by the transposition principle its matrices are the
// forward's, rearranged: B^T for the input (inputRows), A for the output gradient (this), G^T
// for the result (weightGradientRows).
inline void gradientRows(const Vec* e, int64_t stride, Vec* t, int64_t tstride) {
  for (int64_t l = 0; l < kLanes; ++l) {
    const float e0 = e[0].v[l], e1 = e[stride].v[l], e2 = e[2 * stride].v[l],
                e3 = e[3 * stride].v[l];
    const float a = e0 + e2, b = e1 + e3, c = e0 + 4.0f * e2, d = 2.0f * e1 + 8.0f * e3;
    t[0].v[l] = e0;
    t[tstride].v[l] = a + b;
    t[2 * tstride].v[l] = a - b;
    t[3 * tstride].v[l] = c + d;
    t[4 * tstride].v[l] = c - d;
    t[5 * tstride].v[l] = e3;
  }
}

// Tiles of `size` x `size` values, every kTile pixels, from x [N, C, H, W] (zero outside: `border`
// pixels before the first row and column, the tiles' overhang, the channels beyond C),
// transformed by `rows` (size values in, six out) along columns and then rows into
// v [36, P, Cp], P = N * th * tw tiles in row-major order. Each task is one row of tiles and
// eight channels: their input rows, channels interleaved, then every tile of the row.
// blocked: x is [N, Cp / 8, H, W, 8] (aBcd8b), each row of a block eight channels' vectors.
template <int64_t size, int64_t border, void (*rows)(const Vec*, int64_t, Vec*, int64_t),
          bool blocked = false>
inline void transformTiles(const float* x, float* v, int64_t n, int64_t c, int64_t h, int64_t w,
                           int64_t th, int64_t tw, int64_t cp) {
  const int64_t tiles = n * th * tw, blocks = cp / kLanes, wp = tw * kTile + 2 * border;
  at::parallel_for(0, n * th * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<Vec> band(static_cast<size_t>(size * wp));
    Vec t[6 * size], u[36];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t cb = task % blocks, ti = (task / blocks) % th, img = task / (blocks * th);
      std::memset(band.data(), 0, band.size() * sizeof(Vec));
      for (int64_t r = 0; r < size; ++r) {
        const int64_t y = ti * kTile - border + r;
        if (y < 0 || y >= h) continue;
        if constexpr (blocked) {
          std::memcpy(band.data() + r * wp + border, x + ((img * blocks + cb) * h + y) * w * kLanes,
                      static_cast<size_t>(w) * sizeof(Vec));
          continue;
        }
        for (int64_t l = 0; l < kLanes && cb * kLanes + l < c; ++l) {
          const float* src = x + ((img * c + cb * kLanes + l) * h + y) * w;
          Vec* dst = band.data() + r * wp + border;
          for (int64_t k = 0; k < w; ++k) dst[k].v[l] = src[k];
        }
      }
      for (int64_t tj = 0; tj < tw; ++tj) {
        const Vec* d = band.data() + tj * kTile;
        for (int64_t k = 0; k < size; ++k) rows(d + k, wp, t + k, size);  // per column: 6 x size
        for (int64_t r = 0; r < 6; ++r) rows(t + r * size, 1, u + r * 6, 1);  // per row: 6 x 6
        const int64_t p = (img * th + ti) * tw + tj;
        for (int64_t q = 0; q < 36; ++q)
          std::memcpy(v + (q * tiles + p) * cp + cb * kLanes, u[q].v, sizeof(Vec));
      }
    }
  });
}

// B^T d B for the 6x6 input tiles of a convolution with one pixel of padding (tile j of a row
// starts at column 4 j - 1).
FOVEAL_CPU_CLONES("avx2", "default")
void transformInput(const float* x, float* v, int64_t n, int64_t c, int64_t h, int64_t w,
                    int64_t th, int64_t tw, int64_t cp) {
  transformTiles<6, 1, inputRows>(x, v, n, c, h, w, th, tw, cp);
}

// transformInput for x in aBcd8b.
FOVEAL_CPU_CLONES("avx2", "default")
void transformBlockedInput(const float* x, float* v, int64_t n, int64_t c, int64_t h, int64_t w,
                           int64_t th, int64_t tw, int64_t cp) {
  transformTiles<6, 1, inputRows, true>(x, v, n, c, h, w, th, tw, cp);
}

// A e A^T for the 4x4 tiles of an output gradient (tile j of a row starts at column 4 j).
FOVEAL_CPU_CLONES("avx2", "default")
void transformGradient(const float* g, float* v, int64_t n, int64_t o, int64_t h, int64_t w,
                       int64_t th, int64_t tw, int64_t op) {
  transformTiles<4, 0, gradientRows>(g, v, n, o, h, w, th, tw, op);
}

// A^T m for six values: four outputs.
inline void outputRows(const Vec* m, int64_t stride, Vec* o, int64_t ostride) {
  for (int64_t l = 0; l < kLanes; ++l) {
    const float m0 = m[0].v[l], m1 = m[stride].v[l], m2 = m[2 * stride].v[l],
                m3 = m[3 * stride].v[l], m4 = m[4 * stride].v[l], m5 = m[5 * stride].v[l];
    const float a = m1 + m2, b = m1 - m2, c = m3 + m4, e = m3 - m4;
    o[0].v[l] = m0 + a + c;
    o[ostride].v[l] = b + 2.0f * e;
    o[2 * ostride].v[l] = a + 4.0f * c;
    o[3 * ostride].v[l] = b + 8.0f * e + m5;
  }
}

// A^T m A for tile p's eight channels of block cb in m [36, P, Op]: its 4x4 outputs, y[r * 4 + k].
inline void outputTile(const float* m, int64_t tiles, int64_t op, int64_t p, int64_t cb, Vec* y) {
  Vec a[36], t[24];
  for (int64_t q = 0; q < 36; ++q)
    std::memcpy(a[q].v, m + (q * tiles + p) * op + cb * kLanes, sizeof(Vec));
  for (int64_t k = 0; k < 6; ++k) outputRows(a + k, 6, t + k, 6);          // A^T m: 4 x 6
  for (int64_t r = 0; r < 4; ++r) outputRows(t + r * 6, 1, y + r * 4, 1);  // (.) A: 4 x 4
}

// m [36, P, Op] into out [N, O, H, W] (+ bias [Op]). Each task is one row of tiles and eight
// channels: every tile's 4x4 outputs, channels interleaved, then the channels' rows.
FOVEAL_CPU_CLONES("avx2", "default")
void transformOutput(const float* m, const float* bias, float* out, int64_t n, int64_t o, int64_t h,
                     int64_t w, int64_t th, int64_t tw, int64_t op) {
  const int64_t tiles = n * th * tw, blocks = op / kLanes, ow = tw * kTile;
  at::parallel_for(0, n * th * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<Vec> rows(static_cast<size_t>(kTile * ow));
    Vec y[16];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t cb = task % blocks, ti = (task / blocks) % th, img = task / (blocks * th);
      Vec b{};
      if (bias) std::memcpy(b.v, bias + cb * kLanes, sizeof(Vec));
      for (int64_t tj = 0; tj < tw; ++tj) {
        outputTile(m, tiles, op, (img * th + ti) * tw + tj, cb, y);
        for (int64_t r = 0; r < 4; ++r)
          for (int64_t k = 0; k < 4; ++k) {
            Vec& dst = rows[static_cast<size_t>(r * ow + tj * kTile + k)];
            for (int64_t l = 0; l < kLanes; ++l) dst.v[l] = y[r * 4 + k].v[l] + b.v[l];
          }
      }
      for (int64_t r = 0; r < kTile && ti * kTile + r < h; ++r)
        for (int64_t l = 0; l < kLanes && cb * kLanes + l < o; ++l) {
          float* dst = out + ((img * o + cb * kLanes + l) * h + ti * kTile + r) * w;
          const Vec* src = rows.data() + r * ow;
          for (int64_t k = 0; k < w; ++k) dst[k] = src[k].v[l];
        }
    }
  });
}

// m [36, P, Op] into out [N, Op / 8, H, W, 8] (aBcd8b): + bias [Op], + out's values where
// `accumulate`, max(0, .) where `relu`. Each task is one row of tiles and eight channels; the
// tiles' vectors are written in place.
FOVEAL_CPU_CLONES("avx2", "default")
void transformBlockedOutput(const float* m, const float* bias, float* out, int64_t n, int64_t h,
                            int64_t w, int64_t th, int64_t tw, int64_t op, bool accumulate,
                            bool relu) {
  const int64_t tiles = n * th * tw, blocks = op / kLanes;
  at::parallel_for(0, n * th * blocks, 1, [&](int64_t begin, int64_t end) {
    Vec y[16];
    for (int64_t task = begin; task < end; ++task) {
      const int64_t cb = task % blocks, ti = (task / blocks) % th, img = task / (blocks * th);
      Vec b{};
      if (bias) std::memcpy(b.v, bias + cb * kLanes, sizeof(Vec));
      float* plane = out + (img * blocks + cb) * h * w * kLanes;
      for (int64_t tj = 0; tj < tw; ++tj) {
        outputTile(m, tiles, op, (img * th + ti) * tw + tj, cb, y);
        for (int64_t r = 0; r < kTile && ti * kTile + r < h; ++r)
          for (int64_t k = 0; k < kTile && tj * kTile + k < w; ++k) {
            float* dst = plane + ((ti * kTile + r) * w + tj * kTile + k) * kLanes;
            const Vec& v = y[r * 4 + k];
            for (int64_t l = 0; l < kLanes; ++l) {
              float value = v.v[l] + b.v[l] + (accumulate ? dst[l] : 0.0f);
              dst[l] = relu ? std::max(value, 0.0f) : value;
            }
          }
      }
    }
  });
}

// G g for three filter taps: six values.
inline void weightRows(const Vec* g, int64_t stride, Vec* t, int64_t tstride) {
  for (int64_t l = 0; l < kLanes; ++l) {
    const float g0 = g[0].v[l], g1 = g[stride].v[l], g2 = g[2 * stride].v[l];
    t[0].v[l] = g0 * 0.25f;
    t[tstride].v[l] = -(g0 + g1 + g2) * (1.0f / 6.0f);
    t[2 * tstride].v[l] = -(g0 - g1 + g2) * (1.0f / 6.0f);
    t[3 * tstride].v[l] = g0 * (1.0f / 24.0f) + g1 * (1.0f / 12.0f) + g2 * (1.0f / 6.0f);
    t[4 * tstride].v[l] = g0 * (1.0f / 24.0f) - g1 * (1.0f / 12.0f) + g2 * (1.0f / 6.0f);
    t[5 * tstride].v[l] = g2;
  }
}

// G g G^T for every filter, eight output channels at once: wt [C, 3, 3, Op] (output channels
// last, zero beyond O) into u [36, Cp, Op]. Each task is one input channel: its 36 rows of Op
// values are built in a local block (blocks of eight, each block's 36 vectors together) and
// written out row by row; writing the 36 positions directly, each a [Cp, Op] plane apart,
// thrashes the cache's sets.
FOVEAL_CPU_CLONES("avx2", "default")
void transformWeightRows(const float* wt, float* u, int64_t c, int64_t cp, int64_t op) {
  const int64_t blocks = op / kLanes;
  at::parallel_for(0, c, 4, [&](int64_t begin, int64_t end) {
    std::vector<Vec> block(static_cast<size_t>(blocks * 36));
    Vec g[9], t[18];
    for (int64_t cc = begin; cc < end; ++cc) {
      for (int64_t ob = 0; ob < blocks; ++ob) {
        for (int64_t k = 0; k < 9; ++k)
          std::memcpy(g[k].v, wt + (cc * 9 + k) * op + ob * kLanes, sizeof(Vec));
        Vec* r = block.data() + ob * 36;
        for (int k = 0; k < 3; ++k) weightRows(g + k, 3, t + k, 3);          // G g: 6 x 3
        for (int i = 0; i < 6; ++i) weightRows(t + i * 3, 1, r + i * 6, 1);  // (.) G^T: 6 x 6
      }
      for (int64_t q = 0; q < 36; ++q)
        for (int64_t ob = 0; ob < blocks; ++ob)
          std::memcpy(u + (q * cp + cc) * op + ob * kLanes,
                      block[static_cast<size_t>(ob * 36 + q)].v, sizeof(Vec));
    }
  });
}

// G^T m for six values: three (F(4x4, 3x3)'s G, transposed).
inline void weightGradientRows(const Vec* m, int64_t stride, Vec* z, int64_t zstride) {
  for (int64_t l = 0; l < kLanes; ++l) {
    const float m0 = m[0].v[l], m1 = m[stride].v[l], m2 = m[2 * stride].v[l],
                m3 = m[3 * stride].v[l], m4 = m[4 * stride].v[l], m5 = m[5 * stride].v[l];
    const float a = (m1 + m2) * (1.0f / 6.0f), b = (m3 + m4) * (1.0f / 24.0f);
    z[0].v[l] = m0 * 0.25f - a + b;
    z[zstride].v[l] = (m2 - m1) * (1.0f / 6.0f) + (m3 - m4) * (1.0f / 12.0f);
    z[2 * zstride].v[l] = 4.0f * b - a + m5;
  }
}

// m [36, Op, Cp] (each position's products summed over the tiles) into dw [O, C, 3, 3]: G^T m G
// for every (output, input) channel pair, eight input channels at once. Each task is one output
// channel: its row of each of the 36 planes is copied into a local block first (the planes lie a
// power of two apart, and reading the 36 in turn would thrash the cache's sets), the rows a
// cache line further apart than their length for the same reason.
FOVEAL_CPU_CLONES("avx2", "default")
void transformWeightGradient(const float* m, float* dw, int64_t o, int64_t c, int64_t op,
                             int64_t cp) {
  const int64_t blocks = (c + kLanes - 1) / kLanes, stride = cp + 16;
  at::parallel_for(0, o, 4, [&](int64_t begin, int64_t end) {
    std::vector<float> block(static_cast<size_t>(36 * stride));
    Vec a[36], t[18], z[9];
    for (int64_t oo = begin; oo < end; ++oo) {
      for (int64_t q = 0; q < 36; ++q)
        std::memcpy(block.data() + q * stride, m + (q * op + oo) * cp, cp * sizeof(float));
      for (int64_t cb = 0; cb < blocks; ++cb) {
        for (int64_t q = 0; q < 36; ++q)
          std::memcpy(a[q].v, block.data() + q * stride + cb * kLanes, sizeof(Vec));
        for (int k = 0; k < 6; ++k) weightGradientRows(a + k, 6, t + k, 6);          // 3 x 6
        for (int r = 0; r < 3; ++r) weightGradientRows(t + r * 6, 1, z + r * 3, 1);  // 3 x 3
        for (int64_t l = 0; l < kLanes && cb * kLanes + l < c; ++l) {
          float* dst = dw + (oo * c + cb * kLanes + l) * 9;
          for (int k = 0; k < 9; ++k) dst[k] = z[k].v[l];
        }
      }
    }
  });
}

// The transforms' buffers, kept by each thread that convolves: a wide layer's (tens of MB) are
// above the size glibc maps fresh for every allocation, and faulting their pages in again at
// every call cost as much as the transform itself.
enum Buffer { kWeightsLast, kWeights, kInput, kGradient, kProducts, kBuffers };
torch::Tensor scratch(Buffer which, at::IntArrayRef sizes) {
  thread_local torch::Tensor buffers[kBuffers];
  int64_t n = 1;
  for (auto s : sizes) n *= s;
  auto& b = buffers[which];
  if (!b.defined() || b.numel() < n) b = torch::empty({n}, torch::kFloat);
  return b.narrow(0, 0, n).view(sizes);
}

// weight [O, C, 3, 3] as the filters of a convolution from `in` to `out` channels, in
// [in, 3, 3, outp] (outp: out rounded up to the vector, zero beyond): the forward's
// (in = C, out = O, w[o][c][i][j]) or, transposed, its input gradient's (in = O, out = C,
// w[o][c][2-i][2-j]: taps rotated by 180 degrees).
torch::Tensor filtersLast(const torch::Tensor& weight, bool transposed, int64_t outp) {
  auto w = weight.contiguous();
  const int64_t o = w.size(0), c = w.size(1);
  const int64_t in = transposed ? o : c, out = transposed ? c : o;
  auto wt = scratch(kWeightsLast, {in, 3, 3, outp});
  const float* src = w.data_ptr<float>();
  float* dst = wt.data_ptr<float>();
  if (transposed) {  // one filter row of w (contiguous) into nine rows of wt
    at::parallel_for(0, o, 8, [&](int64_t begin, int64_t end) {
      for (int64_t oo = begin; oo < end; ++oo)
        for (int64_t k = 0; k < 9; ++k) {
          float* row = dst + (oo * 9 + k) * outp;
          for (int64_t cc = 0; cc < c; ++cc) row[cc] = src[(oo * c + cc) * 9 + 8 - k];
          std::fill(row + out, row + outp, 0.0f);
        }
    });
  } else {  // rows of wt, each gathering one tap of every filter
    at::parallel_for(0, c, 8, [&](int64_t begin, int64_t end) {
      for (int64_t cc = begin; cc < end; ++cc)
        for (int64_t k = 0; k < 9; ++k) {
          float* row = dst + (cc * 9 + k) * outp;
          for (int64_t oo = 0; oo < o; ++oo) row[oo] = src[(oo * c + cc) * 9 + k];
          std::fill(row + out, row + outp, 0.0f);
        }
    });
  }
  return wt;
}

// weight into u [36, inp, outp] (zero beyond the channels), as filtersLast orients it.
torch::Tensor transformWeight(const torch::Tensor& weight, bool transposed, int64_t inp,
                              int64_t outp) {
  const int64_t in = transposed ? weight.size(0) : weight.size(1);
  auto wt = filtersLast(weight, transposed, outp);
  auto u = scratch(kWeights, {36, inp, outp});
  if (inp > in) u.narrow(1, in, inp - in).zero_();
  transformWeightRows(wt.data_ptr<float>(), u.data_ptr<float>(), in, inp, outp);
  return u;
}

// x [N, C, H, W]'s 6x6 input tiles, every 4 pixels with one pixel of padding, transformed
// (B^T d B) into this thread's buffer: v [36, tiles, cp], cp = C rounded up to the vector.
struct InputTiles {
  torch::Tensor v;
  int64_t th, tw, tiles, cp;
};

InputTiles inputTiles(const torch::Tensor& x) {
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  InputTiles t;
  t.th = (h + kTile - 1) / kTile;
  t.tw = (w + kTile - 1) / kTile;
  t.tiles = n * t.th * t.tw;
  t.cp = roundUp(c);
  const auto in = x.contiguous();
  t.v = scratch(kInput, {36, t.tiles, t.cp});
  transformInput(in.data_ptr<float>(), t.v.data_ptr<float>(), n, c, h, w, t.th, t.tw, t.cp);
  return t;
}

// m = a b for the 36 positions: oneDNN's matmul where it applies (it scales over the threads
// where LibTorch's bmm, on OpenBLAS, does not: 36 products of 448x128 by 128x256, two threads on
// the AVX2 EPYC, 6.1 against 11.0-18 ms), else bmm.
void products(torch::Tensor& m, const torch::Tensor& a, const torch::Tensor& b) {
  if (!dnnl_ops::matmulInto(a, b, m)) torch::bmm_out(m, a, b);
}

}  // namespace
torch::Tensor winogradConv3x3(const torch::Tensor& x, const torch::Tensor& weight,
                              const torch::Tensor& bias, bool inputGradient) {
  TORCH_CHECK(x.dim() == 4 && x.is_cpu() && x.scalar_type() == torch::kFloat &&
                  weight.scalar_type() == torch::kFloat,
              "winogradConv3x3: x must be [N, C, H, W] float on the CPU, the weight float");
  const int64_t wc = weight.size(inputGradient ? 0 : 1), wo = weight.size(inputGradient ? 1 : 0);
  TORCH_CHECK(weight.dim() == 4 && weight.size(2) == 3 && weight.size(3) == 3 && wc == x.size(1),
              "winogradConv3x3: the weight must be 3x3 with x's channels");
  const int64_t n = x.size(0), h = x.size(2), w = x.size(3), o = wo, op = roundUp(o);
  const auto in = inputTiles(x);
  auto u = transformWeight(weight, inputGradient, in.cp, op);
  auto m = scratch(kProducts, {36, in.tiles, op});
  products(m, in.v, u);
  torch::Tensor b;
  if (bias.defined()) {
    b = torch::zeros({op}, x.options());
    b.narrow(0, 0, o).copy_(bias);
  }
  auto out = torch::empty({n, o, h, w}, x.options());
  transformOutput(m.data_ptr<float>(), b.defined() ? b.data_ptr<float>() : nullptr,
                  out.data_ptr<float>(), n, o, h, w, in.th, in.tw, op);
  return out;
}

WinogradFilters winogradFilters(const torch::Tensor& weight) {
  TORCH_CHECK(weight.dim() == 4 && weight.size(2) == 3 && weight.size(3) == 3 && weight.is_cpu() &&
                  weight.scalar_type() == torch::kFloat,
              "winogradFilters: the weight must be [O, C, 3, 3] float on the CPU");
  WinogradFilters f;
  f.out = weight.size(0);
  f.in = weight.size(1);
  f.u = transformWeight(weight, false, roundUp(f.in), roundUp(f.out)).clone();  // not the scratch
  return f;
}

void winogradBlocked3x3(const float* x, int64_t n, int64_t h, int64_t w,
                        const WinogradFilters& filters, const float* bias, float* out,
                        bool accumulate, bool relu) {
  const int64_t cp = roundUp(filters.in), op = roundUp(filters.out);
  const int64_t th = (h + kTile - 1) / kTile, tw = (w + kTile - 1) / kTile, tiles = n * th * tw;
  auto v = scratch(kInput, {36, tiles, cp});
  transformBlockedInput(x, v.data_ptr<float>(), n, filters.in, h, w, th, tw, cp);
  auto m = scratch(kProducts, {36, tiles, op});
  products(m, v, filters.u);
  transformBlockedOutput(m.data_ptr<float>(), bias, out, n, h, w, th, tw, op, accumulate, relu);
}

torch::Tensor winogradWeightGradient3x3(const torch::Tensor& x, const torch::Tensor& gradOut) {
  TORCH_CHECK(x.dim() == 4 && gradOut.dim() == 4 && x.is_cpu() && gradOut.is_cpu() &&
                  x.scalar_type() == torch::kFloat && gradOut.scalar_type() == torch::kFloat,
              "winogradWeightGradient3x3: x and the output gradient must be [N, C, H, W] float on "
              "the CPU");
  TORCH_CHECK(
      gradOut.size(0) == x.size(0) && gradOut.size(2) == x.size(2) && gradOut.size(3) == x.size(3),
      "winogradWeightGradient3x3: the output gradient must have x's batch, height and width");
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3), o = gradOut.size(1);
  const int64_t op = roundUp(o);
  const auto in = inputTiles(x);
  const auto g = gradOut.contiguous();
  auto u = scratch(kGradient, {36, in.tiles, op});
  transformGradient(g.data_ptr<float>(), u.data_ptr<float>(), n, o, h, w, in.th, in.tw, op);
  auto m = scratch(kProducts, {36, op, in.cp});
  products(m, u.transpose(1, 2), in.v);  // summed over every tile of every image
  auto dw = torch::empty({o, c, 3, 3}, x.options());
  transformWeightGradient(m.data_ptr<float>(), dw.data_ptr<float>(), o, c, op, in.cp);
  return dw;
}

}  // namespace foveal::core
