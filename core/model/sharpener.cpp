#include "model/sharpener.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/nn/functional/vision.h>
#include <algorithm>
#include <cmath>
#include <vector>

#include "model/affine_sample.h"
#include "model/stages/stage_registry.h"

namespace foveal::core {

namespace F = torch::nn::functional;

torch::Tensor affineGrid(const torch::Tensor& theta, int64_t w, int64_t h) {
  // affine_grid's (align_corners=false) sampling points, written out: LibTorch's builds an
  // [N, h w, 3] base grid and multiplies it by theta with one tiny bmm per image, forward and
  // backward, which cost more than the sampling itself on the sharpener's batches.
  const auto o = theta.options();
  auto xs = (torch::arange(w, o) * 2 + 1) / static_cast<double>(w) - 1;  // pixel centres
  auto ys = (torch::arange(h, o) * 2 + 1) / static_cast<double>(h) - 1;
  xs = xs.view({1, 1, w});
  ys = ys.view({1, h, 1});
  const int64_t n = theta.size(0);
  auto row = [&](int64_t r) {
    auto t = theta.select(1, r);  // [N, 3]
    return t.select(1, 0).view({n, 1, 1}) * xs + t.select(1, 1).view({n, 1, 1}) * ys +
           t.select(1, 2).view({n, 1, 1});  // [N, h, w]
  };
  return torch::stack({row(0), row(1)}, 3);  // [N, h, w, 2]
}

namespace {

// grid_sample(source, affineGrid(theta, w, h)) (bilinear, border padding, align_corners=false)
// written out for CPU float and double, forward and backward: one pass over the output pixels,
// the sampling point computed from theta in place, where LibTorch's builds the grid as tensors
// and its backward runs grid_sample's own (half of a sharp model's explanation went into the two
// samplers of each glimpse). The arithmetic is grid_sample's: the grid coordinate g as affineGrid
// makes it, unnormalised to (g + 1) size / 2 - 1/2, clamped into [0, size - 1] (a clamped
// coordinate passes no gradient), the four neighbours (zero outside) with bilinear weights.
template <typename S>
struct Axis {
  int64_t i0;
  S f;     // the second neighbour's weight
  S grad;  // d coordinate / d g: size / 2, or 0 where clamped
};

template <typename S>
inline Axis<S> axis(S g, int64_t size) {
  const S half = static_cast<S>(size) / S(2), last = static_cast<S>(size - 1);
  const S c = (g + S(1)) * half - S(0.5);
  const bool clamped = !(c >= S(0) && c <= last);  // NaN too
  const S k = clamped ? (c > last ? last : S(0)) : c;
  // k >= 0: truncation is floor (std::floor is a library call without SSE4.1).
  const int64_t i0 = static_cast<int64_t>(k);
  return {i0, k - static_cast<S>(i0), clamped ? S(0) : half};
}

// affineGrid's pixel centres along an axis of n samples.
template <typename S>
std::vector<S> centres(int64_t n) {
  std::vector<S> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k)
    v[static_cast<size_t>(k)] = static_cast<S>(k * 2 + 1) / static_cast<S>(n) - S(1);
  return v;
}

// affineGrid's pixel centres along an axis of n samples, readable to a multiple of 8 (zeros):
// affine_sample.h's xs.
std::vector<float> paddedCentres(int64_t n) {
  auto v = centres<float>(n);
  v.resize(static_cast<size_t>((n + 7) / 8 * 8), 0.0f);
  return v;
}

class AffineSampleFunction : public torch::autograd::Function<AffineSampleFunction> {
 public:
  // rows: [N] int64, the image of source each output row samples ([0]: row b samples image b;
  // given only for CPU float and a source without a gradient: sampleAffine).
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& source0,
                               const torch::Tensor& theta0, int64_t w, int64_t h,
                               const torch::Tensor& rows) {
    const auto source = source0.contiguous(), theta = theta0.contiguous();
    const int64_t n = theta.size(0), channels = source.size(1), sh = source.size(2),
                  sw = source.size(3);
    auto out = torch::empty({n, channels, h, w}, source.options());
    ctx->save_for_backward({source, theta, rows});
    ctx->saved_data["w"] = w;
    ctx->saved_data["h"] = h;
    if (source.scalar_type() == torch::kFloat && sh * sw < (int64_t{1} << 31)) {
      const auto xs = paddedCentres(w), ys = centres<float>(h);
      const int64_t* image = rows.numel() > 0 ? rows.data_ptr<int64_t>() : nullptr;
      at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
        sampleAffineFloat({source.data_ptr<float>(), theta.data_ptr<float>(), begin, end, channels,
                           sh, sw, h, w, xs.data(), ys.data(), image},
                          out.data_ptr<float>());
      });
      return out;
    }
    TORCH_CHECK(rows.numel() == 0, "sampleAffine: an image index wants a float source");
    AT_DISPATCH_FLOATING_TYPES(source.scalar_type(), "sample affine", [&] {
      using S = scalar_t;
      const auto xs = centres<S>(w), ys = centres<S>(h);
      const S* in = source.data_ptr<S>();
      const S* tp = theta.data_ptr<S>();
      S* dst = out.data_ptr<S>();
      at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const S* t = tp + b * 6;
          for (int64_t i = 0; i < h; ++i)
            for (int64_t j = 0; j < w; ++j) {
              const auto x = axis<S>(t[0] * xs[j] + t[1] * ys[i] + t[2], sw);
              const auto y = axis<S>(t[3] * xs[j] + t[4] * ys[i] + t[5], sh);
              const bool x1in = x.i0 + 1 < sw, y1in = y.i0 + 1 < sh;
              for (int64_t c = 0; c < channels; ++c) {
                const S* p = in + (b * channels + c) * sh * sw;
                const S* r0 = p + y.i0 * sw;
                const S* r1 = r0 + sw;
                const S v00 = r0[x.i0], v01 = x1in ? r0[x.i0 + 1] : S(0);
                const S v10 = y1in ? r1[x.i0] : S(0), v11 = x1in && y1in ? r1[x.i0 + 1] : S(0);
                dst[((b * channels + c) * h + i) * w + j] =
                    (S(1) - y.f) * ((S(1) - x.f) * v00 + x.f * v01) +
                    y.f * ((S(1) - x.f) * v10 + x.f * v11);
              }
            }
        }
      });
    });
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &source = saved[0], &theta = saved[1], &rows = saved[2];
    const int64_t w = ctx->saved_data["w"].toInt(), h = ctx->saved_data["h"].toInt();
    const int64_t n = theta.size(0), channels = source.size(1), sh = source.size(2),
                  sw = source.size(3);
    const bool wantSource = ctx->needs_input_grad(0), wantTheta = ctx->needs_input_grad(1);
    const auto g = grads[0].contiguous();
    torch::Tensor gSource = wantSource ? torch::zeros_like(source) : torch::Tensor();
    torch::Tensor gTheta = wantTheta ? torch::zeros_like(theta) : torch::Tensor();
    if (wantTheta && !wantSource && source.scalar_type() == torch::kFloat &&
        sh * sw < (int64_t{1} << 31)) {
      const auto xs = paddedCentres(w), ys = centres<float>(h);
      const int64_t* image = rows.numel() > 0 ? rows.data_ptr<int64_t>() : nullptr;
      at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
        sampleAffineThetaGradFloat({source.data_ptr<float>(), theta.data_ptr<float>(), begin, end,
                                    channels, sh, sw, h, w, xs.data(), ys.data(), image},
                                   g.data_ptr<float>(), gTheta.data_ptr<float>());
      });
      return {gSource, gTheta, torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
    TORCH_CHECK(rows.numel() == 0, "sampleAffine: an image index wants a float source");
    AT_DISPATCH_FLOATING_TYPES(source.scalar_type(), "sample affine backward", [&] {
      using S = scalar_t;
      const auto xs = centres<S>(w), ys = centres<S>(h);
      const S* in = source.data_ptr<S>();
      const S* tp = theta.data_ptr<S>();
      const S* go = g.data_ptr<S>();
      S* gs = wantSource ? gSource.data_ptr<S>() : nullptr;
      S* gt = wantTheta ? gTheta.data_ptr<S>() : nullptr;
      at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const S* t = tp + b * 6;
          S dt[6] = {0, 0, 0, 0, 0, 0};
          for (int64_t i = 0; i < h; ++i)
            for (int64_t j = 0; j < w; ++j) {
              const auto x = axis<S>(t[0] * xs[j] + t[1] * ys[i] + t[2], sw);
              const auto y = axis<S>(t[3] * xs[j] + t[4] * ys[i] + t[5], sh);
              const bool x1in = x.i0 + 1 < sw, y1in = y.i0 + 1 < sh;
              S gx = 0, gy = 0;
              for (int64_t c = 0; c < channels; ++c) {
                const S d = go[((b * channels + c) * h + i) * w + j];
                const int64_t plane = (b * channels + c) * sh * sw;
                if (gs) {
                  S* q = gs + plane + y.i0 * sw + x.i0;
                  q[0] += (S(1) - y.f) * (S(1) - x.f) * d;
                  if (x1in) q[1] += (S(1) - y.f) * x.f * d;
                  if (y1in) q[sw] += y.f * (S(1) - x.f) * d;
                  if (x1in && y1in) q[sw + 1] += y.f * x.f * d;
                }
                if (gt) {
                  const S* r0 = in + plane + y.i0 * sw;
                  const S* r1 = r0 + sw;
                  const S v00 = r0[x.i0], v01 = x1in ? r0[x.i0 + 1] : S(0);
                  const S v10 = y1in ? r1[x.i0] : S(0), v11 = x1in && y1in ? r1[x.i0 + 1] : S(0);
                  gx += d * ((S(1) - y.f) * (v01 - v00) + y.f * (v11 - v10));
                  gy += d * ((S(1) - x.f) * (v10 - v00) + x.f * (v11 - v01));
                }
              }
              gx *= x.grad;
              gy *= y.grad;
              dt[0] += gx * xs[j];
              dt[1] += gx * ys[i];
              dt[2] += gx;
              dt[3] += gy * xs[j];
              dt[4] += gy * ys[i];
              dt[5] += gy;
            }
          if (gt)
            for (int k = 0; k < 6; ++k) gt[b * 6 + k] = dt[k];
        }
      });
    });
    return {gSource, gTheta, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// Whether `rows` may be read in place of source.index_select(0, rows): a CPU float source that
// records no gradient (its gradient would gather from the rows), an int64 index per row of theta.
bool readsRowsInPlace(const torch::Tensor& source, const torch::Tensor& theta,
                      const torch::Tensor& rows) {
  return source.is_cpu() && source.scalar_type() == torch::kFloat && rows.is_cpu() &&
         rows.scalar_type() == torch::kLong && rows.dim() == 1 && theta.dim() >= 1 &&
         rows.size(0) == theta.size(0) && source.dim() == 4 &&
         source.size(2) * source.size(3) < (int64_t{1} << 31) &&
         !(torch::GradMode::is_enabled() && source.requires_grad());
}

}  // namespace

torch::Tensor sampleAffine(const torch::Tensor& source, const torch::Tensor& theta, int64_t w,
                           int64_t h, const torch::Tensor& rows) {
  const bool inPlace = rows.defined() && readsRowsInPlace(source, theta, rows);
  if (rows.defined() && !inPlace) return sampleAffine(source.index_select(0, rows), theta, w, h);
  if (source.is_cpu() && theta.is_cpu() && source.dim() == 4 && theta.dim() == 3 &&
      theta.size(0) == (inPlace ? rows.size(0) : source.size(0)) && theta.size(1) == 2 &&
      theta.size(2) == 3 && theta.scalar_type() == source.scalar_type() &&
      (source.scalar_type() == torch::kFloat || source.scalar_type() == torch::kDouble) &&
      source.size(2) > 0 && source.size(3) > 0)
    return AffineSampleFunction::apply(
        source, theta, w, h,
        inPlace ? rows.contiguous() : torch::empty({0}, theta.options().dtype(torch::kLong)));
  if (inPlace) return sampleAffine(source.index_select(0, rows), theta, w, h);
  auto grid = affineGrid(theta, w, h);
  return F::grid_sample(source, grid,
                        F::GridSampleFuncOptions()
                            .mode(torch::kBilinear)
                            .padding_mode(torch::kBorder)
                            .align_corners(false));
}

namespace {

// grid_sample's arithmetic along one axis of an axis-aligned theta: the grid coordinate as
// affineGrid makes it, unnormalised ((g + 1) size - 1) / 2, clamped into [0, size - 1] (border
// padding), and the two neighbours with weights 1 - f and f.
template <typename S>
struct Tap {
  int64_t i0, i1;
  S w0, w1;
};

template <typename S>
std::vector<Tap<S>> axisTaps(S scale, S shift, int64_t n, int64_t size) {
  std::vector<Tap<S>> t(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const S base = static_cast<S>(k * 2 + 1) / static_cast<S>(n) - S(1);
    const S g = scale * base + shift;
    S c = ((g + S(1)) * static_cast<S>(size) - S(1)) / S(2);
    c = std::min(static_cast<S>(size - 1), std::max(c, S(0)));
    const int64_t i0 = static_cast<int64_t>(std::floor(c));
    const S f = c - static_cast<S>(i0);
    t[static_cast<size_t>(k)] = {i0, std::min(i0 + 1, size - 1), S(1) - f, f};
  }
  return t;
}

// fn(b, xs, ys) for every image b of the batch, in parallel, with its taps along x (w output
// columns over sw source columns) and y (h rows over sh). Where source is given ([n, channels, sh,
// sw]), the rectangle of it that the next image's taps read is asked for in the cache first (the
// regions are a few rows of a large upsampled batch: the loads waited on memory otherwise).
template <typename S, typename F>
void forEachImageTaps(const S* tp, int64_t n, int64_t sh, int64_t sw, int64_t h, int64_t w,
                      const F& fn, const S* source = nullptr, int64_t channels = 0,
                      const int64_t* image = nullptr) {
  using Taps = std::pair<std::vector<Tap<S>>, std::vector<Tap<S>>>;
  const auto taps = [&](int64_t b) {
    const S* t = tp + b * 6;
    Taps r{axisTaps<S>(t[0], t[2], w, sw), axisTaps<S>(t[4], t[5], h, sh)};
    if (source && w > 0 && h > 0) {
      int64_t c0 = sw, c1 = 0, r0 = sh, r1 = 0;
      for (const auto* x : {&r.first.front(), &r.first.back()})
        c0 = std::min({c0, x->i0, x->i1}), c1 = std::max({c1, x->i0, x->i1});
      for (const auto* y : {&r.second.front(), &r.second.back()})
        r0 = std::min({r0, y->i0, y->i1}), r1 = std::max({r1, y->i0, y->i1});
      prefetchRectangle(source + (image ? image[b] : b) * channels * sh * sw, channels, sh, sw, r0,
                        r1, c0, c1);
    }
    return r;
  };
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    Taps next = taps(begin);
    for (int64_t b = begin; b < end; ++b) {
      Taps current = std::move(next);
      if (b + 1 < end) next = taps(b + 1);
      fn(b, current.first, current.second);
    }
  });
}

// n output rows, row b from image image[b] of in (image b where image is null).
template <typename S>
void axisAlignedForward(const S* in, const S* tp, S* dst, int64_t n, int64_t channels, int64_t sh,
                        int64_t sw, int64_t h, int64_t w, const int64_t* image) {
  forEachImageTaps<S>(
      tp, n, sh, sw, h, w,
      [&](int64_t b, const auto& xs, const auto& ys) {
        for (int64_t c = 0; c < channels; ++c) {
          const S* plane = in + ((image ? image[b] : b) * channels + c) * sh * sw;
          S* o = dst + (b * channels + c) * h * w;
          for (int64_t i = 0; i < h; ++i) {
            const auto& y = ys[static_cast<size_t>(i)];
            const S* r0 = plane + y.i0 * sw;
            const S* r1 = plane + y.i1 * sw;
            for (int64_t j = 0; j < w; ++j) {
              const auto& x = xs[static_cast<size_t>(j)];
              o[i * w + j] = y.w0 * (x.w0 * r0[x.i0] + x.w1 * r0[x.i1]) +
                             y.w1 * (x.w0 * r1[x.i0] + x.w1 * r1[x.i1]);
            }
          }
        }
      },
      in, channels, image);
}

// The source's gradient, separably: each output row's gradient spread over the source columns
// (two taps per output column), then each such row added into its two source rows, weighted.
// Every image on its own, in one order: the result does not depend on the thread count.
template <typename S>
void axisAlignedBackward(const S* go, const S* tp, S* gs, int64_t n, int64_t channels, int64_t sh,
                         int64_t sw, int64_t h, int64_t w) {
  forEachImageTaps<S>(tp, n, sh, sw, h, w, [&](int64_t b, const auto& xs, const auto& ys) {
    std::vector<S> rows(static_cast<size_t>(h * sw));
    for (int64_t c = 0; c < channels; ++c) {
      const S* g = go + (b * channels + c) * h * w;
      S* plane = gs + (b * channels + c) * sh * sw;
      std::fill(rows.begin(), rows.end(), S(0));
      for (int64_t i = 0; i < h; ++i) {
        S* r = rows.data() + i * sw;
        for (int64_t j = 0; j < w; ++j) {
          const auto& x = xs[static_cast<size_t>(j)];
          const S v = g[i * w + j];
          r[x.i0] += x.w0 * v;
          r[x.i1] += x.w1 * v;
        }
      }
      for (int64_t i = 0; i < h; ++i) {
        const auto& y = ys[static_cast<size_t>(i)];
        const S* r = rows.data() + i * sw;
        S* p0 = plane + y.i0 * sw;
        S* p1 = plane + y.i1 * sw;
        for (int64_t k = 0; k < sw; ++k) p0[k] += y.w0 * r[k];
        for (int64_t k = 0; k < sw; ++k) p1[k] += y.w1 * r[k];
      }
    }
  });
}

// rows: undefined, or [n] int64 as axisAlignedForward's image.
torch::Tensor axisAlignedSample(const torch::Tensor& src, const torch::Tensor& th, int64_t w,
                                int64_t h, const torch::Tensor& rows = {}) {
  const int64_t n = th.size(0), channels = src.size(1), sh = src.size(2), sw = src.size(3);
  auto out = torch::empty({n, channels, h, w}, src.options());
  const auto image = rows.defined() ? rows.contiguous() : torch::Tensor();
  AT_DISPATCH_FLOATING_TYPES(src.scalar_type(), "sample axis-aligned", [&] {
    axisAlignedForward<scalar_t>(src.data_ptr<scalar_t>(), th.data_ptr<scalar_t>(),
                                 out.data_ptr<scalar_t>(), n, channels, sh, sw, h, w,
                                 image.defined() ? image.data_ptr<int64_t>() : nullptr);
  });
  return out;
}

// The source's gradient only: the regions' thetas are constants.
class AxisAlignedSampleFunction : public torch::autograd::Function<AxisAlignedSampleFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& source0,
                               const torch::Tensor& theta0, int64_t w, int64_t h) {
    const auto source = source0.contiguous(), theta = theta0.contiguous();
    ctx->save_for_backward({theta});
    ctx->saved_data["sizes"] = source.sizes().vec();
    return axisAlignedSample(source, theta, w, h);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto theta = ctx->get_saved_variables()[0];
    const auto sizes = ctx->saved_data["sizes"].toIntVector();
    const auto g = grads[0].contiguous();
    const int64_t h = g.size(2), w = g.size(3);
    auto gSource = torch::zeros(sizes, g.options());
    AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "sample axis-aligned backward", [&] {
      axisAlignedBackward<scalar_t>(g.data_ptr<scalar_t>(), theta.data_ptr<scalar_t>(),
                                    gSource.data_ptr<scalar_t>(), sizes[0], sizes[1], sizes[2],
                                    sizes[3], h, w);
    });
    return {gSource, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor sampleAxisAligned(const torch::Tensor& source, const torch::Tensor& theta, int64_t w,
                                int64_t h, const torch::Tensor& rows) {
  const bool recording = torch::GradMode::is_enabled();
  // The rows' images read in place only on the path without gradients (the regions' thetas are
  // constants).
  const bool inPlace = rows.defined() && readsRowsInPlace(source, theta, rows) &&
                       !(recording && theta.requires_grad());
  if (rows.defined() && !inPlace)
    return sampleAxisAligned(source.index_select(0, rows), theta, w, h);
  const auto type = source.scalar_type();
  if (!source.is_cpu() || !theta.is_cpu() || source.dim() != 4 || theta.dim() != 3 ||
      theta.size(0) != (inPlace ? rows.size(0) : source.size(0)) || theta.size(1) != 2 ||
      theta.size(2) != 3 || (type != torch::kFloat && type != torch::kDouble) ||
      theta.scalar_type() != type || source.size(2) < 1 || source.size(3) < 1)
    return sampleAffine(source, theta, w, h, rows);
  if (recording && theta.requires_grad()) return sampleAffine(source, theta, w, h);
  if (recording && source.requires_grad())
    return AxisAlignedSampleFunction::apply(source, theta, w, h);
  return axisAlignedSample(source.contiguous(), theta.contiguous(), w, h,
                           inPlace ? rows : torch::Tensor());
}

torch::Tensor composeAffine(const torch::Tensor& a, const torch::Tensor& b) {
  // [A_lin | A_t] ∘ [B_lin | B_t] = [A_lin B_lin | A_lin B_t + A_t]
  auto alin = a.narrow(2, 0, 2);
  auto lin = torch::matmul(alin, b.narrow(2, 0, 2));
  auto t = torch::matmul(alin, b.narrow(2, 2, 1)) + a.narrow(2, 2, 1);
  return torch::cat({lin, t}, 2);
}

SharpenerImpl::SharpenerImpl(const ModelConfig& config_) : config(config_) { reset(); }

void SharpenerImpl::reset() {
  const auto& pp = config.preprocessing;
  // The regions are the feature stage's columns or cells (their receptive fields, scaled to the
  // copy).
  const auto rf = featureGeometry(config.features, config.width, pp.inputW, pp.inputH);
  const double scale = static_cast<double>(pp.upsampledW()) / pp.inputW;
  const double wu = pp.upsampledW(), h = pp.inputH;

  std::vector<float> thetas;
  for (int i = 0; i < rf.regionCount(); ++i) {
    const Box b = rf.clippedRegionBox(i);
    const double x0 = b.x * scale, x1 = (b.x + b.w) * scale;
    const double y0 = b.y, y1 = b.y + b.h;
    thetas.insert(
        thetas.end(),
        {static_cast<float>((x1 - x0) / wu), 0.f, static_cast<float>((x0 + x1) / wu - 1.0), 0.f,
         static_cast<float>((y1 - y0) / h), static_cast<float>((y0 + y1) / h - 1.0)});
  }
  m_regionThetas = torch::tensor(thetas).view({rf.regionCount(), 2, 3});
  m_regionW = static_cast<int>(std::lround(rf.sizeX * scale));
  m_regionH = static_cast<int>(std::lround(rf.regionHeight()));

  m_stns = torch::nn::ModuleList();
  m_patchSizes.clear();
  int inW = m_regionW, inH = m_regionH;
  for (int k = 0; k < config.numStns; ++k) {
    const bool coarse = config.numStns == 2 && k == 0;
    const int outW = coarse ? config.coarsePatchW : config.patchW;
    const int outH = config.patchH;
    m_stns->push_back(Stn(StnOptions(inW, inH, outW, outH)
                              .translation_only(coarse && config.firstStnTranslationOnly)
                              .width(config.width)));
    m_patchSizes.emplace_back(outW, outH);
    inW = outW;
    inH = outH;
  }
  m_stns = register_module("stns", m_stns);
  m_encoder = register_module("encoder", VggBackbone(VggBackboneOptions(config.width)));
}

SharpenerOutput SharpenerImpl::forward(const torch::Tensor& upsampled, const torch::Tensor& index,
                                       const torch::Tensor& imageOfRow) {
  SharpenerOutput out;
  auto theta =
      m_regionThetas.to(upsampled.device(), upsampled.scalar_type()).index_select(0, index);
  // The regions' thetas are axis-aligned constants.
  out.region = sampleAxisAligned(upsampled, theta, m_regionW, m_regionH, imageOfRow);
  auto input = out.region;
  for (size_t k = 0; k < m_stns->size(); ++k) {
    auto local = m_stns->ptr<StnImpl>(k)->forward(input);  // [B, 2, 3]
    theta = composeAffine(theta, local);
    auto patch =
        sampleAffine(upsampled, theta, m_patchSizes[k].first, m_patchSizes[k].second, imageOfRow);
    out.patches.push_back(patch);
    out.thetas.push_back(theta);
    input = patch;
  }
  out.features = m_encoder->forward(input);  // [B, Mz, C]
  return out;
}

}  // namespace foveal::core
