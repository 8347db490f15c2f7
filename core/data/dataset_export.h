#pragma once
// Converting any dataset into a packed file, an LMDB or a folder with gt.txt (foveal-cli data
// pack / make-digits / make-words). Torch-free header; packing preprocesses with core/preprocess.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "model/model_config.h"

namespace foveal::core::data {

/// The model-ready pair for one source image: preprocess() (the inference path) quantised to
/// 8 bits with toGreyImage. What a packed file stores.
PreparedSample prepareSample(const Sample& sample, const Preprocessing& pp);

struct ExportOptions {
  std::string format = "packed";  ///< "packed", "lmdb" or "folder"
  Preprocessing preprocessing;    ///< packed only
  bool skipBad = false;           ///< leave out unreadable entries and empty labels, and count them
  size_t limit = 0;               ///< first `limit` entries only (required for endless streams)
  int threads = 0;                ///< 0: hardware concurrency
  std::function<void(size_t done, size_t total)> progress;
};

struct ExportReport {
  size_t written = 0;
  size_t skipped = 0;
  std::vector<std::string> skippedMessages;  ///< one per skipped entry, naming file and entry
};

/// Writes `ds` to `out` in entry order. Without skipBad the first bad entry throws its Error (and
/// nothing is left at `out` for packed files).
ExportReport exportDataset(const Dataset& ds, const std::string& out, const ExportOptions& options);

}  // namespace foveal::core::data
