#pragma once
// Per-step attribution: which source-image pixels explain the token a step read (docs/DESIGN.md
// "Explanations and faithfulness"). Torch-free: the options, the methods' names and the result,
// which becomes named per-step Pixels maps of the trace (Trace::addMap). The computation is in
// attribution_engine.h; ModelSession::explain runs it on a loaded model.
//
// Every method explains the reading shown, teacher-forced: the trace's tokens are fed as the
// previous tokens and (hard, sharp) its regions are forced, so step t is the same computation
// that produced the trace, and F_t = log p(token_t | prefix, image) (CTC: the sum over the
// token's emitting columns of log p(token | column)). A contrastive target explains
// log p(a) - log p(b). Maps are in source-image pixels: the model input is made from the source
// image by differentiable operations (inputFromSource: the resize, the padding), and a TPS or an
// STN is part of the model, so gradients pass back through the spline and the crops.
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "trace/trace.h"

namespace foveal::core {

enum class AttributionMethod {
  Saliency,             ///< |dF/dx|, the largest over the channels (Simonyan et al. 2014)
  GradientInput,        ///< dF/dx * x, summed over the channels (x relative to mid-grey)
  IntegratedGradients,  ///< Sundararajan et al. 2017, baseline mid-grey, midpoint rule
  Occlusion,            ///< the drop in p(token_t) when a patch is set to mid-grey
};

/// "saliency", "grad-input", "ig", "occlusion": the CLI's --method and the trace map's name.
std::string toString(AttributionMethod method);
/// The inverse of toString; throws Error listing the names for anything else.
AttributionMethod attributionMethodFromString(const std::string& name);
/// Every method, in the order the views offer them.
std::vector<AttributionMethod> attributionMethods();
/// How views write the map's values ("Integrated gradients").
std::string attributionLabel(AttributionMethod method);

/// Thrown when the progress callback asks to stop.
class AttributionCancelled : public Error {
 public:
  AttributionCancelled() : Error("attribution cancelled") {}
};

struct AttributionOptions {
  AttributionMethod method = AttributionMethod::IntegratedGradients;
  int igSteps = 32;  ///< integrated gradients: points on the path (midpoint rule)
  int batch = 32;    ///< images per forward pass (IG's path points, occlusion's patches)
  int patch = 8;     ///< occlusion: the square patch's side, source pixels
  int stride = 4;    ///< occlusion: its step, source pixels (the last patch touches the edge)
  /// Explain this class at the explained steps instead of the token read there (-1: the read
  /// token). The prefix fed to the decoder stays the reading's.
  int target = -1;
  /// Contrastive: explain log p(target) - log p(contrast) (-1: none).
  int contrast = -1;
  /// The trace steps to explain (empty: all of them).
  std::vector<int> steps;
  /// Integrated gradients on an attention decoder: attribute to the previous tokens too (the
  /// decoder's one-hot inputs scaled along the same path), for "read or guessed".
  bool tokens = false;
  /// Called with the fraction done; returning false cancels (AttributionCancelled is thrown).
  std::function<bool(double)> progress;
};

/// What one explained step came to.
struct StepAttribution {
  int step = 0;       ///< the trace step
  int target = 0;     ///< the class explained
  int contrast = -1;  ///< the class it is contrasted with (-1: none)
  double value = 0;   ///< F at the image
  /// Integrated gradients: F at the baseline (mid-grey image and, with tokens, no tokens).
  double baselineValue = std::numeric_limits<double>::quiet_NaN();
  double imageTotal = 0;  ///< the sum of the step's pixel map
  /// With AttributionOptions::tokens: the attribution of each decoder input token (index u: the
  /// token fed at step u, the start token or y_{u-1}), for u <= step.
  std::vector<double> tokenAttribution;
  /// sum |image| / (sum |image| + sum |tokens|): how much of the step was read from the image
  /// (NaN without token attributions).
  double imageShare = std::numeric_limits<double>::quiet_NaN();
  /// Integrated gradients' completeness gap: |imageTotal + tokens - (value - baselineValue)|
  /// relative to |value - baselineValue| (NaN for other methods).
  double completenessError() const;
};

/// Below this image share a character counts as guessed (from the previous tokens), not read.
inline constexpr double kGuessedShare = 0.5;

struct Explanation {
  AttributionMethod method = AttributionMethod::IntegratedGradients;
  int width = 0, height = 0;  ///< the source image's size
  /// Per trace step, width x height values row by row (empty for a step not explained).
  std::vector<std::vector<double>> maps;
  std::vector<StepAttribution> steps;  ///< the explained steps, in order
  double seconds = 0;                  ///< wall-clock time the computation took
};

/// Adds the explanation to the trace as a Pixels map named toString(method), replacing one of
/// that name.
void addToTrace(Trace& trace, const Explanation& explanation);

/// The explanation as JSON: method, size, per step its figures (and, with `withMaps`, its map).
std::string explanationJson(const Explanation& explanation, const Trace& trace, bool withMaps,
                            int indent = 2);

}  // namespace foveal::core
