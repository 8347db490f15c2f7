#include "data/packed_dataset.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/crc32.h"
#include "base/error.h"
#include "image/preprocessing_check.h"
#include "model/charset.h"

namespace foveal::core::data {

namespace {

constexpr char kMagic[8] = {'F', 'V', 'P', 'A', 'C', 'K', '0', '1'};
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderSize = 128;
constexpr int kMaxSide = 16384;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // the format is little-endian, as every supported host
  return v;
}
template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

bool PackedDataset::looksPacked(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char magic[8] = {};
  const bool ok = std::fread(magic, 1, 8, f) == 8 && std::memcmp(magic, kMagic, 8) == 0;
  std::fclose(f);
  return ok;
}

PackedDataset::PackedDataset(const std::string& path) : m_path(path) {
  mapFile();
  try {
    const uint64_t count = readHeader();
    checkLabelIndex();
    if (m_boxesOffset) checkBoxIndex(count);
  } catch (...) {
    ::munmap(const_cast<uint8_t*>(m_map), m_mapSize);
    m_map = nullptr;
    throw;
  }
}

void PackedDataset::mapFile() {
  const std::string& path = m_path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open packed dataset (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  m_mapSize = static_cast<size_t>(st.st_size);
  if (m_mapSize < kHeaderSize) {
    ::close(fd);
    throw Error(path + ": not a packed dataset (" + std::to_string(m_mapSize) +
                " bytes, shorter than the 128-byte header)");
  }
  void* map = ::mmap(nullptr, m_mapSize, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) throw Error(path + ": cannot map packed dataset");
  m_map = static_cast<const uint8_t*>(map);
}

// Returns the entry count, once every region the header names is known to lie in the file.
uint64_t PackedDataset::readHeader() {
  const std::string& path = m_path;
  const uint8_t* h = m_map;
  if (std::memcmp(h, kMagic, 8) != 0)
    throw Error(path + ": not a packed dataset (wrong header magic)");
  m_version = load<uint32_t>(h + 8);
  if (m_version < 1 || m_version > kVersion)
    throw Error(path + ": unsupported packed dataset version " + std::to_string(m_version) +
                " (this build reads versions 1 and " + std::to_string(kVersion) + ")");
  if (load<uint32_t>(h + 12) != kHeaderSize)
    throw Error(path + ": corrupt header (header size " + std::to_string(load<uint32_t>(h + 12)) +
                ", the format's is " + std::to_string(kHeaderSize) + ")");
  if (m_version >= 2) {
    uint8_t copy[kHeaderSize];
    std::memcpy(copy, h, kHeaderSize);
    std::memset(copy + 88, 0, 4);
    if (crc32(copy, kHeaderSize) != load<uint32_t>(h + 88))
      throw Error(path + ": corrupt header (checksum mismatch)");
    m_crcOffset = load<uint64_t>(h + 96);
    m_boxesOffset = load<uint64_t>(h + 104);
  }
  const uint64_t count = load<uint64_t>(h + 16);
  const uint32_t w = load<uint32_t>(h + 24), hh = load<uint32_t>(h + 28),
                 uw = load<uint32_t>(h + 32);
  m_pp.regionScale = load<double>(h + 40);
  m_imagesOffset = load<uint64_t>(h + 48);
  m_stride = load<uint64_t>(h + 56);
  m_labelIndexOffset = load<uint64_t>(h + 64);
  m_labelDataOffset = load<uint64_t>(h + 72);
  const uint64_t fileSize = load<uint64_t>(h + 80);
  // Before the offsets: a cut-off file is named as such, not as inconsistent offsets.
  if (fileSize != m_mapSize)
    throw Error(path + ": truncated or damaged body (header says " + std::to_string(fileSize) +
                " bytes, the file has " + std::to_string(m_mapSize) + ")");
  if (w < 1 || hh < 1 || uw < 1 || w > kMaxSide || hh > kMaxSide || uw > kMaxSide ||
      !(m_pp.regionScale > 0 && m_pp.regionScale < 100))
    throw Error(path + ": corrupt header (image sizes " + std::to_string(w) + "x" +
                std::to_string(hh) + ", upsampled width " + std::to_string(uw) + ")");
  m_pp.inputW = static_cast<int>(w);
  m_pp.inputH = static_cast<int>(hh);
  m_upW = static_cast<int>(uw);
  // Every region must lie inside the file, checked without overflow: a crafted header could
  // otherwise point the label reads past the mapping (found by fuzz_packed).
  const uint64_t size = m_mapSize;
  if (m_stride != uint64_t(w) * hh + uint64_t(uw) * hh || count > (uint64_t(1) << 40) ||
      m_imagesOffset < kHeaderSize || m_imagesOffset > size ||
      count > (size - m_imagesOffset) / m_stride ||
      m_labelIndexOffset < m_imagesOffset + count * m_stride || m_labelIndexOffset > size ||
      count + 1 > (size - m_labelIndexOffset) / 8 ||
      m_labelDataOffset < m_labelIndexOffset + 8 * (count + 1) || m_labelDataOffset > size ||
      (m_version >= 2 && (m_crcOffset < m_labelDataOffset || m_crcOffset > size ||
                          2 * count > (size - m_crcOffset) / 4)))
    throw Error(path + ": corrupt header (inconsistent offsets for " + std::to_string(count) +
                " entries)");
  m_count = static_cast<size_t>(count);
  return count;
}

// The label index is small: checked whole now, so later reads cannot run off the mapping.
void PackedDataset::checkLabelIndex() const {
  const uint64_t dataSize = (m_version >= 2 ? m_crcOffset : m_mapSize) - m_labelDataOffset;
  uint64_t prev = 0;
  for (size_t i = 0; i <= m_count; ++i) {
    const uint64_t off = load<uint64_t>(m_map + m_labelIndexOffset + 8 * i);
    if (off < prev || off > dataSize || (i == 0 && off != 0))
      throw Error(m_path + ": entry " + std::to_string(i == 0 ? 0 : i - 1) +
                  ": corrupt label index");
    prev = off;
  }
}

// The boxes section lies after the checksum table; its index is checked now as the labels' is.
void PackedDataset::checkBoxIndex(uint64_t count) {
  const std::string& path = m_path;
  const uint64_t size = m_mapSize;
  if (m_boxesOffset < m_crcOffset + 8 * count || m_boxesOffset > size ||
      count + 1 > (size - m_boxesOffset) / 8)
    throw Error(path + ": corrupt header (character boxes offset)");
  m_boxesDataOffset = m_boxesOffset + 8 * (count + 1);
  const uint64_t total = load<uint64_t>(m_map + m_boxesOffset + 8 * count);
  if (total > (size - m_boxesDataOffset) / 16 ||
      count > (size - m_boxesDataOffset - 16 * total) / 4)
    throw Error(path + ": corrupt character boxes (the section is cut short)");
  m_boxesCrcOffset = m_boxesDataOffset + 16 * total;
  uint64_t before = 0;
  for (size_t i = 0; i <= m_count; ++i) {
    const uint64_t n = load<uint64_t>(m_map + m_boxesOffset + 8 * i);
    if (n < before || n > total || (i == 0 && n != 0))
      throw Error(path + ": entry " + std::to_string(i == 0 ? 0 : i - 1) +
                  ": corrupt character box index");
    before = n;
  }
}

PackedDataset::~PackedDataset() {
  if (m_map) ::munmap(const_cast<uint8_t*>(m_map), m_mapSize);
}

void PackedDataset::check(size_t index) const {
  if (index >= m_count)
    throw Error(m_path + ": entry " + std::to_string(index) + " is out of range (" +
                std::to_string(m_count) + " entries)");
}

const uint8_t* PackedDataset::pixels(size_t index) const {
  check(index);
  return m_map + m_imagesOffset + index * m_stride;
}

void PackedDataset::verify(size_t index) const {
  const uint8_t* p = pixels(index);
  if (m_crcOffset && crc32(p, m_stride) != load<uint32_t>(m_map + m_crcOffset + 8 * index))
    throw Error(entryName(index) + ": corrupt image data (checksum mismatch)");
}

const uint8_t* PackedDataset::inputPixels(size_t index) const { return pixels(index); }

const uint8_t* PackedDataset::upsampledPixels(size_t index) const {
  return pixels(index) + size_t(m_pp.inputW) * m_pp.inputH;
}

std::string PackedDataset::label(size_t index) const {
  check(index);
  const uint64_t a = load<uint64_t>(m_map + m_labelIndexOffset + 8 * index);
  const uint64_t b = load<uint64_t>(m_map + m_labelIndexOffset + 8 * (index + 1));
  std::string label(reinterpret_cast<const char*>(m_map + m_labelDataOffset + a), b - a);
  if (m_crcOffset &&
      crc32(label.data(), label.size()) != load<uint32_t>(m_map + m_crcOffset + 8 * index + 4))
    throw Error(entryName(index) + ": corrupt label (checksum mismatch)");
  const size_t bad = invalidUtf8Offset(label);
  if (bad != std::string::npos)
    throw Error(entryName(index) + ": the label is not valid UTF-8 (byte " +
                std::to_string(bad + 1) + ")");
  return label;
}

Sample PackedDataset::get(size_t index) const {
  verify(index);
  const uint8_t* p = pixels(index);
  Sample s;
  s.image.width = m_pp.inputW;
  s.image.height = m_pp.inputH;
  s.image.pixels.assign(p, p + size_t(m_pp.inputW) * m_pp.inputH);
  s.label = label(index);
  return s;
}

std::vector<Box> PackedDataset::charBoxes(size_t index) const {
  check(index);
  if (!m_boxesOffset) return {};
  const uint64_t a = load<uint64_t>(m_map + m_boxesOffset + 8 * index);
  const uint64_t b = load<uint64_t>(m_map + m_boxesOffset + 8 * (index + 1));
  const uint8_t* p = m_map + m_boxesDataOffset + 16 * a;
  if (crc32(p, 16 * (b - a)) != load<uint32_t>(m_map + m_boxesCrcOffset + 4 * index))
    throw Error(entryName(index) + ": corrupt character boxes (checksum mismatch)");
  std::vector<Box> out;
  for (uint64_t k = 0; k < b - a; ++k) {
    const float x0 = load<float>(p + 16 * k), y0 = load<float>(p + 16 * k + 4),
                x1 = load<float>(p + 16 * k + 8), y1 = load<float>(p + 16 * k + 12);
    // The checksum proves the bytes are the writer's, not that a crafted file wrote sense.
    if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1) ||
        x1 < x0 || y1 < y0)
      throw Error(entryName(index) + ": corrupt character boxes (box " + std::to_string(k + 1) +
                  " is not x0 <= x1, y0 <= y1)");
    out.push_back({x0, y0, double(x1) - x0, double(y1) - y0});
  }
  return out;
}

PreparedSample PackedDataset::prepared(size_t index) const {
  PreparedSample s;
  const Sample in = get(index);  // checks the entry's checksum, which covers both images
  s.input = in.image;
  s.label = in.label;
  s.boxes = charBoxes(index);
  const uint8_t* u = m_map + m_imagesOffset + index * m_stride + size_t(m_pp.inputW) * m_pp.inputH;
  s.upsampled.width = m_upW;
  s.upsampled.height = m_pp.inputH;
  s.upsampled.pixels.assign(u, u + size_t(m_upW) * m_pp.inputH);
  return s;
}

std::string PackedDataset::entryName(size_t index) const {
  return m_path + ": entry " + std::to_string(index);
}

std::string PackedDataset::describe() const {
  char scale[32];
  std::snprintf(scale, sizeof scale, "%g", m_pp.regionScale);
  return "packed " + m_path + " (" + std::to_string(m_count) + " entries, " +
         std::to_string(m_pp.inputW) + "x" + std::to_string(m_pp.inputH) + " + " +
         std::to_string(m_upW) + "x" + std::to_string(m_pp.inputH) + " upsampled, scale " + scale +
         ")";
}

PackedWriter::PackedWriter(const std::string& path, const Preprocessing& pp)
    : m_path(path), m_partPath(path + ".part"), m_pp(pp), m_upW(0) {
  checkPreprocessing(pp);
  m_upW = pp.upsampledW();
  // The finished part is renamed over the path: never over a device or a FIFO.
  if (const char* kind = specialFileKind(path))
    throw Error(path + ": is " + kind +
                ", not a regular file; refusing to write the packed "
                "dataset over it (choose another name)");
  m_file = std::fopen(m_partPath.c_str(), "wb");
  if (!m_file) throw Error(m_partPath + ": cannot create (" + std::strerror(errno) + ")");
  const std::vector<uint8_t> zeros(kHeaderSize, 0);
  std::fwrite(zeros.data(), 1, zeros.size(), m_file);
}

PackedWriter::~PackedWriter() {
  if (m_file) {
    std::fclose(m_file);
    std::remove(m_partPath.c_str());
  }
}

void PackedWriter::add(const PreparedSample& s) {
  if (!m_file) throw Error(m_path + ": writer already finished");
  const std::string entry = m_path + ": entry " + std::to_string(m_labels.size());
  if (s.input.width != m_pp.inputW || s.input.height != m_pp.inputH || s.upsampled.width != m_upW ||
      s.upsampled.height != m_pp.inputH)
    throw Error(entry + ": image sizes " + std::to_string(s.input.width) + "x" +
                std::to_string(s.input.height) + " / " + std::to_string(s.upsampled.width) + "x" +
                std::to_string(s.upsampled.height) + " do not match the packed preprocessing");
  if (s.label.empty()) throw Error(entry + ": empty label");
  const size_t bad = invalidUtf8Offset(s.label);
  if (bad != std::string::npos)
    throw Error(entry + ": the label is not valid UTF-8 (byte " + std::to_string(bad + 1) + ")");
  if (std::fwrite(s.input.pixels.data(), 1, s.input.pixels.size(), m_file) !=
          s.input.pixels.size() ||
      std::fwrite(s.upsampled.pixels.data(), 1, s.upsampled.pixels.size(), m_file) !=
          s.upsampled.pixels.size())
    throw Error(m_partPath + ": cannot write the packed dataset (" + std::strerror(errno) + ")");
  m_crcs.push_back(crc32(s.upsampled.pixels.data(), s.upsampled.pixels.size(),
                         crc32(s.input.pixels.data(), s.input.pixels.size())));
  m_crcs.push_back(crc32(s.label.data(), s.label.size()));
  m_labels.push_back(s.label);
  m_boxes.push_back(s.boxes);
}

namespace {

// The character boxes' part: an index of first boxes, the boxes (x0, y0, x1, y1 as floats) and a
// CRC-32 of each entry's boxes; empty when no entry has any (a file without is what earlier
// builds wrote).
std::vector<uint8_t> packBoxes(const std::vector<std::vector<Box>>& entries) {
  std::vector<uint8_t> boxes;
  bool anyBoxes = false;
  for (const auto& b : entries) anyBoxes = anyBoxes || !b.empty();
  if (!anyBoxes) return boxes;
  const uint64_t count = entries.size();
  uint64_t total = 0;
  for (const auto& b : entries) total += b.size();
  boxes.resize(8 * (count + 1) + 16 * total + 4 * count);
  uint8_t* idx = boxes.data();
  uint8_t* data = idx + 8 * (count + 1);
  uint8_t* crc = data + 16 * total;
  uint64_t n = 0;
  for (size_t i = 0; i < count; ++i) {
    store<uint64_t>(idx + 8 * i, n);
    uint8_t* first = data + 16 * n;
    for (const auto& b : entries[i]) {
      store<float>(data + 16 * n, static_cast<float>(b.x));
      store<float>(data + 16 * n + 4, static_cast<float>(b.y));
      store<float>(data + 16 * n + 8, static_cast<float>(b.x + b.w));
      store<float>(data + 16 * n + 12, static_cast<float>(b.y + b.h));
      ++n;
    }
    store<uint32_t>(crc + 4 * i, crc32(first, 16 * entries[i].size()));
  }
  store<uint64_t>(idx + 8 * count, n);
  return boxes;
}

}  // namespace

void PackedWriter::finish() {
  if (!m_file) throw Error(m_path + ": writer already finished");
  const uint64_t stride = uint64_t(m_pp.inputW) * m_pp.inputH + uint64_t(m_upW) * m_pp.inputH;
  const uint64_t count = m_labels.size();
  const uint64_t indexOffset = kHeaderSize + count * stride;
  const uint64_t dataOffset = indexOffset + 8 * (count + 1);
  std::vector<uint8_t> index(8 * (count + 1));
  uint64_t off = 0;
  std::string data;
  for (size_t i = 0; i < count; ++i) {
    store<uint64_t>(index.data() + 8 * i, off);
    off += m_labels[i].size();
    data += m_labels[i];
  }
  store<uint64_t>(index.data() + 8 * count, off);
  const uint64_t crcOffset = dataOffset + data.size();
  std::vector<uint8_t> crcs(4 * m_crcs.size());
  for (size_t i = 0; i < m_crcs.size(); ++i) store<uint32_t>(crcs.data() + 4 * i, m_crcs[i]);
  std::vector<uint8_t> h(kHeaderSize, 0);
  std::memcpy(h.data(), kMagic, 8);
  store<uint32_t>(h.data() + 8, kVersion);
  store<uint32_t>(h.data() + 12, kHeaderSize);
  store<uint64_t>(h.data() + 16, count);
  store<uint32_t>(h.data() + 24, static_cast<uint32_t>(m_pp.inputW));
  store<uint32_t>(h.data() + 28, static_cast<uint32_t>(m_pp.inputH));
  store<uint32_t>(h.data() + 32, static_cast<uint32_t>(m_upW));
  store<double>(h.data() + 40, m_pp.regionScale);
  store<uint64_t>(h.data() + 48, kHeaderSize);
  store<uint64_t>(h.data() + 56, stride);
  store<uint64_t>(h.data() + 64, indexOffset);
  store<uint64_t>(h.data() + 72, dataOffset);
  // Character boxes, only when some entry has them (a file without is what earlier builds wrote).
  const std::vector<uint8_t> boxes = packBoxes(m_boxes);
  if (!boxes.empty()) store<uint64_t>(h.data() + 104, crcOffset + crcs.size());
  store<uint64_t>(h.data() + 80, crcOffset + crcs.size() + boxes.size());
  store<uint64_t>(h.data() + 96, crcOffset);
  store<uint32_t>(h.data() + 88, crc32(h.data(), h.size()));
  // An empty part is skipped: fwrite of an empty vector's null data() is undefined (UBSan).
  auto put = [this](const auto& bytes) {
    return bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), m_file) == bytes.size();
  };
  errno = 0;
  bool ok = put(index) && put(data) && put(crcs) && put(boxes) &&
            std::fseek(m_file, 0, SEEK_SET) == 0 &&
            std::fwrite(h.data(), 1, h.size(), m_file) == h.size() && std::fflush(m_file) == 0;
  int err = ok ? 0 : errno;
  if (std::fclose(m_file) != 0 && ok) {  // the buffered bytes fail here on a full disk
    ok = false;
    err = errno;
  }
  m_file = nullptr;
  if (!ok) {
    std::remove(m_partPath.c_str());
    throw Error(m_partPath + ": cannot write the packed dataset (" +
                (err ? std::strerror(err) : "write failed") + ")");
  }
  std::error_code ec;
  std::filesystem::rename(m_partPath, m_path, ec);
  if (ec) throw Error(m_path + ": cannot move finished file into place (" + ec.message() + ")");
}

}  // namespace foveal::core::data
