#include "train/model_average.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "formats/checkpoint.h"
#include "model/named_tensors.h"

namespace foveal::core::train {

namespace {

int64_t iterationOf(const std::string& metadataJson) {
  try {
    const auto meta = nlohmann::json::parse(metadataJson);
    if (meta.contains("extra") && meta["extra"].contains("training"))
      return meta["extra"]["training"].value("iteration", int64_t{-1});
  } catch (const nlohmann::json::exception&) {
  }
  return -1;
}

}  // namespace

AverageReport averageModelFiles(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) throw Error("nothing to average: no model file given");
  AverageReport report;
  torch::NoGradGuard noGrad;
  LoadedModel first = loadCheckpoint(inputs.front());
  const std::string config = first.config.toJson();
  auto target = namedTensors(*first.model);
  std::vector<torch::Tensor> sums;
  for (const auto& [name, t] : target)
    sums.push_back(t.is_floating_point() ? t.to(torch::kDouble) : torch::Tensor());
  report.files.push_back(inputs.front());
  report.iterations.push_back(iterationOf(first.metadataJson));
  for (size_t f = 1; f < inputs.size(); ++f) {
    const std::string& path = inputs[f];
    LoadedModel other = loadCheckpoint(path);
    if (other.config.toJson() != config)
      throw Error(path + ": not the same model as " + inputs.front() + " (" +
                  other.config.describe() + " against " + first.config.describe() +
                  "); only checkpoints of one model can be averaged");
    // The same configuration builds the same tensors, and loadCheckpoint has checked the file's
    // against it: names and shapes match.
    const auto tensors = namedTensors(*other.model);
    for (size_t i = 0; i < tensors.size(); ++i)
      if (sums[i].defined()) sums[i] += tensors[i].second.to(torch::kDouble);
    report.files.push_back(path);
    report.iterations.push_back(iterationOf(other.metadataJson));
  }
  const double n = static_cast<double>(inputs.size());
  for (size_t i = 0; i < target.size(); ++i) {
    if (!sums[i].defined()) {
      ++report.kept;
      continue;
    }
    target[i].second.copy_(sums[i] / n);
    ++report.tensors;
  }
  nlohmann::json extra;
  extra["averaged_from"] = nlohmann::json::array();
  for (size_t f = 0; f < report.files.size(); ++f) {
    nlohmann::json entry{{"file", report.files[f]}};
    if (report.iterations[f] >= 0) entry["iteration"] = report.iterations[f];
    extra["averaged_from"].push_back(entry);
  }
  saveCheckpoint(output, first.model, extra.dump());
  report.description = first.config.describe();
  return report;
}

}  // namespace foveal::core::train
