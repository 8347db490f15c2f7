#pragma once
// The attention recognizer of the paper: VGG backbone -> 2-layer BiLSTM (X) -> LSTM decoder with
// soft, hard or sharp attention. forward() returns everything the loss and the trace need.
#include <torch/nn/cloneable.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/pimpl.h>
#include <vector>

#include "additive_attention.h"
#include "backbone.h"
#include "model_config.h"
#include "sharpener.h"

namespace foveal::core {

struct DecodeOptions {
  /// Hard/sharp: draw a_t ~ Categorical(alpha_t) instead of argmax. Always on in training mode.
  bool sample = false;
  /// [B, T] int64 class indices (end token 0 after the label): teacher forcing when defined.
  torch::Tensor targets;
  /// [B, T] int64 region indices to use instead of sampling/argmax (replays a decode).
  torch::Tensor forcedSelection;
  /// Recompute the attention projection W x of every column at every step, as a straightforward
  /// implementation does. Same results; only `foveal-cli bench` uses it, to measure the saving.
  bool recomputeKeys = false;
  /// Generator for sampling (nullopt: the default generator).
  c10::optional<at::Generator> generator;
  /// Inference only: beam search over the output tokens with this many hypotheses per image (1:
  /// greedy). Regions are chosen by argmax, as in greedy evaluation; the output is the best
  /// hypothesis decoded again with its tokens and regions forced, so every field is filled.
  int beamWidth = 1;
};

/// The best hypothesis of a beam search for each image.
struct BeamResult {
  torch::Tensor tokens;    ///< [B, T] int64, end token (0) repeated after the first one
  torch::Tensor selected;  ///< [B, T] int64 region used at each step
  torch::Tensor logProb;   ///< [B] log p of the tokens up to and including the first end
};

struct RecognizerOutput {
  torch::Tensor logProbs;    ///< log p(y_t) [B, T, K]
  torch::Tensor alpha;       ///< attention over regions [B, T, M]
  torch::Tensor selected;    ///< region used at each step [B, T] int64 (soft: argmax of alpha)
  torch::Tensor logPSelect;  ///< log p(a_t) = log alpha_t[selected] [B, T]
  torch::Tensor tokens;      ///< argmax of logProbs [B, T] int64
  std::vector<torch::Tensor> patches;  ///< sharp: per STN [B, T, 1, ph, pw]
  std::vector<torch::Tensor> thetas;   ///< sharp: per STN [B, T, 2, 3] patch -> upsampled image
  torch::Tensor contextWeights;        ///< sharp weighting: [B, T, Mz + 1] (last: x_s)
};

class RecognizerImpl : public torch::nn::Cloneable<RecognizerImpl> {
 public:
  explicit RecognizerImpl(const ModelConfig& config);
  void reset() override;

  /// image [B, 1, H, W] (backbone input), upsampled [B, 1, H, Wu] (sharp only; may be
  /// undefined otherwise).
  RecognizerOutput forward(const torch::Tensor& image, const torch::Tensor& upsampled,
                           const DecodeOptions& options = {});

  /// Beam search (inference): keeps the `width` most probable token prefixes per image, a finished
  /// one (end token emitted) extended only by the end token at no cost. Width >= K^(T-1) is exact.
  BeamResult beamSearch(const torch::Tensor& image, const torch::Tensor& upsampled, int width);

  /// Receptive-field geometry of the backbone for the configured input size.
  ReceptiveField geometry() const;
  int numClasses() const { return m_numClasses; }
  Sharpener sharpener() const { return m_sharpener; }

  ModelConfig config;

 private:
  void initialiseWeights();
  torch::Tensor encode(const torch::Tensor& image);  ///< X [B, M, D]
  RecognizerOutput decode(const torch::Tensor& x, const torch::Tensor& upsampled,
                          const DecodeOptions& options);
  BeamResult beamSearchEncoded(const torch::Tensor& x, const torch::Tensor& upsampled, int width);
  /// Sharp attention's context from Z_t [B, Mz, C] and x_s [B, D] (pooling, chain, weighting).
  torch::Tensor sharpContext(const torch::Tensor& z, const torch::Tensor& xs,
                             const torch::Tensor& hPrev, std::vector<torch::Tensor>& weights);
  torch::Tensor context(const torch::Tensor& x, const torch::Tensor& alpha,
                        const torch::Tensor& selected, const torch::Tensor& upsampled,
                        const torch::Tensor& hPrev,
                        std::vector<std::vector<torch::Tensor>>& patches,
                        std::vector<std::vector<torch::Tensor>>& thetas,
                        std::vector<torch::Tensor>& weights);

  int m_numClasses = 0;
  VggBackbone m_backbone{nullptr};
  torch::nn::LSTM m_encoder{nullptr};
  torch::nn::Linear m_init{nullptr};
  AdditiveAttention m_attention{nullptr};
  torch::nn::LSTMCell m_decoder{nullptr};
  torch::nn::Linear m_output{nullptr};
  Sharpener m_sharpener{nullptr};
  AdditiveAttention m_weighting{nullptr};
};
TORCH_MODULE(Recognizer);

}  // namespace foveal::core
