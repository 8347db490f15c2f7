#pragma once
// Training objectives: each prediction stage computes its own loss as a pure function
// (Prediction::loss in stages/stage.h: cross entropy, the REINFORCE estimator of equation 9 for
// glimpses that select regions, the sharp + reference L2 term, CTC). What is left here is the
// state the trainer keeps between batches: the moving-average baseline b_j.
#include "model/stages/attention_prediction.h"  // validSteps

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

}  // namespace foveal::core
