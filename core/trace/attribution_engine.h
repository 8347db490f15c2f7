#pragma once
// The torch side of attribution (attribution.h): the teacher-forced objective of each explained
// step as a function of the source image, and the methods over it. Faithfulness
// (faithfulness_engine) reuses the objective to score modified images.
#include <torch/types.h>
#include <vector>

#include "image/easyocr_input.h"
#include "image/grey_image.h"
#include "model/recognizer.h"
#include "trace/attribution.h"
#include "trace/faithfulness.h"

namespace foveal::core {

/// The reading a trace shows, as the decoder is fed it (teacher forcing).
struct ForcedReading {
  torch::Tensor targets;  ///< [1, T] int64, the trace's tokens then end tokens (attention)
  torch::Tensor regions;  ///< [1, T] int64, the trace's regions (attention)
  /// Per trace step: the class read and (CTC) the columns that emitted it.
  std::vector<int> tokens;
  std::vector<std::vector<int>> columns;
  bool ctc = false;
  /// EasyOCR's contrast pass (Trace::contrastPass): the adjustment the reading was made with,
  /// applied to every source (inputFromSource); not adjusted otherwise.
  ContrastAdjustment contrast;
};

ForcedReading forcedReading(const Recognizer& model, const Trace& trace);
/// The same, with EasyOCR's contrast pass taken from `image` (the one the trace was made from)
/// when the trace shows that pass.
ForcedReading forcedReading(const Recognizer& model, const Trace& trace, const GreyImage& image);

/// One explained quantity: step `step` of the trace, class `target` (minus `contrast`).
struct StepTarget {
  int step = 0;
  int target = 0;
  int contrast = -1;
};

/// The log-probabilities [B, T, K] (CTC: [B, M, K]) of the forced reading for a batch of source
/// tensors [B, C, H, W] (sourceTensor's values). `tokenScale` [B, T] (attention decoders,
/// optional) scales each step's input token. An attention decoder stops after `lastStep` (-1:
/// decodes every step; the output then has lastStep + 1 steps). Runs with whatever grad mode the
/// caller set.
torch::Tensor forcedLogProbs(Recognizer& model, const ForcedReading& reading,
                             const torch::Tensor& source, const torch::Tensor& tokenScale = {},
                             int64_t lastStep = -1);

/// forcedLogProbs' decoding, the whole output (its stepLogProbs among it).
RecognizerOutput forcedOutput(Recognizer& model, const ForcedReading& reading,
                              const torch::Tensor& source, const torch::Tensor& tokenScale = {},
                              int64_t lastStep = -1);

/// Integrated gradients' path: the points alpha in (0, 1) on the way from the baseline (0) to the
/// image (1) and their weights (summing to 1): the midpoints of n equal pieces. On the shipped
/// (ReLU) models Gauss-Legendre's and the trapezoid rule's points were no closer to completeness
/// at 8-64 points (docs/DEVELOPING.md), the gradient along the path being piecewise smooth only.
struct PathRule {
  std::vector<double> alphas, weights;
};
PathRule integrationPath(int n);

/// F of each target for every image of the batch: [B, S], from forcedLogProbs' output.
/// log p(target) (CTC: summed over the step's columns), minus log p(contrast) when one is given.
torch::Tensor stepObjectives(const torch::Tensor& logProbs, const ForcedReading& reading,
                             const std::vector<StepTarget>& targets);

/// The same objectives as separate [B] tensors, one per target, from the decoder's own step
/// outputs where it has them (RecognizerOutput::stepLogProbs): a gradient from target s then runs
/// back through steps 0 to s only. Taken from a stacked [B, S] it would also run, with zeros,
/// through every later step's decoder (a sharp model's glimpse networks above all).
std::vector<torch::Tensor> stepObjectiveColumns(const RecognizerOutput& output,
                                                const ForcedReading& reading,
                                                const std::vector<StepTarget>& targets);

/// The steps and classes `options` asks to explain in `trace` (throws Error for a step or class
/// that does not exist).
std::vector<StepTarget> explainedTargets(const Recognizer& model, const Trace& trace,
                                         const AttributionOptions& options);

/// Runs options.method for `image` (the image `trace` was made from).
Explanation explain(Recognizer& model, const GreyImage& image, const Trace& trace,
                    const AttributionOptions& options);

/// Deletion and insertion curves (faithfulness.h) of each request's map for `image`, the image
/// `trace` was made from: the step's token probability, teacher-forced, as the map's pixels are
/// removed or inserted.
std::vector<FaithfulnessCurves> deletionInsertionCurves(Recognizer& model, const GreyImage& image,
                                                        const Trace& trace,
                                                        const std::vector<CurveRequest>& requests,
                                                        const CurveOptions& options);

/// A Gaussian blur of source tensors [B, C, H, W] (reflected at the edges), sigma in pixels.
torch::Tensor gaussianBlur(const torch::Tensor& source, double sigma);

}  // namespace foveal::core
