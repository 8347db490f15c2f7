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

  /// Receptive-field geometry of the backbone for the configured input size.
  ReceptiveField geometry() const;
  int numClasses() const { return m_numClasses; }
  Sharpener sharpener() const { return m_sharpener; }

  ModelConfig config;

 private:
  void initialiseWeights();
  torch::Tensor context(const torch::Tensor& x, const torch::Tensor& alpha,
                        const torch::Tensor& selected, const torch::Tensor& upsampled,
                        const torch::Tensor& hPrev, RecognizerOutput& out,
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
