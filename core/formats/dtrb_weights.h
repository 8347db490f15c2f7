#pragma once
// The DTRB importer's pieces that other formats built on DTRB's modules reuse (EasyOCR's
// recognisers are DTRB models under other names and sizes): the architecture from keys and
// shapes, and the weights copied key by key into a Foveal model of a given configuration.
#include <string>
#include <vector>

#include "formats/checkpoint.h"
#include "formats/dtrb_import.h"
#include "formats/torch_file.h"

namespace foveal::core {

/// The architecture of a state dict's DTRB keys ("module." prefix or not); throws Error naming
/// `origin`, the key, its shape and what was expected.
DtrbArchitecture dtrbArchitecture(const StoredStateDict& sd, const std::string& origin);

/// Foveal's stages for `a` with DTRB's sizes (transformation, features, sequence, prediction,
/// widths, the DTRB cell, soft attention); the caller adds the charset, length and
/// preprocessing (DTRB's options, or strhub's hyper-parameters for its TRBA).
ModelConfig dtrbStages(const DtrbArchitecture& a);

/// A model of `config` (which must have DTRB's stages and sizes for `a`) with every key of `sd`
/// copied into its one parameter; every parameter filled, shapes equal (Error otherwise).
/// `o` gives the input size the TPS grid buffers are checked against. Eval mode. Non-finite
/// weights and integer or Bool tensors where weights belong are refused by key; half, bfloat16
/// and double tensors are converted, as load_state_dict does, and said in `notes` when given.
LoadedModel importDtrbWeights(const StoredStateDict& sd, const DtrbArchitecture& a,
                              const ModelConfig& config, const std::string& path,
                              const DtrbOptions& o, std::vector<std::string>* notes = nullptr);

}  // namespace foveal::core
