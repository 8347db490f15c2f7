#include "losses.h"

namespace foveal::core {

double MovingBaseline::update(double r) {
  m_value = m_initialised ? m_momentum * m_value + (1.0 - m_momentum) * r : r;
  m_initialised = true;
  return m_value;
}

torch::Tensor validSteps(const torch::Tensor& targets, const torch::Tensor& lengths) {
  auto t = torch::arange(targets.size(1), targets.options().dtype(torch::kLong)).unsqueeze(0);
  return (t <= lengths.to(torch::kLong).unsqueeze(1)).to(torch::kFloat);  // [B, T]
}

LossTerms attentionLoss(const RecognizerOutput& out, const torch::Tensor& targets,
                        const torch::Tensor& lengths, AttentionKind kind, double lambdaR,
                        MovingBaseline& baseline, const torch::Tensor& references,
                        double referenceWeight) {
  LossTerms terms;
  const auto bsz = static_cast<double>(targets.size(0));
  auto mask = validSteps(targets, lengths).to(out.logProbs.dtype());
  auto logpy = out.logProbs.gather(2, targets.to(torch::kLong).unsqueeze(2)).squeeze(2);  // [B,T]
  terms.nll = -(logpy * mask).sum() / bsz;
  const double nvalid = mask.sum().item<double>();
  terms.reward = nvalid > 0 ? (logpy.detach() * mask).sum().item<double>() / nvalid : 0.0;

  if (kind == AttentionKind::Soft || lambdaR == 0.0) {
    terms.reinforce = torch::zeros({}, out.logProbs.options());
    terms.baseline = baseline.value();
  } else {
    terms.baseline = baseline.update(terms.reward);
    auto advantage = (logpy.detach() - terms.baseline) * mask;  // stop-gradient
    terms.reinforce = -lambdaR * (advantage * out.logPSelect).sum() / bsz;
  }
  terms.total = terms.nll + terms.reinforce;

  if (references.defined() && !out.patches.empty()) {
    auto patches = out.patches.back();  // [B, T, 1, ph, pw]
    auto ref = references.to(patches.device())
                   .index_select(0, targets.flatten().to(torch::kLong))
                   .view(patches.sizes());
    auto perStep = (patches - ref).pow(2).mean({2, 3, 4});  // [B, T]
    // The end token has no glyph: only character steps count.
    auto charMask = mask * (targets != 0).to(mask.dtype());
    terms.reference = (perStep * charMask).sum() / bsz;
    terms.total = terms.total + referenceWeight * terms.reference;
  }
  return terms;
}

}  // namespace foveal::core
