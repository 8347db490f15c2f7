// Opening the models of PARSeq's model hub (strhub, github.com/baudm/parseq): PARSeq, ViTSTR and
// TRBA (loadTrba below: DTRB's stages, its embedding folded in), as released .pt state dicts
// (PARSeq's without a prefix, as create_model loads them into the system's `model`; ViTSTR's under
// the system's "model.") and as Lightning .ckpt training checkpoints ("state_dict" under "model.",
// "hyper_parameters" as Lightning's AttributeDict, read as a dictionary by the restricted pickle
// reader). What the tensor shapes determine is read from them (embedding width, patch size, input
// channels, depths, MLP widths, max_label_length, the class count); the rest (charset, input size,
// heads, decode_ar, refine_iters) comes from the checkpoint's hyper-parameters, else from the
// options, else from the hub's defaults, each default said in the report's "assumed" list. strhub's
// preprocessing: RGB, PIL's bicubic resize to img_size (ratio not kept), [-1, 1]. The stages are
// core/model/stages/ transformer_stages.cpp; every key maps to one parameter by a rename
// ("encoder." -> "features.", the decoder's -> "prediction.").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "formats/checkpoint.h"
#include "formats/dtrb_weights.h"
#include "formats/model_format.h"
#include "formats/torch_file.h"
#include "model/recognizer.h"

namespace foveal::core {

namespace {

// strhub's charset_train of every released model (configs/charset/94_full.yaml).
constexpr const char* k94Full =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!\"#$%&'()*+,-./:;<=>?@[\\]^_`"
    "{|}~";

enum class Kind { None, Parseq, Vitstr, Trba, Trbc };

struct Keys {
  Kind kind = Kind::None;
  std::string prefix;  ///< "model." or ""
  std::string why;
};

bool has(const StoredStateDict& sd, const std::string& key) { return sd.find(key) != nullptr; }

Keys keysOf(const StoredStateDict& sd) {
  Keys k;
  bool allModel = !sd.tensors.empty();
  for (const auto& t : sd.tensors) allModel = allModel && t.key.rfind("model.", 0) == 0;
  k.prefix = allModel ? "model." : "";
  const std::string& p = k.prefix;
  if (has(sd, p + "encoder.patch_embed.proj.weight") && has(sd, p + "pos_queries") &&
      has(sd, p + "text_embed.embedding.weight") && has(sd, p + "head.weight")) {
    k.kind = Kind::Parseq;
    k.why = "PARSeq's keys (" + p + "encoder.patch_embed, " + p + "decoder.layers, " + p +
            "pos_queries, " + p + "text_embed)";
  } else if (has(sd, p + "patch_embed.proj.weight") && has(sd, p + "cls_token") &&
             has(sd, p + "pos_embed") && has(sd, p + "head.weight")) {
    k.kind = Kind::Vitstr;
    k.why =
        "ViTSTR's keys (" + p + "patch_embed, " + p + "cls_token, " + p + "blocks, " + p + "head)";
  } else if (has(sd, p + "FeatureExtraction.ConvNet.conv0_1.weight") &&
             has(sd, p + "Prediction.char_embeddings.weight") &&
             has(sd, p + "Prediction.attention_cell.rnn.weight_ih")) {
    k.kind = Kind::Trba;
    k.why = "TRBA's keys (" + p + "Transformation, " + p + "FeatureExtraction.ConvNet (ResNet), " +
            p + "SequenceModeling, " + p + "Prediction.char_embeddings)";
  } else if (!p.empty() && has(sd, p + "FeatureExtraction.ConvNet.conv0_1.weight") &&
             has(sd, p + "Prediction.weight")) {
    k.kind = Kind::Trbc;
    k.why = "TRBC's keys (" + p + "FeatureExtraction.ConvNet, " + p + "Prediction.weight: CTC)";
  }
  return k;
}

Sniff sniffStrhub(const FileProbe& file, const ImportOptions&) {
  const StoredStateDict* sd = file.stateDict();
  if (!sd) return {};
  const Keys k = keysOf(*sd);
  if (k.kind == Kind::None) return {};
  return {95, k.why + (sd->hasHyperParameters ? ", with a Lightning checkpoint's hyper_parameters"
                                              : ", a state dict without hyper-parameters")};
}

const StoredTensor& need(const StoredStateDict& sd, const std::string& key, const std::string& path,
                         size_t dims) {
  const StoredTensor* t = sd.find(key);
  if (!t) throw Error(path + ": no tensor '" + key + "' (strhub's model has one)");
  if (t->shape.size() != dims)
    throw Error(path + ": '" + key + "' has " + std::to_string(t->shape.size()) +
                " dimensions, expected " + std::to_string(dims));
  return *t;
}

int countIndexed(const StoredStateDict& sd, const std::string& prefix) {
  int n = 0;
  while (has(sd, prefix + std::to_string(n) + ".norm1.weight")) ++n;
  return n;
}

// The hyper-parameters, the options and the defaults, and what was assumed.
class Settings {
 public:
  Settings(const StoredStateDict& sd, const ImportOptions& o, std::string path,
           ImportReport& report)
      : m_sd(sd), m_o(o), m_path(std::move(path)), m_report(report) {
    // Not a dictionary: read as absent, it sent users after missing settings (issue 65).
    if (!sd.hyperParametersKind.empty())
      throw Error(m_path + ": the checkpoint's hyper_parameters is a pickled " +
                  sd.hyperParametersKind +
                  ", not a dictionary (Lightning saves the model's settings as one)");
  }

  const nlohmann::json* hp(const std::string& key) const {
    auto it = m_sd.hyperParameters.find(key);
    if (it == m_sd.hyperParameters.end()) return nullptr;
    m_parsed[key] = nlohmann::json::parse(it->second, nullptr, false);
    return &m_parsed[key];
  }

  int integer(const std::string& option, const std::string& hpKey, int fallback,
              const std::string& assumption, int lo, int hi) {
    if (m_o.count(option)) return intOption(m_o, option, fallback, m_path, lo, hi);
    if (const auto* v = hp(hpKey)) {
      if (!v->is_number_integer() || v->get<int64_t>() < lo || v->get<int64_t>() > hi)
        throw Error(m_path + ": hyper_parameters '" + hpKey + "' is " + v->dump() +
                    ", expected a whole number in [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]");
      return v->get<int>();
    }
    m_report.assumed.push_back(assumption);
    return fallback;
  }

  bool boolean(const std::string& option, const std::string& hpKey, bool fallback,
               const std::string& assumption) {
    if (m_o.count(option)) {
      const std::string v = m_o.at(option);
      if (v == "1" || v == "true") return true;
      if (v == "0" || v == "false") return false;
      throw Error(m_path + ": --" + option + " must be true or false (got '" + v + "')");
    }
    if (const auto* v = hp(hpKey)) {
      if (!v->is_boolean())
        throw Error(m_path + ": hyper_parameters '" + hpKey + "' is " + v->dump() +
                    ", expected true or false");
      return v->get<bool>();
    }
    m_report.assumed.push_back(assumption);
    return fallback;
  }

  /// [h, w] from the option "HxW" or the hyper-parameter [h, w]; empty when neither.
  std::vector<int> size(const std::string& option, const std::string& hpKey) {
    if (m_o.count(option)) {
      const std::string v = m_o.at(option);
      int h = 0, w = 0;
      char x = 0, rest = 0;
      if (std::sscanf(v.c_str(), "%d%c%d%c", &h, &x, &w, &rest) != 3 || (x != 'x' && x != 'X') ||
          h < 1 || w < 1 || h > 4096 || w > 4096)
        throw Error(m_path + ": --" + option + " must be HEIGHTxWIDTH, e.g. 32x128 (got '" + v +
                    "')");
      return {h, w};
    }
    if (const auto* v = hp(hpKey)) {
      if (!v->is_array() || v->size() != 2 || !(*v)[0].is_number_integer() ||
          !(*v)[1].is_number_integer())
        throw Error(m_path + ": hyper_parameters '" + hpKey + "' is " + v->dump() +
                    ", expected [height, width]");
      return {(*v)[0].get<int>(), (*v)[1].get<int>()};
    }
    return {};
  }

  const StoredStateDict& m_sd;
  const ImportOptions& m_o;
  std::string m_path;
  ImportReport& m_report;

 private:
  mutable std::map<std::string, nlohmann::json> m_parsed;
};

// The charset whose classes the head's `classes` outputs are (`specials` of them not characters,
// `layout` says which and where): --character, else the checkpoint's charset_train, else the
// hub's 94 characters when the count fits. Refused when it does not fit the head.
std::string charsetFor(Settings& s, int64_t classes, int specials, const std::string& layout,
                       const std::string& path) {
  const int64_t characters = classes - specials;
  std::string chars, source;
  if (s.m_o.count("character")) {
    chars = s.m_o.at("character");
    source = "--character";
  } else if (const auto* v = s.hp("charset_train")) {
    if (!v->is_string())
      throw Error(path + ": hyper_parameters 'charset_train' is " + v->dump() +
                  ", expected a string");
    chars = v->get<std::string>();
    source = "the checkpoint's charset_train";
  } else if (s.m_sd.hasHyperParameters) {
    throw Error(path +
                ": the checkpoint's hyper_parameters have no charset_train (the characters of "
                "the head's classes); give them with --character");
  } else if (characters == 94) {
    chars = k94Full;
    source = "the hub's 94_full charset";
    s.m_report.assumed.push_back(
        "charset: strhub's 94_full (the released models'; the file has no hyper-parameters and "
        "its head has " +
        std::to_string(classes) + " classes: " + layout + ")");
  } else {
    throw Error(path +
                ": the file has no hyper-parameters (a state dict, not a Lightning .ckpt) "
                "and its head has " +
                std::to_string(classes) + " classes (" + layout + ": " +
                std::to_string(characters) +
                " characters), not the hub's 94: give the characters in order with --character");
  }
  const int64_t n = static_cast<int64_t>(splitUtf8(chars).size());
  if (n + specials != classes)
    throw Error(path + ": the charset from " + source + " has " + std::to_string(n) +
                " characters, but the head has " + std::to_string(classes) + " classes (" + layout +
                "): it does not fit the model");
  return chars;
}

// Copies every tensor of the file into the parameter `rename` names; every parameter must be
// filled, shapes equal, values finite. Keys that name no parameter are refused together.
void copyWeights(Recognizer& model, const StoredStateDict& sd, const std::string& prefix,
                 std::string (*rename)(const std::string&), const std::string& path) {
  auto params = model->named_parameters(true);
  std::set<std::string> filled;
  std::vector<std::string> unknown;
  torch::NoGradGuard guard;
  for (const auto& t : sd.tensors) {
    const std::string key = t.key.substr(prefix.size());
    const std::string name = rename(key);
    torch::Tensor* p = params.find(name);
    if (!p) {
      unknown.push_back(t.key);
      continue;
    }
    if (t.type != StoredType::Float32 && t.type != StoredType::Float64 &&
        t.type != StoredType::Float16 && t.type != StoredType::BFloat16)
      throw Error(path + ": '" + t.key + "' holds " + toString(t.type) + " values, not weights");
    const std::vector<int64_t> want = p->sizes().vec();
    if (t.shape != want) {
      auto str = [](const std::vector<int64_t>& s) {
        std::string o = "[";
        for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
        return o + "]";
      };
      throw Error(path + ": '" + t.key + "' has shape " + str(t.shape) + ", the model built from " +
                  "the file's hyper-parameters needs " + str(want));
    }
    std::vector<float> v = sd.floats(t);
    for (float x : v)
      if (!std::isfinite(x)) throw Error(path + ": '" + t.key + "' holds non-finite values");
    p->copy_(
        torch::from_blob(v.data(), {static_cast<int64_t>(v.size())}, torch::kFloat).view(want));
    filled.insert(name);
  }
  if (!unknown.empty()) {
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < 6; ++i) list += (i ? ", " : "") + unknown[i];
    if (unknown.size() > 6) list += ", ... (" + std::to_string(unknown.size()) + " in all)";
    throw Error(path + ": unknown architecture keys for strhub's model: " + list);
  }
  for (const auto& p : params)
    if (!filled.count(p.key()))
      throw Error(path + ": the file has no tensor for the model's '" + p.key() + "'");
}

std::string renameParseq(const std::string& key) {
  if (key.rfind("encoder.", 0) == 0) return "features." + key.substr(8);
  return "prediction." + key;
}

std::string renameVitstr(const std::string& key) {
  if (key.rfind("head.", 0) == 0) return "prediction." + key;
  return "features." + key;
}

bool startsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool isWeightType(StoredType t) {
  return t == StoredType::Float32 || t == StoredType::Float64 || t == StoredType::Float16 ||
         t == StoredType::BFloat16;
}

std::string shapeText(const std::vector<int64_t>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

// A float32 tensor in a storage of its own, appended to `sd`.
void addFloats(StoredStateDict& sd, const std::string& key, const std::vector<int64_t>& shape,
               const std::vector<float>& values) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(values.size() * sizeof(float));
  std::memcpy(bytes->data(), values.data(), bytes->size());
  StoredTensor t;
  t.key = key;
  t.type = StoredType::Float32;
  t.shape = shape;
  t.stride.assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) t.stride[d - 1] = t.stride[d] * shape[d];
  t.storage = static_cast<int>(sd.storages.size());
  sd.storages.push_back(std::move(bytes));
  sd.tensors.push_back(std::move(t));
}

// The DTRB importer names keys without strhub's "model."; its errors name them as the file does.
Error withPrefix(const Error& e, const std::string& prefix) {
  std::string m = e.what();
  if (prefix.empty()) return Error(m);
  const std::string needle = "key '";
  for (size_t at = m.find(needle); at != std::string::npos; at = m.find(needle, at + 1)) {
    m.insert(at + needle.size(), prefix);
    at += prefix.size();
  }
  return Error(m);
}

// TRBA's keys lie under its four stages; any other is refused, all of them together.
void checkTrbaKeys(const StoredStateDict& sd, const std::string& p, const std::string& path) {
  std::vector<std::string> unknown;
  for (const auto& t : sd.tensors) {
    const std::string name = t.key.substr(p.size());
    if (!startsWith(name, "Transformation.") && !startsWith(name, "FeatureExtraction.") &&
        !startsWith(name, "SequenceModeling.") && !startsWith(name, "Prediction."))
      unknown.push_back(t.key);
  }
  if (!unknown.empty()) {
    std::string list;
    for (size_t i = 0; i < unknown.size() && i < 6; ++i) list += (i ? ", " : "") + unknown[i];
    if (unknown.size() > 6) list += ", ... (" + std::to_string(unknown.size()) + " in all)";
    throw Error(path + ": unknown architecture keys for strhub's TRBA (its keys lie under " + p +
                "Transformation, FeatureExtraction, SequenceModeling and Prediction): " + list);
  }
}

// TRBA's decoder tensors that differ from DTRB's, and the sizes they give.
struct TrbaDecoder {
  const StoredTensor* emb = nullptr;      // [C, E]
  const StoredTensor* gen = nullptr;      // [C, H]
  const StoredTensor* genBias = nullptr;  // [C]
  const StoredTensor* wih = nullptr;      // [4H, context + E]
  int64_t classes = 0, hidden = 0, width = 0, context = 0;
};

TrbaDecoder trbaDecoder(const StoredStateDict& sd, const std::string& p, const std::string& path) {
  const auto& emb = need(sd, p + "Prediction.char_embeddings.weight", path, 2);  // [C, E]
  const auto& gen = need(sd, p + "Prediction.generator.weight", path, 2);        // [C, H]
  const auto& genBias = need(sd, p + "Prediction.generator.bias", path, 1);
  const auto& wih = need(sd, p + "Prediction.attention_cell.rnn.weight_ih", path, 2);
  for (const StoredTensor* t : {&emb, &gen, &genBias, &wih})
    if (!isWeightType(t->type))
      throw Error(path + ": '" + t->key + "' holds " + toString(t->type) + " values, not weights");
  const int64_t classes = gen.shape[0], hidden = gen.shape[1], width = emb.shape[1];
  if (classes < 4)
    throw Error(path + ": '" + gen.key + "' has " + std::to_string(classes) +
                " classes; strhub's TRBA has [E], [B], [P] and at least one character");
  if (emb.shape[0] != classes || genBias.shape[0] != classes)
    throw Error(path + ": '" + emb.key + "' embeds " + std::to_string(emb.shape[0]) +
                " tokens and '" + genBias.key + "' scores " + std::to_string(genBias.shape[0]) +
                ", but the generator has " + std::to_string(classes) +
                " classes (strhub's TRBA embeds and scores every class)");
  if (wih.shape[0] != 4 * hidden || wih.shape[1] <= width)
    throw Error(path + ": '" + wih.key + "' has shape " + shapeText(wih.shape) + ", expected [" +
                std::to_string(4 * hidden) + ", context + " + std::to_string(width) +
                "] (the LSTM cell reads the attention's context and the token's embedding)");
  return {&emb, &gen, &genBias, &wih, classes, hidden, width, wih.shape[1] - width};
}

// The input size: --img_size or the checkpoint's, else the hub's 32x128; the TPS grid (one point
// per input pixel) must fit it.
std::vector<int> trbaInputSize(Settings& s, const StoredStateDict& sd, const std::string& p,
                               const std::string& path, ImportReport& report) {
  std::vector<int> img = s.size("img_size", "img_size");
  const StoredTensor* grid = sd.find(p + "Transformation.GridGenerator.P_hat");
  if (img.empty()) {
    if (grid && (grid->shape.empty() || grid->shape[0] != 32 * 128))
      throw Error(path + ": the TPS grid (" + grid->key + ") has " +
                  (grid->shape.empty() ? std::string("no") : std::to_string(grid->shape[0])) +
                  " points, not the hub's 32x128 input: give the input size with --img_size "
                  "HEIGHTxWIDTH");
    img = {32, 128};
    report.assumed.push_back(std::string("input 32x128 (the hub's img_size") +
                             (grid ? "; it fits the TPS grid)" : ")"));
  } else if (grid && !grid->shape.empty() && grid->shape[0] != int64_t{img[0]} * img[1]) {
    throw Error(path + ": the TPS grid (" + grid->key + ") has " + std::to_string(grid->shape[0]) +
                " points, one per pixel of the input it was " + "trained at, but the input is " +
                std::to_string(img[0]) + "x" + std::to_string(img[1]) + " (" +
                std::to_string(img[0] * img[1]) + ")");
  }
  return img;
}

// The state dict under DTRB's names, the embedding folded into the LSTM cell's input weights and
// the classes reordered: Foveal's class f is strhub's from[f] ([B], [E], [P], then the
// characters).
StoredStateDict dtrbStateDict(const StoredStateDict& sd, const std::string& p,
                              const TrbaDecoder& t) {
  const int64_t classes = t.classes, hidden = t.hidden, width = t.width, context = t.context;
  const int64_t n = classes - 3;
  std::vector<int64_t> from(static_cast<size_t>(classes));
  from[0] = n + 1;
  from[1] = 0;
  from[2] = n + 2;
  for (int64_t i = 0; i < n; ++i) from[static_cast<size_t>(3 + i)] = 1 + i;

  StoredStateDict d;
  d.format = sd.format;
  d.storages = sd.storages;
  for (const auto& tensor : sd.tensors) {
    const std::string name = tensor.key.substr(p.size());
    if (name == "Prediction.char_embeddings.weight" ||
        name == "Prediction.attention_cell.rnn.weight_ih" ||
        startsWith(name, "Prediction.generator."))
      continue;
    StoredTensor c = tensor;
    c.key = name;
    d.tensors.push_back(std::move(c));
  }
  const std::vector<float> w = sd.floats(*t.wih), e = sd.floats(*t.emb);
  const int64_t rows = t.wih->shape[0], in = t.wih->shape[1], cols = context + classes;
  std::vector<float> folded(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float* wr = w.data() + r * in;
    float* out = folded.data() + r * cols;
    std::copy(wr, wr + context, out);
    for (int64_t f = 0; f < classes; ++f) {
      const float* ef = e.data() + from[static_cast<size_t>(f)] * width;
      double acc = 0;
      for (int64_t j = 0; j < width; ++j) acc += double{wr[context + j]} * ef[j];
      out[context + f] = static_cast<float>(acc);
    }
  }
  addFloats(d, "Prediction.attention_cell.rnn.weight_ih", {rows, cols}, folded);
  const std::vector<float> g = sd.floats(*t.gen), b = sd.floats(*t.genBias);
  std::vector<float> gr(g.size()), br(b.size());
  for (int64_t f = 0; f < classes; ++f) {
    const int64_t src = from[static_cast<size_t>(f)];
    std::copy(g.begin() + src * hidden, g.begin() + (src + 1) * hidden, gr.begin() + f * hidden);
    br[static_cast<size_t>(f)] = b[static_cast<size_t>(src)];
  }
  addFloats(d, "Prediction.generator.weight", {classes, hidden}, gr);
  addFloats(d, "Prediction.generator.bias", {classes}, br);
  return d;
}

// DTRB's stages for strhub's TRBA, with strhub's decoding and preprocessing.
ModelConfig trbaConfig(const DtrbArchitecture& a, int maxLength, const std::string& charset,
                       const std::vector<int>& img, const std::string& path, ImportReport& report) {
  ModelConfig c = dtrbStages(a);  // a ResNet and an Attn decoder (checked by the caller)
  c.cell = "strhub";
  c.maxLength = maxLength;
  c.charset = charset;
  c.preprocessing.inputH = img[0];
  c.preprocessing.inputW = img[1];
  // strhub reads RGB (read.py's convert('RGB')); a one-channel variant as PIL's convert('L').
  c.preprocessing.colour = a.inputChannels == 3 ? "rgb" : "pil_luma";
  c.preprocessing.resize = "pil_bicubic";
  c.preprocessing.keepRatioPad = false;
  if (a.inputChannels != 3)
    report.assumed.push_back(
        "grey input as PIL's convert('L') (the first convolution takes one channel; strhub's "
        "own TRBA takes RGB)");
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return c;
}

// strhub's TRBA (strhub/models/trba): DTRB's TPS-ResNet-BiLSTM-Attn under the system's "model.",
// through the DTRB importer's stages and weight copy. Two differences, both undone exactly here:
// its Attention feeds the previous token through an nn.Embedding (256 wide) where DTRB feeds a
// one-hot, and a one-hot through the LSTM cell's input weights is the embedding through them, so
// the embedding is folded into those weights (W_token = W_ih[:, context:] E^T); and its classes
// are its tokenizer's ([E], the characters, [B], [P]), reordered to [B] = [GO], [E] = [s], [P],
// the characters (ClassLayout::GoEndPad), generator rows and folded columns alike. Decoding is
// strhub's: [B] first, greedy over every class, max_label_length + 1 steps, the reading up to the
// first [E], confidence the product of the step probabilities up to and including [E].
LoadedModel loadTrba(const FileProbe& file, const ImportOptions& o, ImportReport& report,
                     const Keys& k) {
  const std::string& path = file.path();
  const StoredStateDict& sd = *file.stateDict();
  const std::string& p = k.prefix;
  checkTrbaKeys(sd, p, path);
  Settings s(sd, o, path, report);
  const TrbaDecoder t = trbaDecoder(sd, p, path);
  const std::string charset = charsetFor(s, t.classes, 3, "[E], the characters, [B], [P]", path);
  const std::vector<int> img = trbaInputSize(s, sd, p, path, report);
  const int maxLength = s.integer("max_label_length", "max_label_length", 25,
                                  "max_label_length 25 (the hub's default)", 1, 1000);
  const StoredStateDict d = dtrbStateDict(sd, p, t);

  DtrbArchitecture a;
  try {
    a = dtrbArchitecture(d, path);
  } catch (const Error& e) {
    throw withPrefix(e, p);
  }
  if (a.features != "ResNet" || a.prediction != "Attn")
    throw Error(path + ": strhub's TRBA has a ResNet and an Attn decoder; the file has " +
                a.describe());
  const ModelConfig c = trbaConfig(a, maxLength, charset, img, path, report);
  DtrbOptions sizes;
  sizes.imgH = img[0];
  sizes.imgW = img[1];
  sizes.character = charset;
  sizes.batchMaxLength = maxLength;
  LoadedModel loaded;
  try {
    loaded = importDtrbWeights(d, a, c, path, sizes, &report.assumed);
  } catch (const Error& e) {
    throw withPrefix(e, p);
  }
  const std::string container =
      sd.hasHyperParameters ? "a Lightning checkpoint (state_dict and hyper_parameters)"
                            : "a state dict" + std::string(p.empty() ? "" : " under '" + p + "'");
  report.description =
      "TRBA from strhub, " + container + " (" + sd.format + " format): " + c.describe() +
      "; input " + std::to_string(img[0]) + "x" + std::to_string(img[1]) +
      (a.inputChannels == 3 ? " RGB" : " grey") + ", bicubic, [-1, 1]; its token embedding (" +
      std::to_string(t.classes) + " x " + std::to_string(t.width) +
      ") folded into the decoder's input weights, its classes reordered to [B] = [GO], [E], [P], "
      "the characters";
  nlohmann::json meta;
  meta["format"] = "foveal-checkpoint";
  meta["model"] = nlohmann::json::parse(c.toJson());
  meta["imported_from"] = {
      {"kind", "strhub-trba"},        {"file", path},
      {"save_format", sd.format},     {"lightning_checkpoint", sd.hasHyperParameters},
      {"architecture", a.describe()}, {"notes", report.assumed}};
  loaded.metadataJson = meta.dump(2);
  report.provenanceJson = meta["imported_from"].dump();
  return loaded;
}

// The ViT encoder's sizes from its shapes (patch, width, depth, MLP width) and its heads from the
// settings, into `c`; returns the width.
int readVitEncoder(const StoredStateDict& sd, const std::string& enc, bool parseq, Settings& s,
                   const std::string& path, ModelConfig& c) {
  auto& t = c.transformer;
  const auto& patch = need(sd, enc + "patch_embed.proj.weight", path, 4);
  const int d = static_cast<int>(patch.shape[0]);
  const int channels = static_cast<int>(patch.shape[1]);
  t.patchH = static_cast<int>(patch.shape[2]);
  t.patchW = static_cast<int>(patch.shape[3]);
  if (channels != 3)
    throw Error(path + ": the patch embedding takes " + std::to_string(channels) +
                " channels; strhub's models read RGB images (3)");
  c.featureChannels = d;
  t.classToken = !parseq;
  t.encoderDepth = countIndexed(sd, enc + "blocks.");
  if (t.encoderDepth == 0) throw Error(path + ": no encoder blocks (" + enc + "blocks.0...)");
  t.encoderMlpHidden =
      static_cast<int>(need(sd, enc + "blocks.0.mlp.fc1.weight", path, 2).shape[0]);
  // Heads are not in the shapes: the hyper-parameters, else the hub's 64 dimensions per head.
  const int headDim = d % 64 == 0 ? 64 : d;
  t.encoderHeads = s.integer(
      "enc_num_heads", parseq ? "enc_num_heads" : "num_heads", d / headDim,
      "encoder heads " + std::to_string(d / headDim) + " (the hub's 64 dimensions per head)", 1, d);
  return d;
}

// PARSeq's decoder (d wide, for the head's `classes`): its length from pos_queries, its depth
// and MLP width from the shapes, its heads and decoding from the settings, into `c`.
void readParseqDecoder(const StoredStateDict& sd, const std::string& p, const ImportOptions& o,
                       Settings& s, int64_t classes, int d, const std::string& path,
                       ModelConfig& c) {
  auto& t = c.transformer;
  const auto& queries = need(sd, p + "pos_queries", path, 3);
  c.maxLength = static_cast<int>(queries.shape[1]) - 1;
  // The shapes fix PARSeq's: a --max_label_length is checked (it was accepted unread, even
  // when not a number).
  if (o.count("max_label_length") &&
      intOption(o, "max_label_length", c.maxLength, path, 1, 1000) != c.maxLength)
    throw Error(path + ": --max_label_length " + o.at("max_label_length") +
                ", but PARSeq's pos_queries hold " + std::to_string(c.maxLength + 1) +
                " positions: it reads at most " + std::to_string(c.maxLength) + " characters");
  const auto& embed = need(sd, p + "text_embed.embedding.weight", path, 2);
  if (embed.shape[0] != classes + 2)
    throw Error(path + ": text_embed has " + std::to_string(embed.shape[0]) +
                " tokens but the head " + std::to_string(classes) +
                " classes (strhub's tokenizer: the head's classes + [B] and [P])");
  t.decoderDepth = 0;
  while (has(sd, p + "decoder.layers." + std::to_string(t.decoderDepth) + ".norm_q.weight"))
    ++t.decoderDepth;
  if (t.decoderDepth == 0) throw Error(path + ": no decoder layers (" + p + "decoder.layers.0)");
  t.decoderMlpHidden =
      static_cast<int>(need(sd, p + "decoder.layers.0.linear1.weight", path, 2).shape[0]);
  const int decHeadDim = d % 32 == 0 ? 32 : d;
  t.decoderHeads = s.integer(
      "dec_num_heads", "dec_num_heads", d / decHeadDim,
      "decoder heads " + std::to_string(d / decHeadDim) + " (the hub's 32 dimensions per head)", 1,
      d);
  t.decodeAr = s.boolean("decode_ar", "decode_ar", true,
                         "decode_ar true (the hub's default: autoregressive first pass)");
  t.refineIters =
      s.integer("refine_iters", "refine_iters", 1, "refine_iters 1 (the hub's default)", 0, 16);
}

// The input size: --img_size or the checkpoint's, else the hub's 32x128; the position
// embedding's `patches` must fit it.
std::vector<int> vitInputSize(Settings& s, const TransformerConfig& t, int64_t patches,
                              const std::string& path, ImportReport& report) {
  std::vector<int> img = s.size("img_size", "img_size");
  if (img.empty()) {
    // The hub's 32x128 when the position embedding fits it.
    const int64_t fits = (32 / t.patchH) * (128 / t.patchW);
    if (32 % t.patchH != 0 || 128 % t.patchW != 0 || fits != patches)
      throw Error(path + ": the position embedding has " + std::to_string(patches) +
                  " patches, which is not the hub's 32x128 input with " + std::to_string(t.patchH) +
                  "x" + std::to_string(t.patchW) +
                  " patches: give the input size with --img_size HEIGHTxWIDTH");
    img = {32, 128};
    report.assumed.push_back("input 32x128 (the hub's img_size; it fits the position embedding)");
  }
  if (img[0] % t.patchH != 0 || img[1] % t.patchW != 0 ||
      (img[0] / t.patchH) * (img[1] / t.patchW) != patches)
    throw Error(
        path + ": an input of " + std::to_string(img[0]) + "x" + std::to_string(img[1]) +
        " gives " +
        std::to_string((img[0] / std::max(1, t.patchH)) * (img[1] / std::max(1, t.patchW))) +
        " patches of " + std::to_string(t.patchH) + "x" + std::to_string(t.patchW) +
        ", the position embedding has " + std::to_string(patches));
  return img;
}

// The report's description of a PARSeq or ViTSTR model.
std::string describeVit(bool parseq, const StoredStateDict& sd, const std::string& p,
                        const ModelConfig& c, const std::vector<int>& img) {
  const std::string what = parseq ? "PARSeq" : "ViTSTR";
  const std::string container =
      sd.hasHyperParameters ? "a Lightning checkpoint (state_dict and hyper_parameters)"
                            : "a state dict" + std::string(p.empty() ? "" : " under 'model.'");
  std::string description = what + " from strhub, " + container + " (" + sd.format +
                            " format): " + c.describe() + "; input " + std::to_string(img[0]) +
                            "x" + std::to_string(img[1]) + " RGB, bicubic, [-1, 1]";
  if (!parseq)
    description +=
        "; its attention (α) is the last encoder layer's attention of each output token over "
        "the patches (the class token's share left out, renormalised), mean over heads";
  return description;
}

LoadedModel loadStrhub(const FileProbe& file, const ImportOptions& o, ImportReport& report) {
  const std::string& path = file.path();
  const StoredStateDict* sdp = file.stateDict();
  if (!sdp) throw Error(path + ": not a torch.save file (strhub's models are .pt or .ckpt files)");
  const StoredStateDict& sd = *sdp;
  const Keys k = keysOf(sd);
  if (k.kind == Kind::None)
    throw Error(path +
                ": neither PARSeq's keys (encoder.patch_embed, pos_queries, text_embed, "
                "head), ViTSTR's (patch_embed, cls_token, pos_embed, head) nor TRBA's "
                "(FeatureExtraction.ConvNet, Prediction.char_embeddings)");
  if (k.kind == Kind::Trbc)
    throw Error(path +
                ": strhub's TRBC (TPS-ResNet-BiLSTM with a CTC head) is not supported; Foveal "
                "opens strhub's TRBA, PARSeq and ViTSTR");
  if (k.kind == Kind::Trba) return loadTrba(file, o, report, k);
  const bool parseq = k.kind == Kind::Parseq;
  const std::string& p = k.prefix;
  const std::string enc = parseq ? p + "encoder." : p;
  Settings s(sd, o, path, report);

  ModelConfig c;
  c.transformation = "none";
  c.features = "vit";
  c.sequence = "none";
  c.prediction = parseq ? "parseq" : "vitstr";
  const int d = readVitEncoder(sd, enc, parseq, s, path, c);
  const auto& head = need(sd, p + "head.weight", path, 2);
  const int64_t classes = head.shape[0];
  const auto& pos = need(sd, enc + "pos_embed", path, 3);
  const int64_t patches = pos.shape[1] - (parseq ? 0 : 1);
  if (parseq) {
    readParseqDecoder(sd, p, o, s, classes, d, path, c);
  } else {
    c.maxLength = s.integer("max_label_length", "max_label_length", 25,
                            "max_label_length 25 (the hub's default)", 1, 1000);
  }
  c.charset = charsetFor(s, classes, 1, "[E] + the characters", path);
  const std::vector<int> img = vitInputSize(s, c.transformer, patches, path, report);
  c.preprocessing.inputH = img[0];
  c.preprocessing.inputW = img[1];
  c.preprocessing.colour = "rgb";
  c.preprocessing.resize = "pil_bicubic";
  c.preprocessing.keepRatioPad = false;
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  LoadedModel loaded;
  loaded.config = c;
  loaded.model = Recognizer(c);
  copyWeights(loaded.model, sd, p, parseq ? renameParseq : renameVitstr, path);
  loaded.model->eval();

  report.description = describeVit(parseq, sd, p, c, img);
  nlohmann::json meta;
  meta["format"] = "foveal-checkpoint";
  meta["model"] = nlohmann::json::parse(c.toJson());
  meta["imported_from"] = {{"kind", parseq ? "strhub-parseq" : "strhub-vitstr"},
                           {"file", path},
                           {"save_format", sd.format},
                           {"lightning_checkpoint", sd.hasHyperParameters},
                           {"notes", report.assumed}};
  loaded.metadataJson = meta.dump(2);
  report.provenanceJson = meta["imported_from"].dump();
  return loaded;
}

}  // namespace

// The registry's entry (model_format.cpp).
ModelFormat strhubModelFormat() {
  ModelFormat f;
  f.name = "strhub";
  f.summary =
      "PARSeq's model hub (baudm/parseq): PARSeq, ViTSTR and TRBA, released .pt or Lightning "
      ".ckpt";
  f.options = {
      {"character",
       "the characters of the classes in order (instead of the checkpoint's charset_train)", false,
       "the .ckpt's charset_train, or the hub's 94 for a .pt with 95 classes (TRBA: 97)"},
      {"img_size", "the input size HEIGHTxWIDTH", false,
       "the .ckpt's img_size, else 32x128 when it fits"},
      {"enc_num_heads", "encoder attention heads (not in the shapes)", false,
       "the .ckpt's, else width / 64"},
      {"dec_num_heads", "PARSeq's decoder attention heads", false, "the .ckpt's, else width / 32"},
      {"decode_ar", "PARSeq: true (autoregressive first pass) or false (parallel)", false,
       "the .ckpt's, else true"},
      {"refine_iters", "PARSeq: cloze refinement passes", false, "the .ckpt's, else 1"},
      {"max_label_length",
       "ViTSTR and TRBA: characters read (the output tokens or decoder steps minus one); "
       "PARSeq: checked against its pos_queries",
       false, "the .ckpt's, else 25 (PARSeq: its pos_queries')"},
  };
  f.sniff = sniffStrhub;
  f.load = loadStrhub;
  return f;
}

}  // namespace foveal::core
