#include "trace/model_session.h"

#include <ATen/Parallel.h>
#include <torch/utils.h>
#include <thread>

#include "base/error.h"
#include "engines/tesseract_engine.h"
#include "formats/checkpoint.h"
#include "image/preprocess.h"
#include "trace/attribution_engine.h"
#include "trace/trace_builder.h"

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
const std::string& ModelSession::path() const { return d->path; }
bool ModelSession::isEngine() const { return d->engine != nullptr; }
std::string ModelSession::describe() const {
  return d->engine ? d->engine->describe() : d->config.describe();
}

std::vector<Box> ModelSession::inputRegions() const {
  if (d->engine) return {};
  return d->model->geometry().regionBoxes();
}

Trace ModelSession::trace(const GreyImage& image, const std::string& source,
                          const TraceOptions& options) const {
  if (image.empty()) throw Error(source + ": empty image");
  if (d->engine) return d->engine->read(image, source);  // its own decoding: no beam, no sampling
  c10::InferenceMode guard;
  const bool sharp = d->config.needsUpsampled();
  auto input = preprocess({image}, d->config.preprocessing, sharp);
  DecodeOptions dec;
  dec.sample = options.sample;
  dec.beamWidth = options.beamWidth;
  if (options.beamHypothesis != 0 && options.beamWidth <= 1)
    throw Error("a beam hypothesis other than the best needs a beam search (width > 1)");
  dec.beamHypothesis = options.beamHypothesis;
  if (options.sample) {
    dec.generator = at::detail::createCPUGenerator(options.seed);
  }
  auto out = d->model->forward(input.image, input.upsampled, dec);
  auto tr = buildTrace(d->model, out, input, 0, image.width, image.height, options.topk,
                       options.stopAtEnd);
  tr.source = source;
  tr.beamWidth = std::max(1, options.beamWidth);
  tr.hypothesis = options.beamWidth > 1 ? options.beamHypothesis : 0;
  return tr;
}

Explanation ModelSession::explain(const GreyImage& image, const Trace& trace,
                                  const AttributionOptions& options) const {
  if (image.empty()) throw Error(trace.source + ": empty image");
  return core::explain(d->model, image, trace, options);
}

std::vector<FaithfulnessCurves> ModelSession::curves(const GreyImage& image, const Trace& trace,
                                                     const std::vector<CurveRequest>& requests,
                                                     const CurveOptions& options) const {
  if (image.empty()) throw Error(trace.source + ": empty image");
  return deletionInsertionCurves(d->model, image, trace, requests, options);
}

void ModelSession::save(const std::string& path) const {
  if (d->engine) throw Error(path + ": " + d->path + " is an engine, not a model to save");
  saveCheckpoint(path, d->model);
  d->path = path;
}

}  // namespace foveal::core
