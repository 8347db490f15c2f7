#pragma once
// A kraken model's trace reads as kraken's rpred reads the line (core/model/kraken_codec.h):
// greedy_decoder's runs of the softmax, the codec's characters, each character's confidence (the
// largest probability of its frames) and its cut (_scale_val of its first and last frame on the
// line image), and the reading in display order after kraken's bidi reordering. The steps stay in
// the order the network emitted them (left to right over the line), each with its cut as its box.
// Torch-free.
#include <vector>

#include "model/model_config.h"
#include "trace/trace.h"

namespace foveal::core {

/// What rpred knows of the line besides the network output.
struct KrakenLineFrame {
  int inputWidth = 0;  ///< the network input's width, padding included
  int lineWidth = 0;   ///< the extracted line image's width (the trace's source)
  int lineHeight = 0;
};

/// Rewrites the CTC steps of `tr` (built from the greedy path, one per emitted token) as kraken's
/// characters: token text, confidence, frames and cut; the prediction in kraken's display order;
/// the confidence by the model's rule. `probs` is the line's softmax, frames x classes row-major
/// (Foveal's layout). Throws Error when the codec does not fit the output.
void applyKrakenReading(Trace& tr, const ModelConfig& config, const std::vector<float>& probs,
                        int frames, int classes, const KrakenLineFrame& line);

/// The cut of each step of a kraken trace, as kraken's record has it: [x0, x1] in line-image
/// pixels (the boxes' left and right edges).
std::vector<std::pair<int, int>> krakenCuts(const Trace& tr);

}  // namespace foveal::core
