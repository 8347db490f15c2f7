#pragma once
// Turns one image's slice of a RecognizerOutput into a Trace (torch side of the facade).
#include "image/preprocess.h"
#include "model/recognizer.h"
#include "trace/localisation.h"
#include "trace/trace.h"

namespace foveal::core {

/// Source-image pixel position of a normalised (align_corners=false) coordinate.
PointF normalisedToSource(double xn, double yn, int srcW, int srcH);
/// Corners of an output patch under theta [2, 3] (patch -> image, normalised), in source pixels.
Quad patchQuad(const torch::Tensor& theta, int srcW, int srcH);

/// How the steps of this model are located (core/trace/localisation.h): from what the stages
/// declare.
FocusRule focusRuleFor(const ModelConfig& config, bool hasStn);

/// The focus and box of each decoded step of image `b` (attention: up to and including the first
/// end token; CTC: the emitted tokens) in the pixels of a srcW x srcH source image, as buildTrace
/// computes them, without building the rest of the trace (evaluation's localisation metrics).
/// `inputW`: the width of the input the batch was read at (a variable-width model's batch is as
/// wide as its widest image needs); `contentW`: the input columns image `b` fills (keep-ratio
/// padding). 0 for either: the model's nominal input width.
std::vector<StepLocation> locateDecodedSteps(Recognizer& model, const RecognizerOutput& out, int b,
                                             int srcW, int srcH, int inputW = 0, int contentW = 0);

/// Columns whose receptive fields are as wide as the input (a ResNet's): each CTC or soft step
/// then gets a character box (focusBox) instead of its regions' union.
bool usesFocusBoxes(const ReceptiveField& rf, int inputWidth);
/// That box: centred on `focusX`, as wide as one of `characters` sharing the image evenly (at
/// least `stride`), the image's height, clipped to it.
Box focusBox(double focusX, double stride, size_t characters, int imageW, int imageH);

/// The N best readings of image `b` from a beam search, best first (unfilled slots dropped).
std::vector<BeamHypothesis> beamHypotheses(const Charset& charset, const BeamResult& beam, int b);

/// Builds the trace of image `b` of the batch. `input` is what the model was run on.
Trace buildTrace(Recognizer& model, const RecognizerOutput& out, const ModelInput& input, int b,
                 int srcW, int srcH, int topk, bool stopAtEnd);

}  // namespace foveal::core
