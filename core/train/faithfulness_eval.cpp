#include "train/faithfulness_eval.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/error.h"
#include "data/dataset_factory.h"
#include "engines/tesseract_spec.h"
#include "model/charset.h"
#include "trace/model_session.h"
#include "trace/pixel_maps.h"

namespace foveal::core::train {

namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

namespace {

// One image's contribution to the table, kept until the images before it are in (the table's
// sums are then added in image order, so the table does not depend on the number of workers).
struct ImageResult {
  struct Item {
    size_t method;
    FaithfulnessCurves curves;
    std::vector<double> map;
    bool boxed = false;
    Box box;
    double correlation = 0;
  };
  std::vector<Item> items;
  std::vector<double> seconds;  // per method
  int width = 0, height = 0;
};

ImageResult scoreImage(ModelSession& session, const data::Dataset& data, int64_t i, int end,
                       const FaithfulnessOptions& o) {
  ImageResult result;
  result.seconds.assign(o.methods.size(), 0.0);
  const auto sample = data.get(static_cast<size_t>(i));
  const auto& image = sample.image;
  result.width = image.width;
  result.height = image.height;
  Trace trace = session.trace(image, data.entryName(static_cast<size_t>(i)));
  const auto boxes = data.charBoxes(static_cast<size_t>(i));
  std::vector<int> steps;  // the character steps
  for (size_t t = 0; t < trace.steps.size(); ++t)
    if (trace.isCtc() || trace.steps[t].tokenIndex != end) steps.push_back(static_cast<int>(t));
  if (steps.empty()) return result;
  // Every method's map at every step, then all their curves in one batch.
  std::vector<std::vector<std::vector<double>>> maps(o.methods.size());  // [method][step]
  for (size_t k = 0; k < o.methods.size(); ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::string& m = o.methods[k];
    if (m == "attention") {
      for (int t : steps)
        maps[k].push_back(stepPixelMap(trace, kAttentionMap, static_cast<size_t>(t)));
    } else if (m == "random") {
      // One random map per image, the floor of every step: its curves' images are read once
      // for all the steps (deletionInsertionCurves shares a map's images between its requests).
      const auto floor = randomMap(image.width, image.height, static_cast<uint64_t>(i) * 1000003u);
      for (size_t s = 0; s < steps.size(); ++s) maps[k].push_back(floor);
    } else {
      AttributionOptions ao;
      ao.method = attributionMethodFromString(m);
      ao.igSteps = o.igSteps;
      ao.patch = o.patch;
      ao.stride = o.stride;
      ao.steps = steps;
      const auto e = session.explain(image, trace, ao);
      for (int t : steps) maps[k].push_back(e.maps[static_cast<size_t>(t)]);
    }
    result.seconds[k] = since(t0);
  }
  std::vector<CurveRequest> requests;
  for (size_t k = 0; k < o.methods.size(); ++k)
    for (size_t s = 0; s < steps.size(); ++s) requests.push_back({steps[s], maps[k][s]});
  auto curves = session.curves(image, trace, requests, o.curves);
  size_t r = 0;
  const auto attention = std::find(o.methods.begin(), o.methods.end(), "attention");
  for (size_t k = 0; k < o.methods.size(); ++k)
    for (size_t s = 0; s < steps.size(); ++s, ++r) {
      const size_t t = static_cast<size_t>(steps[s]);
      ImageResult::Item item;
      item.method = k;
      item.curves = std::move(curves[r]);
      item.boxed = t < boxes.size();
      if (item.boxed) item.box = boxes[t];
      item.correlation = std::numeric_limits<double>::quiet_NaN();
      if (attention != o.methods.end() && o.methods[k] != "attention")
        item.correlation = rankCorrelation(
            maps[static_cast<size_t>(attention - o.methods.begin())][s], maps[k][s]);
      item.map = maps[k][s];
      result.items.push_back(std::move(item));
    }
  return result;
}

void addImage(FaithfulnessTable& table, const ImageResult& r, const FaithfulnessOptions& o) {
  ++table.images;
  for (size_t k = 0; k < r.seconds.size(); ++k) table.addSeconds(o.methods[k], r.seconds[k]);
  for (const auto& item : r.items)
    table.add(o.methods[item.method], item.curves, item.map, r.width, r.height,
              item.boxed ? &item.box : nullptr, item.correlation);
}

// The images one after the other, on this thread.
void scoreInTurn(ModelSession& session, const data::Dataset& data, int64_t n, int end,
                 const FaithfulnessOptions& o, FaithfulnessReport& report) {
  OperatorRecorder recorder(o.profile > 0);
  for (int64_t i = 0; i < n; ++i) {
    addImage(report.table, scoreImage(session, data, i, end, o), o);
    if (o.progress && !o.progress(i + 1, n)) break;
  }
  report.profile = recorder.finish();
  report.profile.keep(o.profile);
}

// Several images at once, each worker with its own model and dataset and one compute thread:
// a digit model's passes are too small to keep two threads busy, separate images are not.
void scoreInParallel(const std::string& modelPath, const std::string& dataset,
                     ModelSession& session, const data::Dataset& data, int64_t n, int end,
                     int workers, const FaithfulnessOptions& o, FaithfulnessReport& report) {
  const int threadsBefore = computeThreads();
  std::mutex lock;
  std::map<int64_t, ImageResult> pending;
  int64_t next = 0, committed = 0;
  bool stop = false;
  std::exception_ptr failure;
  auto work = [&](int w) {
    OperatorRecorder recorder(o.profile > 0);  // the profiler records its own thread's operators
    auto keepProfile = [&] {
      auto p = recorder.finish();
      std::lock_guard<std::mutex> g(lock);
      report.profile.merge(p);
    };
    try {
      at::set_num_threads(1);
      std::shared_ptr<ModelSession> own;
      data::DatasetPtr ownData;
      if (w > 0) {
        own = ModelSession::open(modelPath, o.importOptions);
        ownData = data::openDataset(dataset);
      }
      ModelSession& s = own ? *own : session;
      const data::Dataset& d = ownData ? *ownData : data;
      for (;;) {
        int64_t i;
        {
          std::lock_guard<std::mutex> g(lock);
          if (stop || next >= n) break;
          i = next++;
        }
        auto r = scoreImage(s, d, i, end, o);
        std::lock_guard<std::mutex> g(lock);
        pending.emplace(i, std::move(r));
        // The table takes the images in order; after a stop, none past the one it stopped at.
        for (auto it = pending.find(committed); !stop && it != pending.end();
             it = pending.find(committed)) {
          addImage(report.table, it->second, o);
          pending.erase(it);
          ++committed;
          if (o.progress && !o.progress(committed, n)) stop = true;
        }
      }
      keepProfile();
    } catch (...) {
      std::lock_guard<std::mutex> g(lock);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work, w);
  for (auto& t : threads) t.join();
  at::set_num_threads(threadsBefore);
  if (failure) std::rethrow_exception(failure);
  report.profile.keep(o.profile);
}

}  // namespace

FaithfulnessReport evaluateFaithfulness(const std::string& modelPath, const std::string& dataset,
                                        const FaithfulnessOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  for (const auto& m : o.methods)
    if (m != "attention" && m != "random") attributionMethodFromString(m);  // throws naming it
  if (o.methods.empty()) throw Error("--methods names no map");
  refuseEngine(modelPath, kEngineNoGradients, "faithfulness is measured on a model file's maps");
  auto session = ModelSession::open(modelPath, o.importOptions);
  auto data = data::openDataset(dataset);
  if (data->endless() && o.limit <= 0) throw Error(dataset + ": an endless stream needs --limit");
  const int64_t n = o.limit > 0 ? std::min<int64_t>(o.limit, static_cast<int64_t>(data->size()))
                                : static_cast<int64_t>(data->size());
  const int end = session->config().makeCharset().endIndex();
  FaithfulnessReport report;
  report.model = modelPath;
  report.dataset = data->describe();
  for (const auto& m : o.methods) report.table.addSeconds(m, 0);
  const int workers = static_cast<int>(
      std::min<int64_t>(n, o.workers > 0 ? o.workers : std::max(1, computeThreads())));
  if (workers <= 1)
    scoreInTurn(*session, *data, n, end, o, report);
  else
    scoreInParallel(modelPath, dataset, *session, *data, n, end, workers, o, report);
  report.seconds = since(started);
  return report;
}

std::string FaithfulnessReport::toTable() const {
  char head[256];
  std::snprintf(head, sizeof head, "faithfulness of each map: %s on %s, %lld images, %.1f s\n",
                model.c_str(), dataset.c_str(), static_cast<long long>(table.images), seconds);
  return head +
         std::string(
             "deletion: AUC of p(token) as the map's pixels turn mid-grey, largest first "
             "(lower is better); insertion: as they\nreturn into a blurred image (higher "
             "is better); pointing: the map's maximum inside the character's true box;\n"
             "weighting: the share of its positive mass inside; rank corr: Spearman with "
             "the attention map, per step;\nmap s: time making the maps\n\n") +
         table.toTable();
}

std::string FaithfulnessReport::toJson() const {
  auto j = nlohmann::json::parse(table.toJson());
  j["model"] = model;
  j["dataset"] = dataset;
  j["seconds"] = seconds;
  if (!profile.operators.empty()) {
    const auto p = nlohmann::json::parse(profile.toJson());
    j["profiled_ms"] = p["profiled_ms"];
    j["operators"] = p["operators"];
  }
  return j.dump(2);
}

}  // namespace foveal::core::train
