#pragma once
// What one decode of one image looked like, step by step, in plain values: the contract between
// core and everything that draws (GUI, CLI). No Torch types.
#include <array>
#include <string>
#include <vector>

#include "image/grey_image.h"
#include "model/geometry.h"
#include "trace/ctc_alignment.h"

namespace foveal::core {

/// Corners of a patch mapped into source-image pixels: top-left, top-right, bottom-right,
/// bottom-left (pixel-edge coordinates).
using Quad = std::array<PointF, 4>;

struct TokenProb {
  std::string token;
  int index = 0;
  double prob = 0;
};

struct StnTrace {
  Quad quad;        ///< in source-image pixels
  GreyImage patch;  ///< the STN's output
};

/// How a per-step map's values lie.
enum class MapLayout {
  Regions,  ///< one value per region of the trace (a grid's cells row by row)
  Pixels,   ///< width x height values, row by row, over the source image's pixels
};

/// "regions", "pixels".
std::string toString(MapLayout layout);

/// The name of the map every decoder's trace has: attention's alpha over the regions (CTC: the
/// token's posterior over the columns, normalised, which plays attention's part in every view).
inline constexpr const char* kAttentionMap = "attention";
/// Multi-head attention (PARSeq's cross-attention, ViTSTR's encoder attention): "attention" is
/// the mean over the heads, and head h (from 1) is the map "attention-head-h" (label "α head h"),
/// one per head, same layout; a view offers a head selector when a trace has them
/// (Trace::attentionHeads).
inline constexpr const char* kAttentionHeadPrefix = "attention-head-";
/// PARSeq with refinement: the first (autoregressive) pass's cross-attention, mean over heads;
/// "attention" is the final pass's. Empty values for steps the first pass did not run.
inline constexpr const char* kFirstPassAttentionMap = "attention-first-pass";

/// One named per-step map of a trace: what each step weighted (attention) or, for the coming
/// attribution methods, what explains its token. A map is data, not a field per mechanism, so a
/// new kind of map is a new name, and every view that draws maps asks the trace which it has.
struct StepMap {
  std::string name;   ///< the key views and the JSON use ("attention")
  std::string label;  ///< how views write its values ("α", "posterior over columns")
  MapLayout layout = MapLayout::Regions;
  int width = 0, height = 0;  ///< Pixels: the map's size (the source image's); Regions: 0
  /// Per step of the trace, its values. A step without them (not computed) has an empty vector.
  std::vector<std::vector<double>> steps;
};

/// What a step's patch is made of (TraceStep::patch).
enum class StepPatch {
  Region,         ///< the crop of the region the step used (hard glimpses, CTC's best column)
  AlphaWeighted,  ///< the regions' crops weighted by the step's alpha (soft glimpses)
  Stn,            ///< the last STN's output (sharp glimpses)
};

/// "region", "alpha-weighted", "stn".
std::string toString(StepPatch patch);

struct TraceStep {
  std::string token;  ///< predicted token ("<end>" for the end token)
  int tokenIndex = 0;
  double prob = 0;  ///< p of the predicted token
  std::vector<TokenProb> topk;
  double entropy = 0;                  ///< H of the step's attention map, natural log
  int region = 0;                      ///< region used (argmax, sampled, or forced)
  std::vector<StnTrace> stn;           ///< sharp: one per STN, coarse first
  GreyImage patch;                     ///< what the context came from (Trace::patch says which)
  std::vector<double> contextWeights;  ///< sharp weighting: over Z columns then x_s
  /// CTC: the columns that emitted this token (its run in the argmax path). Attention: empty.
  std::vector<int> columns;
  /// Where the step looks, in source-image pixels (core/trace/localisation.h says how each glimpse
  /// defines them): a point and a character box (clipped to the image).
  PointF focus;
  Box box;
};

/// One of the N best readings of a beam search.
struct BeamHypothesis {
  std::string reading;       ///< the tokens before the end token, as text
  std::vector<int> tokens;   ///< class indices up to and including the end token
  std::vector<int> regions;  ///< the region used at each of those steps
  double logProb = 0;        ///< log p of `tokens` (the search's score)
};

struct Trace {
  std::string source;                 ///< image path or id
  std::string modelKind;              ///< the glimpse ("soft", "hard", "sharp") or "ctc"
  std::string decoder = "attention";  ///< the prediction stage: "attention" or "ctc"
  std::string stages;                 ///< e.g. "tps-resnet-bilstm-attention(soft)"
  std::string modelDescription;
  std::string prediction;
  /// Attention: product of the step probabilities up to and including the end (beam/greedy as
  /// decoded). CTC: product of every column's maximum (DTRB's demo).
  double confidence = 0;
  int imageW = 0, imageH = 0;  ///< source image size
  std::vector<Box> regions;    ///< receptive fields in source pixels (rows clipped to the image)
  /// The regions' layout: one row of columns (gridRows 1), or a grid of gridRows x gridColumns
  /// cells whose regions (and every step's alpha) run row by row.
  int gridRows = 1, gridColumns = 0;
  /// The centre of each region's receptive field in source pixels (not clipped: the rows of a
  /// grid have their own centres although their clipped boxes may all span the image's height).
  /// Localisation's focus points are made of these.
  std::vector<PointF> regionCentres;
  std::vector<TraceStep> steps;  ///< up to and including the end token (or all steps)
  /// The per-step maps, each with one entry per step: attention first (kAttentionMap).
  std::vector<StepMap> maps;
  StepPatch patch = StepPatch::Region;  ///< what every step's patch is made of
  double meanEntropy = 0;               ///< mean of steps' entropy
  int beamWidth = 1;                    ///< 1: greedy decoding; more: beam search of that width
  /// Beam search: the N best readings (N <= beamWidth), best first, and which of them the steps,
  /// prediction and confidence show (0: the best). Empty for greedy decoding.
  std::vector<BeamHypothesis> hypotheses;
  int hypothesis = 0;
  /// Why the decoding differs from the one asked for, e.g. "beam not available for this model:
  /// read greedily" (PARSeq and ViTSTR with a beam width over 1); empty when it does not.
  std::string decodingNote;
  /// TPS: the fiducial points on the source image (pixels), top edge then bottom edge, and the
  /// rectified model input the features saw.
  std::vector<PointF> fiducials;
  GreyImage rectified;
  /// CTC: every column's top-k posteriors (the steps are the emitted tokens; a step's attention
  /// map is its token's posterior over the columns, normalised: the row of the alignment matrix).
  std::vector<std::vector<TokenProb>> columnTopk;
  /// How the steps' focus and box were defined ("alpha-mean", "selected", "stn-quad",
  /// "columns"; core/trace/localisation.h).
  std::string focusRule;
  /// EasyOCR's get_text contrast retry (Preprocessing::contrastThreshold): true when the
  /// reading shown is the second pass's, read from the image with its contrast raised;
  /// `inputPass` says which pass in words and why (empty for a model without the retry).
  bool contrastPass = false;
  std::string inputPass;
  /// The true box of each character of the image's label, in source-image pixels, when the data
  /// knows them (empty otherwise). Not set by tracing: whoever knows the label's boxes fills it.
  std::vector<Box> truthBoxes;
  /// CTC: the forced alignment of a known truth over the same frames (TraceOptions::truth;
  /// trace/ctc_alignment.h), each true character's frames and box beside the steps'. Empty
  /// when no truth was given.
  CtcAlignment alignment;

  /// What the trace has, for views to ask instead of reading the model's kind.
  bool hasMap(const std::string& name) const { return map(name) != nullptr; }
  /// The map called `name`, or null.
  const StepMap* map(const std::string& name) const;
  std::vector<std::string> mapNames() const;
  /// Step `step`'s values of map `name`; empty when the trace has no such map or the step none.
  const std::vector<double>& stepMap(const std::string& name, size_t step) const;
  /// The attention map's values at `step` (kAttentionMap).
  const std::vector<double>& attention(size_t step) const { return stepMap(kAttentionMap, step); }
  /// The number of per-head attention maps (kAttentionHeadPrefix + "1" ...); 0 when none.
  int attentionHeads() const {
    int h = 0;
    while (hasMap(kAttentionHeadPrefix + std::to_string(h + 1))) ++h;
    return h;
  }
  /// Adds an empty map (its values are then appended per step) and returns it; the reference
  /// holds until the next addMap.
  StepMap& addMap(std::string name, std::string label, MapLayout layout = MapLayout::Regions);
  /// The steps are a CTC path's emitted tokens: each names its emitting columns, and
  /// columnTopk holds every column's posteriors.
  bool isCtc() const { return decoder == "ctc"; }
  /// The steps carry STN quads and patches (sharp glimpses).
  bool hasStn() const { return !steps.empty() && !steps.front().stn.empty(); }
  /// A TPS transformation: fiducials and the rectified input.
  bool hasTps() const { return !fiducials.empty(); }
  /// The regions are a grid of cells (2-D attention), not one row of columns.
  bool isGrid() const {
    return gridRows > 1 && gridColumns > 0 &&
           static_cast<size_t>(gridRows) * static_cast<size_t>(gridColumns) == regions.size();
  }

  std::string toJson(int indent = 2) const;
  /// The per-step table foveal-cli prints.
  std::string toTable() const;
  /// The steps as CSV, the columns named on the first line: step, token, prob, entropy, region,
  /// topk, alpha_i per region, stnK_xC/stnK_yC per STN corner, focus_x, focus_y, box_x, box_y,
  /// box_w, box_h.
  std::string toCsv() const;
  /// The reading as an hOCR document (XHTML): ocrx_words whose characters are ocrx_cinfo
  /// spans with `x_bboxes x0 y0 x1 y1`, the steps' boxes rounded to whole pixels (hocrBox), each
  /// followed by its top-k as Tesseract's LSTM choices (formats/ocr_formats.h, toHocr).
  std::string toHocr() const;
};

/// A box in hOCR's integer pixel coordinates: x0 y0 x1 y1, each edge rounded to the nearest pixel.
std::array<long, 4> hocrBox(const Box& box);

/// Shannon entropy (natural log) of a distribution.
double entropy(const std::vector<double>& p);

class Charset;
/// The confidence of an attention reading, from each step's chosen token and its probability
/// (steps after the first end token are ignored). Foveal's: the product up to and including the
/// end token. With DTRB's class layout (ClassLayout::GoEnd), DTRB's demo: the product of the
/// steps before [s]; an empty reading, where the demo fails, takes the [s] step's probability.
/// strhub's TRBA (ClassLayout::GoEndPad) keeps Foveal's rule, as strhub's Tokenizer does.
/// The one rule for traces and evaluation.
double attentionConfidence(const Charset& charset, const std::vector<int>& tokens,
                           const std::vector<double>& probs);

/// A CTC reading's confidence from each column's argmax class and its probability, by the
/// model's rule (ModelConfig::ctcConfidence): "product" (DTRB's demo: every column's maximum
/// multiplied) or "easyocr" (EasyOCR's custom_mean over the columns whose argmax is not `blank`:
/// product ^ (2 / sqrt(n)); 0 when every column is blank). The one rule for traces and evaluation.
double ctcConfidence(const std::string& rule, const std::vector<int>& argmax,
                     const std::vector<double>& maxima, int blank);

/// A greedy CTC path's characters, each the largest probability of its run of frames (what kraken's
/// greedy_decoder gives a character), in reading order: a run starts at a column whose argmax is
/// not `blank` and differs from the column before, and takes the following columns of the same
/// class up to a blank or another class. The one walk of ctcConfidence's "kraken" rule and of the
/// lowest character probability that evaluation reports.
std::vector<double> ctcRunMaxima(const std::vector<int>& argmax, const std::vector<double>& maxima,
                                 int blank);

}  // namespace foveal::core
