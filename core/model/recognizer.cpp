#include "model/recognizer.h"

#include <torch/nn/init.h>

#include "base/error.h"
#include "model/stages/attention_prediction.h"
#include "model/stages/cell_positions.h"
#include "model/stages/sharp_glimpse.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

RecognizerImpl::RecognizerImpl(const ModelConfig& config_) : config(config_) {
  config.validate();
  reset();
}

void RecognizerImpl::reset() {
  m_numClasses = config.makeCharset().size();
  const StageContext context{config};
  // Registration order fixes the parameter order (and so the initialisation draws): stage by
  // stage, as the data flows.
  m_transformation = buildTransformation(context);
  if (m_transformation) register_module("transformation", m_transformation.module);
  m_features = buildFeatures(context);
  register_module("features", m_features.module);
  m_sequence = buildSequence(context);
  if (m_sequence) register_module("sequence", m_sequence.module);
  if (config.positions == "sine2d")
    m_positions = register_module("positions", CellPositions(config.featureDim()).ptr());
  m_prediction = buildPrediction(StageContext{config, config.featureDim(), config.hidden()});
  register_module("prediction", m_prediction.module);
  initialiseWeights();
}

void RecognizerImpl::initialiseWeights() {
  // As deep-text-recognition-benchmark initialises its models: He-normal weights, zero biases,
  // BN scales at 1; the STN and TPS regressors (fc2) keep their initial transform. LibTorch's
  // default (Kaiming-uniform with a = sqrt(5)) shrinks the signal through the seven VGG
  // convolutions until the output barely depends on the image, and training then sits on a long
  // plateau.
  torch::NoGradGuard guard;
  for (auto& p : named_parameters()) {
    const std::string& name = p.key();
    if (name.find(".fc2.") != std::string::npos &&
        (name.find("stns.") != std::string::npos || name.rfind("transformation.", 0) == 0))
      continue;
    if (name.rfind("positions.", 0) == 0) continue;  // the gain starts at 0
    auto& t = p.value();
    const std::string leaf = name.substr(name.rfind('.') + 1);  // "bias", "bias_ih_l0", ...
    const bool bias = leaf.rfind("bias", 0) == 0;
    if (bias) {
      t.zero_();
    } else if (t.dim() >= 2) {
      torch::nn::init::kaiming_normal_(t, 0.0, torch::kFanIn, torch::kReLU);
    } else {
      t.fill_(1.0);  // BN scale
    }
  }
}

ReceptiveField RecognizerImpl::geometry() const {
  return m_features->geometry(config.preprocessing.inputW, config.preprocessing.inputH);
}

ReceptiveField RecognizerImpl::geometry(int inputW) const {
  return m_features->geometry(inputW, config.preprocessing.inputH);
}

Sharpener RecognizerImpl::sharpener() const {
  auto* attention = m_prediction.module->as<AttentionPredictionImpl>();
  if (!attention) return Sharpener(nullptr);
  auto* sharp = attention->glimpseModule()->as<SharpGlimpseImpl>();
  return sharp ? sharp->sharpener() : Sharpener(nullptr);
}

torch::Tensor RecognizerImpl::encode(const torch::Tensor& image, TransformOutput* rectified,
                                     torch::Tensor* encoderAttention) {
  auto input = image;
  if (m_transformation) {
    *rectified = m_transformation->transform(image);
    input = rectified->image;
  }
  auto g = encoderAttention ? m_features->gridWithAttention(input, encoderAttention)
                            : m_features->grid(input);  // [B, R, M, C]
  const int64_t b = g.size(0), rows = g.size(1), m = g.size(2);
  torch::Tensor x;
  if (m_sequence) {
    // Each row of the grid is a sequence of its own, read left to right (one row: the columns).
    x = m_sequence->encode(g.reshape({b * rows, m, g.size(3)}));  // [B * R, M, D]
    x = x.reshape({b, rows * m, x.size(2)});
  } else {
    x = g.reshape({b, rows * m, g.size(3)});
  }
  if (m_positions) x = m_positions->as<CellPositionsImpl>()->forward(x, rows, m);
  return x;  // [B, R * M, D]
}

torch::Tensor RecognizerImpl::rectifyUpsampled(const torch::Tensor& upsampled,
                                               const TransformOutput& t) {
  // The sharpener cuts its regions from the upsampled copy: rectified the same way, so that the
  // regions (boxes in rectified coordinates) cut what the features saw.
  if (!m_transformation || !upsampled.defined()) return upsampled;
  return m_transformation->resample(upsampled, t.fiducials);
}

RecognizerOutput RecognizerImpl::forward(const torch::Tensor& image, const torch::Tensor& upsampled,
                                         const DecodeOptions& options) {
  if (config.needsUpsampled() && !upsampled.defined())
    throw Error("the " + config.attention + " glimpse needs the upsampled image");
  TransformOutput t;
  torch::Tensor encoderAttention;
  auto x = encode(image, &t, config.prediction == "vitstr" ? &encoderAttention : nullptr);
  auto up = rectifyUpsampled(upsampled, t);
  RecognizerOutput out;
  if (options.beamWidth <= 1 || !m_prediction->searchesWithBeam()) {
    out = m_prediction->predict(x, up, options);
  } else {
    if (is_training() || options.sample || options.targets.defined() ||
        options.forcedSelection.defined())
      throw Error(
          "beam search is for inference with argmax regions: not in training, not with "
          "sampling, teacher forcing or forced regions");
    // Search, then decode the chosen hypothesis (the best unless told) again with its tokens
    // and regions forced: the same computation as the hypothesis had in the beam, with every
    // output (alpha, patches, ...) kept.
    const BeamResult beam = m_prediction->beamSearch(x, up, options.beamWidth);
    const int64_t h = options.beamHypothesis;
    if (h < 0 || h >= beam.allTokens.size(1))
      throw Error("beam hypothesis " + std::to_string(h) + " does not exist (width " +
                  std::to_string(options.beamWidth) + ")");
    if (!torch::isfinite(beam.allLogProb.select(1, h)).all().item<bool>())
      throw Error("beam hypothesis " + std::to_string(h + 1) +
                  " was not found: fewer readings than that are possible");
    DecodeOptions replay = options;
    replay.beamWidth = 1;
    replay.beamHypothesis = 0;
    replay.targets = beam.allTokens.select(1, h).contiguous();
    replay.forcedSelection = beam.allSelected.select(1, h).contiguous();
    out = m_prediction->predict(x, up, replay);
    out.tokens = replay.targets;
    out.beam = beam;
  }
  if (encoderAttention.defined() && !out.alpha.defined()) {
    // A prediction without attention of its own (ViTSTR's Linear over the first tokens): what
    // each output token attended to in the encoder's last layer, per head and their mean.
    const int64_t steps = out.logProbs.size(1);
    out.headAlpha = encoderAttention.slice(2, 0, steps).permute({0, 2, 1, 3});  // [B, T, H, M]
    out.alpha = out.headAlpha.mean(2);
    out.selected = out.alpha.argmax(-1);
    out.logPSelect = torch::zeros_like(out.alpha.select(2, 0));
  }
  out.rectified = t.image;
  out.fiducials = t.fiducials;
  return out;
}

bool RecognizerImpl::searchesWithBeam() const { return m_prediction->searchesWithBeam(); }

BeamResult RecognizerImpl::beamSearch(const torch::Tensor& image, const torch::Tensor& upsampled,
                                      int width) {
  if (config.needsUpsampled() && !upsampled.defined())
    throw Error("the " + config.attention + " glimpse needs the upsampled image");
  TransformOutput t;
  auto x = encode(image, &t);
  return m_prediction->beamSearch(x, rectifyUpsampled(upsampled, t), width);
}

LossTerms RecognizerImpl::loss(const RecognizerOutput& out, const LossInputs& in) const {
  return m_prediction->loss(out, in);
}

BatchStats RecognizerImpl::stats(const RecognizerOutput& out, const torch::Tensor& targets,
                                 const torch::Tensor& lengths) const {
  return m_prediction->stats(out, targets, lengths);
}

std::vector<std::vector<int>> RecognizerImpl::readings(const RecognizerOutput& out) const {
  return m_prediction->readings(out);
}

}  // namespace foveal::core
