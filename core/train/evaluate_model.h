#pragma once
// The Torch side of evaluation: one recognizer over one dataset, for evaluateModelFile and for the
// trainer's periodic evaluation.
#include <torch/types.h>

#include "data/dataset.h"
#include "model/recognizer.h"
#include "train/evaluation.h"

namespace foveal::core::train {

/// Greedy decoding (argmax regions) in eval mode under an inference guard; the model's train/eval
/// mode is restored afterwards.
DatasetEval evaluateDataset(Recognizer model, const data::DatasetPtr& dataset,
                            const std::string& name, const EvalOptions& options,
                            const torch::Device& device);

}  // namespace foveal::core::train
