#pragma once
// Turns one image's slice of a RecognizerOutput into a Trace (torch side of the facade).
#include "preprocess.h"
#include "recognizer.h"
#include "trace.h"

namespace foveal::core {

/// Source-image pixel position of a normalised (align_corners=false) coordinate.
PointF normalisedToSource(double xn, double yn, int srcW, int srcH);
/// Corners of an output patch under theta [2, 3] (patch -> image, normalised), in source pixels.
Quad patchQuad(const torch::Tensor& theta, int srcW, int srcH);

/// Builds the trace of image `b` of the batch. `input` is what the model was run on.
Trace buildTrace(Recognizer& model, const RecognizerOutput& out, const ModelInput& input, int b,
                 int srcW, int srcH, int topk, bool stopAtEnd);

}  // namespace foveal::core
