#pragma once
// A recognizer: the four stages of the model configuration (docs/ARCHITECTURE.md "The model as
// stages"; see docs/ARCHITECTURE.md) built through the registry: transformation -> features ->
// sequence -> prediction. forward() returns everything the loss and the trace need.
#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>
#include <vector>

#include "model/model_config.h"
#include "model/sharpener.h"
#include "model/stages/stage.h"

namespace foveal::core {

class RecognizerImpl : public torch::nn::Cloneable<RecognizerImpl> {
 public:
  explicit RecognizerImpl(const ModelConfig& config);
  void reset() override;

  /// image [B, 1, H, W] (model input), upsampled [B, 1, H, Wu] (glimpses that need it; may be
  /// undefined otherwise).
  RecognizerOutput forward(const torch::Tensor& image, const torch::Tensor& upsampled,
                           const DecodeOptions& options = {});

  /// Beam search (inference, attention decoders): keeps the `width` most probable token prefixes
  /// per image, a finished one (end token emitted) extended only by the end token at no cost.
  /// Width >= K^(T-1) is exact.
  BeamResult beamSearch(const torch::Tensor& image, const torch::Tensor& upsampled, int width);
  /// Whether a beam width over 1 searches (false: forward() reads greedily; see Prediction).
  bool searchesWithBeam() const;

  /// The prediction stage's loss (pure) and batch figures; readings: class indices per image.
  LossTerms loss(const RecognizerOutput& out, const LossInputs& in) const;
  BatchStats stats(const RecognizerOutput& out, const torch::Tensor& targets,
                   const torch::Tensor& lengths) const;
  std::vector<std::vector<int>> readings(const RecognizerOutput& out) const;

  /// Receptive-field geometry of the feature stage for the configured input size.
  ReceptiveField geometry() const;
  /// The same for an input `inputW` wide (a variable-width model's batch).
  ReceptiveField geometry(int inputW) const;
  int numClasses() const { return m_numClasses; }
  /// The sharp glimpse's sharpener (null for other glimpses and CTC).
  Sharpener sharpener() const;
  FeatureExtractor& features() const { return *m_features.impl; }
  Transformation* transformation() const { return m_transformation.impl; }
  std::shared_ptr<torch::nn::Module> featuresModule() const { return m_features.module; }

  ModelConfig config;

 private:
  void initialiseWeights();
  /// X [B, R * M, D], the regions row by row; with a transformation, `rectified` receives its
  /// output.
  torch::Tensor encode(const torch::Tensor& image, TransformOutput* rectified,
                       torch::Tensor* encoderAttention = nullptr);
  torch::Tensor rectifyUpsampled(const torch::Tensor& upsampled, const TransformOutput& t);

  int m_numClasses = 0;
  Stage<Transformation> m_transformation;
  Stage<FeatureExtractor> m_features;
  Stage<SequenceModel> m_sequence;
  Stage<Prediction> m_prediction;
  std::shared_ptr<torch::nn::Module> m_positions;  ///< CellPositionsImpl, or null
};
TORCH_MODULE(Recognizer);

}  // namespace foveal::core
