#pragma once
// foveal-cli explain: per-step attribution of a reading (core/trace/attribution.h): a table, the
// JSON, or a folder of overlays.
#include <string>
#include <vector>

namespace foveal::app {

/// `args` without the leading "explain". Returns the exit status; throws core::Error for
/// failures and std::invalid_argument for bad usage.
int runExplainCommand(const std::vector<std::string>& args);

extern const char* kExplainUsage;

}  // namespace foveal::app
