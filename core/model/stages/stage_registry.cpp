#include "model/stages/stage_registry.h"

#include <cmath>
#include <map>

#include "base/error.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

// The factories, one per stage option; each lives in the option's own source file.
std::shared_ptr<torch::nn::Module> makeTps(const StageContext&);
std::shared_ptr<torch::nn::Module> makeVgg(const StageContext&);
std::shared_ptr<torch::nn::Module> makeResNet(const StageContext&);
std::shared_ptr<torch::nn::Module> makeVgg2d(const StageContext&);
std::shared_ptr<torch::nn::Module> makeBiLstm(const StageContext&);
std::shared_ptr<torch::nn::Module> makeCtc(const StageContext&);
std::shared_ptr<torch::nn::Module> makeAttention(const StageContext&);
std::shared_ptr<torch::nn::Module> makeSoftGlimpse(const StageContext&);
std::shared_ptr<torch::nn::Module> makeHardGlimpse(const StageContext&);
std::shared_ptr<torch::nn::Module> makeSharpGlimpse(const StageContext&);
std::shared_ptr<torch::nn::Module> makeVit(const StageContext&);
std::shared_ptr<torch::nn::Module> makeParseq(const StageContext&);
std::shared_ptr<torch::nn::Module> makeVitstr(const StageContext&);
std::shared_ptr<torch::nn::Module> makeVgsl(const StageContext&);

namespace {

struct Entry {
  StageOption option;
  StageFactory make = nullptr;  ///< null: the stage is left out ("none") or has no module (cell)
};

StageOption features(std::string name, std::string summary,
                     std::vector<LayerSpec> (*layers)(double), int (*channels)(double),
                     bool grid = false) {
  StageOption o{std::move(name), std::move(summary)};
  o.layers = layers;
  o.channels = channels;
  o.grid = grid;
  return o;
}

// strhub's ViT: nominally PARSeq's 4x8 patches (a model's own size: ModelConfig::featureLayers).
std::vector<LayerSpec> vitPatchLayers(double) {
  LayerSpec patch;
  patch.kh = patch.sh = 4;
  patch.kw = patch.sw = 8;
  patch.outChannels = 384;
  return {patch};
}
int vitChannels(double width) { return static_cast<int>(std::lround(384 * width)); }

// kraken's networks: the layers come from each model's own VGSL spec (ModelConfig::featureLayers);
// nominally none, and as many channels as the file says (ModelConfig::featureChannels).
std::vector<LayerSpec> vgslNominalLayers(double) { return {}; }
int vgslNominalChannels(double) { return 0; }

StageOption importOnly(StageOption o) {
  o.importOnly = true;
  return o;
}

StageOption glimpse(std::string name, std::string summary, bool needsUpsampled,
                    bool selectsRegions) {
  StageOption o{std::move(name), std::move(summary)};
  o.needsUpsampled = needsUpsampled;
  o.selectsRegions = selectsRegions;
  return o;
}

// The registry: one line per option.
const std::map<StageKind, std::vector<Entry>>& registry() {
  static const std::map<StageKind, std::vector<Entry>> r = {
      {StageKind::Transformation,
       {
           {{"none", "the image as it is"}, nullptr},
           {{"tps", "RARE's thin-plate-spline rectification (F fiducial points)"}, makeTps},
       }},
      {StageKind::Features,
       {
           {features("vgg", "CRNN's VGG: 24 columns at 100x32", vggLayers, vggOutChannels),
            makeVgg},
           {features("vgg2d",
                     "CRNN's VGG stopped before its last height collapse: a grid of 4 x 25 "
                     "cells at 100x32 (2-D attention)",
                     vggGridLayers, vggOutChannels, true),
            makeVgg2d},
           {features("resnet", "DTRB's ResNet (FAN, BasicBlock 1-2-5-3): 26 columns at 100x32",
                     resnetLayers, resnetOutChannels),
            makeResNet},
           {importOnly(features("vit",
                                "timm's VisionTransformer as strhub uses it (PARSeq, ViTSTR): "
                                "patch embedding, position embedding, pre-norm blocks; a grid "
                                "of 8 x 16 patches at 128x32 with 4x8 patches",
                                vitPatchLayers, vitChannels, true)),
            makeVit},
           {importOnly(features("vgsl",
                                "a kraken network from its VGSL spec (convolutions, pools, "
                                "reshapes, LSTMs, group norms), its output layer the CTC Linear",
                                vgslNominalLayers, vgslNominalChannels)),
            makeVgsl},
       }},
      {StageKind::Sequence,
       {
           {{"none", "the feature columns as they are"}, nullptr},
           {{"bilstm", "2 bidirectional LSTM layers (optionally each followed by DTRB's Linear)"},
            makeBiLstm},
       }},
      {StageKind::Prediction,
       {
           {{"ctc", "CTC: a Linear per column, greedy collapse of repeats and blanks"}, makeCtc},
           {{"attention", "an LSTM decoder with a glimpse, one token per step"}, makeAttention},
           {importOnly({"parseq",
                        "PARSeq's decoder: position queries over the token context and the "
                        "patches, autoregressive, then cloze refinement"}),
            makeParseq},
           {importOnly({"vitstr", "ViTSTR: a Linear over the first max_length + 1 patch tokens"}),
            makeVitstr},
       }},
      {StageKind::Glimpse,
       {
           {glimpse("soft", "c_t = sum_i alpha_ti x_i", false, false), makeSoftGlimpse},
           {glimpse("hard", "c_t = x_s, s ~ alpha_t (argmax at evaluation)", false, true),
            makeHardGlimpse},
           {glimpse("sharp", "region s through 1-2 STNs and an encoder CNN", true, true),
            makeSharpGlimpse},
       }},
      {StageKind::Cell,
       {
           {{"paper", "h0 = FC(mean X), input [y_{t-1}; c_t], p = softmax(FC([y_{t-1}; h_t]))"},
            nullptr},
           {{"dtrb", "h0 = 0, input [c_t; onehot(y_{t-1})] with y_0 = [GO], p = softmax(FC(h_t))"},
            nullptr},
           {importOnly({"strhub",
                        "DTRB's cell as strhub's TRBA has it: its token embedding folded into the "
                        "input weights; classes [B] = [GO], [E], [P], the characters"}),
            nullptr},
       }},
  };
  return r;
}

const Entry& entry(StageKind kind, const std::string& name) {
  for (const auto& e : registry().at(kind))
    if (e.option.name == name) return e;
  std::string known;
  for (const auto& e : registry().at(kind))
    if (!e.option.importOnly) known += (known.empty() ? "" : ", ") + e.option.name;
  throw Error("unknown " + stageKindName(kind) + " '" + name + "' (known: " + known + ")");
}

template <class Interface>
Stage<Interface> build(StageKind kind, const std::string& name, const StageContext& context) {
  const Entry& e = entry(kind, name);
  Stage<Interface> s;
  if (!e.make) return s;
  s.module = e.make(context);
  s.impl = dynamic_cast<Interface*>(s.module.get());
  if (!s.impl) throw Error("internal error: " + name + " does not implement its stage");
  return s;
}

}  // namespace

std::string stageKindName(StageKind kind) {
  switch (kind) {
    case StageKind::Transformation:
      return "transformation";
    case StageKind::Features:
      return "features";
    case StageKind::Sequence:
      return "sequence";
    case StageKind::Prediction:
      return "prediction";
    case StageKind::Glimpse:
      return "glimpse";
    case StageKind::Cell:
      return "cell";
  }
  return "?";
}

const std::vector<StageOption>& stageOptions(StageKind kind) {
  static const std::map<StageKind, std::vector<StageOption>> options = [] {
    std::map<StageKind, std::vector<StageOption>> m;
    for (const auto& [k, entries] : registry())
      for (const auto& e : entries)
        if (!e.option.importOnly) m[k].push_back(e.option);
    return m;
  }();
  return options.at(kind);
}

std::vector<std::string> stageNames(StageKind kind) {
  std::vector<std::string> out;
  for (const auto& o : stageOptions(kind)) out.push_back(o.name);
  return out;
}

const StageOption& stageOption(StageKind kind, const std::string& name) {
  return entry(kind, name).option;
}

ReceptiveField featureGeometry(const std::string& features, double width, int inputW, int inputH) {
  const StageOption& o = stageOption(StageKind::Features, features);
  ReceptiveField rf = receptiveField(o.layers(width), inputW, inputH);
  rf.grid = o.grid;
  return rf;
}

Stage<Transformation> buildTransformation(const StageContext& c) {
  return build<Transformation>(StageKind::Transformation, c.config.transformation, c);
}
Stage<FeatureExtractor> buildFeatures(const StageContext& c) {
  return build<FeatureExtractor>(StageKind::Features, c.config.features, c);
}
Stage<SequenceModel> buildSequence(const StageContext& c) {
  return build<SequenceModel>(StageKind::Sequence, c.config.sequence, c);
}
Stage<Prediction> buildPrediction(const StageContext& c) {
  return build<Prediction>(StageKind::Prediction, c.config.prediction, c);
}
Stage<Glimpse> buildGlimpse(const StageContext& c) {
  return build<Glimpse>(StageKind::Glimpse, c.config.attention, c);
}

}  // namespace foveal::core
