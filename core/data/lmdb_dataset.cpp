#include "data/lmdb_dataset.h"

#include <fcntl.h>
#include <lmdb.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "base/safe_read.h"
#include "data/char_boxes.h"

namespace fs = std::filesystem;

namespace foveal::core::data {

namespace {

std::string key(const char* kind, size_t index) {
  char k[32];
  std::snprintf(k, sizeof k, "%s-%09zu", kind, index + 1);  // the benchmark counts from 1
  return k;
}

MDB_env* env(void* p) { return static_cast<MDB_env*>(p); }

// liblmdb's reason for a failed write. It reports a short write(2) as EIO, and a full disk writes
// short: when the folder's file system has (almost) nothing left, that is the reason to give.
std::string writeError(int rc, const std::string& folder) {
  struct statvfs fsInfo {};
  if (rc == EIO && ::statvfs(folder.c_str(), &fsInfo) == 0 &&
      uint64_t(fsInfo.f_bavail) * fsInfo.f_frsize < (uint64_t(1) << 20))
    return std::string(std::strerror(ENOSPC)) + ": liblmdb's write ran short";
  return mdb_strerror(rc);
}

}  // namespace

bool LmdbDataset::looksLmdb(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::exists(fs::path(path) / "data.mdb", ec);
}

bool LmdbDataset::available() { return true; }

LmdbDataset::LmdbDataset(const std::string& path) : m_path(path) {
  if (!looksLmdb(path)) throw Error(path + ": not an LMDB dataset (no data.mdb in the folder)");
  const std::string file = (fs::path(path) / "data.mdb").string();
  // liblmdb maps data.mdb and trusts it: an empty file fails with a misleading system error, and
  // one shorter than its pages ends the process with SIGBUS at the first read past the end.
  const uint64_t fileSize = checkRegularFile(file, "LMDB data file", UINT64_MAX);
  if (fileSize == 0) throw Error(file + ": empty file, not an LMDB database");
  MDB_env* e = nullptr;
  int rc = mdb_env_create(&e);
  if (rc == 0) rc = mdb_env_set_maxreaders(e, 256);
  if (rc == 0) rc = mdb_env_open(e, path.c_str(), MDB_RDONLY | MDB_NOLOCK | MDB_NOTLS, 0644);
  if (rc != 0) {
    if (e) mdb_env_close(e);
    throw Error(path + ": cannot open LMDB (" + mdb_strerror(rc) + ")");
  }
  m_env = e;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  rc = mdb_txn_begin(e, nullptr, MDB_RDONLY, &txn);
  if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
  if (txn) mdb_txn_abort(txn);
  if (rc != 0) {
    mdb_env_close(e);
    m_env = nullptr;
    throw Error(path + ": cannot open LMDB database (" + mdb_strerror(rc) + ")");
  }
  m_dbi = dbi;
  MDB_envinfo info{};
  MDB_stat st{};
  rc = mdb_env_info(e, &info);
  if (rc == 0) rc = mdb_env_stat(e, &st);
  const uint64_t needed = (static_cast<uint64_t>(info.me_last_pgno) + 1) * st.ms_psize;
  if (rc != 0 || needed > fileSize) {
    mdb_env_close(e);
    m_env = nullptr;
    throw Error(file +
                (rc != 0 ? ": cannot read the LMDB header (" + std::string(mdb_strerror(rc)) + ")"
                         : ": truncated LMDB (" + std::to_string(fileSize) +
                               " bytes, its pages need " + std::to_string(needed) + ")"));
  }
  std::string n;
  try {
    n = read("num-samples", 0, false);
  } catch (...) {
    mdb_env_close(e);
    m_env = nullptr;
    throw;
  }
  size_t pos = 0;
  long long v = -1;
  try {
    v = std::stoll(n, &pos);
  } catch (...) {
  }
  if (n.empty() || pos != n.size() || v < 0) {
    mdb_env_close(e);
    m_env = nullptr;
    throw Error(path + (n.empty() ? ": not a text-recognition LMDB (no 'num-samples' key)"
                                  : ": 'num-samples' is not a count (\"" + n + "\")"));
  }
  // DTRB's layout holds an image and a label key per sample and the count itself: a count beyond
  // what the database holds would walk billions of missing keys.
  if (static_cast<uint64_t>(v) > st.ms_entries / 2) {
    mdb_env_close(e);
    m_env = nullptr;
    throw Error(path + ": 'num-samples' says " + n + ", but the database holds only " +
                std::to_string(st.ms_entries) + " keys (2 per sample)");
  }
  m_count = static_cast<size_t>(v);
}

LmdbDataset::~LmdbDataset() {
  if (m_env) mdb_env_close(env(m_env));
}

std::string LmdbDataset::read(const std::string& k, size_t index, bool required) const {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(env(m_env), nullptr, MDB_RDONLY, &txn);
  if (rc != 0) throw Error(m_path + ": cannot read LMDB (" + mdb_strerror(rc) + ")");
  MDB_val mk{k.size(), const_cast<char*>(k.data())}, mv{};
  rc = mdb_get(txn, m_dbi, &mk, &mv);
  std::string out;
  if (rc == 0) out.assign(static_cast<const char*>(mv.mv_data), mv.mv_size);
  mdb_txn_abort(txn);
  if (rc == MDB_NOTFOUND && required) throw Error(entryName(index) + ": key '" + k + "' missing");
  if (rc != 0 && rc != MDB_NOTFOUND)
    throw Error(entryName(index) + ": cannot read '" + k + "' (" + mdb_strerror(rc) + ")");
  return out;
}

std::string LmdbDataset::label(size_t index) const {
  if (index >= m_count)
    throw Error(m_path + ": entry " + std::to_string(index) + " is out of range (" +
                std::to_string(m_count) + " entries)");
  return read(key("label", index), index, true);
}

Sample LmdbDataset::get(size_t index) const {
  Sample s;
  s.label = label(index);
  const std::string bytes = read(key("image", index), index, true);
  if (bytes.empty()) throw Error(entryName(index) + ": empty image bytes");
  s.image = decodeImage(std::vector<uint8_t>(bytes.begin(), bytes.end()), entryName(index));
  return s;
}

std::vector<Box> LmdbDataset::charBoxes(size_t index) const {
  if (index >= m_count) return {};
  const std::string text = read(key("boxes", index), index, false);
  try {
    return parseCharBoxes(text);
  } catch (const Error& e) {
    throw Error(entryName(index) + ": " + e.what());
  }
}

std::string LmdbDataset::entryName(size_t index) const {
  return m_path + ": entry " + std::to_string(index) + " (" + key("image", index) + ")";
}

std::string LmdbDataset::describe() const {
  return "LMDB " + m_path + " (" + std::to_string(m_count) + " entries)";
}

LmdbWriter::LmdbWriter(const std::string& path) : m_path(path) {
  std::error_code ec;
  const bool existed = fs::exists(path, ec);
  fs::create_directories(path, ec);
  if (ec) throw Error(path + ": cannot create folder (" + ec.message() + ")");
  m_createdFolder = !existed;
  // data.mdb is created here, exclusively: an existing LMDB is refused, and a second writer
  // racing for the same folder finds this one's file. The writer is then the file's only user,
  // so liblmdb runs without its lock file (MDB_NOLOCK): lock.mdb is memory-mapped, and on a full
  // disk the first store into its pages ended the process with SIGBUS (issue 65). data.mdb itself
  // is written with write(2) (no MDB_WRITEMAP), so a full disk is an error code.
  const std::string file = (fs::path(path) / "data.mdb").string();
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    removeLeftovers();
    if (err == EEXIST) throw Error(path + ": already holds an LMDB; remove it first");
    throw Error(file + ": cannot create (" + std::strerror(err) + ")");
  }
  ::close(fd);
  m_createdFile = true;
  MDB_env* e = nullptr;
  int rc = mdb_env_create(&e);
  // A sparse map: the file grows with what is written (1 TiB, as the benchmark's script).
  if (rc == 0) rc = mdb_env_set_mapsize(e, size_t(1) << 40);
  if (rc == 0) rc = mdb_env_open(e, path.c_str(), MDB_NOLOCK, 0644);
  if (rc != 0) {
    if (e) mdb_env_close(e);
    removeLeftovers();
    throw Error(path + ": cannot create LMDB (" + writeError(rc, path) + ")");
  }
  m_env = e;
  try {
    commit(true);
  } catch (...) {
    abandon();
    throw;
  }
}

LmdbWriter::~LmdbWriter() { abandon(); }

void LmdbWriter::abandon() {
  if (m_txn) mdb_txn_abort(static_cast<MDB_txn*>(m_txn));
  m_txn = nullptr;
  if (!m_env) return;  // finished, or never opened
  mdb_env_close(env(m_env));
  m_env = nullptr;
  // Not finished (a full disk, a bad entry): no half-written LMDB is left under the name.
  removeLeftovers();
}

void LmdbWriter::removeLeftovers() {
  std::error_code ec;
  if (m_createdFile) fs::remove(fs::path(m_path) / "data.mdb", ec);
  m_createdFile = false;
  if (m_createdFolder) fs::remove(m_path, ec);  // only when empty
  m_createdFolder = false;
}

void LmdbWriter::commit(bool reopen) {
  if (m_txn) {
    const int rc = mdb_txn_commit(static_cast<MDB_txn*>(m_txn));
    m_txn = nullptr;
    if (rc != 0) throw Error(m_path + ": LMDB commit failed (" + writeError(rc, m_path) + ")");
  }
  if (!reopen) return;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  int rc = mdb_txn_begin(env(m_env), nullptr, 0, &txn);
  if (rc == 0) rc = mdb_dbi_open(txn, nullptr, 0, &dbi);
  if (rc != 0) {
    if (txn) mdb_txn_abort(txn);
    throw Error(m_path + ": cannot write LMDB (" + writeError(rc, m_path) + ")");
  }
  m_txn = txn;
  m_dbi = dbi;
}

void LmdbWriter::put(const std::string& k, const std::string& v) {
  if (!m_txn) throw Error(m_path + ": writer already finished");
  MDB_val mk{k.size(), const_cast<char*>(k.data())};
  MDB_val mv{v.size(), const_cast<char*>(v.data())};
  const int rc = mdb_put(static_cast<MDB_txn*>(m_txn), m_dbi, &mk, &mv, 0);
  if (rc != 0) throw Error(m_path + ": cannot store '" + k + "' (" + mdb_strerror(rc) + ")");
}

void LmdbWriter::addEncoded(const std::string& imageBytes, const std::string& label) {
  put(key("image", m_count), imageBytes);
  put(key("label", m_count), label);
  if (++m_count % 1000 == 0) commit(true);
}

void LmdbWriter::add(const Sample& s) {
  if (!s.boxes.empty()) put(key("boxes", m_count), formatCharBoxes(s.boxes));
  addEncoded(encodeForStorage(s.image), s.label);
}

void LmdbWriter::finish() {
  put("num-samples", std::to_string(m_count));
  commit(false);
  // The data is committed (written and synced): close, and keep what was written.
  mdb_env_close(env(m_env));
  m_env = nullptr;
}

}  // namespace foveal::core::data
