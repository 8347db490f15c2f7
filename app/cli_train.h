#pragma once
// foveal-cli train (presets, new runs, --resume, data-parallel ranks from the environment) and
// foveal-cli bench-train (training images/s of a preset).
#include <string>
#include <vector>

namespace foveal::app {

/// `args` without the leading "train". Returns the exit status; throws core::Error for failures
/// and std::invalid_argument for bad usage.
int runTrainCommand(const std::vector<std::string>& args);
/// `args` without the leading "bench-train".
int runTrainBenchCommand(const std::vector<std::string>& args);

extern const char* kTrainUsage;

}  // namespace foveal::app
