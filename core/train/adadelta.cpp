#include "train/adadelta.h"

#include <sstream>
#include <string>
#include <type_traits>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

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
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      auto& sq = s.square_avg();
      auto& acc = s.acc_delta();
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
