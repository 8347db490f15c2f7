#include "train/adadelta.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <sstream>
#include <string>
#include <type_traits>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include "base/env_switch.h"
#include "train/step_kernels.h"

namespace foveal::core::train {

namespace {

// The key of a parameter's state in torch::optim::Optimizer::state(): LibTorch 1.x keys it by the
// TensorImpl's address printed as a string (c10::guts::to_string), 2.x by the address itself.
template <class Key>
Key paramStateKey(c10::TensorImpl* impl) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream s;
    s << impl;
    return s.str();
  } else {
    return impl;
  }
}

}  // namespace

const AdadeltaParamState* Adadelta::stateOf(const torch::Tensor& p) const {
  using Key = std::decay_t<decltype(state_)>::key_type;
  const auto it = state_.find(paramStateKey<Key>(p.unsafeGetTensorImpl()));
  return it == state_.end() ? nullptr : static_cast<const AdadeltaParamState*>(it->second.get());
}

void AdadeltaOptions::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(lr);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(rho);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(eps);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(weight_decay);
}

void AdadeltaOptions::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, lr);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, rho);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, eps);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(double, weight_decay);
}

void AdadeltaParamState::serialize(torch::serialize::OutputArchive& archive) const {
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(square_avg);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(acc_delta);
  _TORCH_OPTIM_SERIALIZE_TORCH_ARG(step);
}

void AdadeltaParamState::serialize(torch::serialize::InputArchive& archive) {
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, square_avg);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(torch::Tensor, acc_delta);
  _TORCH_OPTIM_DESERIALIZE_TORCH_ARG(int64_t, step);
}

Adadelta::Adadelta(std::vector<torch::optim::OptimizerParamGroup> groups, AdadeltaOptions defaults)
    : Optimizer(std::move(groups), std::make_unique<AdadeltaOptions>(defaults)) {
  TORCH_CHECK(defaults.lr() >= 0, "Adadelta: invalid learning rate ", defaults.lr());
  TORCH_CHECK(defaults.rho() >= 0 && defaults.rho() <= 1, "Adadelta: invalid rho ", defaults.rho());
  TORCH_CHECK(defaults.eps() >= 0, "Adadelta: invalid eps ", defaults.eps());
  TORCH_CHECK(defaults.weight_decay() >= 0, "Adadelta: invalid weight decay ",
              defaults.weight_decay());
}

namespace {
std::atomic<bool>& fusedSwitch() {
  static std::atomic<bool> on{!envSwitchSet("FOVEAL_PLAIN_ADADELTA")};
  return on;
}
}  // namespace

bool fusedAdadelta() { return fusedSwitch().load(); }
void setFusedAdadelta(bool on) { fusedSwitch() = on; }

namespace {

// Whether the single pass applies: CPU, float or double, every array contiguous and alike.
bool fusable(const torch::Tensor& p, const torch::Tensor& g, const torch::Tensor& sq,
             const torch::Tensor& acc) {
  const auto t = p.scalar_type();
  if (!p.is_cpu() || (t != torch::kFloat && t != torch::kDouble)) return false;
  for (const auto* x : {&p, &g, &sq, &acc})
    if (!x->is_cpu() || x->scalar_type() != t || !x->is_contiguous() || x->sizes() != p.sizes())
      return false;
  return true;
}

void fusedStep(torch::Tensor& p, const torch::Tensor& g, torch::Tensor& sq, torch::Tensor& acc,
               const AdadeltaOptions& o) {
  const int64_t n = p.numel();
  constexpr int64_t kGrain = 1 << 15;
  if (p.scalar_type() == torch::kFloat) {
    float *pp = p.data_ptr<float>(), *ps = sq.data_ptr<float>(), *pa = acc.data_ptr<float>();
    const float* pg = g.data_ptr<float>();
    at::parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
      adadeltaUpdate(pp, pg, ps, pa, b, e, static_cast<float>(o.lr()), static_cast<float>(o.rho()),
                     static_cast<float>(o.eps()), static_cast<float>(o.weight_decay()));
    });
  } else {
    double *pp = p.data_ptr<double>(), *ps = sq.data_ptr<double>(), *pa = acc.data_ptr<double>();
    const double* pg = g.data_ptr<double>();
    at::parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
      adadeltaUpdate(pp, pg, ps, pa, b, e, o.lr(), o.rho(), o.eps(), o.weight_decay());
    });
  }
}

}  // namespace

torch::Tensor Adadelta::step(LossClosure closure) {
  torch::NoGradGuard noGrad;
  torch::Tensor loss;
  if (closure) {
    at::AutoGradMode enable(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const AdadeltaOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto grad = p.grad();
      TORCH_CHECK(!grad.is_sparse(), "Adadelta does not support sparse gradients");
      using Key = std::decay_t<decltype(state_)>::key_type;
      const Key key = paramStateKey<Key>(p.unsafeGetTensorImpl());
      auto it = state_.find(key);
      if (it == state_.end()) {
        auto s = std::make_unique<AdadeltaParamState>();
        s->square_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        s->acc_delta(torch::zeros_like(p, at::MemoryFormat::Preserve));
        it = state_.emplace(key, std::move(s)).first;
      }
      auto& s = static_cast<AdadeltaParamState&>(*it->second);
      s.step(s.step() + 1);
      auto& sq = s.square_avg();
      auto& acc = s.acc_delta();
      if (fusedAdadelta() && fusable(p, grad, sq, acc)) {
        fusedStep(p, grad, sq, acc, o);
        continue;
      }
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      sq.mul_(o.rho()).addcmul_(grad, grad, 1 - o.rho());
      auto delta = acc.add(o.eps()).sqrt_().div_(sq.add(o.eps()).sqrt_()).mul_(grad);
      acc.mul_(o.rho()).addcmul_(delta, delta, 1 - o.rho());
      p.add_(delta, -o.lr());
    }
  }
  return loss;
}

void Adadelta::save(torch::serialize::OutputArchive& archive) const { serialize(*this, archive); }

void Adadelta::load(torch::serialize::InputArchive& archive) { serialize(*this, archive); }

}  // namespace foveal::core::train
