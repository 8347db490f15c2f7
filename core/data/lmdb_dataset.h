#pragma once
// LMDB datasets in deep-text-recognition-benchmark's layout: a folder with data.mdb holding
// "num-samples" (decimal text) and, for i = 1..n, "image-%09d" (encoded image bytes) and
// "label-%09d" (UTF-8), and optionally "boxes-%09d" (each character's true box, the text form of
// docs/data/char-boxes.md). Read-only access without locks, so it can read datasets on read-only
// mounts, as the benchmark's Python loader does.
#include <cstddef>
#include <memory>
#include <string>

#include "data/dataset.h"

namespace foveal::core::data {

class LmdbDataset : public Dataset {
 public:
  /// Throws Error naming the folder when it is no LMDB or lacks num-samples.
  explicit LmdbDataset(const std::string& path);
  ~LmdbDataset() override;
  LmdbDataset(const LmdbDataset&) = delete;
  LmdbDataset& operator=(const LmdbDataset&) = delete;

  /// True when `path` is a folder holding data.mdb.
  static bool looksLmdb(const std::string& path);
  /// False in a build without liblmdb (FOVEAL_WITH_LMDB=OFF): opening or writing one then throws.
  static bool available();

  size_t size() const override { return m_count; }
  Sample get(size_t index) const override;
  std::string label(size_t index) const override;
  std::string entryName(size_t index) const override;
  std::string describe() const override;
  /// The optional key "boxes-%09d" (docs/data/char-boxes.md).
  std::vector<Box> charBoxes(size_t index) const override;

 private:
  std::string read(const std::string& key, size_t index, bool required) const;

  std::string m_path;
  void* m_env = nullptr;  // MDB_env*, kept out of the header
  unsigned m_dbi = 0;
  size_t m_count = 0;
};

/// Writes a dataset in the same layout. Images are stored PNG-encoded (PGM in a build without
/// image codecs, so that build can read back what it wrote). A writer destroyed before finish()
/// (an error) removes the data.mdb it created, and the folder when it created it.
class LmdbWriter {
 public:
  explicit LmdbWriter(const std::string& path);
  ~LmdbWriter();
  LmdbWriter(const LmdbWriter&) = delete;
  LmdbWriter& operator=(const LmdbWriter&) = delete;

  void add(const Sample& sample);
  /// Stores already-encoded image bytes as they are.
  void addEncoded(const std::string& imageBytes, const std::string& label);
  size_t count() const { return m_count; }
  /// Writes num-samples and closes.
  void finish();

 private:
  void put(const std::string& key, const std::string& value);
  void commit(bool reopen);
  /// Closes without finishing and removes what this writer created.
  void abandon();
  void removeLeftovers();

  std::string m_path;
  void* m_env = nullptr;
  void* m_txn = nullptr;
  unsigned m_dbi = 0;
  size_t m_count = 0;
  bool m_createdFolder = false;  // the folder did not exist before
  bool m_createdFile = false;    // data.mdb is this writer's
};

/// Encodes an image as stored in LMDB and in memory files: PNG, or binary PGM without codecs.
std::string encodeForStorage(const GreyImage& image);
/// The file extension of encodeForStorage's format: "png" or "pgm".
const char* storageExtension();

}  // namespace foveal::core::data
