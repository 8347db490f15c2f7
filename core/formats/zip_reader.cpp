#include "formats/zip_reader.h"

#include <cstring>

#include "base/error.h"

namespace foveal::core {

namespace {

// Little-endian host (x86-64, aarch64); checked by the build.
uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
uint64_t u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr size_t kEndOfDirectorySize = 22, kDirectoryEntrySize = 46, kLocalHeaderSize = 30;

// Every read below checks its bounds against n first: the archive may be anything.
struct Archive {
  const uint8_t* b;
  size_t n;
  const std::string& origin;

  Error corrupt(const std::string& what) const {
    return Error(origin + ": corrupt zip archive (" + what + ")");
  }
};

struct Directory {
  uint64_t count = 0, size = 0, offset = 0;
};

// The end-of-directory record is the last thing in the file, followed by a comment of at most
// 65,535 bytes: search backwards over that window only.
size_t findEndOfDirectory(const Archive& a) {
  const size_t n = a.n;
  if (n < kEndOfDirectorySize) throw a.corrupt("too short");
  for (size_t i = n - kEndOfDirectorySize + 1; i-- > 0 && n - i <= kEndOfDirectorySize + 65535;)
    if (u32(&a.b[i]) == kEndOfDirectory) return i;
  throw a.corrupt("no end-of-directory record: truncated?");
}

Directory findDirectory(const Archive& a) {
  const uint8_t* b = a.b;
  const size_t n = a.n;
  const size_t eocd = findEndOfDirectory(a);
  Directory d{u16(&b[eocd + 10]), u32(&b[eocd + 12]), u32(&b[eocd + 16])};
  // A count or offset too large for the classic record sits in the zip64 record, found through
  // the locator just before it.
  if ((d.count == 0xFFFF || d.offset == 0xFFFFFFFF) && eocd >= 20 &&
      u32(&b[eocd - 20]) == kZip64Locator) {
    const uint64_t z = u64(&b[eocd - 20 + 8]);
    if (n < 56 || z > n - 56 || u32(&b[z]) != kZip64EndOfDirectory)
      throw a.corrupt("bad zip64 end-of-directory record");
    d.count = u64(&b[z + 32]);
    d.size = u64(&b[z + 40]);
    d.offset = u64(&b[z + 48]);
  }
  if (d.offset > n || d.size > n - d.offset)
    throw a.corrupt("directory outside the file: truncated?");
  return d;
}

// The zip64 extra field (id 1) holds the 64-bit values of the fields set to 0xFFFFFFFF, in this
// order; `begin`..`end` is the entry's extra data.
void readZip64Extra(const Archive& a, size_t begin, size_t end, uint64_t& usize, uint64_t& csize,
                    uint64_t& local) {
  for (size_t x = begin; x + 4 <= end;) {
    const uint16_t id = u16(&a.b[x]), len = u16(&a.b[x + 2]);
    if (x + 4 + len > end) break;
    if (id == 0x0001) {
      size_t y = x + 4;
      auto take = [&](uint64_t& field) {
        if (field == 0xFFFFFFFF && y + 8 <= x + 4 + len) {
          field = u64(&a.b[y]);
          y += 8;
        }
      };
      take(usize);
      take(csize);
      take(local);
    }
    x += 4 + len;
  }
}

// Reads the directory entry at p into `entries` and returns where the next one starts.
size_t readEntry(const Archive& a, size_t p, std::map<std::string, ZipEntry>& entries) {
  const uint8_t* b = a.b;
  const size_t n = a.n;
  if (p + kDirectoryEntrySize > n || u32(&b[p]) != kDirectoryEntry)
    throw a.corrupt("bad directory entry");
  const uint16_t method = u16(&b[p + 10]);
  const uint32_t crc = u32(&b[p + 16]);
  uint64_t csize = u32(&b[p + 20]), usize = u32(&b[p + 24]);
  const size_t nameLen = u16(&b[p + 28]), extraLen = u16(&b[p + 30]), commentLen = u16(&b[p + 32]);
  uint64_t local = u32(&b[p + 42]);
  const size_t nameAt = p + kDirectoryEntrySize;
  if (nameAt + nameLen + extraLen + commentLen > n)
    throw a.corrupt("directory entry runs past the end");
  const std::string name(reinterpret_cast<const char*>(&b[nameAt]), nameLen);
  readZip64Extra(a, nameAt + nameLen, nameAt + nameLen + extraLen, usize, csize, local);
  if (method != 0)
    throw Error(a.origin + ": zip entry '" + name + "' is compressed (method " +
                std::to_string(method) + "); torch.save stores its entries uncompressed");
  if (csize != usize) throw a.corrupt("entry '" + name + "' sizes disagree");
  if (n < kLocalHeaderSize || local > n - kLocalHeaderSize || u32(&b[local]) != kLocalHeader)
    throw a.corrupt("entry '" + name + "' has no local header");
  // The local header repeats the name and has an extra field of its own, not always the same.
  const uint64_t data = local + kLocalHeaderSize + u16(&b[local + 26]) + u16(&b[local + 28]);
  if (data > n || usize > n - data)
    throw a.corrupt("entry '" + name + "' runs past the end: truncated?");
  // A name listed twice is refused: torch.load reads the first entry of that name, a map keeps the
  // last, so one file could look harmless here and malicious to torch (a parser differential).
  if (!entries.emplace(name, ZipEntry{data, usize, crc}).second)
    throw Error(a.origin + ": zip entry '" + name +
                "' is listed twice in the directory (torch.load would read the first, another "
                "reader the last); refusing the ambiguous file");
  return nameAt + nameLen + extraLen + commentLen;
}

}  // namespace

std::map<std::string, ZipEntry> readZipDirectory(const uint8_t* data, size_t size,
                                                 const std::string& origin) {
  const Archive archive{data, size, origin};
  const Directory directory = findDirectory(archive);
  std::map<std::string, ZipEntry> entries;
  size_t p = directory.offset;
  for (uint64_t e = 0; e < directory.count; ++e) p = readEntry(archive, p, entries);
  return entries;
}

}  // namespace foveal::core
