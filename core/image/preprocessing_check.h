#pragma once
// The one check of a Preprocessing's numbers (input size, region scale), shared by everything that
// takes them from a user: init-model (through ModelConfig::validate, which applies the same
// limits), `data pack` and `data make-*` (through PackedWriter). Before it, `--scale 0` or
// `--scale -1` reached the resize and aborted the process, and `--input-w 100000` wrote a pack no
// model can read.
#include "model/model_config.h"

namespace foveal::core {

constexpr int kMinInputSide = 8;
constexpr int kMaxInputSide = 4096;
constexpr double kMinRegionScale = 1.0;
constexpr double kMaxRegionScale = 8.0;

/// Throws Error ("invalid preprocessing: region scale must be in [1, 8], not 0") when a value is
/// out of range or not finite.
void checkPreprocessing(const Preprocessing& p);

}  // namespace foveal::core
