#pragma once
// Training objectives of the paper: cross entropy (soft) and the hybrid REINFORCE estimator of
// equation 9 with a moving-average baseline (hard, sharp), plus the sharp + reference L2 term.
#include <torch/types.h>

#include "recognizer.h"

namespace foveal::core {

/// b_j = 0.9 b_{j-1} + 0.1 * mean reward of batch j (the first batch initialises b).
class MovingBaseline {
 public:
  explicit MovingBaseline(double momentum = 0.9) : m_momentum(momentum) {}
  /// Folds in the batch's mean reward and returns the new b_j.
  double update(double batchMeanReward);
  double value() const { return m_value; }
  bool initialised() const { return m_initialised; }
  void set(double value) {
    m_value = value;
    m_initialised = true;
  }

 private:
  double m_momentum;
  double m_value = 0.0;
  bool m_initialised = false;
};

struct LossTerms {
  torch::Tensor total;      ///< scalar to minimise
  torch::Tensor nll;        ///< - sum_t log p(y_t | a_t), mean over the batch
  torch::Tensor reinforce;  ///< - lambda_r sum_t (r_t - b) log p(a_t), mean over the batch
  torch::Tensor reference;  ///< L2 patch term (undefined unless a reference is given)
  double reward = 0.0;      ///< mean over batch and valid steps of log p(y_t | a_t)
  double baseline = 0.0;    ///< b used for this batch
};

/// [B, T] mask of the steps that count: the label's characters and its end token.
torch::Tensor validSteps(const torch::Tensor& targets, const torch::Tensor& lengths);

/// targets [B, T] (end token after the label), lengths [B] (characters, without the end token).
/// For soft models the REINFORCE term is zero. `references` [K, 1, ph, pw] adds the L2 term
/// between each step's last patch and the reference glyph of the target token.
LossTerms attentionLoss(const RecognizerOutput& out, const torch::Tensor& targets,
                        const torch::Tensor& lengths, AttentionKind kind, double lambdaR,
                        MovingBaseline& baseline, const torch::Tensor& references = {},
                        double referenceWeight = 1.0);

}  // namespace foveal::core
