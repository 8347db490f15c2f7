#include "image/grey_image.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "base/crc32.h"
#include "base/error.h"
#include "base/safe_read.h"
#include "image/colour_png.h"

namespace foveal::core {

namespace imaging {
// Implemented in imaging/opencv_codec.cpp when built with OpenCV.
GreyImage decodeWithOpenCv(const std::vector<uint8_t>& bytes, const std::string& origin,
                           bool keepColour);
}  // namespace imaging

namespace {

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

void chunk(std::vector<uint8_t>& out, const char* type, const std::vector<uint8_t>& data) {
  put32(out, static_cast<uint32_t>(data.size()));
  const size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  put32(out, crc32(out.data() + start, out.size() - start));
}

bool isPnm(const std::vector<uint8_t>& b) {
  return b.size() >= 2 && b[0] == 'P' && (b[1] == '2' || b[1] == '5' || b[1] == '6');
}

// Binary/ASCII PGM and binary PPM: enough for builds without OpenCV.
GreyImage decodePnm(const std::vector<uint8_t>& b, const std::string& origin, bool keepColour) {
  size_t pos = 2;
  auto next = [&]() -> long {
    while (pos < b.size()) {
      if (b[pos] == '#') {
        while (pos < b.size() && b[pos] != '\n') ++pos;
      } else if (std::isspace(b[pos])) {
        ++pos;
      } else {
        break;
      }
    }
    long v = 0;
    bool any = false;
    while (pos < b.size() && std::isdigit(b[pos])) {
      v = v * 10 + (b[pos++] - '0');
      any = true;
      if (v > 1 << 20) break;
    }
    if (!any) throw Error(origin + ": corrupt PNM header");
    return v;
  };
  const char kind = static_cast<char>(b[1]);
  const long w = next(), h = next(), maxv = next();
  if (w <= 0 || h <= 0 || w > 65535 || h > 65535 || maxv <= 0 || maxv > 255)
    throw Error(origin + ": unsupported PNM size or depth");
  GreyImage img{static_cast<int>(w), static_cast<int>(h), {}};
  img.pixels.resize(static_cast<size_t>(w * h));
  if (kind == '2') {
    for (auto& p : img.pixels) p = static_cast<uint8_t>(next() * 255 / maxv);
    return img;
  }
  ++pos;  // single whitespace after maxval
  const size_t channels = kind == '6' ? 3 : 1;
  if (b.size() < pos + img.pixels.size() * channels) throw Error(origin + ": truncated image data");
  for (size_t i = 0; i < img.pixels.size(); ++i) {
    const uint8_t* px = &b[pos + i * channels];
    const int v = channels == 3 ? (299 * px[0] + 587 * px[1] + 114 * px[2]) / 1000 : px[0];
    img.pixels[i] = static_cast<uint8_t>(v * 255 / maxv);
  }
  if (channels == 3 && keepColour) {
    img.rgb.resize(img.pixels.size() * 3);
    for (size_t i = 0; i < img.rgb.size(); ++i)
      img.rgb[i] = static_cast<uint8_t>(b[pos + i] * 255 / maxv);
  }
  return img;
}

// Formats handed to OpenCV, recognised by exactly the signature OpenCV's own decoder for them
// checks, so imdecode picks that decoder. A buffer no early decoder claims falls through to
// Debian's DICOM reader (GDCM), which aborts the process on malformed input (found twice by
// tests/fuzz/fuzz_image; inputs kept in tests/data/fuzz-regressions).
[[maybe_unused]] bool hasCodecSignature(const std::vector<uint8_t>& b) {
  auto starts = [&](std::initializer_list<int> sig) {
    if (b.size() < sig.size()) return false;
    size_t i = 0;
    for (int c : sig)
      if (b[i++] != static_cast<uint8_t>(c)) return false;
    return true;
  };
  const bool netpbm = b.size() >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6' &&
                      std::isspace(static_cast<unsigned char>(b[2]));
  return starts({0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}) ||             // PNG
         starts({0xFF, 0xD8, 0xFF}) ||                                        // JPEG
         starts({'B', 'M'}) ||                                                // BMP
         starts({'I', 'I', 0x2A, 0x00}) || starts({'M', 'M', 0x00, 0x2A}) ||  // TIFF
         netpbm;
}

}  // namespace

bool hasImageCodecs() {
#ifdef FOVEAL_WITH_OPENCV
  return true;
#else
  return false;
#endif
}

GreyImage decodeImage(const std::vector<uint8_t>& bytes, const std::string& origin,
                      bool keepColour) {
  if (bytes.empty()) throw Error(origin + ": empty image file");
  if (isPnm(bytes)) return decodePnm(bytes, origin, keepColour);
#ifdef FOVEAL_WITH_OPENCV
  if (!hasCodecSignature(bytes))
    throw Error(origin + ": unsupported image format (not PNG, JPEG, BMP, TIFF or PNM)");
  return imaging::decodeWithOpenCv(bytes, origin, keepColour);
#else
  throw Error(origin + ": this build has no OpenCV and reads only PGM/PPM images");
#endif
}

GreyImage readImage(const std::string& path, bool keepColour) {
  const std::string bytes = readRegularFile(path, "image", kMaxImageFileBytes);
  return decodeImage(std::vector<uint8_t>(bytes.begin(), bytes.end()), path, keepColour);
}

namespace {
// An 8-bit PNG of `channels` (1: grey, 3: RGB) interleaved planes.
std::vector<uint8_t> encodePlanes(const GreyImage& image, const std::vector<uint8_t>& data,
                                  int channels) {
  if (image.empty()) throw Error("cannot encode an empty image as PNG");
  const size_t rowBytes = static_cast<size_t>(image.width) * channels;
  if (data.size() != rowBytes * image.height)
    throw Error("cannot encode a PNG: the pixels do not fill the image");
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> ihdr;
  put32(ihdr, static_cast<uint32_t>(image.width));
  put32(ihdr, static_cast<uint32_t>(image.height));
  // 8 bits, grey (0) or RGB (2), no interlace.
  ihdr.insert(ihdr.end(), {8, static_cast<uint8_t>(channels == 3 ? 2 : 0), 0, 0, 0});
  chunk(out, "IHDR", ihdr);

  // Raw scanlines (filter 0) in stored (uncompressed) deflate blocks: no zlib needed.
  std::vector<uint8_t> raw;
  raw.reserve(static_cast<size_t>(image.height) * (rowBytes + 1));
  for (int y = 0; y < image.height; ++y) {
    raw.push_back(0);
    raw.insert(raw.end(), data.begin() + static_cast<long>(y * rowBytes),
               data.begin() + static_cast<long>((y + 1) * rowBytes));
  }
  std::vector<uint8_t> z = {0x78, 0x01};
  for (size_t off = 0; off < raw.size() || off == 0;) {
    const size_t n = std::min<size_t>(65535, raw.size() - off);
    const bool last = off + n >= raw.size();
    z.push_back(last ? 1 : 0);
    z.push_back(static_cast<uint8_t>(n & 0xFF));
    z.push_back(static_cast<uint8_t>(n >> 8));
    z.push_back(static_cast<uint8_t>(~n & 0xFF));
    z.push_back(static_cast<uint8_t>((~n >> 8) & 0xFF));
    z.insert(z.end(), raw.begin() + static_cast<long>(off),
             raw.begin() + static_cast<long>(off + n));
    off += n;
    if (last) break;
  }
  uint32_t a = 1, b = 0;
  for (uint8_t v : raw) {
    a = (a + v) % 65521;
    b = (b + a) % 65521;
  }
  put32(z, (b << 16) | a);
  chunk(out, "IDAT", z);
  chunk(out, "IEND", {});
  return out;
}
}  // namespace

std::vector<uint8_t> encodePng(const GreyImage& image) {
  return encodePlanes(image, image.pixels, 1);
}

namespace {
void writeBytes(const std::vector<uint8_t>& bytes, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path + ": cannot write PNG (folder missing or not writable)");
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(path + ": write failed (disk full?)");
}
}  // namespace

void writePng(const GreyImage& image, const std::string& path) {
  writeBytes(encodePng(image), path);
}

void writeColourPng(const GreyImage& image, const std::string& path) {
  writeBytes(encodePlanes(image, image.rgb, 3), path);
}

}  // namespace foveal::core
