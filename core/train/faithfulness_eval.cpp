#include "train/faithfulness_eval.h"

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "data/dataset_factory.h"
#include "model/charset.h"
#include "trace/model_session.h"
#include "trace/pixel_maps.h"

namespace foveal::core::train {

namespace {
double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
}  // namespace

FaithfulnessReport evaluateFaithfulness(const std::string& modelPath, const std::string& dataset,
                                        const FaithfulnessOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  for (const auto& m : o.methods)
    if (m != "attention" && m != "random") attributionMethodFromString(m);  // throws naming it
  if (o.methods.empty()) throw Error("--methods names no map");
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
  for (int64_t i = 0; i < n; ++i) {
    const auto sample = data->get(static_cast<size_t>(i));
    const auto& image = sample.image;
    Trace trace = session->trace(image, data->entryName(static_cast<size_t>(i)));
    const auto boxes = data->charBoxes(static_cast<size_t>(i));
    std::vector<int> steps;  // the character steps
    for (size_t t = 0; t < trace.steps.size(); ++t)
      if (trace.isCtc() || trace.steps[t].tokenIndex != end) steps.push_back(static_cast<int>(t));
    ++report.table.images;
    if (steps.empty()) continue;
    // Every method's map at every step, then all their curves in one batch.
    std::vector<std::vector<std::vector<double>>> maps(o.methods.size());  // [method][step]
    for (size_t k = 0; k < o.methods.size(); ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::string& m = o.methods[k];
      if (m == "attention") {
        for (int t : steps)
          maps[k].push_back(stepPixelMap(trace, kAttentionMap, static_cast<size_t>(t)));
      } else if (m == "random") {
        for (int t : steps)
          maps[k].push_back(
              randomMap(image.width, image.height,
                        static_cast<uint64_t>(i) * 1000003u + static_cast<uint64_t>(t)));
      } else {
        AttributionOptions ao;
        ao.method = attributionMethodFromString(m);
        ao.igSteps = o.igSteps;
        ao.patch = o.patch;
        ao.stride = o.stride;
        ao.steps = steps;
        const auto e = session->explain(image, trace, ao);
        for (int t : steps) maps[k].push_back(e.maps[static_cast<size_t>(t)]);
      }
      report.table.addSeconds(m, since(t0));
    }
    std::vector<CurveRequest> requests;
    for (size_t k = 0; k < o.methods.size(); ++k)
      for (size_t s = 0; s < steps.size(); ++s) requests.push_back({steps[s], maps[k][s]});
    const auto curves = session->curves(image, trace, requests, o.curves);
    size_t r = 0;
    const auto attention = std::find(o.methods.begin(), o.methods.end(), "attention");
    for (size_t k = 0; k < o.methods.size(); ++k)
      for (size_t s = 0; s < steps.size(); ++s, ++r) {
        const size_t t = static_cast<size_t>(steps[s]);
        const Box* box = t < boxes.size() ? &boxes[t] : nullptr;
        double corr = std::numeric_limits<double>::quiet_NaN();
        if (attention != o.methods.end() && o.methods[k] != "attention")
          corr = rankCorrelation(maps[static_cast<size_t>(attention - o.methods.begin())][s],
                                 maps[k][s]);
        report.table.add(o.methods[k], curves[r], maps[k][s], image.width, image.height, box, corr);
      }
    if (o.progress && !o.progress(i + 1, n)) break;
  }
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
  return j.dump(2);
}

}  // namespace foveal::core::train
