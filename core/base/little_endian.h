#pragma once
// Little-endian integers in a byte string: the headers of Foveal's own file formats (model
// files, training states) are written and read with these, whatever the host's byte order.
#include <cstddef>
#include <string>

namespace foveal::core {

template <typename T>
void putLittleEndian(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

/// The caller has checked that in holds sizeof(T) bytes at pos.
template <typename T>
T getLittleEndian(const std::string& in, size_t pos) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<T>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  return v;
}

}  // namespace foveal::core
