#pragma once
// foveal-cli eval: word accuracy, normalised edit distance and attention entropy of a model on
// datasets, per dataset and label length; the paper's Table 1 for the digit protocol.
#include <string>
#include <vector>

namespace foveal::app {

/// `args` without the leading "eval". Returns the exit status; throws core::Error for failures
/// and std::invalid_argument for bad usage.
int runEvalCommand(const std::vector<std::string>& args);

extern const char* kEvalUsage;

}  // namespace foveal::app
