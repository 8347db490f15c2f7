#pragma once
// CRC-32 (IEEE 802.3, as zlib and PNG compute it). Chainable: crc32(b, nb, crc32(a, na)) is the
// checksum of a followed by b.
#include <cstddef>
#include <cstdint>

namespace foveal::core {

uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);

/// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, as iSCSI, ext4 and TFRecord files compute it;
/// "123456789" gives 0xE3069283). Chainable like crc32.
uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0);

}  // namespace foveal::core
