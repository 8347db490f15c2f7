#include "train/train_config.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"
#include "model/model_variants.h"
#include "trace/model_session.h"

namespace foveal::core::train {

using nlohmann::json;

void TrainConfig::validate() const {
  model.validate();
  auto fail = [](const std::string& what) { throw Error("train config: " + what); };
  if (trainData.empty()) fail("no training data (train_data is empty)");
  if (iterations < 0) fail("iterations must not be negative");
  if (batchSize < 1) fail("batch size must be positive");
  if (microBatches < 1 || microBatches > batchSize)
    fail("micro_batches must be between 1 and the batch size");
  for (const auto& [name, v] : {std::pair<const char*, double>{"lambda_r", lambdaR},
                                {"reference_weight", referenceWeight},
                                {"lr", lr},
                                {"rho", rho},
                                {"eps", eps},
                                {"weight_decay", weightDecay}})
    if (!std::isfinite(v)) fail(std::string(name) + " must be a finite number");
  if (lambdaR < 0) fail("lambda_r must not be negative");
  if (referenceWeight < 0) fail("reference_weight must not be negative");
  if (logInterval < 1) fail("log_interval must be positive");
  if (evalInterval < 0 || checkpointInterval < 0 || historyInterval < 0)
    fail("intervals must not be negative");
  if (historyKeep < 2 || historyKeep > 10000)
    fail("history_keep must be between 2 and 10000, not " + std::to_string(historyKeep));
  if (evalLimit < 0) fail("eval_limit must not be negative");
  if (maxNonFinite < 1) fail("max_non_finite must be positive");
  if (lr < 0 || rho < 0 || rho > 1 || eps < 0 || weightDecay < 0)
    fail("optimiser settings out of range (lr >= 0, 0 <= rho <= 1, eps >= 0, weight decay >= 0)");
  if (device != "cpu" && device != "cuda" && device.rfind("cuda:", 0) != 0)
    fail("device must be cpu, cuda or cuda:N, not \"" + device + "\"");
  if (threads < 0 || loaderThreads < 1) fail("threads must be >= 0 and loader_threads >= 1");
  if (threads > kMaxComputeThreads || loaderThreads > kMaxComputeThreads)
    fail("threads and loader_threads must be at most " + std::to_string(kMaxComputeThreads));
}

std::string TrainConfig::toJson() const {
  json j;
  j["preset"] = preset;
  j["model"] = json::parse(model.toJson());
  j["train_data"] = trainData;
  j["eval_data"] = evalData;
  if (!initFrom.empty()) j["init_from"] = initFrom;
  j["iterations"] = iterations;
  j["batch_size"] = batchSize;
  j["micro_batches"] = microBatches;
  j["seed"] = seed;
  j["lambda_r"] = lambdaR;
  j["reference_weight"] = referenceWeight;
  j["log_interval"] = logInterval;
  j["eval_interval"] = evalInterval;
  j["eval_limit"] = evalLimit;
  j["checkpoint_interval"] = checkpointInterval;
  j["history_interval"] = historyInterval;
  j["history_keep"] = historyKeep;
  j["max_non_finite"] = maxNonFinite;
  j["optimizer"] = {
      {"name", "adadelta"}, {"lr", lr}, {"rho", rho}, {"eps", eps}, {"weight_decay", weightDecay}};
  j["device"] = device;
  j["threads"] = threads;
  j["loader_threads"] = loaderThreads;
  j["bf16"] = bf16;
  j["skip_ended_rows"] = skipEndedRows;
  return j.dump(2);
}

namespace {

// The keys `obj` may hold: an edit of config.json before --resume that adds a key (a typo of a
// real one, or one this version does not know) was ignored without a word.
void checkKeys(const json& obj, const std::set<std::string>& known, const std::string& where) {
  for (const auto& item : obj.items()) {
    if (known.count(item.key())) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw Error("unknown key '" + where + item.key() + "' (the keys are " + list + ")");
  }
}

// The model's keys: every one ModelConfig::toJson writes, the optional ones included.
std::set<std::string> modelKeys() {
  ModelConfig m;
  m.transformation = "tps";
  m.positions = "sine2d";
  m.featureChannels = 1;
  m.hiddenSize = 1;
  std::set<std::string> keys;
  const json written = json::parse(m.toJson());  // kept: items() refers into it
  for (const auto& item : written.items()) keys.insert(item.key());
  return keys;
}

// Every key of a train config and of its model is one this version reads.
void checkTrainConfigKeys(const json& j) {
  checkKeys(j, {"preset",
                "model",
                "train_data",
                "eval_data",
                "init_from",
                "iterations",
                "batch_size",
                "micro_batches",
                "seed",
                "lambda_r",
                "reference_weight",
                "log_interval",
                "eval_interval",
                "eval_limit",
                "checkpoint_interval",
                "history_interval",
                "history_keep",
                "max_non_finite",
                "optimizer",
                "device",
                "threads",
                "loader_threads",
                "bf16",
                "skip_ended_rows"},
            "");
  if (j.contains("model") && j.at("model").is_object())
    checkKeys(j.at("model"), modelKeys(), "model.");
}

// An empty preset, or one of presets().
void checkPresetName(const std::string& preset) {
  if (preset.empty()) return;
  std::string names;
  bool found = false;
  for (const auto& p : presets()) {
    found = found || p.name == preset;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  if (!found) throw Error("'preset' is \"" + preset + "\", not one of the presets (" + names + ")");
}

// The "optimizer" object: AdaDelta's settings.
void readOptimizer(const json& o, TrainConfig& c) {
  if (!o.is_object()) throw Error("'optimizer' must be an object");
  checkKeys(o, {"name", "lr", "rho", "eps", "weight_decay"}, "optimizer.");
  if (o.value("name", std::string("adadelta")) != "adadelta")
    throw Error("optimizer must be adadelta");
  c.lr = o.value("lr", 1.0);
  c.rho = o.value("rho", 0.95);
  c.eps = o.value("eps", 1e-6);
  c.weightDecay = o.value("weight_decay", 4e-5);
}

}  // namespace

TrainConfig TrainConfig::fromJson(const std::string& text, const std::string& origin) {
  TrainConfig c;
  std::string key;  // the key being read, named when its value is of the wrong type
  try {
    const json j = json::parse(text);
    if (!j.is_object()) throw Error("not a JSON object");
    checkTrainConfigKeys(j);
    auto get = [&](const char* name, auto fallback) {
      key = name;
      using T = decltype(fallback);
      T v = j.contains(name) ? j.at(name).get<T>() : fallback;
      key.clear();
      return v;
    };
    auto need = [&](const char* name, auto type) {
      key = name;
      if (!j.contains(name)) throw Error("key '" + key + "' is missing");
      auto v = j.at(name).get<decltype(type)>();
      key.clear();
      return v;
    };
    c.preset = get("preset", std::string());
    checkPresetName(c.preset);
    key = "model";
    if (!j.contains("model")) throw Error("key 'model' is missing");
    c.model = ModelConfig::fromJson(j.at("model").dump(), origin);
    key.clear();
    c.trainData = need("train_data", std::vector<std::string>());
    c.evalData = get("eval_data", std::vector<std::string>());
    c.initFrom = get("init_from", std::string());
    c.iterations = need("iterations", int64_t(0));
    c.batchSize = need("batch_size", int(0));
    c.microBatches = get("micro_batches", 1);
    c.seed = get("seed", uint64_t(1));
    c.lambdaR = get("lambda_r", 1.0);
    c.referenceWeight = get("reference_weight", 1.0);
    c.logInterval = get("log_interval", int64_t(10));
    c.evalInterval = get("eval_interval", int64_t(1000));
    c.evalLimit = get("eval_limit", int64_t(1000));
    c.checkpointInterval = get("checkpoint_interval", int64_t(1000));
    // Runs from before the history: none (their config says nothing about one).
    c.historyInterval = get("history_interval", int64_t(0));
    c.historyKeep = get("history_keep", 24);
    c.maxNonFinite = get("max_non_finite", 20);
    if (j.contains("optimizer")) {
      key = "optimizer";
      readOptimizer(j.at("optimizer"), c);
      key.clear();
    }
    c.device = get("device", std::string("cpu"));
    c.threads = get("threads", 0);
    c.loaderThreads = get("loader_threads", 2);
    c.bf16 = get("bf16", true);
    c.skipEndedRows = get("skip_ended_rows", false);
  } catch (const json::exception& e) {
    throw Error(origin + ": bad train config JSON" + (key.empty() ? "" : " at key '" + key + "'") +
                ": " + e.what());
  } catch (const Error& e) {
    const std::string what = e.what();
    throw Error(what.rfind(origin, 0) == 0 ? what : origin + ": " + what);
  }
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  return c;
}

std::vector<std::string> digitProtocolSets(int64_t count) {
  std::vector<std::string> out;
  for (bool rotated : {false, true})
    for (int len : {5, 7, 9, 11, 13})
      out.push_back("digits:len=" + std::to_string(len) + (rotated ? ",rotated" : "") +
                    ",split=test,seed=1" + (count > 0 ? ",count=" + std::to_string(count) : ""));
  return out;
}

std::vector<std::string> digitTrainPoolSets(int64_t count) {
  std::vector<std::string> out;
  for (int len : {5, 13})
    out.push_back("digits:len=" + std::to_string(len) + ",split=train,seed=1,count=" +
                  std::to_string(count > 0 ? count : int64_t(10000)));
  return out;
}

namespace {

TrainConfig digits(const std::string& a, ContextKind c, bool reference) {
  TrainConfig t;
  t.model.attention = a;
  t.model.context = c;
  t.model.numStns = 1;
  t.model.reference = reference;
  t.model.maxLength = 13;
  t.model.charset = "0123456789";
  t.model.preprocessing.regionScale = 1.8;
  // One model for the ten settings of Table 1: their 20,000-image training sets, concatenated.
  for (bool rotated : {false, true})
    for (int len : {5, 7, 9, 11, 13})
      t.trainData.push_back("digits:len=" + std::to_string(len) + (rotated ? ",rotated" : "") +
                            ",split=train,seed=1");
  t.evalData = digitProtocolSets();
  t.iterations = 30000;
  t.lambdaR = 1.0;
  return t;
}

// 2-D attention on the digit task: the VGG keeps a grid of 4 x 25 cells, each row read by the
// BiLSTM, with the sine positions of the cells (seeds 000 and 004, Show, Attend and Tell).
TrainConfig digits2d(const std::string& a) {
  TrainConfig t = digits(a, ContextKind::Pooling, false);
  t.model.features = "vgg2d";
  t.model.positions = "sine2d";
  return t;
}

TrainConfig text(const std::string& a, ContextKind c, int stns) {
  TrainConfig t;
  t.model.attention = a;
  t.model.context = c;
  t.model.numStns = stns;
  t.model.firstStnTranslationOnly = true;
  t.model.maxLength = 16;
  t.model.charset = "0123456789abcdefghijklmnopqrstuvwxyz";
  t.model.caseInsensitive = true;
  t.model.preprocessing.regionScale = 2.0;
  // MJSynth is not bundled: the synthetic word stream stands in (--data takes an LMDB instead).
  t.trainData = {"words:split=stream,seed=1,maxlen=16"};
  t.evalData = {"words:seed=2,count=2000,maxlen=16"};
  t.iterations = 400000;  // paper section 4.2
  t.lambdaR = 0.1;
  return t;
}

}  // namespace

std::vector<Preset> presets() {
  using C = ContextKind;
  // The field's models on the digit task: their stages from the one catalogue (model_variants).
  auto field = [](const std::string& variant) {
    TrainConfig t = digits("soft", C::Pooling, false);
    const ModelConfig m = t.model;
    t.model = modelVariant(variant).config;
    t.model.maxLength = m.maxLength;
    t.model.charset = m.charset;
    t.model.preprocessing.regionScale = m.preprocessing.regionScale;
    return t;
  };
  std::vector<Preset> p = {
      {"digits-soft", "digit sequences, soft attention", digits("soft", C::Pooling, false)},
      {"digits-hard", "digit sequences, hard attention", digits("hard", C::Pooling, false)},
      {"digits-sharp-pooling", "digit sequences, sharp attention, pooling context",
       digits("sharp", C::Pooling, false)},
      {"digits-sharp-chain", "digit sequences, sharp attention, chain context",
       digits("sharp", C::Chain, false)},
      {"digits-sharp-weighting", "digit sequences, sharp attention, weighting context",
       digits("sharp", C::Weighting, false)},
      {"digits-sharp-pooling-reference",
       "digit sequences, sharp pooling + L2 loss to Roboto Bold reference glyphs",
       digits("sharp", C::Pooling, true)},
      {"digits-soft-2d", "digit sequences, soft attention over a 4 x 25 grid of VGG cells",
       digits2d("soft")},
      {"digits-hard-2d", "digit sequences, hard attention over a 4 x 25 grid of VGG cells",
       digits2d("hard")},
      {"digits-crnn", "digit sequences, CRNN (none-vgg-bilstm-ctc)", field("crnn")},
      {"digits-rare", "digit sequences, RARE (tps-vgg-bilstm-attention, soft, DTRB's cell)",
       field("rare")},
      {"digits-trba", "digit sequences, TRBA (tps-resnet-bilstm-attention, soft, DTRB's cell)",
       field("trba")},
      {"text-soft", "scene text, soft attention", text("soft", C::Pooling, 1)},
      {"text-hard", "scene text, hard attention", text("hard", C::Pooling, 1)},
      {"text-sharp-chain-1stn", "scene text, sharp chain, one affine STN",
       text("sharp", C::Chain, 1)},
      {"text-sharp-pooling-2stn", "scene text, sharp pooling, coarse x-shift STN + affine STN",
       text("sharp", C::Pooling, 2)},
      {"text-sharp-chain-2stn", "scene text, sharp chain, coarse x-shift STN + affine STN",
       text("sharp", C::Chain, 2)},
      {"text-sharp-weighting-2stn", "scene text, sharp weighting, coarse x-shift STN + affine STN",
       text("sharp", C::Weighting, 2)},
  };
  for (auto& x : p) x.config.preset = x.name;
  return p;
}

std::string presetsJson() {
  json all = json::array();
  for (const auto& p : presets())
    all.push_back({{"name", p.name},
                   {"description", p.description},
                   {"stages", p.config.model.stageString()},
                   {"config", json::parse(p.config.toJson())}});
  return all.dump(2);
}

TrainConfig presetConfig(const std::string& name, double width) {
  std::string names;
  for (auto& p : presets()) {
    if (p.name == name) {
      p.config.model.width = width;
      p.config.validate();
      return p.config;
    }
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw Error("unknown preset '" + name + "' (presets: " + names + ")");
}

}  // namespace foveal::core::train
