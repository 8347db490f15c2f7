#pragma once
// The data layer's common vocabulary: a labelled image (Sample), the model-ready pair of images
// (PreparedSample) and the Dataset interface every source implements. Torch-free.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "image/grey_image.h"
#include "model/geometry.h"

namespace foveal::core::data {

/// One source image and its label, as the dataset stores it.
struct Sample {
  GreyImage image;
  std::string label;
  /// Each character's true box in `image`'s pixels, for writers (exportDataset fills it from
  /// Dataset::charBoxes); empty when unknown. get() leaves it empty: reading boxes is charBoxes().
  std::vector<Box> boxes;
};

/// What the model sees: the inputW x inputH image and the upsampledW x inputH copy the sharpener
/// cuts regions from, both quantised to 8 bits (see packed_dataset.h), and the label.
struct PreparedSample {
  GreyImage input;
  GreyImage upsampled;
  std::string label;
  std::vector<Box> boxes;  ///< each character's true box in `input`'s pixels; empty: unknown
};

/// A random-access source of labelled images. Implementations are safe to call from several
/// threads at once (the loader does), and every error names the file and the entry.
class Dataset {
 public:
  virtual ~Dataset() = default;

  /// Number of entries. An endless stream reports the size of its nominal epoch.
  virtual size_t size() const = 0;
  /// True for generated streams that accept any index.
  virtual bool endless() const { return false; }
  /// Entry `index` (0-based). Throws Error naming the file and the entry.
  virtual Sample get(size_t index) const = 0;
  /// The label alone, cheap where the format allows (LMDB, gt.txt, packed).
  virtual std::string label(size_t index) const { return get(index).label; }
  /// Where entry `index` lives, for messages: "train.lmdb: entry 7 (image-000000008)".
  virtual std::string entryName(size_t index) const = 0;
  /// One line: kind, location, entry count.
  virtual std::string describe() const = 0;
  /// The true box of each character (UTF-8 code point) of entry `index`'s label, in its source
  /// image's pixels (pixel-edge coordinates, as Box), or empty when the data does not know them.
  /// Cheap where the format stores them (docs/data/char-boxes.md); synthetic words render the
  /// entry again. Throws Error naming the entry when stored boxes are malformed.
  virtual std::vector<Box> charBoxes(size_t index) const {
    (void)index;
    return {};
  }
};

using DatasetPtr = std::shared_ptr<const Dataset>;

}  // namespace foveal::core::data
