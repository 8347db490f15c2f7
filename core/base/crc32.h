#pragma once
// CRC-32 (IEEE 802.3, as zlib and PNG compute it). Chainable: crc32(b, nb, crc32(a, na)) is the
// checksum of a followed by b.
#include <cstddef>
#include <cstdint>

namespace foveal::core {

uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);

}  // namespace foveal::core
