#pragma once
// The image operations of deep-text-recognition-benchmark's preprocessing, made bit-exact to
// Pillow (checked against Pillow 9.4 in tests/core/test_dtrb_import.cpp): convert('L') and
// resize(BICUBIC) on 8-bit images, and resize(LANCZOS) for kraken's line input. Torch-free.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace foveal::core {

/// PIL's convert('L') of interleaved RGB: (R*19595 + G*38470 + B*7471 + 0x8000) >> 16 (ITU-R
/// 601-2 luma in 16-bit fixed point). `pixels` = width * height.
std::vector<uint8_t> pilLuma(const uint8_t* rgb, size_t pixels);

/// PIL's resize((outW, outH), BICUBIC) of an 8-bit image with `channels` interleaved bands: a
/// separable cubic filter (a = -0.5) whose support widens by the scale when shrinking, weights
/// normalised and rounded to 22-bit fixed point, a horizontal pass to an 8-bit image, then a
/// vertical pass. A pass whose size does not change is skipped, as in Pillow.
std::vector<uint8_t> pilResizeBicubic(const uint8_t* src, int w, int h, int channels, int outW,
                                      int outH);

/// PIL's resize((outW, outH), LANCZOS): the same two passes with Pillow's Lanczos filter
/// (sinc(x) * sinc(x / 3), support 3, widened by the scale when shrinking). kraken scales its
/// line images with it (checked against Pillow 9.4 in tests/core/test_kraken_line.cpp).
std::vector<uint8_t> pilResizeLanczos(const uint8_t* src, int w, int h, int channels, int outW,
                                      int outH);

}  // namespace foveal::core
