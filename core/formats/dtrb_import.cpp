#include "formats/dtrb_import.h"
#include "formats/dtrb_charset_needed.h"

#include <torch/torch.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/safe_read.h"
#include "formats/checkpoint.h"
#include "formats/dtrb_weights.h"
#include "formats/model_format.h"
#include "formats/torch_file.h"
#include "model/charset.h"
#include "model/named_tensors.h"

namespace foveal::core {

const char* const kDtrbDefaultCharacters = "0123456789abcdefghijklmnopqrstuvwxyz";
const char* const kDtrbSensitiveCharacters =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!\"#$%&'()*+,-./"
    ":;<=>?@[\\]^_`{|}~";

namespace {

std::string shapeString(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

bool startsWith(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

// The state dict with the DataParallel prefix taken off.
struct Keys {
  const StoredStateDict* sd = nullptr;
  std::string origin;
  std::map<std::string, const StoredTensor*> byName;
  bool prefix = false;

  const StoredTensor* find(const std::string& k) const {
    auto it = byName.find(k);
    return it == byName.end() ? nullptr : it->second;
  }
  const StoredTensor& need(const std::string& k, size_t dims) const {
    const StoredTensor* t = find(k);
    if (!t)
      throw Error(
          origin + ": key '" + (prefix ? "module." : "") + k +
          "' is missing (not a deep-text-recognition-benchmark model, or an unknown variant)");
    if (t->shape.size() != dims)
      throw Error(origin + ": key '" + t->key + "' has shape " + shapeString(t->shape) +
                  ", expected " + std::to_string(dims) + " dimensions");
    return *t;
  }
  bool any(const std::string& p) const {
    auto it = byName.lower_bound(p);
    return it != byName.end() && startsWith(it->first, p);
  }
};

Keys index(const StoredStateDict& sd, const std::string& origin) {
  Keys k;
  k.sd = &sd;
  k.origin = origin;
  size_t withPrefix = 0;
  for (const auto& t : sd.tensors) withPrefix += startsWith(t.key, "module.");
  if (withPrefix != 0 && withPrefix != sd.tensors.size())
    throw Error(origin + ": " + std::to_string(withPrefix) + " of " +
                std::to_string(sd.tensors.size()) +
                " keys start with 'module.': a state dict mixes DataParallel and plain names");
  k.prefix = withPrefix != 0;
  for (const auto& t : sd.tensors) {
    const std::string name = k.prefix ? t.key.substr(7) : t.key;
    if (!k.byName.emplace(name, &t).second)
      throw Error(origin + ": key '" + t.key + "' appears twice");
  }
  return k;
}

// Every key belongs to one of DTRB's four stages.
void checkStages(const Keys& k, const std::string& origin) {
  for (const auto& [name, t] : k.byName) {
    if (!startsWith(name, "Transformation.") && !startsWith(name, "FeatureExtraction.") &&
        !startsWith(name, "SequenceModeling.") && !startsWith(name, "Prediction."))
      throw Error(origin + ": key '" + t->key + "' " + shapeString(t->shape) +
                  " belongs to no deep-text-recognition-benchmark stage (Transformation, "
                  "FeatureExtraction, SequenceModeling, Prediction)");
  }
}

void readTransformation(const Keys& k, const std::string& origin, DtrbArchitecture& a) {
  if (!k.any("Transformation.")) {
    a.transformation = "None";
    return;
  }
  a.transformation = "TPS";
  const auto& fc2 = k.need("Transformation.LocalizationNetwork.localization_fc2.bias", 1);
  if (fc2.shape[0] % 2 != 0 || fc2.shape[0] < 8)
    throw Error(origin + ": key '" + fc2.key + "' has shape " + shapeString(fc2.shape) +
                ", expected [2 F] with F even and at least 4 (the fiducial points)");
  a.fiducials = static_cast<int>(fc2.shape[0] / 2);
}

void readFeatures(const Keys& k, const std::string& origin, DtrbArchitecture& a) {
  if (k.any("FeatureExtraction.ConvNet.conv0_1.")) {
    a.features = "ResNet";
    const auto& first = k.need("FeatureExtraction.ConvNet.conv0_1.weight", 4);
    a.inputChannels = static_cast<int>(first.shape[1]);
    a.outputChannels =
        static_cast<int>(k.need("FeatureExtraction.ConvNet.conv4_2.weight", 4).shape[0]);
  } else if (k.any("FeatureExtraction.ConvNet.2.wgf_u.") ||
             k.any("FeatureExtraction.ConvNet.2.GRCL")) {
    throw Error(origin +
                ": the RCNN (GRCL) feature extractor is not supported; Foveal opens the VGG "
                "and ResNet ones");
  } else if (k.find("FeatureExtraction.ConvNet.0.weight")) {
    a.features = "VGG";
    const auto& first = k.need("FeatureExtraction.ConvNet.0.weight", 4);
    a.inputChannels = static_cast<int>(first.shape[1]);
    a.outputChannels = static_cast<int>(k.need("FeatureExtraction.ConvNet.18.weight", 4).shape[0]);
  } else {
    throw Error(origin +
                ": no feature extractor: key 'FeatureExtraction.ConvNet.0.weight' (VGG) or "
                "'FeatureExtraction.ConvNet.conv0_1.weight' (ResNet) is missing");
  }
  if (a.inputChannels != 1 && a.inputChannels != 3)
    throw Error(origin + ": the first convolution takes " + std::to_string(a.inputChannels) +
                " input channels; expected 1 (grey) or 3 (--rgb)");
  if (a.outputChannels < 16 || a.outputChannels % 16 != 0)
    throw Error(origin + ": output_channel " + std::to_string(a.outputChannels) +
                " is not a multiple of 16 (DTRB's layers take 1/16 of it)");
}

// Returns the width of what the sequence stage hands to the prediction.
int readSequence(const Keys& k, const std::string& origin, DtrbArchitecture& a) {
  if (!k.any("SequenceModeling.")) {
    a.sequence = "None";
    return a.outputChannels;
  }
  a.sequence = "BiLSTM";
  const auto& ih = k.need("SequenceModeling.0.rnn.weight_ih_l0", 2);
  a.hiddenSize = static_cast<int>(ih.shape[0] / 4);
  if (ih.shape[0] % 4 != 0 || ih.shape[1] != a.outputChannels)
    throw Error(origin + ": key '" + ih.key + "' has shape " + shapeString(ih.shape) +
                ", expected [4 h, " + std::to_string(a.outputChannels) + "] (an LSTM over the " +
                std::to_string(a.outputChannels) + " feature channels)");
  const int seqOut = static_cast<int>(k.need("SequenceModeling.1.linear.weight", 2).shape[0]);
  if (seqOut != a.hiddenSize)
    throw Error(origin + ": 'SequenceModeling.1.linear.weight' gives " + std::to_string(seqOut) +
                " outputs where hidden_size is " + std::to_string(a.hiddenSize) +
                "; DTRB's BiLSTM outputs hidden_size");
  return seqOut;
}

void readPrediction(const Keys& k, const std::string& origin, int seqOut, DtrbArchitecture& a) {
  if (k.any("Prediction.attention_cell.")) {
    a.prediction = "Attn";
    const auto& gen = k.need("Prediction.generator.weight", 2);
    a.numClasses = static_cast<int>(gen.shape[0]);
    const int hidden = static_cast<int>(gen.shape[1]);
    if (a.sequence == "BiLSTM" && hidden != a.hiddenSize)
      throw Error(origin + ": key '" + gen.key + "' has shape " + shapeString(gen.shape) +
                  ", expected [" + std::to_string(a.numClasses) + ", " +
                  std::to_string(a.hiddenSize) + "] (the decoder's hidden_size is the BiLSTM's)");
    a.hiddenSize = hidden;
    if (a.numClasses < 3)
      throw Error(origin + ": an Attn model of " + std::to_string(a.numClasses) + " classes");
  } else if (k.find("Prediction.weight")) {
    a.prediction = "CTC";
    const auto& fc = k.need("Prediction.weight", 2);
    a.numClasses = static_cast<int>(fc.shape[0]);
    if (fc.shape[1] != seqOut)
      throw Error(origin + ": key '" + fc.key + "' has shape " + shapeString(fc.shape) +
                  ", expected [classes, " + std::to_string(seqOut) + "]");
    if (a.numClasses < 2)
      throw Error(origin + ": a CTC model of " + std::to_string(a.numClasses) + " classes");
    if (a.hiddenSize == 0) a.hiddenSize = a.outputChannels / 2;  // unused without a BiLSTM
  } else {
    throw Error(origin +
                ": no prediction stage: key 'Prediction.generator.weight' (Attn) or "
                "'Prediction.weight' (CTC) is missing");
  }
}

// DTRB's standard character sets, when the class count fits one of them.
void assumeCharacters(DtrbArchitecture& a) {
  const int specials = a.prediction == "Attn" ? 2 : 1;
  const int n = a.numClasses - specials;
  const int def = static_cast<int>(std::string(kDtrbDefaultCharacters).size());
  const int sens = static_cast<int>(std::string(kDtrbSensitiveCharacters).size());
  if (n == def) {
    a.assumedCharacters = kDtrbDefaultCharacters;
    a.assumption = "DTRB's default characters 0-9a-z (the file has " +
                   std::to_string(a.numClasses) + " classes: 36 characters)";
  } else if (n == sens) {
    a.assumedCharacters = kDtrbSensitiveCharacters;
    a.assumption = "DTRB's --sensitive characters (the file has " + std::to_string(a.numClasses) +
                   " classes: 94 characters)";
  }
}

DtrbArchitecture architecture(const StoredStateDict& sd, const std::string& origin) {
  const Keys k = index(sd, origin);
  DtrbArchitecture a;
  a.format = sd.format;
  a.modulePrefix = k.prefix;
  checkStages(k, origin);
  readTransformation(k, origin, a);
  readFeatures(k, origin, a);
  const int seqOut = readSequence(k, origin, a);
  readPrediction(k, origin, seqOut, a);
  assumeCharacters(a);
  return a;
}

std::string charsetFor(const DtrbArchitecture& a, const DtrbOptions& o, const std::string& origin,
                       std::vector<std::string>& notes) {
  const int specials = a.prediction == "Attn" ? 2 : 1;
  const int n = a.numClasses - specials;
  std::string chars;
  std::string given;
  if (!o.character.empty()) {
    chars = o.character;
    given = "--character";
  } else if (o.sensitive) {
    chars = kDtrbSensitiveCharacters;
    given = "--sensitive";
  }
  if (chars.empty()) {
    if (a.assumedCharacters.empty())
      throw DtrbCharsetNeeded(
          origin + ": the file has " + std::to_string(a.numClasses) + " classes (" +
              std::to_string(n) + " characters besides " +
              (a.prediction == "Attn" ? "[GO] and [s]" : "the blank") +
              "), which fits neither of DTRB's standard sets; give the characters it was "
              "trained with (--character)",
          a.describe(), a.numClasses);
    notes.push_back("charset assumed: " + a.assumption);
    return a.assumedCharacters;
  }
  const int count = static_cast<int>(splitUtf8(chars).size());
  if (count != n)
    throw Error(origin + ": " + given + " has " + std::to_string(count) + " characters, giving " +
                std::to_string(count + specials) + " classes for " + a.prediction +
                "; the file has " + std::to_string(a.numClasses) + " (" + std::to_string(n) +
                " characters)");
  return chars;
}

// DTRB's key (without the prefix) -> Foveal's parameter name; empty when it has none.
std::string fovealName(const std::string& k, const DtrbArchitecture& a) {
  auto swap = [&](const std::string& from, const std::string& to) {
    return startsWith(k, from) ? to + k.substr(from.size()) : std::string();
  };
  std::string r;
  if (!(r = swap("Transformation.LocalizationNetwork.conv.", "transformation.conv.")).empty())
    return r;
  if (!(r = swap("Transformation.LocalizationNetwork.localization_fc1.", "transformation.fc1."))
           .empty())
    return r;
  if (!(r = swap("Transformation.LocalizationNetwork.localization_fc2.", "transformation.fc2."))
           .empty())
    return r;
  if (!(r = swap("Transformation.GridGenerator.", "transformation.")).empty()) return r;
  if (a.features == "VGG" && !(r = swap("FeatureExtraction.ConvNet.", "features.layers.")).empty())
    return r;
  if (a.features == "ResNet" && !(r = swap("FeatureExtraction.ConvNet.", "features.")).empty())
    return r;
  for (int layer = 0; layer < 2; ++layer) {
    const std::string p = "SequenceModeling." + std::to_string(layer) + ".";
    const std::string f = "sequence.layer" + std::to_string(layer) + "_";
    if (!(r = swap(p + "rnn.", f + "rnn.")).empty()) return r;
    if (!(r = swap(p + "linear.", f + "linear.")).empty()) return r;
  }
  if (!(r = swap("Prediction.attention_cell.i2h.", "prediction.attention.key.")).empty()) return r;
  if (!(r = swap("Prediction.attention_cell.h2h.", "prediction.attention.query.")).empty())
    return r;
  if (!(r = swap("Prediction.attention_cell.score.", "prediction.attention.score.")).empty())
    return r;
  if (!(r = swap("Prediction.attention_cell.rnn.", "prediction.cell.")).empty()) return r;
  if (!(r = swap("Prediction.generator.", "prediction.output.")).empty()) return r;
  if (a.prediction == "CTC" && (k == "Prediction.weight" || k == "Prediction.bias"))
    return "prediction.fc." + k.substr(11);
  return {};
}

torch::Tensor toTensor(const StoredStateDict& sd, const StoredTensor& t) {
  auto values = sd.floats(t);
  return torch::from_blob(values.data(), {static_cast<int64_t>(values.size())}, torch::kFloat)
      .clone()
      .view(t.shape);
}

// The Foveal configuration of `a`: existing stages with DTRB's sizes, the DTRB cell, DTRB's
// preprocessing, and what the file does not hold from the options.
ModelConfig configFor(const DtrbArchitecture& a, const DtrbOptions& o, const std::string& path,
                      std::vector<std::string>& notes) {
  if (o.imgH < 8 || o.imgW < 8 || o.imgH > 4096 || o.imgW > 4096)
    throw Error("--imgH and --imgW must be in [8, 4096]");
  if (o.batchMaxLength < 1 || o.batchMaxLength > 1000)
    throw Error("--batch_max_length must be in [1, 1000]");
  ModelConfig c = dtrbStages(a);
  c.maxLength = o.batchMaxLength;
  c.charset = charsetFor(a, o, path, notes);
  c.caseInsensitive = false;
  c.preprocessing.inputW = o.imgW;
  c.preprocessing.inputH = o.imgH;
  c.preprocessing.colour = a.inputChannels == 3 ? "rgb" : "pil_luma";
  c.preprocessing.resize = "pil_bicubic";
  c.preprocessing.keepRatioPad = o.pad;
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return c;
}

// The stored value of key `name` for Foveal's tensor `dst`, whose shape it must have.
bool isFloatType(StoredType t) {
  return t == StoredType::Float32 || t == StoredType::Float64 || t == StoredType::Float16 ||
         t == StoredType::BFloat16;
}

// What the key holds against what its parameter needs: float weights from Float32, or from
// Float16, BFloat16 and Float64 converted (as load_state_dict's copy_ does; `converted` collects
// them for a note); integer buffers (BatchNorm's num_batches_tracked) from integers. Int or Bool
// tensors where weights belong imported with exit 0 and read nonsense: refused by key.
void checkStoredType(const StoredTensor& stored, const torch::Tensor& dst, const std::string& path,
                     std::map<std::string, std::vector<std::string>>& converted) {
  const bool wantFloat = dst.is_floating_point();
  if (wantFloat && !isFloatType(stored.type))
    throw Error(path + ": key '" + stored.key + "' holds " + toString(stored.type) +
                " values where float weights belong (a corrupt or foreign file)");
  if (!wantFloat && (isFloatType(stored.type) || stored.type == StoredType::Bool))
    throw Error(path + ": key '" + stored.key + "' holds " + toString(stored.type) +
                " values where an integer buffer belongs");
  if (wantFloat && stored.type != StoredType::Float32)
    converted[toString(stored.type)].push_back(stored.key);
}

torch::Tensor storedValue(const StoredStateDict& sd, const std::string& name,
                          const StoredTensor& stored, const torch::Tensor& dst,
                          const DtrbArchitecture& a, const DtrbOptions& o,
                          const std::string& path) {
  const std::vector<int64_t> want(dst.sizes().begin(), dst.sizes().end());
  if (stored.shape != want) {
    std::string hint;
    if (startsWith(name, "Transformation.GridGenerator.P_hat"))
      hint =
          ": P_hat has one row per rectified pixel, so the model was trained at another "
          "--imgH x --imgW than " +
          std::to_string(o.imgH) + " x " + std::to_string(o.imgW) + " (" +
          std::to_string(stored.shape[0]) + " pixels)";
    throw Error(path + ": key '" + stored.key + "' has shape " + shapeString(stored.shape) +
                ", expected " + shapeString(want) + " for " + a.describe() + hint);
  }
  auto value = toTensor(sd, stored).to(dst.scalar_type());
  if (value.is_floating_point()) {
    // NaN or infinite weights imported with exit 0 and traced "confidence -nan" (and crashed
    // the window's heat colours): refused by key. Float64 beyond float's range becomes inf here
    // and is refused with them.
    const int64_t nan = torch::isnan(value).sum().item<int64_t>();
    const int64_t inf = torch::isinf(value).sum().item<int64_t>();
    if (nan + inf > 0)
      throw Error(path + ": key '" + stored.key + "' holds " +
                  (nan > 0 ? std::to_string(nan) + " NaN" : std::string()) +
                  (nan > 0 && inf > 0 ? " and " : "") +
                  (inf > 0 ? std::to_string(inf) + " infinite" : std::string()) + " value" +
                  (nan + inf > 1 ? "s" : "") + " (of " + std::to_string(value.numel()) +
                  "): the weights are broken (a diverged training run?)");
  }
  if (startsWith(name, "Transformation.GridGenerator.")) {
    // Computed from F and the input size; the stored copy must agree (a wrong --imgH/--imgW
    // with the same pixel count would otherwise pass unnoticed).
    const double diff =
        (value.to(torch::kDouble) - dst.to(torch::kDouble)).abs().max().item<double>();
    if (diff > 1e-3)
      throw Error(path + ": key '" + stored.key + "' differs from the TPS grid of a " +
                  std::to_string(o.imgW) + " x " + std::to_string(o.imgH) + " input by up to " +
                  std::to_string(diff) + ": give the --imgH and --imgW the model was trained with");
  }
  return value;
}

// Every key of the file into its one Foveal parameter or buffer; every one of those filled.
void copyWeights(const StoredStateDict& sd, const DtrbArchitecture& a, const DtrbOptions& o,
                 const std::string& path, Recognizer& model, std::vector<std::string>& notes) {
  std::map<std::string, std::vector<std::string>> converted;  // stored type -> keys
  std::map<std::string, torch::Tensor> targets;
  for (const auto& [name, tensor] : namedTensors(*model)) targets.emplace(name, tensor);

  const Keys keys = index(sd, path);
  std::set<std::string> assigned;
  torch::NoGradGuard guard;
  for (const auto& [name, stored] : keys.byName) {
    const std::string target = fovealName(name, a);
    auto it = targets.find(target);
    if (target.empty() || it == targets.end())
      throw Error(path + ": key '" + stored->key + "' " + shapeString(stored->shape) +
                  " has no place in " + a.describe() + " (an unknown variant?)");
    checkStoredType(*stored, it->second, path, converted);
    it->second.copy_(storedValue(sd, name, *stored, it->second, a, o, path));
    assigned.insert(target);
  }
  for (const auto& [type, names] : converted) {
    std::string note = std::to_string(names.size()) + " tensor" + (names.size() > 1 ? "s" : "") +
                       " stored as " + type + " converted to float32, as load_state_dict does (";
    for (size_t i = 0; i < names.size() && i < 3; ++i) note += (i ? ", " : "") + names[i];
    note += names.size() > 3 ? ", ...)" : ")";
    notes.push_back(note);
  }
  for (const auto& [name, t] : targets) {
    if (assigned.count(name)) continue;
    throw Error(path + ": no key in the file for Foveal's '" + name + "' " +
                shapeString(std::vector<int64_t>(t.sizes().begin(), t.sizes().end())) + " of " +
                a.describe());
  }
}

}  // namespace

std::string DtrbArchitecture::describe() const {
  std::ostringstream s;
  s << transformation << "-" << features << "-" << sequence << "-" << prediction
    << ", output_channel " << outputChannels;
  if (sequence == "BiLSTM" || prediction == "Attn") s << ", hidden_size " << hiddenSize;
  s << ", " << numClasses << " classes";
  if (transformation == "TPS") s << ", " << fiducials << " fiducials";
  s << ", " << (inputChannels == 3 ? "RGB" : "grey") << " input";
  return s.str();
}

bool isTorchFile(const std::string& path) {
  try {
    return looksLikeTorchFile(readFileHead(path, "model file", kMaxModelFileBytes, 16));
  } catch (const Error&) {
    return false;
  }
}

DtrbArchitecture inspectDtrb(const std::string& path) {
  return architecture(readTorchFile(path), path);
}

namespace {

LoadedModel importDtrbState(const StoredStateDict& sd, const std::string& path,
                            const DtrbOptions& o, DtrbImport* info) {
  DtrbImport imp;
  imp.architecture = architecture(sd, path);
  const auto& a = imp.architecture;
  imp.config = configFor(a, o, path, imp.notes);
  LoadedModel loaded = importDtrbWeights(sd, a, imp.config, path, o, &imp.notes);
  nlohmann::json meta;
  meta["format"] = "foveal-checkpoint";
  meta["model"] = nlohmann::json::parse(imp.config.toJson());
  meta["imported_from"] = {{"kind", "deep-text-recognition-benchmark"},
                           {"file", path},
                           {"save_format", a.format},
                           {"module_prefix", a.modulePrefix},
                           {"architecture", a.describe()},
                           {"notes", imp.notes}};
  loaded.metadataJson = meta.dump(2);
  imp.provenanceJson = meta["imported_from"].dump();
  if (info) *info = std::move(imp);
  return loaded;
}

bool isStageKey(const std::string& name) {
  return startsWith(name, "Transformation.") || startsWith(name, "FeatureExtraction.") ||
         startsWith(name, "SequenceModeling.") || startsWith(name, "Prediction.");
}

}  // namespace

ModelConfig dtrbStages(const DtrbArchitecture& a) {
  ModelConfig c;
  c.transformation = a.transformation == "TPS" ? "tps" : "none";
  c.fiducials = a.fiducials > 0 ? a.fiducials : 20;
  c.features = a.features == "VGG" ? "vgg" : "resnet";
  c.sequence = a.sequence == "BiLSTM" ? "bilstm" : "none";
  c.sequenceProjection = a.sequence == "BiLSTM";
  c.prediction = a.prediction == "Attn" ? "attention" : "ctc";
  c.cell = "dtrb";
  c.attention = "soft";
  c.width = 1.0;
  c.featureChannels = a.outputChannels;
  c.hiddenSize = a.hiddenSize;
  c.attentionDepth = a.hiddenSize;
  return c;
}

DtrbArchitecture dtrbArchitecture(const StoredStateDict& sd, const std::string& origin) {
  return architecture(sd, origin);
}

LoadedModel importDtrbWeights(const StoredStateDict& sd, const DtrbArchitecture& a,
                              const ModelConfig& config, const std::string& path,
                              const DtrbOptions& o, std::vector<std::string>* notes) {
  LoadedModel loaded;
  loaded.config = config;
  loaded.model = Recognizer(config);
  std::vector<std::string> unused;
  copyWeights(sd, a, o, path, loaded.model, notes ? *notes : unused);
  loaded.model->eval();
  return loaded;
}

LoadedModel importDtrb(const std::string& path, const DtrbOptions& o, DtrbImport* info) {
  return importDtrbState(readTorchFile(path), path, o, info);
}

DtrbOptions dtrbOptionsFrom(const ImportOptions& o, const std::string& path) {
  DtrbOptions d;
  d.character = stringOption(o, "character");
  d.sensitive = flagOption(o, "sensitive");
  if (!d.character.empty() && d.sensitive)
    throw Error(path + ": --character and --sensitive exclude each other");
  d.imgH = intOption(o, "imgH", 32, path, 8, 4096);
  d.imgW = intOption(o, "imgW", 100, path, 8, 4096);
  d.pad = flagOption(o, "PAD");
  d.batchMaxLength = intOption(o, "batch_max_length", 25, path, 1, 1000);
  return d;
}

ImportOptions importOptionsOf(const DtrbOptions& d) {
  ImportOptions o;
  if (!d.character.empty()) o["character"] = d.character;
  if (d.sensitive) o["sensitive"] = "1";
  const DtrbOptions defaults;
  if (d.imgH != defaults.imgH) o["imgH"] = std::to_string(d.imgH);
  if (d.imgW != defaults.imgW) o["imgW"] = std::to_string(d.imgW);
  if (d.pad) o["PAD"] = "1";
  if (d.batchMaxLength != defaults.batchMaxLength)
    o["batch_max_length"] = std::to_string(d.batchMaxLength);
  return o;
}

// The registry's entry (model_format.cpp): a torch.save state dict whose keys lie under DTRB's
// four stages.
ModelFormat dtrbModelFormat() {
  ModelFormat f;
  f.name = "dtrb";
  f.summary = "a deep-text-recognition-benchmark checkpoint (torch.save of its Model's state dict)";
  f.options = {
      {"character",
       "the characters of the classes in order, as DTRB's --character (default: "
       "DTRB's 0-9a-z or --sensitive set when the class count fits one)"},
      {"sensitive", "DTRB's --sensitive: Python's string.printable[:-6] (94 characters)", true},
      {"imgH", "the input height the model was trained with (DTRB's --imgH)", false, "32"},
      {"imgW", "the input width (DTRB's --imgW)", false, "100"},
      {"PAD", "DTRB's --PAD: keep the ratio, pad on the right with the last column", true},
      {"batch_max_length", "the longest reading, in characters (DTRB's --batch_max_length)", false,
       "25"},
  };
  f.sniff = [](const FileProbe& file, const ImportOptions&) {
    const StoredStateDict* sd = file.stateDict();
    if (!sd) return Sniff{0, {}};
    size_t prefixed = 0, staged = 0, features = 0;
    bool transformation = false, sequence = false, ctc = false;
    for (const auto& t : sd->tensors) {
      const bool pre = startsWith(t.key, "module.");
      prefixed += pre;
      const std::string name = pre ? t.key.substr(7) : t.key;
      staged += isStageKey(name);
      features += startsWith(name, "FeatureExtraction.");
      transformation |= startsWith(name, "Transformation.");
      sequence |= startsWith(name, "SequenceModeling.");
      ctc |= name == "Prediction.weight";
    }
    if (features == 0) return Sniff{0, "no key under FeatureExtraction. (DTRB's feature stage)"};
    std::string why = "a torch.save " + sd->format + " file of " +
                      std::to_string(sd->tensors.size()) + " tensors";
    if (!sd->nestedIn.empty()) why += " (under '" + sd->nestedIn + "')";
    if (prefixed) why += ", DataParallel's 'module.' prefix";
    const size_t outside = sd->tensors.size() - staged;
    why += outside == 0 ? ", every key under DTRB's stages (Transformation, FeatureExtraction, "
                          "SequenceModeling, Prediction)"
                        : ", keys under DTRB's FeatureExtraction stage (and " +
                              std::to_string(outside) + " outside DTRB's stages)";
    if (!transformation && sequence && ctc)
      why +=
          "; EasyOCR's recognisers have these keys too: --format easyocr or --easyocr MODEL "
          "opens it as EasyOCR does";
    return Sniff{outside == 0 ? 50 : 20, why};
  };
  f.load = [](const FileProbe& file, const ImportOptions& options, ImportReport& report) {
    DtrbImport info;
    LoadedModel loaded = importDtrbState(*file.stateDict(), file.path(),
                                         dtrbOptionsFrom(options, file.path()), &info);
    report.description = "deep-text-recognition-benchmark checkpoint (" + info.architecture.format +
                         " format" +
                         (info.architecture.modulePrefix ? ", DataParallel 'module.' prefix" : "") +
                         "): " + info.architecture.describe();
    report.assumed = info.notes;
    report.provenanceJson = info.provenanceJson;
    return loaded;
  };
  return f;
}

}  // namespace foveal::core
