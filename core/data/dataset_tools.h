#pragma once
// Looking at datasets: a full read that lists what is wrong (foveal-cli data info) and contact
// sheets (foveal-cli data show). Torch-free.
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "model/charset.h"

namespace foveal::core::data {

struct DatasetReport {
  size_t entries = 0;   ///< entries examined
  size_t readable = 0;  ///< image decoded and label usable
  /// (entry index, message naming file and entry) for every unreadable entry, empty label or
  /// label with characters outside the charset.
  std::vector<std::pair<size_t, std::string>> problems;
  size_t unreadable = 0, emptyLabels = 0, outsideCharset = 0;
  std::map<size_t, size_t> lengthHistogram;  ///< label length (code points) -> entries
  std::map<std::string, size_t> characters;  ///< code point -> occurrences
  int minW = 0, maxW = 0, minH = 0, maxH = 0;
};

/// Reads entries [0, limit) (every entry when limit is 0; an endless stream needs a limit),
/// decoding every image, on `threads` threads (0: hardware concurrency). With a charset, labels
/// with characters outside it are problems too.
DatasetReport inspectDataset(const Dataset& ds, const Charset* charset, size_t limit = 0,
                             int threads = 0);

/// Samples side by side in a grid, each scaled to `cellHeight` rows (width in proportion, at most
/// `maxCellWidth`), separated by mid-grey gaps so white-on-black images stay distinguishable.
GreyImage contactSheet(const std::vector<GreyImage>& images, int columns, int cellHeight = 32,
                       int maxCellWidth = 448);

/// Bilinear resize of an 8-bit image (no antialiasing; for display, not for model input).
GreyImage resizeForDisplay(const GreyImage& image, int width, int height);

}  // namespace foveal::core::data
