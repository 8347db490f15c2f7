#pragma once
// Per-glyph augmentation for the digit sequences' training data (issue 34): each digit is distorted
// on its own 32x32 cell before the sequence is composed (then the "rotated" turn is applied as
// before). The remedy Simard et al. (2003) used for MNIST's small pool of glyphs: a random affine
// map (scale, shear, in-plane rotation, a shift within the slot), an elastic distortion (a random
// displacement field smoothed by a Gaussian, scaled by alpha) and a stroke-thickness change
// (greyscale erosion or dilation with a 3x3 cross). Every draw is a pure function of the caller's
// random generator, so a sample stays a pure function of (seed, setting, index). Needs no OpenCV.
#include <cstdint>
#include <string>

#include "data/dataset.h"

namespace foveal::core::data {

class SampleRng;

/// The ranges each glyph's distortion is drawn from; all zero: no augmentation.
struct GlyphAugmentSpec {
  double scale = 0.0;      ///< relative: the glyph is scaled by a uniform factor in [1-s, 1+s]
  double shear = 0.0;      ///< horizontal shear, tan of the angle, uniform in [-h, h]
  double rotation = 0.0;   ///< in-plane rotation, degrees, uniform in [-r, r]
  double shift = 0.0;      ///< translation within the slot, pixels, each axis uniform in [-t, t]
  double elastic = 0.0;    ///< Simard's alpha: the smoothed displacement field's scale, pixels
  double sigma = 4.0;      ///< Simard's sigma: the displacement field's Gaussian, pixels
  double thickness = 0.0;  ///< probability of a thickness change (half erosion, half dilation)

  bool enabled() const {
    return scale > 0 || shear > 0 || rotation > 0 || shift > 0 || elastic > 0 || thickness > 0;
  }
  /// The "augment" flag's defaults: moderate, every digit still readable (look with
  /// `foveal-cli data show "digits:len=5,augment" --out sheet.png`).
  static GlyphAugmentSpec defaults();
  /// ",aug-scale=0.12,aug-shear=0.25,..." (every parameter; "" when not enabled).
  std::string toSpecItems() const;
  /// Sets one "aug-..." key (or "augment", the defaults); false if `key` is not one of them.
  /// Throws Error naming the key and the allowed range for a bad value.
  bool set(const std::string& key, const std::string& value);
};

/// One glyph's drawn distortion.
struct GlyphWarp {
  double scale = 1.0, shear = 0.0, rotationDeg = 0.0, dx = 0.0, dy = 0.0;
  int thickness = 0;        ///< -1 erode, 0 none, +1 dilate
  uint64_t elasticKey = 0;  ///< seeds the displacement field
  double elastic = 0.0, sigma = 4.0;

  /// Draws a warp from `spec`'s ranges.
  static GlyphWarp draw(const GlyphAugmentSpec& spec, SampleRng& rng);
  bool identity() const {
    return scale == 1.0 && shear == 0.0 && rotationDeg == 0.0 && dx == 0.0 && dy == 0.0 &&
           thickness == 0 && elastic == 0.0;
  }
  /// Where the affine part puts a point of the cell (pixel-edge coordinates, centre n/2).
  void forward(double n, double x, double y, double& ox, double& oy) const;
};

/// Applies `warp` to the n x n cell (0 = background) into `out` (n*n bytes, not `cell`).
void warpGlyph(const uint8_t* cell, int n, const GlyphWarp& warp, uint8_t* out);

/// The slot [0, n)^2 after the warp's affine part: the bounding box of its four corners, clipped
/// to the cell. The glyph's true box moves with it.
Box warpedSlotBox(int n, const GlyphWarp& warp);

}  // namespace foveal::core::data
