#pragma once
// Forced alignment of a known transcription over a CTC model's frames: where each true character
// actually is, by the model's own posteriors (CTC Viterbi, Graves et al. 2006 section 4.1 / the
// "best path given the label"). Beside the greedy path (each frame's argmax, repeats collapsed,
// blanks dropped) it answers "why was the line misread": a true character whose frames the
// greedy path gave to another class, or to the blank, is visible as a span with its own log p.
//
// The lattice is the label with blanks around every class: blank, y1, blank, y2, ..., yn, blank.
// A path may stay on a state, move to the next, or skip the blank between two different classes;
// it must end on yn or the last blank. Two equal classes in a row therefore need a blank frame
// between them, so a truth of n classes with r adjacent repeats needs at least n + r frames.
// Ties between equally probable paths go to the one that stays longest on each state (the same
// preference as ctcBestPath in model/stages/ctc_prediction.h).
//
// Torch-free: plain log-probability arrays in, plain structs out. The trace builder
// (trace/truth_alignment.h) fills a Trace's `alignment` from a forward pass, with each character's
// box made by the same frame -> pixel mapping the greedy cuts use.
#include <functional>
#include <string>
#include <vector>

#include "model/geometry.h"

namespace foveal::core {

class Charset;

/// The most probable CTC path of one label sequence.
struct CtcViterbiPath {
  std::vector<int> frameClass;  ///< per frame: the class on the path (the blank or a label's)
  std::vector<int> frameLabel;  ///< per frame: the label position it emits, -1 for a blank
  /// Per label position: the first and last frame that emit it (never empty: every label has
  /// at least one frame).
  std::vector<std::pair<int, int>> spans;
  double logProb = 0;  ///< log p of the path: the sum over the frames of log p(class | frame)
};

/// The fewest frames a CTC path of `labels` needs: one per label and one blank between each two
/// equal neighbours.
int ctcMinimumFrames(const std::vector<int>& labels);

/// CTC Viterbi over `logProbs` (frames x classes, row-major, natural log) for `labels`. Throws
/// Error when a label is the blank or not a class, when the sizes do not match, or when the
/// labels need more frames than there are (saying how many they need and why).
CtcViterbiPath ctcViterbi(const std::vector<double>& logProbs, int frames, int classes,
                          const std::vector<int>& labels, int blank = 0);

/// log p(labels | frames): the log of the summed probability of every path that collapses to
/// `labels` (the CTC forward algorithm; minus the CTC loss). -infinity when no path does (too few
/// frames). Throws Error for bad sizes or labels, as ctcViterbi.
double ctcLogLikelihood(const std::vector<double>& logProbs, int frames, int classes,
                        const std::vector<int>& labels, int blank = 0);

/// The sum over the frames of log p(path[t] | t). Throws Error for bad sizes or classes.
double ctcPathLogProb(const std::vector<double>& logProbs, int frames, int classes,
                      const std::vector<int>& path);

/// Greedy decoding's collapse of a per-frame path: repeats merged, blanks dropped.
std::vector<int> ctcCollapse(const std::vector<int>& path, int blank = 0);

/// One unit of a transcription as the model spells it: a character (or, for a kraken codec, a
/// code that spells several characters) and the class labels that spell it (one for a charset;
/// a kraken code may take several).
struct TruthUnit {
  std::string text;         ///< UTF-8
  std::vector<int> labels;  ///< classes, none the blank
};

/// One true character where the forced alignment puts it.
struct AlignedChar {
  std::string text;         ///< the character (UTF-8)
  std::vector<int> labels;  ///< the classes that spell it
  int firstFrame = 0;       ///< the first frame that emits it
  int lastFrame = 0;        ///< the last frame that emits it
  std::vector<int> frames;  ///< every frame that emits it (its labels' frames, in order)
  /// Its box on the trace's image, made from `frames` by the same mapping a greedy step's box is
  /// made from its columns (the columns' regions; kraken's cut of the first and last frame).
  Box box;
  PointF focus;
  double logProb = 0;  ///< sum over `frames` of log p(its class)
  double prob = 0;     ///< the largest p(its class) over `frames` (a greedy step's `prob`)
  /// The classes the greedy (shown) path has at `frames`, collapsed: what was read there
  /// instead (empty: nothing, every frame a blank); equal to `labels` where it was read right.
  std::vector<int> readLabels;
  std::string readText;  ///< readLabels as text
};

/// A truth's forced alignment over one line's frames, with the shown path beside it.
struct CtcAlignment {
  std::string truth;  ///< as given
  /// Empty when the alignment was made; else why not (a character outside the charset, a truth
  /// longer than the frames allow, a model that is not CTC), and then nothing else is set.
  std::string error;
  std::vector<AlignedChar> chars;  ///< in the order the network emits them (left to right)
  int frames = 0;
  int blank = 0;
  std::vector<int> path;               ///< per frame: the forced path's class
  std::vector<int> pathChar;           ///< per frame: the index in `chars` it emits, -1 for a blank
  std::vector<double> pathProb;        ///< per frame: p of the forced path's class
  std::vector<int> shownPath;          ///< per frame: the trace's path (greedy argmax, or a beam's)
  std::vector<std::string> shownText;  ///< per frame: its class as text ("" for the blank)
  std::vector<double> shownProb;       ///< per frame: p of the shown path's class
  double logProb = 0;                  ///< log p of the forced path
  double logLikelihood = 0;       ///< log p(truth | image) over every path (minus the CTC loss)
  double shownLogProb = 0;        ///< log p of the shown path
  std::vector<double> blankProb;  ///< per frame: p(blank)
  /// Per frame: where it lies on the image (x of its focus by the same mapping as the boxes;
  /// empty without a mapping): the posteriorgram's columns line up with the image by it.
  std::vector<double> frameX;
  /// Per character, per frame: p(its first class): the rows a posteriorgram draws for the truth.
  std::vector<std::vector<double>> charProbs;

  bool empty() const { return truth.empty() && error.empty() && chars.empty(); }
  bool ok() const { return error.empty() && !truth.empty(); }
  /// The forced and shown paths agree on every frame's emitted class (the blank counted as one).
  bool agrees() const { return path == shownPath; }
  /// {"truth", "log_prob", "log_likelihood", "shown_log_prob", "path", "shown_path",
  ///  "chars": [{"text", "frames": [first, last], "box", "focus", "log_prob", "prob", "read"}]}
  /// or {"truth", "error"}.
  std::string toJson(int indent = 2) const;
  /// The table `foveal-cli trace --align` prints: per character its frames, box and log p, and
  /// what the shown path read at those frames.
  std::string toTable() const;
  /// Frame by frame: the shown path's class beside the forced path's, with their
  /// probabilities ("-" for a blank); frames where they differ are marked.
  std::string framesTable() const;
};

/// How a span of frames becomes a character's box and focus on the image (the mapping the
/// greedy cuts use); `characters` is the number of characters of the reading it belongs to.
struct FrameSpanLocation {
  Box box;
  PointF focus;
};
using FrameSpanMapper =
    std::function<FrameSpanLocation(const std::vector<int>& frames, size_t characters)>;

/// The forced alignment of `units` over `logProbs` (frames x classes, natural log) with the shown
/// path `shownPath` (one class per frame) beside it. `locate` (may be null: no boxes) maps each
/// character's frames. `classText` names a class for readText. Throws Error as ctcViterbi does.
CtcAlignment alignTranscription(const std::string& truth, const std::vector<TruthUnit>& units,
                                const std::vector<double>& logProbs, int frames, int classes,
                                const std::vector<int>& shownPath, int blank,
                                const FrameSpanMapper& locate,
                                const std::vector<std::string>& classText);

struct Trace;
/// A copy of `trace` whose steps are its alignment's characters, in order: each with its text,
/// first class, emitting frames as columns, box, focus and probability (the rest of a step as
/// the shown step that covers most of its frames has it, or empty), so that every view and
/// ModelSession::explain (which explains a CTC step from its class and columns) can show the
/// true characters as they show the read ones. Throws Error when the trace has no alignment.
Trace alignedTrace(const Trace& trace);

/// Splits a truth into charset units (one code point, one class each). Throws Error naming every
/// character of `truth` that `charset` cannot read (each once, in order), as
/// "the truth "..." has characters outside the model's charset: 'é', 'ß'".
std::vector<TruthUnit> charsetUnits(const Charset& charset, const std::string& truth);

}  // namespace foveal::core
