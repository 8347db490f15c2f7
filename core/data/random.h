#pragma once
// Counter-based randomness for generated data: sample i of a setting is a pure function of
// (seed, setting, i), so fixed sets need no storage and any thread can produce any sample.
#include <cmath>
#include <cstdint>

namespace foveal::core::data {

/// SplitMix64 finaliser: a strong 64-bit mix, used to derive independent streams.
inline uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t mixKey(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b)); }

/// A small, fast generator (SplitMix64 stream) seeded from a mixed key.
class SampleRng {
 public:
  explicit SampleRng(uint64_t key) : m_state(mix64(key)) {}
  uint64_t next() { return mix64(m_state += 0x9E3779B97F4A7C15ull); }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>(uniform() * static_cast<double>(n)); }
  /// Standard normal (Box-Muller).
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t m_state;
};

}  // namespace foveal::core::data
