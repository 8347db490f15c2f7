#include "data/mnist_digits.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "base/error.h"
#include "base/safe_read.h"

namespace foveal::core::data {

namespace {

uint32_t readU32(const std::vector<uint8_t>& b, size_t at) {
  return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 |
         uint32_t(b[at + 3]) << 24;
}

// Bilinear, half-pixel centres (align_corners = false), like torch's interpolate when enlarging.
void resizeBilinear(const uint8_t* src, int sw, int sh, uint8_t* dst, int dw, int dh) {
  for (int y = 0; y < dh; ++y) {
    const double fy = std::clamp((y + 0.5) * sh / dh - 0.5, 0.0, double(sh - 1));
    const int y0 = static_cast<int>(fy), y1 = std::min(y0 + 1, sh - 1);
    const double wy = fy - y0;
    for (int x = 0; x < dw; ++x) {
      const double fx = std::clamp((x + 0.5) * sw / dw - 0.5, 0.0, double(sw - 1));
      const int x0 = static_cast<int>(fx), x1 = std::min(x0 + 1, sw - 1);
      const double wx = fx - x0;
      const double top = src[y0 * sw + x0] * (1 - wx) + src[y0 * sw + x1] * wx;
      const double bottom = src[y1 * sw + x0] * (1 - wx) + src[y1 * sw + x1] * wx;
      dst[y * dw + x] = static_cast<uint8_t>(std::lround(top * (1 - wy) + bottom * wy));
    }
  }
}

}  // namespace

std::shared_ptr<const MnistDigits> MnistDigits::load(const std::string& path) {
  const std::string bytes = readRegularFile(path, "MNIST digit file", kMaxSmallFileBytes * 16);
  const std::vector<uint8_t> b(bytes.begin(), bytes.end());
  if (b.size() < 24 || std::memcmp(b.data(), "FVMNIST1", 8) != 0)
    throw Error(path + ": not a Foveal MNIST digit file (expected header \"FVMNIST1\")");
  const uint32_t n = readU32(b, 8), rows = readU32(b, 12), cols = readU32(b, 16),
                 trainPercent = readU32(b, 20);
  if (rows != 28 || cols != 28 || n == 0 || n > 1000000 || trainPercent < 1 || trainPercent > 99)
    throw Error(path + ": unsupported digit file (" + std::to_string(n) + " digits of " +
                std::to_string(rows) + "x" + std::to_string(cols) + ")");
  const size_t need = 24 + size_t(n) + size_t(n) * 784;
  if (b.size() < need)
    throw Error(path + ": truncated (" + std::to_string(b.size()) + " bytes, header says " +
                std::to_string(need) + ")");
  auto d = std::make_shared<MnistDigits>();
  d->m_path = path;
  d->m_labels.assign(b.begin() + 24, b.begin() + 24 + n);
  d->m_images.assign(b.begin() + 24 + n, b.begin() + static_cast<long>(need));
  d->m_cells.resize(size_t(n) * kCell * kCell);
  std::vector<int> perClass(10, 0), seen(10, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const int c = d->m_labels[i];
    if (c > 9)
      throw Error(path + ": entry " + std::to_string(i) + " has label " + std::to_string(c));
    ++perClass[c];
  }
  for (uint32_t i = 0; i < n; ++i) {
    const int c = d->m_labels[i];
    const int trainOfClass = perClass[c] * static_cast<int>(trainPercent) / 100;
    (seen[c]++ < trainOfClass ? d->m_train : d->m_test).push_back(static_cast<int>(i));
    resizeBilinear(d->original(static_cast<int>(i)), 28, 28, d->m_cells.data() + size_t(i) * 1024,
                   kCell, kCell);
  }
  if (d->m_train.empty() || d->m_test.empty())
    throw Error(path + ": the train/test split leaves a pool empty");
  return d;
}

std::string MnistDigits::defaultPath() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("FOVEAL_MNIST"); env && *env) return env;
  const std::vector<std::string> candidates = {
#ifdef FOVEAL_SOURCE_SAMPLES_DIR
      std::string(FOVEAL_SOURCE_SAMPLES_DIR) + "/mnist/digits.bin",
#endif
#ifdef FOVEAL_INSTALL_DATA_DIR
      std::string(FOVEAL_INSTALL_DATA_DIR) + "/mnist/digits.bin",
#endif
      "samples/mnist/digits.bin"};
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::exists(c, ec)) return c;
  }
  return candidates.front();
}

std::shared_ptr<const MnistDigits> MnistDigits::bundled() {
  static std::mutex mutex;
  static std::shared_ptr<const MnistDigits> cached;
  std::lock_guard<std::mutex> lock(mutex);
  if (!cached) cached = load(defaultPath());
  return cached;
}

}  // namespace foveal::core::data
