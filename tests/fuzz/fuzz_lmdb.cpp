// libFuzzer harness: LMDB records -> LmdbDataset. LMDB maps its file and trusts its own page
// structure, so the fuzzer varies what the records hold, not the B-tree: the input is split at
// NUL bytes into num-samples, then (label, image bytes) pairs, written with liblmdb, then read.
// One input in four also cuts data.mdb short at a length taken from the input: a truncated file
// must be refused before liblmdb maps it (reading past its end was a SIGBUS).
#include <lmdb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "base/error.h"
#include "data/lmdb_dataset.h"
#include "fuzz_check.h"

namespace {
void put(MDB_txn* txn, MDB_dbi dbi, const std::string& key, const std::string& value) {
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{value.size(), const_cast<char*>(value.data())};
  mdb_put(txn, dbi, &k, &v, 0);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < size && parts.size() < 17; ++i) {
    if (data[i] == 0)
      parts.emplace_back();
    else
      parts.back().push_back(static_cast<char>(data[i]));
  }
  static const std::string dir = "/tmp/foveal-fuzz-lmdb-" + std::to_string(getpid());
  mkdir(dir.c_str(), 0700);
  std::remove((dir + "/data.mdb").c_str());
  std::remove((dir + "/lock.mdb").c_str());
  MDB_env* env = nullptr;
  mdb_env_create(&env);
  mdb_env_set_mapsize(env, 64u << 20);
  if (mdb_env_open(env, dir.c_str(), 0, 0644) != 0) {
    mdb_env_close(env);
    return 0;
  }
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  mdb_txn_begin(env, nullptr, 0, &txn);
  mdb_dbi_open(txn, nullptr, 0, &dbi);
  if (!parts[0].empty() || size % 3 != 0) put(txn, dbi, "num-samples", parts[0]);
  for (size_t i = 1; i + 1 < parts.size(); i += 2) {
    char key[32];
    std::snprintf(key, sizeof key, "%09zu", (i + 1) / 2);
    put(txn, dbi, std::string("label-") + key, parts[i]);
    put(txn, dbi, std::string("image-") + key, parts[i + 1]);
  }
  mdb_txn_commit(txn);
  mdb_env_close(env);
  if (size % 4 == 3) {
    struct stat st {};
    if (stat((dir + "/data.mdb").c_str(), &st) == 0 && st.st_size > 0) {
      uint64_t h = 1469598103934665603ull;  // FNV-1a of the input picks the cut
      for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
      truncate((dir + "/data.mdb").c_str(),
               static_cast<off_t>(h % static_cast<uint64_t>(st.st_size)));
    }
  }
  try {
    foveal::core::data::LmdbDataset ds(dir);
    for (size_t i = 0; i < std::min<size_t>(ds.size(), 8); ++i) {
      try {
        // The cheap label read and the full entry agree, and a decoded image is whole.
        const std::string label = ds.label(i);
        const auto sample = ds.get(i);
        FUZZ_CHECK(sample.label == label, "an entry read twice has the same label");
        FUZZ_CHECK(sample.image.pixels.size() == size_t(sample.image.width) * sample.image.height,
                   "an entry's image has width x height pixels");
      } catch (const foveal::core::Error&) {
      }
    }
  } catch (const foveal::core::Error&) {
  }
  return 0;
}
