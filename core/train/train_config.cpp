#include "train/train_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

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
  return j.dump(2);
}

TrainConfig TrainConfig::fromJson(const std::string& text, const std::string& origin) {
  TrainConfig c;
  try {
    const json j = json::parse(text);
    if (!j.is_object()) throw Error("not a JSON object");
    c.preset = j.value("preset", std::string());
    c.model = ModelConfig::fromJson(j.at("model").dump(), origin);
    c.trainData = j.at("train_data").get<std::vector<std::string>>();
    c.evalData = j.value("eval_data", std::vector<std::string>());
    c.initFrom = j.value("init_from", std::string());
    c.iterations = j.at("iterations").get<int64_t>();
    c.batchSize = j.at("batch_size").get<int>();
    c.microBatches = j.value("micro_batches", 1);
    c.seed = j.value("seed", uint64_t(1));
    c.lambdaR = j.value("lambda_r", 1.0);
    c.referenceWeight = j.value("reference_weight", 1.0);
    c.logInterval = j.value("log_interval", int64_t(10));
    c.evalInterval = j.value("eval_interval", int64_t(1000));
    c.evalLimit = j.value("eval_limit", int64_t(1000));
    c.checkpointInterval = j.value("checkpoint_interval", int64_t(1000));
    // Runs from before the history: none (their config says nothing about one).
    c.historyInterval = j.value("history_interval", int64_t(0));
    c.historyKeep = j.value("history_keep", 24);
    c.maxNonFinite = j.value("max_non_finite", 20);
    if (j.contains("optimizer")) {
      const auto& o = j.at("optimizer");
      if (o.value("name", std::string("adadelta")) != "adadelta")
        throw Error("optimizer must be adadelta");
      c.lr = o.value("lr", 1.0);
      c.rho = o.value("rho", 0.95);
      c.eps = o.value("eps", 1e-6);
      c.weightDecay = o.value("weight_decay", 4e-5);
    }
    c.device = j.value("device", std::string("cpu"));
    c.threads = j.value("threads", 0);
    c.loaderThreads = j.value("loader_threads", 2);
    c.bf16 = j.value("bf16", true);
  } catch (const json::exception& e) {
    throw Error(origin + ": bad train config JSON: " + e.what());
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
