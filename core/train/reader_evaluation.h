#pragma once
// Evaluating an engine that is not a Foveal model (Tesseract, core/engines/) with the figures a
// model gets (train/evaluation.h): it reads each image into a Trace, one at a time, and the
// reading and the steps' focus and boxes are scored as a model's are. Torch-free.
#include <functional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "trace/trace.h"
#include "train/evaluation.h"

namespace foveal::core::train {

/// Reads one image (source: the dataset's name for the entry) into a trace.
using TraceReader = std::function<Trace(const GreyImage& image, const std::string& source)>;

/// Word accuracy, normalised edit distance, CER, per-character accuracy (options.scoring: "auto"
/// and "text" score as text, lower-cased with punctuation dropped, since an engine's charset has
/// letters; "exact" compares as read) and, where the data knows its character boxes,
/// localisation: the trace's steps other than spaces, in order, are the decoded steps (step t
/// against character t). No attention: the entropy is 0. An image the dataset cannot give is
/// counted as skipped (options.skipBad) or stops the evaluation with an Error naming it.
/// `name` is the report's model.
EvalReport evaluateReader(const std::string& name, const TraceReader& read,
                          const std::vector<std::string>& datasets, const EvalOptions& options);
/// The same on one opened dataset (`name` its argument), for the error analysis.
DatasetEval evaluateReaderOn(const TraceReader& read, const data::Dataset& dataset,
                             const std::string& name, const EvalOptions& options);
/// Tesseract by its spec (engines/tesseract_engine.h) as a TraceReader; throws Error when this
/// build has no Tesseract or the spec is wrong.
TraceReader tesseractReader(const std::string& spec);

}  // namespace foveal::core::train
