#pragma once
// Warm start: initialise a new model from a trained one (`foveal-cli train --init-from FILE`).
// Every parameter and buffer of the new model whose name and shape match a tensor of the source
// is copied; the sharpener's encoder, which has the backbone's architecture, is taken from the
// source's own sharpener encoder when it has one and from its backbone otherwise. Everything else
// keeps its fresh initialisation. The caller records the source in config.json, so the run says
// how it started.
#include <string>

#include "model/recognizer.h"

namespace foveal::core::train {

struct WarmStartReport {
  int copied = 0;        ///< tensors taken from the source
  int fromBackbone = 0;  ///< of those, sharpener-encoder tensors taken from the backbone
  int kept = 0;          ///< tensors left as initialised (absent or another shape)
  std::string summary() const;
};

/// Throws Error naming `path` when it cannot be read, or when nothing at all matches (a model of
/// another family: a warm start that changes nothing is a mistake, not a choice).
WarmStartReport warmStart(Recognizer& model, const std::string& path);

}  // namespace foveal::core::train
