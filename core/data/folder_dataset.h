#pragma once
// A folder of images with a gt.txt listing them: one "path<TAB>label" line per image, the path
// relative to gt.txt's folder (the format of deep-text-recognition-benchmark's create_lmdb_dataset
// input), optionally "path<TAB>label<TAB>boxes=x0,y0,x1,y1 ..." with each character's true box
// (docs/data/char-boxes.md). Images are decoded on demand with readImage.
#include <string>
#include <vector>

#include "data/dataset.h"

namespace foveal::core::data {

class FolderDataset : public Dataset {
 public:
  /// `path`: the gt.txt file, or a folder holding one. Throws Error when gt.txt cannot be read.
  /// Malformed lines become entries that throw when read, so info lists them and skipping counts
  /// them like any other bad entry.
  explicit FolderDataset(const std::string& path);

  size_t size() const override { return m_entries.size(); }
  Sample get(size_t index) const override;
  std::string label(size_t index) const override;
  std::string entryName(size_t index) const override;
  std::string describe() const override;
  std::vector<Box> charBoxes(size_t index) const override;
  const std::string& gtPath() const { return m_gt; }

 private:
  struct Entry {
    std::string path;  ///< relative, as written in gt.txt
    std::string label;
    std::string boxes;  ///< the boxes column without "boxes=", parsed when asked for
    int line = 0;
    std::string problem;  ///< non-empty for a malformed line
  };
  const Entry& entry(size_t index) const;

  std::string m_gt, m_root;
  std::vector<Entry> m_entries;
};

/// Writes images as PNG (PGM without image codecs) under `folder`/images/ and the list as
/// `folder`/gt.txt (with the boxes column for samples that carry boxes).
class FolderWriter {
 public:
  explicit FolderWriter(const std::string& folder);
  void add(const Sample& sample);
  size_t count() const { return m_count; }
  void finish();

 private:
  std::string m_folder;
  std::string m_gt;
  size_t m_count = 0;
};

}  // namespace foveal::core::data
