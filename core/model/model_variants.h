#pragma once
// The named models Foveal knows, declared once and read by bench, presets, tests and scripts:
// the paper's glimpse variants and the field's stage combinations (CRNN, RARE, TRBA). Torch-free.
#include <string>
#include <vector>

#include "model/model_config.h"

namespace foveal::core {

struct ModelVariant {
  std::string name;  ///< e.g. "soft", "sharp-chain-2stn", "crnn"
  std::string summary;
  ModelConfig config;
};

/// The attention glimpses on the paper's stages (none-vgg-bilstm-attention): soft, hard and sharp
/// with every context and 1 or 2 STNs. Digit preprocessing (region scale 1.8; 2.0 with 2 STNs).
std::vector<ModelVariant> glimpseVariants(double width = 1.0);
/// The field's models in the stage vocabulary: crnn (none-vgg-bilstm-ctc), rare
/// (tps-vgg-bilstm-attention, soft), trba (tps-resnet-bilstm-attention, soft), with DTRB's
/// sequence projection and attention cell.
std::vector<ModelVariant> fieldVariants(double width = 1.0);
/// glimpseVariants() then fieldVariants().
std::vector<ModelVariant> modelVariants(double width = 1.0);
/// Throws Error naming the known variants.
ModelVariant modelVariant(const std::string& name, double width = 1.0);

}  // namespace foveal::core
