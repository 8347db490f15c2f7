#pragma once
// The seams of a recognizer: one interface per stage (docs/ARCHITECTURE.md "The model as stages")
// and one for the attention decoder's glimpse. Each implementation is a torch::nn::Cloneable module
// that also derives from its interface; Stage<I> carries both (the module, registered in the
// recognizer, owns the parameters; the interface is what the recognizer calls).
// docs/ARCHITECTURE.md has the checklist for adding one.
#include <torch/nn/module.h>
#include <torch/types.h>
#include <memory>
#include <vector>

#include "model/geometry.h"
#include "model/model_config.h"

namespace foveal::core {

template <class Interface>
struct Stage {
  std::shared_ptr<torch::nn::Module> module;
  Interface* impl = nullptr;
  Interface* operator->() const { return impl; }
  explicit operator bool() const { return impl != nullptr; }
};

// ---- transformation ----------------------------------------------------------------------------

struct TransformOutput {
  torch::Tensor image;      ///< rectified [B, C, H, W], the size of the input
  torch::Tensor fiducials;  ///< [B, F, 2] (x, y) in the input's normalised [-1, 1] coordinates
};

class Transformation {
 public:
  virtual ~Transformation() = default;
  virtual TransformOutput transform(const torch::Tensor& image) = 0;  // image [B, C, H, W]
  /// The same rectification applied to another copy of the image at any size (the sharp
  /// glimpse's upsampled copy): image [B, C, H', W'], fiducials from transform().
  virtual torch::Tensor resample(const torch::Tensor& image, const torch::Tensor& fiducials) = 0;
};

// ---- features ----------------------------------------------------------------------------------

class FeatureExtractor {
 public:
  virtual ~FeatureExtractor() = default;
  /// image [B, C, H, W] -> the feature grid [B, R, M, C']: R rows of M cells, one vector per
  /// cell. The column stages (R = 1) average their rows, as DTRB does; the grid stages keep them,
  /// and the attention decoder reads the R * M cells row by row. A 1-D model is the R = 1 case of
  /// the same code (docs/ARCHITECTURE.md "Two-dimensional attention").
  virtual torch::Tensor grid(const torch::Tensor& image) = 0;
  /// The same, and for a stage that has one (the ViT encoder) the attention of its last layer
  /// among the regions, [B, heads, R * M, R * M] (query rows, key columns), into `lastAttention`
  /// (left undefined by the others).
  virtual torch::Tensor gridWithAttention(const torch::Tensor& image,
                                          torch::Tensor* lastAttention) {
    return grid(image);
  }
  /// Receptive fields of the regions (columns or cells), from the layer table the modules are
  /// built from.
  virtual ReceptiveField geometry(int inputW, int inputH) const = 0;
};

// ---- sequence ----------------------------------------------------------------------------------

class SequenceModel {
 public:
  virtual ~SequenceModel() = default;
  virtual torch::Tensor encode(const torch::Tensor& columns) = 0;  // [B, M, C] -> [B, M, D]
};

// ---- prediction --------------------------------------------------------------------------------

struct DecodeOptions {
  /// Hard/sharp: draw a_t ~ Categorical(alpha_t) instead of argmax. Always on in training mode.
  bool sample = false;
  /// [B, T] int64 class indices (end token after the label): teacher forcing when defined.
  torch::Tensor targets;
  /// [B, T] int64 region indices to use instead of sampling/argmax (replays a decode).
  torch::Tensor forcedSelection;
  /// Recompute the attention projection W x of every column at every step, as a straightforward
  /// implementation does. Same results; only `foveal-cli bench` uses it, to measure the saving.
  bool recomputeKeys = false;
  /// Attention decoders: [B, T] float, the factor each step's input token (the start token or
  /// y_{t-1}, one-hot) is multiplied by; undefined: 1. Integrated gradients over the tokens scale
  /// them along the path ("read or guessed", core/trace/attribution.h).
  torch::Tensor tokenScale;
  /// Generator for sampling (nullopt: the default generator).
  c10::optional<at::Generator> generator;
  /// Inference only: beam search over the output tokens with this many hypotheses per image (1:
  /// greedy). Regions are chosen by argmax, as in greedy evaluation; the output is the best
  /// hypothesis decoded again with its tokens and regions forced, so every field is filled.
  int beamWidth = 1;
  /// Beam search: which of the N best hypotheses (0: the best) the output decodes again.
  int beamHypothesis = 0;
  /// Greedy inference: stop decoding once every image of the batch has emitted the end token
  /// (the output then has fewer steps than config.steps()). Readings, confidences and entropies
  /// up to the end token are unchanged; evaluation uses it, traces do not.
  bool stopWhenAllEnded = false;
  /// Teacher forcing in a sharp model: at each step only the rows whose label has not ended
  /// (no end token among the earlier targets) compute the glimpse; the others' glimpse outputs
  /// are zero. Every loss term masks those steps, so the loss and gradients are the same but for
  /// batch normalisation, whose training-mode statistics then cover the rows still reading.
  /// Training with mixed label lengths (5-13 digits) skips about 29 % of the glimpses.
  bool skipEndedRows = false;
  /// Attention decoders: decode steps 0 to lastStep only (-1: every step). The output then has
  /// lastStep + 1 steps, each the same as in a full decode: a step never depends on later ones.
  /// Attribution uses it, since only the explained step's log p matters; CTC ignores it.
  int64_t lastStep = -1;
};

/// A beam search's result for each image: the best hypothesis, and the N best (N = the width),
/// sorted by log p, best first (hypothesis 0 is the best one).
struct BeamResult {
  torch::Tensor tokens;       ///< [B, T] int64, end token repeated after the first one
  torch::Tensor selected;     ///< [B, T] int64 region used at each step
  torch::Tensor logProb;      ///< [B] log p of the tokens up to and including the first end
  torch::Tensor allTokens;    ///< [B, N, T] int64, as `tokens` for each hypothesis
  torch::Tensor allSelected;  ///< [B, N, T] int64
  /// [B, N] log p of each hypothesis, descending; -inf marks a slot the search could not fill
  /// (fewer than N distinct prefixes exist).
  torch::Tensor allLogProb;
};

struct RecognizerOutput {
  /// Attention: log p(y_t) [B, T, K] per decoding step. CTC: per column [B, M, K].
  torch::Tensor logProbs;
  /// Step-by-step attention decoders: logProbs' steps [B, K] as they were computed, before
  /// stacking. A gradient from one of them reaches only its step and the ones before it; from
  /// logProbs.select(1, t) it would also run (with zeros) through every later step's graph.
  std::vector<torch::Tensor> stepLogProbs;
  torch::Tensor alpha;  ///< attention over regions [B, T, M] (M = R * columns; not CTC)
  /// Multi-head attention (PARSeq's cross-attention, ViTSTR's encoder attention): every head's
  /// map [B, T, H, M]; alpha is their mean. Undefined for single-head decoders.
  torch::Tensor headAlpha;
  /// PARSeq with refinement: the first (autoregressive) pass's cross-attention, mean over heads
  /// [B, T, M] (zeros for the steps it did not run); alpha is the final pass's.
  torch::Tensor firstAlpha;
  torch::Tensor selected;    ///< region used at each step [B, T] int64 (soft: argmax of alpha)
  torch::Tensor logPSelect;  ///< log p(a_t) = log alpha_t[selected] [B, T]
  /// Attention: argmax of logProbs [B, T]. CTC: the argmax path per column [B, M] (readings()
  /// collapses it).
  torch::Tensor tokens;
  std::vector<torch::Tensor> patches;  ///< sharp: per STN [B, T, 1, ph, pw]
  std::vector<torch::Tensor> thetas;   ///< sharp: per STN [B, T, 2, 3] patch -> upsampled image
  torch::Tensor contextWeights;        ///< sharp weighting: [B, T, Mz + 1] (last: x_s)
  torch::Tensor rectified;             ///< tps: the rectified image [B, C, H, W]
  torch::Tensor fiducials;             ///< tps: [B, F, 2] normalised input coordinates
  /// Beam search (DecodeOptions::beamWidth > 1): every hypothesis; the fields above decode
  /// DecodeOptions::beamHypothesis of them again. Undefined tensors otherwise.
  BeamResult beam;
};

/// What a loss needs besides the output: the targets and, for REINFORCE, the baseline b_j.
struct LossInputs {
  torch::Tensor targets;     ///< [B, T] int64 (layout of the model's charset)
  torch::Tensor lengths;     ///< [B] characters, without the end token
  double lambdaR = 0.0;      ///< REINFORCE weight (glimpses that select regions)
  double baseline = 0.0;     ///< b_j for this batch (the trainer keeps the moving average)
  torch::Tensor references;  ///< [K, 1, ph, pw]: sharp + reference glyphs (undefined: no term)
  double referenceWeight = 1.0;
};

struct LossTerms {
  torch::Tensor total;      ///< scalar to minimise
  torch::Tensor nll;        ///< - sum_t log p(y_t | a_t), mean over the batch (CTC: its NLL)
  torch::Tensor reinforce;  ///< - lambda_r sum_t (r_t - b) log p(a_t), mean over the batch
  torch::Tensor reference;  ///< L2 patch term (undefined unless a reference is given)
};

/// Per-batch figures the trainer logs and reduces across processes.
struct BatchStats {
  double rewardSum = 0;    ///< sum over valid steps of log p(y_t | a_t) (CTC: - loss per image)
  double rewardCount = 0;  ///< number of valid steps (CTC: images)
  double correct = 0;      ///< images read exactly
};

class Prediction {
 public:
  virtual ~Prediction() = default;
  /// x [B, M, D] from the sequence stage; upsampled [B, 1, H, Wu] when the glimpse needs it.
  virtual RecognizerOutput predict(const torch::Tensor& x, const torch::Tensor& upsampled,
                                   const DecodeOptions& options) = 0;
  virtual BeamResult beamSearch(const torch::Tensor& x, const torch::Tensor& upsampled,
                                int width) = 0;
  /// False for the stages imported for reading only (PARSeq, ViTSTR): a beam width over 1 then
  /// reads greedily and the trace says so (Trace::decodingNote), per model, not as a failure.
  virtual bool searchesWithBeam() const { return true; }
  /// Pure: the same inputs give the same terms; nothing is updated.
  virtual LossTerms loss(const RecognizerOutput& out, const LossInputs& in) const = 0;
  virtual BatchStats stats(const RecognizerOutput& out, const torch::Tensor& targets,
                           const torch::Tensor& lengths) const = 0;
  /// The class indices read for each image, special classes removed, in order.
  virtual std::vector<std::vector<int>> readings(const RecognizerOutput& out) const = 0;
};

// ---- the attention decoder's glimpse -----------------------------------------------------------

struct GlimpseInput {
  torch::Tensor x;          ///< [N, M, D] encoded columns
  torch::Tensor alpha;      ///< [N, M]
  torch::Tensor selected;   ///< [N] int64 region of this step
  torch::Tensor upsampled;  ///< [B, 1, H, Wu] (glimpses that need it), B <= N
  torch::Tensor
      imageOfRow;       ///< [N] int64 row -> image of `upsampled` (undefined: row i is image i)
  torch::Tensor hPrev;  ///< [N, H] decoder state h_{t-1}
};

struct GlimpseOutput {
  torch::Tensor context;               ///< c_t [N, contextDim]
  std::vector<torch::Tensor> patches;  ///< per STN [N, 1, ph, pw]
  std::vector<torch::Tensor> thetas;   ///< per STN [N, 2, 3]
  torch::Tensor weights;               ///< sharp weighting: [N, Mz + 1]
};

/// sum_m weights[n, m] items[n, m, :] -> [N, D]: a glimpse's weighted mixture of its items, as a
/// broadcast product and a sum rather than a bmm. LibTorch's CPU bmm multiplies small batches one
/// [1, M] x [M, D] matrix at a time (for [64, 24] weights and [64, 24, 32] items 246 us against
/// 26 us, and 1,036 against 230 with the backward pass).
inline torch::Tensor weightedSum(const torch::Tensor& weights, const torch::Tensor& items) {
  return (weights.unsqueeze(2) * items).sum(1);
}

class Glimpse {
 public:
  virtual ~Glimpse() = default;
  virtual GlimpseOutput glimpse(const GlimpseInput& in) = 0;
  virtual int64_t contextDim() const = 0;
  /// True when mixColumns() is defined.
  virtual bool mixesColumns() const { return false; }
  /// When c_t is a fixed mixture of the columns (soft: alpha-weighted; hard: the selected one),
  /// the same mixture of any per-column values [N, M, E] -> [N, E]; undefined otherwise. The
  /// decoder's latency path applies it to the columns' gate contributions instead of to x.
  virtual torch::Tensor mixColumns(const torch::Tensor& values, const torch::Tensor& alpha,
                                   const torch::Tensor& selected) const {
    return {};
  }
};

}  // namespace foveal::core
