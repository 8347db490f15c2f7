#pragma once
// Weight averaging: the element-wise mean of several checkpoints of one model (the same stages,
// sizes and charset), written as a new model file. Averaging the checkpoints a run took at the
// end of its training (its history/ folder) smooths out the swing of single checkpoints
// (Izmailov et al. 2018, "Averaging Weights Leads to Wider Optima and Better Generalization").
// Torch-free.
#include <cstdint>
#include <string>
#include <vector>

namespace foveal::core::train {

struct AverageReport {
  std::vector<std::string> files;   ///< the inputs, in the order given
  std::vector<int64_t> iterations;  ///< each input's training iteration (-1: not recorded)
  int64_t tensors = 0;              ///< floating-point parameters and buffers averaged
  int64_t kept = 0;                 ///< integer buffers taken from the first file
  std::string description;          ///< the model, as ModelConfig::describe says it
};

/// Reads every file in `inputs` (Foveal model files), checks that they are one model (the same
/// configuration, hence the same tensors; an Error names the file that differs otherwise), and
/// writes the mean of their floating-point parameters and buffers to `output` (integer buffers,
/// such as batch-norm's counters, from the first file). The new file's metadata lists the inputs
/// and their iterations. Needs at least one input.
AverageReport averageModelFiles(const std::vector<std::string>& inputs, const std::string& output);

}  // namespace foveal::core::train
