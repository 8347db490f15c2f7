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

/// Synced: fsync before the rename (models, state, reports). CheckedClose: write, close and
/// rename, every step checked, no fsync (a dataset's ten thousand images: an fsync each would
/// cost more than the encoding).
enum class Durability { Synced, CheckedClose };

/// `what` names the file's role in messages ("checkpoint", "training state"). An existing PATH
/// that is not a regular file (a device, a FIFO, a socket, a directory) is refused, never
/// replaced.
void writeFileAtomically(const std::string& path, std::string_view bytes, const std::string& what,
                         Durability durability = Durability::Synced);

/// What PATH is when it exists and is not a regular file ("a FIFO", "a character device", "a
/// directory", ...), following links; nullptr when it is a regular file or does not exist.
const char* specialFileKind(const std::string& path);

/// The temporary name writeFileAtomically uses for `path` in this process.
std::string atomicTempPath(const std::string& path);

}  // namespace foveal::core
