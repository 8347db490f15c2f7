#pragma once
// Writing a file so that a crash, a kill or a full disk never leaves a half-written one in place:
// the bytes go to PATH.tmp.PID, are flushed to the disk (fsync), and only then renamed over PATH.
// The process id in the temporary name keeps two processes that write the same file from writing
// into one temporary file (the loser's rename then replaces a whole file, never half of one).
// Failures throw Error naming PATH, what it is, and the system's reason ("No space left on
// device", "Permission denied"); the temporary file is removed and PATH keeps its old content.
#include <string>
#include <string_view>

namespace foveal::core {

/// `what` names the file's role in messages ("checkpoint", "training state").
void writeFileAtomically(const std::string& path, std::string_view bytes, const std::string& what);

/// The temporary name writeFileAtomically uses for `path` in this process.
std::string atomicTempPath(const std::string& path);

}  // namespace foveal::core
