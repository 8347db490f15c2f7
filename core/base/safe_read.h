#pragma once
// Reading a file a user named, without trusting what the name points at: `stat` first, refuse a
// directory, a FIFO, a device or a file larger than the limit for its kind, and only then read.
// A FIFO or /dev/zero given as an image or a model would otherwise block or grow memory without
// end, and a directory made the C++ streams throw std::ios_failure past every handler.
// Errors are Error naming the file, its role and what is wrong.
#include <cstdint>
#include <string>

namespace foveal::core {

/// Size limits per kind of file (documented in docs/manual/datasets.md, "Limits").
constexpr uint64_t kMaxImageFileBytes = uint64_t(256) << 20;  ///< one image: 256 MiB
constexpr uint64_t kMaxModelFileBytes = uint64_t(4) << 30;    ///< a model or training state
constexpr uint64_t kMaxTextFileBytes = uint64_t(1) << 30;     ///< gt.txt, a word list: 1 GiB
constexpr uint64_t kMaxSmallFileBytes = uint64_t(64) << 20;   ///< config.json and the like

/// Checks that `path` is a regular file of at most `maxBytes`; returns its size. `what` names the
/// file's role in messages ("image", "model file"). Throws Error otherwise.
uint64_t checkRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes);

/// Reads the whole regular file `path` after checkRegularFile. Never blocks on a FIFO and never
/// reads more than `maxBytes`, even when the file grows while it is read.
std::string readRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes);

/// The first `n` bytes (fewer when the file is shorter) of the regular file `path`, after
/// checkRegularFile: a reader checks a file's signature and header before it reads the rest.
std::string readFileHead(const std::string& path, const std::string& what, uint64_t maxBytes,
                         size_t n);

}  // namespace foveal::core
