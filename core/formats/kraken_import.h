#pragma once
// kraken's recognition models (kraken_import.cpp is the format "kraken" of model_format.h).
#include <string>

#include "model/model_config.h"

namespace foveal::core {

/// The configuration Foveal reads a kraken network with: features "vgsl" from the spec, the
/// spec's output layer as the CTC Linear, classes from the codec (kraken's labels; a class no
/// single character reads gets a private-use placeholder), kraken's line input. Throws Error
/// naming `origin` when the spec or the codec is refused. `notes` gets what was assumed.
ModelConfig krakenModelConfig(const std::string& vgsl, const std::string& codecJson,
                              bool legacyPolygons, int padding, const std::string& origin,
                              std::vector<std::string>* notes = nullptr);

/// kraken's default recognition spec (kraken/configs/vgsl.py) with an output layer of
/// `classes` (the codec's labels and the blank): what `bench --kraken-page` times.
std::string krakenDefaultSpec(int classes);

}  // namespace foveal::core
