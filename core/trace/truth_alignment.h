#pragma once
// The forced alignment of a known truth inside a trace (trace/ctc_alignment.h), made from the
// forward pass that made the trace: the same frames, the same shown path and the same
// frame -> pixel mapping its greedy steps' boxes use (the columns' regions, the focus boxes of
// columns as wide as the input, or kraken's cuts). ModelSession::trace and traceLine call it
// when TraceOptions::truth is set.
#include <string>
#include <vector>

#include "image/preprocess.h"
#include "model/model_config.h"
#include "model/recognizer.h"
#include "trace/trace.h"

namespace foveal::core {

/// The truth as the model spells it, in the order its network emits the characters: a charset's
/// code points, or a kraken codec's codes (codec.encode) of the truth put in the order kraken's
/// network reads (its bidi display order: kraken trains on lines reordered so, and reorders its
/// readings back). Throws Error naming every character it cannot spell.
std::vector<TruthUnit> truthUnits(const ModelConfig& config, const std::string& truth);

/// Sets `tr.alignment` to the forced alignment of `truth` over image `b` of `out` (read from
/// `input`, traced into `tr` by buildTrace). An alignment that cannot be made (not a CTC model,
/// characters outside the charset, a truth longer than the frames allow) leaves the reason in
/// `tr.alignment.error`; the trace itself stays as it was.
void alignTruth(Trace& tr, Recognizer& model, const RecognizerOutput& out, const ModelInput& input,
                int b, const std::string& truth);

}  // namespace foveal::core
