#include "data/digit_sequences.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "data/random.h"

namespace foveal::core::data {

std::string DigitSequenceSpec::toString() const {
  std::string s = "digits:len=" + std::to_string(length);
  if (rotated) s += ",rotated";
  s += stream ? ",split=stream" : split == DigitSplit::Test ? ",split=test" : ",split=train";
  s += ",seed=" + std::to_string(seed);
  if (count) s += ",count=" + std::to_string(count);
  s += augment.toSpecItems();
  return s;
}

void turnAboutVerticalAxis(const uint8_t* cell, int n, double degrees, uint8_t* out) {
  const double d = DigitSequenceSpec::kCameraDistance;
  const double th = degrees * M_PI / 180.0, c = std::cos(th), s = std::sin(th);
  const double half = n / 2.0;
  // The source with a one-pixel zero border, so bilinear taps need no bounds checks.
  const int p = n + 2;
  std::vector<float> padded(static_cast<size_t>(p) * p, 0.0f);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) padded[(y + 1) * p + x + 1] = cell[y * n + x];
  // Per output column: the source column and the column's vertical magnification.
  std::vector<int> cx0(n);
  std::vector<float> cwx(n), cscale(n);
  std::vector<bool> inside(n);
  for (int x = 0; x < n; ++x) {
    // Image-plane column u -> point X on the turned digit plane (inverse of u = d X c / (d + X s)),
    // and the magnification (d + X s) / d that shrinks or grows that column vertically.
    const double u = x + 0.5 - half;
    const double X = u * d / (d * c - u * s);
    const double sx = X + half - 0.5 + 1.0;  // + 1: the border
    inside[x] = sx >= 0.0 && sx < p - 1;
    const int x0 = inside[x] ? static_cast<int>(sx) : 0;
    cx0[x] = x0;
    cwx[x] = static_cast<float>(sx - x0);
    cscale[x] = static_cast<float>((d + X * s) / d);
  }
  for (int y = 0; y < n; ++y) {
    const float v = static_cast<float>(y + 0.5 - half);
    uint8_t* row = out + y * n;
    for (int x = 0; x < n; ++x) {
      const float sy = v * cscale[x] + static_cast<float>(half - 0.5 + 1.0);
      if (!inside[x] || sy < 0.0f || sy >= static_cast<float>(p - 1)) {
        row[x] = 0;
        continue;
      }
      const int y0 = static_cast<int>(sy);
      const float wy = sy - y0, wx = cwx[x];
      const float* t = padded.data() + y0 * p + cx0[x];
      const float top = t[0] + (t[1] - t[0]) * wx;
      const float bottom = t[p] + (t[p + 1] - t[p]) * wx;
      row[x] = static_cast<uint8_t>(top + (bottom - top) * wy + 0.5f);
    }
  }
}

Box turnedSlotBox(int n, double degrees) {
  // The forward map of turnAboutVerticalAxis: a point (X, Y) of the turned plane (centred) is seen
  // at u = d X c / (d + X s), v = d Y / (d + X s). u grows with X, so the slot's edges X = +-n/2
  // give its left and right; its height is largest at the near edge (smallest d + X s).
  const double d = DigitSequenceSpec::kCameraDistance;
  const double th = degrees * M_PI / 180.0, c = std::cos(th), s = std::sin(th);
  const double half = n / 2.0;
  const double uLeft = d * -half * c / (d - half * s), uRight = d * half * c / (d + half * s);
  const double vMax = d * half / std::min(d - half * s, d + half * s);
  const double x0 = std::max(0.0, half + uLeft), x1 = std::min(double(n), half + uRight);
  const double y0 = std::max(0.0, half - vMax), y1 = std::min(double(n), half + vMax);
  return {x0, y0, x1 - x0, y1 - y0};
}

Box turnedBox(int n, double degrees, const Box& box) {
  // The forward map of turnAboutVerticalAxis for a point (see turnedSlotBox), applied to the
  // box's four corners.
  const double d = DigitSequenceSpec::kCameraDistance;
  const double th = degrees * M_PI / 180.0, c = std::cos(th), s = std::sin(th);
  const double half = n / 2.0;
  double x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9;
  for (const double X : {box.x - half, box.x + box.w - half})
    for (const double Y : {box.y - half, box.y + box.h - half}) {
      const double u = d * X * c / (d + X * s) + half, v = d * Y / (d + X * s) + half;
      x0 = std::min(x0, u);
      x1 = std::max(x1, u);
      y0 = std::min(y0, v);
      y1 = std::max(y1, v);
    }
  x0 = std::clamp(x0, 0.0, double(n));
  x1 = std::clamp(x1, 0.0, double(n));
  y0 = std::clamp(y0, 0.0, double(n));
  y1 = std::clamp(y1, 0.0, double(n));
  return {x0, y0, x1 - x0, y1 - y0};
}

DigitSequenceDataset::DigitSequenceDataset(std::shared_ptr<const MnistDigits> digits,
                                           const DigitSequenceSpec& spec)
    : m_digits(std::move(digits)), m_spec(spec) {
  if (!m_digits) throw Error("digit sequences need the MNIST digit file");
  if (spec.length < 1 || spec.length > 64)
    throw Error(spec.toString() + ": length must be 1..64, not " + std::to_string(spec.length));
  if (spec.stream && spec.split == DigitSplit::Test)
    throw Error(spec.toString() + ": the endless stream draws from the training pool only");
  if (spec.augment.enabled() && spec.split == DigitSplit::Test)
    throw Error(spec.toString() +
                ": the test sets are never augmented (augmentation is for the training pool)");
  // The setting is part of the key, so e.g. len=5 and len=7 with one seed are independent.
  m_key = mixKey(mixKey(spec.seed, static_cast<uint64_t>(spec.length)),
                 (spec.rotated ? 2u : 0u) | (spec.split == DigitSplit::Test ? 1u : 0u));
}

DigitSequenceDataset::Plan DigitSequenceDataset::plan(size_t index) const {
  SampleRng rng(mixKey(m_key, index));
  const auto& pool = m_digits->pool(m_spec.split);
  Plan p;
  p.digits.resize(static_cast<size_t>(m_spec.length));
  p.angles.assign(static_cast<size_t>(m_spec.length), 0.0);
  for (int k = 0; k < m_spec.length; ++k) {
    p.digits[k] = pool[rng.below(pool.size())];
    if (m_spec.rotated)
      p.angles[k] = rng.uniform(-DigitSequenceSpec::kMaxAngleDeg, DigitSequenceSpec::kMaxAngleDeg);
  }
  if (m_spec.augment.enabled()) {
    SampleRng arng(mixKey(mixKey(m_key, index), 0xA06D3E47u));  // its own stream
    for (int k = 0; k < m_spec.length; ++k)
      p.warps.push_back(GlyphWarp::draw(m_spec.augment, arng));
  }
  return p;
}

std::string DigitSequenceDataset::label(size_t index) const {
  const Plan p = plan(index);
  std::string s;
  for (int d : p.digits) s += static_cast<char>('0' + m_digits->label(d));
  return s;
}

Sample DigitSequenceDataset::get(size_t index) const {
  if (!m_spec.stream && index >= size())
    throw Error(m_spec.toString() + ": entry " + std::to_string(index) + " is out of range (" +
                std::to_string(size()) + " entries)");
  constexpr int n = MnistDigits::kCell;
  const Plan p = plan(index);
  Sample s;
  s.image.width = n * m_spec.length;
  s.image.height = n;
  s.image.pixels.resize(static_cast<size_t>(s.image.width) * n);
  uint8_t turned[n * n];
  uint8_t warped[n * n];
  for (int k = 0; k < m_spec.length; ++k) {
    const uint8_t* cell = m_digits->cell(p.digits[k]);
    if (!p.warps.empty()) {
      warpGlyph(cell, n, p.warps[static_cast<size_t>(k)], warped);
      cell = warped;
    }
    if (m_spec.rotated) {
      turnAboutVerticalAxis(cell, n, p.angles[k], turned);
      cell = turned;
    }
    for (int y = 0; y < n; ++y)
      std::memcpy(s.image.pixels.data() + static_cast<size_t>(y) * s.image.width + k * n,
                  cell + y * n, n);
    s.label += static_cast<char>('0' + m_digits->label(p.digits[k]));
  }
  return s;
}

std::vector<Box> DigitSequenceDataset::charBoxes(size_t index) const {
  constexpr int n = MnistDigits::kCell;
  const Plan p = plan(index);
  std::vector<Box> out;
  for (int k = 0; k < m_spec.length; ++k) {
    const double angle = p.angles[static_cast<size_t>(k)];
    Box b;
    if (!p.warps.empty())  // the warped slot, then through the turn
      b = m_spec.rotated ? turnedBox(n, angle, warpedSlotBox(n, p.warps[static_cast<size_t>(k)]))
                         : warpedSlotBox(n, p.warps[static_cast<size_t>(k)]);
    else
      b = m_spec.rotated ? turnedSlotBox(n, angle) : Box{0, 0, n, n};
    b.x += k * n;
    out.push_back(b);
  }
  return out;
}

std::string DigitSequenceDataset::entryName(size_t index) const {
  return m_spec.toString() + ": entry " + std::to_string(index);
}

std::string DigitSequenceDataset::describe() const {
  return "digit sequences " + m_spec.toString() + " (" +
         (m_spec.stream ? std::string("endless") : std::to_string(size()) + " images") +
         ", MNIST " + m_digits->path() + ")";
}

}  // namespace foveal::core::data
