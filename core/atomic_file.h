#pragma once
// Writing a file so that a crash, a kill or a full disk never leaves a half-written one in place:
// the bytes go to PATH.tmp, are flushed to the disk (fsync), and only then renamed over PATH.
// Failures throw Error naming PATH, what it is, and the system's reason ("No space left on
// device", "Permission denied"); the temporary file is removed and PATH keeps its old content.
#include <string>
#include <string_view>

namespace foveal::core {

/// `what` names the file's role in messages ("checkpoint", "training state").
void writeFileAtomically(const std::string& path, std::string_view bytes, const std::string& what);

}  // namespace foveal::core
