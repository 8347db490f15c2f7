#pragma once
// EasyOCR's get_text contrast retry (Preprocessing::contrastThreshold): a reading whose
// confidence is under contrast_ths is read again from the image with its contrast raised
// (adjust_contrast_grey, after readtext's pre-resize), and the second pass is kept unless the
// first was strictly more confident. The trace says which pass it shows and why.
#include "image/grey_image.h"
#include "model/recognizer.h"
#include "trace/trace.h"

namespace foveal::core {

/// The reading of `image` that get_text keeps, given its first pass `first` (made by
/// preprocess() and buildTrace()); `dec` decodes the second pass (a fresh sampler for the same
/// seed). A model without the retry gets `first` back unchanged.
Trace contrastRetry(Recognizer& model, const GreyImage& image, Trace first,
                    const DecodeOptions& dec, int topk, bool stopAtEnd);

}  // namespace foveal::core
