#pragma once
// The paper's digit-sequence task (section 4.1): l real MNIST digits, each 32x32, side by side
// (32*l x 32, white on black), l in {5, 7, 9, 11, 13}; "rotated" turns each digit about its
// vertical axis by a uniform angle in [-30, 30] degrees, seen through a pinhole camera: a
// perspective foreshortening (the near edge grows, the far edge shrinks), not an in-plane rotation.
//
// Sample i is a pure function of (seed, length, rotated, split, i): the fixed sets (20,000 train,
// 10,000 test) are the first indices of that function and the endless training stream continues
// it, so nothing is stored and any thread can produce any sample. Needs no OpenCV.
#include <cstdint>
#include <memory>

#include "data/dataset.h"
#include "data/glyph_augment.h"
#include "data/mnist_digits.h"

namespace foveal::core::data {

struct DigitSequenceSpec {
  int length = 5;  ///< digits per image
  bool rotated = false;
  DigitSplit split = DigitSplit::Train;  ///< which digit pool
  uint64_t seed = 1;
  bool stream = false;  ///< endless: any index is valid (train pool)
  size_t count = 0;     ///< 0: the paper's size (20,000 train, 10,000 test)
  /// Per-glyph augmentation (training pool only; the test sets are never augmented). Its draws
  /// come from their own stream, so the digits and angles of sample i do not change with it.
  GlyphAugmentSpec augment;

  static constexpr size_t kTrainCount = 20000;
  static constexpr size_t kTestCount = 10000;
  static constexpr double kMaxAngleDeg = 30.0;
  /// Camera distance in pixels (two digit widths): what makes the turn a visible perspective.
  static constexpr double kCameraDistance = 64.0;

  size_t size() const {
    return count ? count : split == DigitSplit::Test ? kTestCount : kTrainCount;
  }
  /// "digits:len=5,rotated,split=test,seed=1" (augmented: every aug-... parameter follows)
  std::string toString() const;
};

/// Turns a square cell (side n, 0 = background) about its vertical axis by `degrees`, as a pinhole
/// camera at kCameraDistance with focal length = distance sees it (unturned: identity). Exposed
/// for tests; `out` must hold n*n bytes.
void turnAboutVerticalAxis(const uint8_t* cell, int n, double degrees, uint8_t* out);

/// Where turnAboutVerticalAxis puts the cell: the bounding box of the turned n x n slot's image
/// (its four corners through the same camera; a turned square's image is a trapezoid whose near
/// edge grows), clipped to the cell. Pixel-edge coordinates within the cell.
Box turnedSlotBox(int n, double degrees);
/// The bounding box of `box` (within the cell) through the same turn; turnedBox(n, a, {0,0,n,n})
/// equals turnedSlotBox(n, a).
Box turnedBox(int n, double degrees, const Box& box);

class DigitSequenceDataset : public Dataset {
 public:
  DigitSequenceDataset(std::shared_ptr<const MnistDigits> digits, const DigitSequenceSpec& spec);

  size_t size() const override { return m_spec.size(); }
  bool endless() const override { return m_spec.stream; }
  Sample get(size_t index) const override;
  std::string label(size_t index) const override;
  std::string entryName(size_t index) const override;
  std::string describe() const override;
  /// Digit k's 32-px slot (rotated: turnedSlotBox), shifted to its place in the sequence.
  std::vector<Box> charBoxes(size_t index) const override;

  const DigitSequenceSpec& spec() const { return m_spec; }
  /// The per-digit choices of sample `index`: digit indices into MnistDigits and angles.
  struct Plan {
    std::vector<int> digits;
    std::vector<double> angles;
    std::vector<GlyphWarp> warps;  ///< empty without augmentation
  };
  Plan plan(size_t index) const;

 private:
  std::shared_ptr<const MnistDigits> m_digits;
  DigitSequenceSpec m_spec;
  uint64_t m_key;
};

}  // namespace foveal::core::data
