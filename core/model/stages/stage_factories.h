#pragma once
// Builds the stages named in a ModelConfig through the registry (stage_registry.cpp).
#include <torch/nn/module.h>

#include "model/model_config.h"
#include "model/stages/stage.h"

namespace foveal::core {

/// What a factory gets: the configuration and the sizes of the stage before it.
struct StageContext {
  const ModelConfig& config;
  int64_t inputDim = 0;  ///< prediction: D of x; glimpse: D of x
  int64_t hidden = 0;    ///< glimpse: the decoder's state size
};

using StageFactory = std::shared_ptr<torch::nn::Module> (*)(const StageContext&);

/// Each returns an empty Stage for the "none" options.
Stage<Transformation> buildTransformation(const StageContext& context);
Stage<FeatureExtractor> buildFeatures(const StageContext& context);
Stage<SequenceModel> buildSequence(const StageContext& context);
Stage<Prediction> buildPrediction(const StageContext& context);
Stage<Glimpse> buildGlimpse(const StageContext& context);

}  // namespace foveal::core
