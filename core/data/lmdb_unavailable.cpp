// LMDB datasets in a build without liblmdb (FOVEAL_WITH_LMDB=OFF, e.g. a GPU server with only a
// pip PyTorch): a folder holding data.mdb is still recognised, so that opening it says what is
// missing instead of "not a dataset"; reading or writing one throws.
#include <filesystem>

#include "base/error.h"
#include "data/lmdb_dataset.h"

namespace foveal::core::data {

namespace fs = std::filesystem;

namespace {
[[noreturn]] void unavailable(const std::string& path) {
  throw Error(path +
              ": LMDB datasets need a build with liblmdb (FOVEAL_WITH_LMDB=ON); this build "
              "has none. Convert it elsewhere with 'foveal-cli data pack'.");
}
}  // namespace

bool LmdbDataset::looksLmdb(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::exists(fs::path(path) / "data.mdb", ec);
}

bool LmdbDataset::available() { return false; }

LmdbDataset::LmdbDataset(const std::string& path) : m_path(path) { unavailable(path); }
LmdbDataset::~LmdbDataset() = default;
Sample LmdbDataset::get(size_t) const { unavailable(m_path); }
std::string LmdbDataset::label(size_t) const { unavailable(m_path); }
std::string LmdbDataset::entryName(size_t) const { unavailable(m_path); }
std::string LmdbDataset::describe() const { return m_path + " (LMDB, unreadable in this build)"; }
std::vector<Box> LmdbDataset::charBoxes(size_t) const { unavailable(m_path); }
std::string LmdbDataset::read(const std::string&, size_t, bool) const { unavailable(m_path); }

LmdbWriter::LmdbWriter(const std::string& path) : m_path(path) { unavailable(path); }
LmdbWriter::~LmdbWriter() = default;
void LmdbWriter::add(const Sample&) { unavailable(m_path); }
void LmdbWriter::addEncoded(const std::string&, const std::string&) { unavailable(m_path); }
void LmdbWriter::finish() { unavailable(m_path); }
void LmdbWriter::put(const std::string&, const std::string&) { unavailable(m_path); }
void LmdbWriter::commit(bool) { unavailable(m_path); }

}  // namespace foveal::core::data
