#pragma once
// The one list of stages and glimpses (docs/ARCHITECTURE.md "The model as stages", which has the
// checklist for adding one). Torch-free: the CLI, the GUI, presets, bench and tests read names,
// summaries and declared needs from here; core/model/stages/stage_factories.h builds the modules
// from the same table (stage_registry.cpp), so a name cannot exist in one place and not the other.
#include <string>
#include <vector>

#include "model/geometry.h"

namespace foveal::core {

enum class StageKind { Transformation, Features, Sequence, Prediction, Glimpse, Cell };

struct StageOption {
  std::string name;
  std::string summary;
  /// Glimpse: needs the upsampled copy of the image (the sharpener cuts regions from it).
  bool needsUpsampled = false;
  /// Glimpse: picks one region per step (argmax or sampled); trained with REINFORCE (eq. 9).
  bool selectsRegions = false;
  /// Features: the layer table its modules are built from (receptive fields), and its channels.
  std::vector<LayerSpec> (*layers)(double width) = nullptr;
  int (*channels)(double width) = nullptr;
  /// Features: keeps its rows as a grid of cells (2-D attention) instead of averaging them.
  bool grid = false;
  /// Imported only (strhub's transformer stages): built when a model file names it, but not
  /// offered for a new model (stageOptions and stageNames leave it out; stageOption finds it).
  bool importOnly = false;
};

/// "transformation", "features", "sequence", "prediction", "glimpse", "cell".
std::string stageKindName(StageKind kind);
/// The options a new model can be built and trained with (not the import-only ones).
const std::vector<StageOption>& stageOptions(StageKind kind);
std::vector<std::string> stageNames(StageKind kind);
/// Throws Error naming the kind, the unknown name and the known ones.
const StageOption& stageOption(StageKind kind, const std::string& name);

/// The receptive fields of a feature stage's regions (columns, or grid cells row by row) for an
/// input size, from its layer table; throws Error when the input is too small.
ReceptiveField featureGeometry(const std::string& features, double width, int inputW, int inputH);

}  // namespace foveal::core
