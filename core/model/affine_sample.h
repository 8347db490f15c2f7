#pragma once
// The sharpener's affine sampler for CPU float, eight output columns at a time (torch-free): the
// patches of a sharp model, forward and the gradient of theta, at every decoding step. The
// arithmetic per pixel is grid_sample's (bilinear, border padding, align_corners=false) at
// affine_grid's points, as sharpener.cpp's scalar loops do it; the four neighbours of eight
// points are loaded by AVX2's gathers where the CPU has them (affine_sample_avx2.cpp), else lane
// by lane.
#include <cstdint>

namespace foveal::core {

/// One call's arguments: rows [b0, b1) of the output [n, channels, h, w], row b sampled from
/// image image[b] of `source` [images, channels, sh, sw] (image b where image is null) through
/// theta [n, 2, 3]; xs: affine_grid's w column centres, readable to a multiple of 8 (zeros past
/// w); ys: its h row centres.
struct AffineSampleArgs {
  const float* source;
  const float* theta;
  int64_t b0, b1, channels, sh, sw, h, w;
  const float* xs;
  const float* ys;
  const int64_t* image = nullptr;

  /// The first plane of row b's image.
  const float* planes(int64_t b) const {
    return source + (image ? image[b] : b) * channels * sh * sw;
  }
};

/// Asks for the cache lines of rows r0..r1, columns c0..c1 of each of the `channels` planes (sh x
/// sw values) from `planes`: the source rectangle the samplers read next (sharpener.cpp's
/// regions' crop too), one image ahead.
template <typename S>
inline void prefetchRectangle(const S* planes, int64_t channels, int64_t sh, int64_t sw, int64_t r0,
                              int64_t r1, int64_t c0, int64_t c1) {
  constexpr int64_t line = 64 / sizeof(S);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = r0; i <= r1; ++i) {
      const S* row = planes + (c * sh + i) * sw;
      for (int64_t j = c0; j <= c1; j += line) __builtin_prefetch(row + j);
      __builtin_prefetch(row + c1);
    }
}

/// The samples, into out [n, channels, h, w].
void sampleAffineFloat(const AffineSampleArgs& a, float* out);

/// theta's gradient [n, 2, 3] from the output's (grad [n, channels, h, w]), into thetaGrad (every
/// image of [b0, b1) written); the source's gradient is not computed.
void sampleAffineThetaGradFloat(const AffineSampleArgs& a, const float* grad, float* thetaGrad);

}  // namespace foveal::core
