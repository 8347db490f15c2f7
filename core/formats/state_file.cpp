#include "formats/state_file.h"

#include <cstdint>
#include <cstring>

#include "base/crc32.h"
#include "base/error.h"
#include "base/little_endian.h"
#include "base/safe_read.h"

namespace foveal::core {

namespace {

constexpr char kMagic[8] = {'F', 'O', 'V', 'E', 'A', 'L', 'S', 'T'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8;

}  // namespace

std::string sealTrainingState(const std::string& payload) {
  std::string out(kMagic, sizeof kMagic);
  putLittleEndian<uint32_t>(out, kVersion);
  putLittleEndian<uint32_t>(out, crc32(payload.data(), payload.size()));
  putLittleEndian<uint64_t>(out, payload.size());
  out += payload;
  return out;
}

std::string readTrainingState(const std::string& path) {
  // The signature first: a large file that is no state is refused without being read whole.
  const std::string head = readFileHead(path, "training state", kMaxModelFileBytes, kHeaderSize);
  const bool legacy = head.size() >= 2 && head.compare(0, 2, "PK") == 0;  // before checksums
  if (!legacy && (head.size() < kHeaderSize || std::memcmp(head.data(), kMagic, sizeof kMagic)))
    throw Error(path + ": not a Foveal training state (unknown file signature)");
  std::string bytes = readRegularFile(path, "training state", kMaxModelFileBytes);
  if (legacy) return bytes;
  if (bytes.size() < kHeaderSize || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw Error(path + ": not a Foveal training state (changed while it was read)");
  const auto version = getLittleEndian<uint32_t>(bytes, 8);
  if (version != kVersion)
    throw Error(path + ": training state format version " + std::to_string(version) +
                " (this build reads version " + std::to_string(kVersion) + ")");
  const auto crc = getLittleEndian<uint32_t>(bytes, 12);
  const auto size = getLittleEndian<uint64_t>(bytes, 16);
  if (size != bytes.size() - kHeaderSize)
    throw Error(path + ": truncated or damaged training state (" +
                std::to_string(bytes.size() - kHeaderSize) + " bytes after the header, it says " +
                std::to_string(size) + ")");
  if (crc32(bytes.data() + kHeaderSize, size) != crc)
    throw Error(path + ": corrupt training state (checksum mismatch)");
  bytes.erase(0, kHeaderSize);
  return bytes;
}

}  // namespace foveal::core
