#pragma once
// `foveal-cli eval --faithfulness`: the faithfulness of each map (attention, attribution methods,
// a random floor) over a dataset's images, per step of the reading (core/trace/faithfulness.h).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "formats/model_format.h"
#include "trace/attribution.h"
#include "trace/faithfulness.h"
#include "train/operator_profile.h"

namespace foveal::core::train {

struct FaithfulnessOptions {
  /// The maps: "attention", "random", and attribution methods by name (attribution.h).
  std::vector<std::string> methods = {"attention", "ig", "random"};
  int64_t limit = 0;  ///< the first N images (0: all; an endless stream needs one)
  CurveOptions curves;
  int igSteps = 32;
  int patch = 8, stride = 4;    ///< occlusion
  ImportOptions importOptions;  ///< for imported model files (formats/model_format.h)
  /// Images scored at once, each by its own copy of the model with one compute thread (0: as
  /// many as the compute threads). The table is the same whatever the number (to the bit as one
  /// worker's with one compute thread).
  int workers = 0;
  /// > 0: profile the operators (every worker's, merged) and keep this many, costliest first.
  int profile = 0;
  /// Called after each image with (done, total); false stops early.
  std::function<bool(int64_t, int64_t)> progress;
};

struct FaithfulnessReport {
  std::string model, dataset;
  FaithfulnessTable table;
  double seconds = 0;
  OperatorProfile profile;  ///< with options.profile
  std::string toTable() const;
  std::string toJson() const;
};

/// Reads each image greedily and scores each method's map at every character step (the steps
/// before the end token; CTC: every emitted token): deletion and insertion AUC, and against the
/// character's true box where the data knows it, the pointing and weighting games; every map's
/// rank correlation with the attention map. Throws Error naming the model, the dataset or an
/// unknown method.
FaithfulnessReport evaluateFaithfulness(const std::string& modelPath, const std::string& dataset,
                                        const FaithfulnessOptions& options);

}  // namespace foveal::core::train
