#pragma once
// foveal-cli data ...: make-digits, make-words, pack, convert, info, show, glyphs, bench.
#include <string>
#include <vector>

namespace foveal::app {

/// `args` without the leading "data". Returns the exit status; throws core::Error for failures
/// and std::invalid_argument for bad usage (foveal-cli's main prints both).
int runDataCommand(const std::vector<std::string>& args);

/// The usage text of the data commands, for foveal-cli --help.
extern const char* kDataUsage;

}  // namespace foveal::app
