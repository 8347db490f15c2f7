#include "trace/model_session.h"

#include <ATen/Parallel.h>
#include <torch/utils.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/error.h"
#include "engines/tesseract_engine.h"
#include "formats/checkpoint.h"
#include "image/preprocess.h"
#include "trace/attribution_engine.h"
#include "trace/contrast_retry.h"
#include "trace/finite_outputs.h"
#include "trace/trace_builder.h"
#include "trace/truth_alignment.h"

namespace foveal::core {

void setComputeThreads(int threads) {
  if (threads < 0 || threads > kMaxComputeThreads)
    throw Error("--threads " + std::to_string(threads) +
                ": the number of compute threads must be " + "between 0 (one per core) and " +
                std::to_string(kMaxComputeThreads));
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
}

int computeThreads() { return at::get_num_threads(); }

struct ModelSession::Impl {
  ModelConfig config;
  Recognizer model{nullptr};
  std::string path;
  std::string metadataJson;  ///< the file's metadata as loaded (formats/checkpoint.h)
  /// Set instead of `model` for an engine named by its spec (tesseract:LANG).
  std::shared_ptr<const TesseractEngine> engine;
};

ModelSession::ModelSession(std::unique_ptr<Impl> impl) : d(std::move(impl)) {}
ModelSession::~ModelSession() = default;

std::shared_ptr<ModelSession> ModelSession::open(const std::string& path, const DtrbOptions& dtrb) {
  return open(path, importOptionsOf(dtrb));
}

std::shared_ptr<ModelSession> ModelSession::open(const std::string& path,
                                                 const ImportOptions& options,
                                                 ImportReport* report) {
  if (isTesseractSpec(path)) {
    auto impl = std::make_unique<Impl>();
    impl->engine = TesseractEngine::open(parseTesseractSpec(path));
    impl->config.charset.clear();  // Tesseract's own: no charset to check a truth against
    impl->path = path;
    return std::shared_ptr<ModelSession>(new ModelSession(std::move(impl)));
  }
  auto loaded = loadModelFile(path, options, report);
  auto impl = std::make_unique<Impl>();
  impl->config = loaded.config;
  impl->model = loaded.model;
  impl->metadataJson = loaded.metadataJson;
  impl->path = path;
  return std::shared_ptr<ModelSession>(new ModelSession(std::move(impl)));
}

std::shared_ptr<ModelSession> ModelSession::create(const ModelConfig& config, uint64_t seed) {
  config.validate();
  torch::manual_seed(seed);
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->model = Recognizer(config);
  impl->model->eval();
  return std::shared_ptr<ModelSession>(new ModelSession(std::move(impl)));
}

const ModelConfig& ModelSession::config() const { return d->config; }

std::map<std::string, std::vector<ModelSession::HistoryPoint>> ModelSession::storedHistory() const {
  std::map<std::string, std::vector<HistoryPoint>> out;
  if (d->metadataJson.empty()) return out;
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(d->metadataJson);
  } catch (const nlohmann::json::exception&) {
    return out;
  }
  // kraken: "accuracy" is [[step, {"val_accuracy": a, "val_metric": m, ...}], ...] in kraken >=
  // 5, [[step, a], ...] before.
  const auto k = meta.find("kraken_meta");
  if (k == meta.end() || !k->contains("accuracy") || !(*k)["accuracy"].is_array()) return out;
  for (const auto& e : (*k)["accuracy"]) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_number()) continue;
    const double step = e[0].get<double>();
    if (e[1].is_number()) {
      out["val_accuracy"].push_back({step, e[1].get<double>()});
    } else if (e[1].is_object()) {
      for (const auto& [name, v] : e[1].items())
        if (v.is_number()) out[name].push_back({step, v.get<double>()});
    }
  }
  return out;
}
const std::string& ModelSession::path() const { return d->path; }
bool ModelSession::isEngine() const { return d->engine != nullptr; }
std::string ModelSession::describe() const {
  return d->engine ? d->engine->describe() : d->config.describe();
}

std::vector<Box> ModelSession::inputRegions() const {
  if (d->engine) return {};
  return d->model->geometry().regionBoxes();
}

namespace {

DecodeOptions decodeOptions(const TraceOptions& options) {
  DecodeOptions dec;
  dec.sample = options.sample;
  dec.beamWidth = options.beamWidth;
  if (options.beamHypothesis != 0 && options.beamWidth <= 1)
    throw Error("a beam hypothesis other than the best needs a beam search (width > 1)");
  dec.beamHypothesis = options.beamHypothesis;
  if (options.sample) dec.generator = at::detail::createCPUGenerator(options.seed);
  return dec;
}

}  // namespace

LineReading ModelSession::traceLine(const GreyImage& page, const KrakenLineSpec& line,
                                    const std::string& source, const TraceOptions& options) const {
  if (page.empty()) throw Error(source + ": empty image");
  const auto& cfg = d->config;
  KrakenInputSpec in;
  in.height = cfg.preprocessing.inputH;
  in.channels = cfg.preprocessing.channels();
  in.padding = cfg.kraken.empty() ? 0 : cfg.kraken.padding;
  in.legacyPolygons = cfg.kraken.legacyPolygons;
  const KrakenLine k = extractKrakenLine(page, line, in);
  LineReading r;
  r.line = k.extracted;
  r.trace.source = source;
  if (k.empty) {
    r.empty = true;
    r.why = k.emptyReason;
    r.trace.decoder = cfg.prediction;
    r.trace.modelKind = cfg.isCtc() ? "ctc" : cfg.attention;
    r.trace.stages = cfg.stageString();
    r.trace.modelDescription = cfg.describe();
    r.trace.imageW = k.extracted.width;
    r.trace.imageH = k.extracted.height;
    return r;
  }
  if (cfg.kraken.empty() || d->engine) {
    r.trace = trace(k.extracted, source, options);
  } else {
    c10::InferenceMode guard;
    std::vector<float> values = k.input;
    ModelInput input;
    input.image =
        torch::from_blob(values.data(), {1, k.inputC, k.inputH, k.inputW}, torch::kFloat).clone();
    input.contentW = {k.inputW};
    auto out = d->model->forward(input.image, {}, decodeOptions(options));
    checkFiniteOutputs(out.logProbs, d->path, source);
    r.trace = buildTrace(d->model, out, input, 0, k.extracted.width, k.extracted.height,
                         options.topk, options.stopAtEnd);
    if (!options.truth.empty()) alignTruth(r.trace, d->model, out, input, 0, options.truth);
    r.trace.source = source;
    r.trace.beamWidth = std::max(1, options.beamWidth);
  }
  for (const auto& st : r.trace.steps) {
    std::vector<PointF> cut;
    for (const auto& p : krakenColumnSpanToPolygon(k, line, static_cast<int>(st.box.x),
                                                   static_cast<int>(st.box.x + st.box.w)))
      cut.push_back({p.x, p.y});
    r.cuts.push_back(std::move(cut));
  }
  return r;
}

Trace ModelSession::trace(const GreyImage& image, const std::string& source,
                          const TraceOptions& options) const {
  if (image.empty()) throw Error(source + ": empty image");
  if (d->engine) {  // its own decoding: no beam, no sampling, no frames to align
    Trace tr = d->engine->read(image, source);
    if (!options.truth.empty()) {
      tr.alignment.truth = options.truth;
      tr.alignment.error = "forced alignment needs a CTC model, not " + d->path;
    }
    return tr;
  }
  if (!d->config.kraken.empty()) {
    auto r = traceLine(image, krakenBoxLine(0, 0, image.width, image.height), source, options);
    if (r.empty) {  // kraken's empty record: an empty reading of the whole image
      r.trace.imageW = image.width;
      r.trace.imageH = image.height;
    }
    return r.trace;
  }
  c10::InferenceMode guard;
  const bool sharp = d->config.needsUpsampled();
  auto input = preprocess({image}, d->config.preprocessing, sharp);
  auto out = d->model->forward(input.image, input.upsampled, decodeOptions(options));
  // Before anything reads them: NaN outputs were traced, evaluated and explained in silence.
  checkFiniteOutputs(out.logProbs, d->path, source);
  auto tr = buildTrace(d->model, out, input, 0, image.width, image.height, options.topk,
                       options.stopAtEnd);
  if (d->config.preprocessing.contrastThreshold > 0)  // EasyOCR's get_text reads it again
    tr = contrastRetry(d->model, image, std::move(tr), decodeOptions(options), options.topk,
                       options.stopAtEnd);
  if (!options.truth.empty()) {
    if (!tr.contrastPass) {
      alignTruth(tr, d->model, out, input, 0, options.truth);
    } else {  // the pass shown is the contrast pass: align over its frames
      const auto again = preprocess({image}, d->config.preprocessing, sharp, true);
      const auto second = d->model->forward(again.image, again.upsampled, decodeOptions(options));
      alignTruth(tr, d->model, second, again, 0, options.truth);
    }
  }
  tr.source = source;
  tr.beamWidth = std::max(1, options.beamWidth);
  tr.hypothesis = options.beamWidth > 1 ? options.beamHypothesis : 0;
  if (tr.beamWidth > 1 && !d->model->searchesWithBeam()) {
    tr.beamWidth = 1;
    tr.hypothesis = 0;
    tr.decodingNote = "beam not available for this model: read greedily";
  }
  return tr;
}

Explanation ModelSession::explain(const GreyImage& image, const Trace& trace,
                                  const AttributionOptions& options) const {
  if (d->engine) refuseEngine(d->path, kEngineNoGradients, "explanations differentiate a model");
  if (image.empty()) throw Error(trace.source + ": empty image");
  return core::explain(d->model, image, trace, options);
}

std::vector<FaithfulnessCurves> ModelSession::curves(const GreyImage& image, const Trace& trace,
                                                     const std::vector<CurveRequest>& requests,
                                                     const CurveOptions& options) const {
  if (d->engine)
    refuseEngine(d->path, kEngineNoGradients, "faithfulness curves need a model's maps");
  if (image.empty()) throw Error(trace.source + ": empty image");
  return deletionInsertionCurves(d->model, image, trace, requests, options);
}

void ModelSession::save(const std::string& path) const {
  if (d->engine) throw Error(path + ": " + d->path + " is an engine, not a model to save");
  saveCheckpoint(path, d->model);
  d->path = path;
}

}  // namespace foveal::core
