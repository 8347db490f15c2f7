#pragma once
// A packed dataset: preprocessed images and labels in one memory-mapped file, the way to feed a
// GPU server (it needs neither OpenCV nor the original files). Each entry holds the two 8-bit
// images the model sees: the inputW x inputH input and the upsampledW x inputH copy the sharpener
// cuts regions from. They are preprocess()'s output (bilinear + antialias resize,
// core/image/preprocess.h) quantised back to 8 bits with toGreyImage, so reading one gives the
// model preprocess()'s values to within half a grey level (|error| <= 1/255 on the [-1, 1] scale).
//
// Layout, little-endian; offsets in bytes from the start of the file:
//   0   char[8] "FVPACK01"      8   u32 version (2)       12  u32 header size (128)
//   16  u64 count               24  u32 inputW, inputH, upsampledW, 0
//   40  f64 regionScale         48  u64 images offset     56  u64 image stride (bytes per entry)
//   64  u64 label index offset  72  u64 label data offset 80  u64 file size
//   88  u32 CRC-32 of the header (bytes 0..127 with these four bytes zero)
//   92  u32 0                   96  u64 checksum table offset
//   104 u64 character boxes offset (0: none)                                 112..127 zero
//   images: count * stride bytes (input rows, then upsampled rows)
//   label index: u64[count + 1] offsets into the label data; labels are UTF-8, not terminated
//   checksum table: u32[2 * count]: per entry the CRC-32 of its pixels (input, then upsampled)
//   and of its label bytes. Checked when the entry is read (reading a pack never has to read
//   the whole file first, which for a large one would take minutes).
//   character boxes (optional, after the checksum table; docs/data/char-boxes.md):
//   u64[count + 1] cumulative box counts, f32[4 * total] x0, y0, x1, y1 per box in the input
//   image's pixels, u32[count] CRC-32 of each entry's box bytes. A file without boxes is byte for
//   byte what earlier builds wrote, and earlier builds read a file with boxes (they ignore 104).
// Version 1 (no header checksum, no table, bytes 88..127 zero) is still read, without checks.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "model/model_config.h"

namespace foveal::core::data {

class PackedDataset : public Dataset {
 public:
  /// Maps `path` and checks the header and the label index. Throws Error naming the file and
  /// the problem (not a packed file, wrong version, truncated body, bad label index entry).
  explicit PackedDataset(const std::string& path);
  ~PackedDataset() override;
  PackedDataset(const PackedDataset&) = delete;
  PackedDataset& operator=(const PackedDataset&) = delete;

  /// True when the file starts with the packed magic.
  static bool looksPacked(const std::string& path);

  size_t size() const override { return m_count; }
  /// The input image (inputW x inputH) and the label.
  Sample get(size_t index) const override;
  std::string label(size_t index) const override;
  std::string entryName(size_t index) const override;
  std::string describe() const override;
  /// In the input image's pixels (get() returns the input image). Empty without a boxes section.
  std::vector<Box> charBoxes(size_t index) const override;
  bool hasCharBoxes() const { return m_boxesOffset != 0; }

  PreparedSample prepared(size_t index) const;
  /// Direct views into the mapping (valid while the dataset lives), unchecked: call verify()
  /// first (get() and prepared() do).
  const uint8_t* inputPixels(size_t index) const;
  const uint8_t* upsampledPixels(size_t index) const;
  /// Throws Error naming the entry when its pixels do not match their checksum (version 2).
  void verify(size_t index) const;
  /// The format version of the file (1: no checksums).
  uint32_t version() const { return m_version; }
  /// The preprocessing the images were made with (inputW/H, regionScale).
  const Preprocessing& preprocessing() const { return m_pp; }
  int upsampledW() const { return m_upW; }
  const std::string& path() const { return m_path; }

 private:
  // Opening, in order: the mapping, the header (every offset inside the file), the indexes.
  void mapFile();
  uint64_t readHeader();
  void checkLabelIndex() const;
  void checkBoxIndex(uint64_t count);
  void check(size_t index) const;
  const uint8_t* pixels(size_t index) const;  ///< checked index, not verified

  std::string m_path;
  const uint8_t* m_map = nullptr;
  size_t m_mapSize = 0;
  size_t m_count = 0;
  Preprocessing m_pp;
  int m_upW = 0;
  uint64_t m_imagesOffset = 0, m_stride = 0, m_labelIndexOffset = 0, m_labelDataOffset = 0;
  uint64_t m_crcOffset = 0;  ///< 0: version 1, no checksum table
  uint64_t m_boxesOffset = 0, m_boxesDataOffset = 0, m_boxesCrcOffset = 0;  ///< 0: no boxes
  uint32_t m_version = 0;
};

/// Streams prepared samples into a packed file. Writes `path`.part and renames it on finish(), so
/// an interrupted run never leaves a file that looks complete.
class PackedWriter {
 public:
  PackedWriter(const std::string& path, const Preprocessing& pp);
  ~PackedWriter();
  PackedWriter(const PackedWriter&) = delete;
  PackedWriter& operator=(const PackedWriter&) = delete;

  /// Throws Error when the images do not have the packed sizes, or the label is empty or not
  /// valid UTF-8.
  void add(const PreparedSample& sample);
  size_t count() const { return m_labels.size(); }
  void finish();

 private:
  std::string m_path, m_partPath;
  Preprocessing m_pp;
  int m_upW;
  std::FILE* m_file = nullptr;
  std::vector<std::string> m_labels;
  std::vector<uint32_t> m_crcs;  ///< pixels, label per entry
  std::vector<std::vector<Box>> m_boxes;
};

}  // namespace foveal::core::data
