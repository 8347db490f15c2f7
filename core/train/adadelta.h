#pragma once
// ADADELTA (Zeiler 2012) as a torch::optim::Optimizer: LibTorch 1.13 ships none. Per parameter,
// with g = grad + weight_decay * theta (L2 added to the gradient, as PyTorch's Adadelta does):
//   E[g^2]  <- rho E[g^2] + (1 - rho) g^2
//   dx      =  sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) * g
//   E[dx^2] <- rho E[dx^2] + (1 - rho) dx^2
//   theta   <- theta - lr * dx
// Defaults are the paper's: lr 1.0, rho 0.95, eps 1e-6, weight decay 4e-5. The state (both running
// averages and the step count) is saved and restored by Optimizer::save / load.
#include <torch/optim/optimizer.h>
#include <torch/optim/serialize.h>
#include <torch/serialize/archive.h>
#include <torch/types.h>

#include <vector>

namespace foveal::core::train {

struct AdadeltaOptions : public torch::optim::OptimizerCloneableOptions<AdadeltaOptions> {
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}  // NOLINT: implicit like LibTorch's options
  /// Multiplies the update (the paper keeps it at 1.0).
  TORCH_ARG(double, lr) = 1.0;
  /// Decay of both running averages.
  TORCH_ARG(double, rho) = 0.95;
  /// Added inside both square roots.
  TORCH_ARG(double, eps) = 1e-6;
  /// L2 regularisation, added to the gradient.
  TORCH_ARG(double, weight_decay) = 4e-5;

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
  double get_lr() const override { return lr(); }
  void set_lr(const double lr) override { this->lr(lr); }
};

struct AdadeltaParamState : public torch::optim::OptimizerCloneableParamState<AdadeltaParamState> {
  /// E[g^2]
  TORCH_ARG(torch::Tensor, square_avg);
  /// E[dx^2]
  TORCH_ARG(torch::Tensor, acc_delta);
  TORCH_ARG(int64_t, step) = 0;

 public:
  void serialize(torch::serialize::InputArchive& archive) override;
  void serialize(torch::serialize::OutputArchive& archive) const override;
};

/// Whether Adadelta::step updates each CPU float or double parameter in one fused pass (the
/// default; FOVEAL_PLAIN_ADADELTA=1 at start, or setFusedAdadelta(false), keeps the tensor ops).
bool fusedAdadelta();
void setFusedAdadelta(bool on);

class Adadelta : public torch::optim::Optimizer {
 public:
  explicit Adadelta(std::vector<torch::optim::OptimizerParamGroup> groups,
                    AdadeltaOptions defaults = {});
  explicit Adadelta(std::vector<torch::Tensor> params, AdadeltaOptions defaults = {})
      : Adadelta({torch::optim::OptimizerParamGroup(std::move(params))}, defaults) {}

  torch::Tensor step(LossClosure closure = nullptr) override;
  /// The state of parameter `p` (one of this optimiser's), or null before its first step. The
  /// map's key differs between LibTorch 1.x and 2.x; this hides it.
  const AdadeltaParamState* stateOf(const torch::Tensor& p) const;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  template <typename Self, typename Archive>
  static void serialize(Self& self, Archive& archive) {
    torch::optim::serialize<AdadeltaParamState, AdadeltaOptions>(archive, self);
  }
};

}  // namespace foveal::core::train
