#pragma once
// The training state file (latest.state) sealed with a checksum. The state alone resumes a run and
// is the source of latest.fvm when a finished run is resumed, so a flipped byte in it must be
// refused, not trained on and re-saved with a fresh valid checksum. The payload is LibTorch's
// archive; Foveal puts a small header before it:
//   char[8] "FOVEALST", u32 version (1), u32 CRC-32 of the payload, u64 payload size, payload.
// Files written before the header existed (a bare archive, starting "PK") are still read, without
// a check.
#include <string>

namespace foveal::core {

/// The bytes of a state file holding `payload`.
std::string sealTrainingState(const std::string& payload);

/// Reads `path` (a regular file of sane size, core/base/safe_read.h), checks its header and
/// checksum and returns the payload. Throws Error naming the file and what is wrong.
std::string readTrainingState(const std::string& path);

}  // namespace foveal::core
