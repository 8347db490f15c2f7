#pragma once
// The zip container of torch.save files (PyTorch >= 1.6): the central directory, zip64 records
// and stored entries, which is all torch.save writes; a compressed entry is refused. Entries are
// offsets into the caller's bytes, so a model of hundreds of megabytes is never copied to be read.
// Torch-free.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace foveal::core {

/// One stored entry: where its bytes lie in the archive and the CRC-32 its directory gives.
struct ZipEntry {
  uint64_t offset = 0, size = 0;
  uint32_t crc = 0;
};

/// The entries of the archive `data`, by name. `origin` names it in errors. Throws Error for a
/// corrupt or truncated directory, an entry outside the file, a compressed entry, or a name
/// listed twice. The CRCs are
/// the caller's to check: it knows which entries it reads.
std::map<std::string, ZipEntry> readZipDirectory(const uint8_t* data, size_t size,
                                                 const std::string& origin);

}  // namespace foveal::core
