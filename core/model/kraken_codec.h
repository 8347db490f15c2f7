#pragma once
// How kraken turns a CTC line recogniser's softmax into a reading (kraken/lib/ctc_decoder.py,
// kraken/lib/codec.py, kraken/containers.py, kraken/lib/vgsl/rpred.py): greedy_decoder's runs of
// the argmax label, PytorchCodec's decode of those labels into code points (codes of several
// labels and of several code points), the record's bidi reordering, and _scale_val, which puts a
// frame on the line image. Torch-free: plain arrays in, structs out.
//
// rpred for one line, in these terms:
//   runs  = krakenGreedyDecode(softmax(logits / temperature) [classes x frames], seqLen)
//   chars = codec.decode(runs)                      // logical order as the network emitted it
//   scale = KrakenScale::forLine(input width, output frames, line width, padding)
//   cut   = [scale.toPixel(start, 0, width), scale.toPixel(end, 0, width)] per char
//           (a bbox line: x0 + those, spanning the box's height; a baseline line: distances along
//           the baseline that the record turns into polygons)
//   bidi_reordering on: chars (with their cuts) = krakenReorder(chars, base)
#include <string>
#include <unordered_map>
#include <vector>

#include "model/kraken_bidi.h"

namespace foveal::core {

/// One run of greedy_decoder: frames [start, end] (both inclusive) whose argmax is `label` (never
/// the blank, 0), and the largest of their argmax probabilities.
struct KrakenRun {
  int label = 0;
  int start = 0;
  int end = 0;
  float confidence = 0;
};

/// kraken's greedy_decoder over one line: `probs` in kraken's layout, [classes x frames] row-major
/// (probs[c * frames + t], the network's softmax over dim 1 with its height squeezed), of which
/// the first `seqLen` frames are the line's (the rest is batch padding). Each frame's label is
/// its argmax (the first of equal maxima; a NaN beats any number, as in torch.max); consecutive
/// frames of one label form a run; runs of the blank are dropped. Throws Error on bad sizes.
std::vector<KrakenRun> krakenGreedyDecode(const float* probs, int classes, int frames, int seqLen);

/// One code point of a reading, with the frames and confidence codec.decode gives it.
struct KrakenChar {
  char32_t codepoint = 0;
  int start = 0;  ///< first frame of the code's first run
  int end = 0;    ///< last frame of the code's last run
  /// The run's confidence; for a code of several labels the mean of its runs' (a double, as
  /// numpy's mean is).
  double confidence = 0;
};

/// kraken's PytorchCodec as a model's metadata stores it: {"text": [label, ...], ...}.
class KrakenCodec {
 public:
  /// Parses the codec object. Throws Error naming `origin` when it is not an object of non-empty
  /// integer lists of labels >= 1, or when kraken would refuse it: two texts with one code
  /// (non-singular) or a code that is a prefix of another (not prefix-free).
  static KrakenCodec fromJson(const std::string& codecJson, const std::string& origin);

  /// The largest label: the output layer has maxLabel() + 1 classes (0 is the blank).
  int maxLabel() const { return m_maxLabel; }
  /// Number of codes (kraken's len(codec)).
  int size() const { return static_cast<int>(m_codes.size()); }

  /// codec.decode: from the first run on, a label with a code of its own gives that code's text;
  /// else the code of several labels that the next runs spell; a run that starts no code is
  /// skipped (kraken is not strict). Each code point of a code's text becomes one KrakenChar with
  /// the code's first start, last end and mean confidence.
  std::vector<KrakenChar> decode(const std::vector<KrakenRun>& runs) const;

  /// One code of an encoded text: what it spells and its labels.
  struct EncodedCode {
    std::u32string text;
    std::vector<int> labels;
  };
  /// codec.encode, code by code: from the start, the longest code that spells the text there.
  /// Where none does (kraken raises KrakenEncodeException) the code point is skipped and listed
  /// in `unencodable` (each once, in order), so one call names every character the codec lacks.
  std::vector<EncodedCode> encode(const std::u32string& text, std::u32string* unencodable) const;

 private:
  struct Code {
    std::u32string text;
    std::vector<int> labels;
  };
  void append(const Code& code, const std::vector<KrakenRun>& runs, size_t first,
              std::vector<KrakenChar>& out) const;

  std::vector<Code> m_codes;
  std::unordered_map<int, int> m_single;              // label -> its single-label code
  std::unordered_map<int, std::vector<int>> m_multi;  // first label -> codes of several labels
  int m_maxLabel = 0;
};

/// The record's bidi reordering (ocr_record._reorder, what rpred's bidi_reordering does: the
/// record is built in display order and its logical_order() reorders it): the code points
/// reordered by krakenDisplayMap, each keeping its frames and confidence (so its cut), mirrored
/// glyphs substituted and bidi controls dropped.
std::vector<KrakenChar> krakenReorder(const std::vector<KrakenChar>& chars, KrakenBaseDir base);

/// The reading (kraken's record.prediction) as UTF-8.
std::string krakenText(const std::vector<KrakenChar>& chars);
/// UTF-8 -> code points; throws Error naming `origin` on invalid UTF-8.
std::u32string krakenCodepoints(const std::string& utf8, const std::string& origin);

/// rpred's frame -> line pixel mapping: net_scale (network input width over output frames) and
/// in_scale (line image width over the input width without its padding on both sides).
struct KrakenScale {
  double netScale = 1;
  double inScale = 1;
  int padding = 0;

  /// `inputWidth` is the network input's width including the padding, `outputFrames` its output
  /// length (olen), `lineWidth` the extracted line image's width. Throws Error when a width is
  /// not positive.
  static KrakenScale forLine(int inputWidth, int outputFrames, int lineWidth, int padding);
  /// _scale_val: ((frame * netScale) - padding) * inScale clamped to [minValue, maxValue - 1],
  /// rounded half to even (Python's round).
  int toPixel(int frame, int minValue, int maxValue) const;
};

}  // namespace foveal::core
