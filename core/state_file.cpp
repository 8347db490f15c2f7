#include "state_file.h"

#include <cstdint>
#include <cstring>

#include "crc32.h"
#include "error.h"
#include "safe_read.h"

namespace foveal::core {

namespace {

constexpr char kMagic[8] = {'F', 'O', 'V', 'E', 'A', 'L', 'S', 'T'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8;

template <typename T>
void put(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

template <typename T>
T get(const std::string& in, size_t pos) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<T>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  return v;
}

}  // namespace

std::string sealTrainingState(const std::string& payload) {
  std::string out(kMagic, sizeof kMagic);
  put<uint32_t>(out, kVersion);
  put<uint32_t>(out, crc32(payload.data(), payload.size()));
  put<uint64_t>(out, payload.size());
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
  const auto version = get<uint32_t>(bytes, 8);
  if (version != kVersion)
    throw Error(path + ": training state format version " + std::to_string(version) +
                " (this build reads version " + std::to_string(kVersion) + ")");
  const auto crc = get<uint32_t>(bytes, 12);
  const auto size = get<uint64_t>(bytes, 16);
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
