// The model file format "kraken": kraken's recognition models, the kraken 7 safetensors file and
// the CoreML .mlmodel of kraken <= 6 (what eScriptorium stores), both read by kraken_file.h. The
// network is built from the file's VGSL spec (features "vgsl", model/vgsl_spec.h) with its output
// layer as the CTC stage's Linear; the codec gives the classes; lines are read as kraken's rpred
// reads them (preprocessing "kraken", core/image/kraken_line.h) and decoded as it decodes
// (core/model/kraken_codec.h).
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <set>

#include "base/error.h"
#include "formats/checkpoint.h"
#include "formats/kraken_file.h"
#include "formats/kraken_import.h"
#include "formats/model_format.h"
#include "model/vgsl_spec.h"

namespace foveal::core {

namespace {

using json = nlohmann::json;

// A character for a class no single-label code reads (kraken's multi-label codes, labels no code
// uses): a private-use code point, so that the charset stays one token per class. Readings come
// from the codec (kraken_codec.h), never from these.
std::string placeholder(int label) {
  const uint32_t cp = 0xF0000 + static_cast<uint32_t>(label);  // plane 15, private use
  std::string s;
  s += static_cast<char>(0xF0 | (cp >> 18));
  s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
  s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  s += static_cast<char>(0x80 | (cp & 0x3F));
  return s;
}

size_t codePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

json parseJsonField(const json& meta, const char* key, const std::string& path) {
  if (!meta.contains(key)) throw Error(path + ": kraken's metadata has no '" + key + "'");
  json v = meta.at(key);
  if (v.is_string()) {  // kraken <= 6 stores some fields as JSON text
    try {
      v = json::parse(v.get<std::string>());
    } catch (const json::exception& e) {
      throw Error(path + ": kraken's metadata field '" + key + "' is not JSON: " + e.what());
    }
  }
  return v;
}

// The classes' characters: class k reads the code that is exactly [k] when there is one.
std::string charsetFromCodec(const json& codec, int classes, const std::string& path,
                             std::vector<std::string>& notes) {
  if (!codec.is_object() || codec.empty())
    throw Error(path + ": kraken's codec is not an object of characters and labels");
  std::map<int, std::string> single;
  int multi = 0, maxLabel = 0;
  for (const auto& [chars, labels] : codec.items()) {
    if (!labels.is_array() || labels.empty())
      throw Error(path + ": kraken's codec gives '" + chars + "' no list of labels");
    for (const auto& l : labels) {
      if (!l.is_number_integer() || l.get<int64_t>() < 1 || l.get<int64_t>() >= classes)
        throw Error(path + ": kraken's codec gives '" + chars + "' the label " + l.dump() +
                    ", outside the output layer's 1.." + std::to_string(classes - 1));
      maxLabel = std::max(maxLabel, l.get<int>());
    }
    if (labels.size() == 1 && codePoints(chars) == 1 && !single.count(labels.front().get<int>()))
      single[labels.front().get<int>()] = chars;
    else
      ++multi;
  }
  std::set<std::string> used;
  std::string charset;
  int placeholders = 0;
  for (int k = 1; k < classes; ++k) {
    auto it = single.find(k);
    if (it != single.end() && used.insert(it->second).second) {
      charset += it->second;
    } else {
      charset += placeholder(k);
      ++placeholders;
    }
  }
  if (multi > 0)
    notes.push_back(std::to_string(multi) +
                    " codes of the codec are several labels or several characters: readings are "
                    "decoded by kraken's codec");
  if (placeholders > 0)
    notes.push_back(std::to_string(placeholders) +
                    " classes have no single-character code (shown as private-use characters in "
                    "per-column views)");
  return charset;
}

Sniff sniffKraken(const FileProbe& file, const ImportOptions&) {
  if (looksLikeSafetensors(file.head()))
    return {60, "a safetensors file (kraken 7 writes its models as safetensors with kraken_meta)"};
  if (looksLikeCoreml(file.head()))
    return {40, "a CoreML protobuf (kraken <= 6 and eScriptorium store models as .mlmodel)"};
  return {0, "neither a safetensors file nor a CoreML protobuf"};
}

// kraken's metadata, refused when not JSON or when its model_type says it is no recogniser.
json krakenMeta(const KrakenFile& kf, const std::string& path) {
  json meta;
  try {
    meta = json::parse(kf.metaJson);
  } catch (const json::exception& e) {
    throw Error(path + ": kraken's metadata is not JSON: " + e.what());
  }
  if (meta.contains("model_type") && meta["model_type"].is_array() && !meta["model_type"].empty()) {
    bool recognition = false;
    for (const auto& t : meta["model_type"]) recognition |= t == "recognition";
    if (!recognition)
      throw Error(path + ": a kraken " + meta["model_type"].dump() +
                  " model, not a recognition model: Foveal reads kraken's recognisers");
  }
  return meta;
}

// kraken's output layer is the CTC Linear; an augmented one (a column of ones before the
// input) folds its first weight column into the bias. False when `key` is no weight of it.
bool foldOutputLayer(const std::string& key, const KrakenTensor& t, const VgslSpec& spec,
                     torch::OrderedDict<std::string, torch::Tensor>& params,
                     std::set<std::string>& filled, const std::string& path) {
  const std::string prefix = "nn." + spec.outputLayer().name + ".lin.";
  if (key.rfind(prefix, 0) != 0) return false;
  const std::string what = key.substr(prefix.size());
  torch::Tensor src =
      torch::from_blob(const_cast<float*>(t.values.data()), t.shape, torch::kFloat).clone();
  auto& weight = *params.find("prediction.fc.weight");
  auto& bias = *params.find("prediction.fc.bias");
  const bool aug = spec.outputLayer().augmented;
  if (what == "weight") {
    const auto want = std::vector<int64_t>{weight.size(0), weight.size(1) + (aug ? 1 : 0)};
    if (src.sizes().vec() != want)
      throw Error(path + ": '" + key + "' has the wrong shape for the output layer " +
                  spec.outputLayer().block);
    weight.copy_(aug ? src.slice(1, 1) : src);
    if (aug) bias.add_(src.select(1, 0));
    filled.insert("prediction.fc.weight");
  } else if (what == "bias") {
    if (src.sizes().vec() != bias.sizes().vec())
      throw Error(path + ": '" + key + "' has the wrong shape for the output layer " +
                  spec.outputLayer().block);
    bias.copy_(src);
    filled.insert("prediction.fc.bias");
  } else {
    throw Error(path + ": '" + key + "' is not a weight of kraken's output layer");
  }
  return true;
}

// Copies the file's weights into the network the VGSL spec built: every parameter filled, every
// weight a layer's, values finite.
void copyKrakenWeights(Recognizer& model, const VgslSpec& spec, const KrakenFile& kf,
                       const std::string& path) {
  auto params = model->named_parameters(true);
  const std::string outName = spec.outputLayer().name;
  std::set<std::string> filled;
  torch::NoGradGuard guard;
  // The bias first (so that an augmented weight's column adds to it), then the rest.
  std::vector<std::pair<std::string, const KrakenTensor*>> order;
  for (const auto& [k, t] : kf.weights)
    if (k == "nn." + outName + ".lin.bias")
      order.insert(order.begin(), {k, &t});
    else
      order.push_back({k, &t});
  std::vector<std::string> unknown;
  for (const auto& [key, tp] : order) {
    const KrakenTensor& t = *tp;
    size_t n = 1;
    for (auto d : t.shape) n *= static_cast<size_t>(d);
    if (n != t.values.size())
      throw Error(path + ": '" + key + "' holds the wrong number of values");
    for (float x : t.values)
      if (!std::isfinite(x)) throw Error(path + ": '" + key + "' holds non-finite values");
    if (foldOutputLayer(key, t, spec, params, filled, path)) continue;
    if (key.rfind("nn.", 0) != 0) {
      unknown.push_back(key);
      continue;
    }
    const std::string name = "features." + key.substr(3);
    torch::Tensor* p = params.find(name);
    if (!p) {
      unknown.push_back(key);
      continue;
    }
    if (p->sizes().vec() != t.shape)
      throw Error(path + ": '" + key + "' has another shape than the VGSL spec's layer gives (" +
                  std::to_string(t.values.size()) + " values for " + std::to_string(p->numel()) +
                  ")");
    p->copy_(torch::from_blob(const_cast<float*>(t.values.data()), t.shape, torch::kFloat));
    filled.insert(name);
  }
  if (!unknown.empty()) {
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < 6; ++i) list += (i ? ", " : "") + unknown[i];
    throw Error(path + ": weights that no layer of the VGSL spec has: " + list);
  }
  std::string missing;
  for (const auto& p : params)
    if (!filled.count(p.key())) missing += (missing.empty() ? "" : ", ") + p.key();
  if (!missing.empty())
    throw Error(path + ": the file holds no weights for " + missing + " (VGSL " + kf.vgsl + ")");
}

// The report's description of the recogniser: container, weight types, VGSL, lines, training.
std::string describeKraken(const KrakenFile& kf, const json& meta, const ModelConfig& c,
                           int classes) {
  const auto& pp = c.preprocessing;
  std::set<std::string> stored;
  for (const auto& [k, t] : kf.weights) stored.insert(t.storedAs);
  std::string types;
  for (const auto& s : stored) types += (types.empty() ? "" : "/") + s;
  std::string description = "a kraken recogniser, " +
                            std::string(kf.container == "coreml" ? "CoreML .mlmodel (kraken <= 6)"
                                                                 : "safetensors (kraken 7)") +
                            ", weights " + types + ": VGSL " + kf.vgsl + "; " +
                            std::to_string(classes - 1) + " labels; lines " +
                            std::to_string(pp.inputH) + " px high, padded " +
                            std::to_string(c.kraken.padding) + " px, " +
                            (c.kraken.legacyPolygons ? "legacy" : "new") + " polygon extractor";
  if (meta.contains("accuracy") && meta["accuracy"].is_array() && !meta["accuracy"].empty())
    description += "; trained " + std::to_string(meta["accuracy"].size()) +
                   " evaluations, last accuracy " + meta["accuracy"].back().dump();
  return description;
}

LoadedModel loadKraken(const FileProbe& file, const ImportOptions& o, ImportReport& report) {
  const std::string& path = file.path();
  const KrakenFile kf = readKrakenFile(path);
  const json meta = krakenMeta(kf, path);
  const VgslSpec spec = parseVgsl(kf.vgsl, path);
  const json codec = parseJsonField(meta, "codec", path);

  ModelConfig c =
      krakenModelConfig(kf.vgsl, codec.dump(), meta.value("legacy_polygons", true),
                        intOption(o, "padding", 16, path, 0, 1024), path, &report.assumed);
  const int classes = spec.outputLayer().outChannels;

  LoadedModel loaded;
  loaded.config = c;
  loaded.model = Recognizer(c);
  copyKrakenWeights(loaded.model, spec, kf, path);
  loaded.model->eval();

  report.description = describeKraken(kf, meta, c, classes);
  json m;
  m["format"] = "foveal-checkpoint";
  m["model"] = json::parse(c.toJson());
  m["imported_from"] = {
      {"kind", "kraken"}, {"file", path}, {"container", kf.container}, {"notes", report.assumed}};
  m["kraken_meta"] = meta;
  loaded.metadataJson = m.dump(2);
  report.provenanceJson = m["imported_from"].dump();
  return loaded;
}

}  // namespace

ModelConfig krakenModelConfig(const std::string& vgsl, const std::string& codecJson,
                              bool legacyPolygons, int padding, const std::string& path,
                              std::vector<std::string>* notes) {
  const VgslSpec spec = parseVgsl(vgsl, path);
  json codec;
  try {
    codec = json::parse(codecJson);
  } catch (const json::exception& e) {
    throw Error(path + ": kraken's codec is not JSON: " + e.what());
  }
  std::vector<std::string> ignored;
  ModelConfig c;
  c.transformation = "none";
  c.features = "vgsl";
  c.sequence = "none";
  c.prediction = "ctc";
  c.kraken.vgsl = vgsl;
  c.kraken.codecJson = codec.dump();
  c.kraken.legacyPolygons = legacyPolygons;
  c.kraken.padding = padding;
  c.featureChannels = spec.featureChannels();
  const int classes = spec.outputLayer().outChannels;
  if (classes < 2) throw Error(path + ": the output layer has fewer than two classes");
  c.charset = charsetFromCodec(codec, classes, path, notes ? *notes : ignored);
  c.maxLength = 1000;
  c.ctcConfidence = "kraken";
  auto& pp = c.preprocessing;
  pp.inputH = spec.inputHeight();
  pp.inputW = std::max(8, spec.input[3] > 0 ? spec.input[3] : 4 * spec.inputHeight());
  if (spec.inputChannels() != 1 && spec.inputChannels() != 3)
    throw Error(path + ": the VGSL input has " + std::to_string(spec.inputChannels()) +
                " channels; kraken's recognisers read 1 (grey) or 3 (RGB)");
  pp.colour = spec.inputChannels() == 3 ? "rgb" : "grey";
  pp.resize = "kraken";
  pp.normalisation = "kraken";
  pp.keepRatioPad = true;
  pp.variableWidth = true;
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return c;
}

std::string krakenDefaultSpec(int classes) {
  return "[1,120,0,1 Cr3,13,32 Do0.1,2 Mp2,2 Cr3,13,32 Do0.1,2 Mp2,2 Cr3,9,64 Do0.1,2 Mp2,2 "
         "Cr3,9,64 Do0.1,2 S1(1x0)1,3 Lbx200 Do0.1,2 Lbx200 Do0.1,2 Lbx200 Do O1c" +
         std::to_string(classes) + "]";
}

// The registry's entry (model_format.cpp).
ModelFormat krakenModelFormat() {
  ModelFormat f;
  f.name = "kraken";
  f.summary =
      "kraken's recognition models: kraken 7 .safetensors, or the CoreML .mlmodel of kraken <= 6 "
      "and eScriptorium";
  f.options = {
      {"padding", "blank columns left and right of a line, as kraken's rpred pads it", false,
       "16 (kraken's default)"},
  };
  f.sniff = sniffKraken;
  f.load = loadKraken;
  return f;
}

}  // namespace foveal::core
