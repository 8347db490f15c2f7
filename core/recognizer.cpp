#include "recognizer.h"

#include <torch/nn/functional/activation.h>
#include <torch/nn/init.h>

#include "charset.h"
#include "error.h"

namespace foveal::core {

namespace nn = torch::nn;

RecognizerImpl::RecognizerImpl(const ModelConfig& config_) : config(config_) {
  config.validate();
  reset();
}

void RecognizerImpl::reset() {
  m_numClasses = Charset(config.charset, config.caseInsensitive).size();
  const int c = config.cnnChannels(), hid = config.hidden(), d = config.featureDim();
  m_backbone = register_module("backbone", VggBackbone(VggBackboneOptions(config.width)));
  m_encoder = register_module(
      "encoder",
      nn::LSTM(nn::LSTMOptions(c, hid).num_layers(2).bidirectional(true).batch_first(true)));
  m_init = register_module("init", nn::Linear(d, hid));
  m_attention = register_module(
      "attention", AdditiveAttention(AdditiveAttentionOptions(d, hid, config.depth())));

  int ctx = d;
  if (config.attention == AttentionKind::Sharp) {
    m_sharpener = register_module("sharpener", Sharpener(config));
    if (config.context == ContextKind::Pooling) ctx = c;
    if (config.context == ContextKind::Chain) ctx = c + d;
    if (config.context == ContextKind::Weighting) {
      // Z columns (C) and x_s (D) are scored together; C == D by construction.
      m_weighting = register_module(
          "weighting", AdditiveAttention(AdditiveAttentionOptions(d, hid, config.depth())));
      ctx = d;
    }
  }
  m_decoder = register_module("decoder", nn::LSTMCell(m_numClasses + ctx, hid));
  m_output = register_module("output", nn::Linear(m_numClasses + hid, m_numClasses));
  initialiseWeights();
}

void RecognizerImpl::initialiseWeights() {
  // As deep-text-recognition-benchmark initialises its models: He-normal weights, zero biases,
  // BN scales at 1; the STN regressors keep their identity initialisation. LibTorch's default
  // (Kaiming-uniform with a = sqrt(5)) shrinks the signal through the seven VGG convolutions until
  // the output barely depends on the image, and training then sits on a long plateau.
  torch::NoGradGuard guard;
  for (auto& p : named_parameters()) {
    const std::string& name = p.key();
    if (name.find(".fc2.") != std::string::npos && name.find("stns.") != std::string::npos)
      continue;
    auto& t = p.value();
    const std::string leaf = name.substr(name.rfind('.') + 1);  // "bias", "bias_ih_l0", ...
    const bool bias = leaf.rfind("bias", 0) == 0;
    if (bias) {
      t.zero_();
    } else if (t.dim() >= 2) {
      torch::nn::init::kaiming_normal_(t, 0.0, torch::kFanIn, torch::kReLU);
    } else {
      t.fill_(1.0);  // BN scale
    }
  }
}

ReceptiveField RecognizerImpl::geometry() const {
  return m_backbone->geometry(config.preprocessing.inputW, config.preprocessing.inputH);
}

torch::Tensor RecognizerImpl::context(const torch::Tensor& x, const torch::Tensor& alpha,
                                      const torch::Tensor& selected, const torch::Tensor& upsampled,
                                      const torch::Tensor& hPrev, RecognizerOutput& out,
                                      std::vector<std::vector<torch::Tensor>>& patches,
                                      std::vector<std::vector<torch::Tensor>>& thetas,
                                      std::vector<torch::Tensor>& weights) {
  const auto b = x.size(0);
  auto batch = torch::arange(b, selected.options());
  switch (config.attention) {
    case AttentionKind::Soft:
      return torch::bmm(alpha.unsqueeze(1), x).squeeze(1);  // [B, D]
    case AttentionKind::Hard:
      return x.index({batch, selected});  // [B, D]
    case AttentionKind::Sharp:
      break;
  }
  auto sh = m_sharpener->forward(upsampled, selected);
  for (size_t k = 0; k < sh.patches.size(); ++k) {
    patches[k].push_back(sh.patches[k]);
    thetas[k].push_back(sh.thetas[k]);
  }
  auto z = sh.features;                  // [B, Mz, C]
  auto pooled = z.mean(1);               // [B, C]
  auto xs = x.index({batch, selected});  // [B, D]
  switch (config.context) {
    case ContextKind::Pooling:
      return pooled;
    case ContextKind::Chain:
      return torch::cat({pooled, xs}, 1);
    case ContextKind::Weighting: {
      auto items = torch::cat({z, xs.unsqueeze(1)}, 1);  // [B, Mz + 1, D]
      auto w = torch::softmax(m_weighting->scores(m_weighting->project(items), hPrev), -1);
      weights.push_back(w);
      return torch::bmm(w.unsqueeze(1), items).squeeze(1);
    }
  }
  (void)out;
  return pooled;
}

RecognizerOutput RecognizerImpl::forward(const torch::Tensor& image, const torch::Tensor& upsampled,
                                         const DecodeOptions& options) {
  const bool sharp = config.attention == AttentionKind::Sharp;
  if (sharp && !upsampled.defined()) throw Error("sharp attention needs the upsampled image");
  const bool stochastic =
      config.attention != AttentionKind::Soft && (is_training() || options.sample);
  const int64_t steps = config.steps();
  const int64_t bsz = image.size(0);
  const bool teacher = options.targets.defined();

  auto f = m_backbone->forward(image);          // [B, M, C]
  auto x = std::get<0>(m_encoder->forward(f));  // [B, M, D]
  auto wx = m_attention->project(x);            // [B, M, depth], once per image
  auto h = m_init(x.mean(1));                   // h0 = FC(mean X) [B, H]
  auto cst = torch::zeros_like(h);
  auto y = torch::zeros({bsz, m_numClasses}, x.options());  // y0 = 0

  RecognizerOutput out;
  std::vector<torch::Tensor> logp, alphas, sel, logsel, toks, weights;
  const int nstn = sharp ? config.numStns : 0;
  std::vector<std::vector<torch::Tensor>> patches(nstn), thetas(nstn);

  for (int64_t t = 0; t < steps; ++t) {
    auto e =
        m_attention->scores(options.recomputeKeys ? m_attention->project(x) : wx, h);  // [B, M]
    auto logAlpha = torch::log_softmax(e, -1);
    auto alpha = logAlpha.exp();
    torch::Tensor s;
    if (options.forcedSelection.defined()) {
      s = options.forcedSelection.select(1, t).to(torch::kLong);
    } else if (stochastic) {
      torch::NoGradGuard ng;
      s = torch::multinomial(alpha.detach(), 1, false, options.generator).squeeze(1);
    } else {
      s = alpha.detach().argmax(-1);
    }
    auto c = context(x, alpha, s, upsampled, h, out, patches, thetas, weights);
    std::tie(h, cst) = m_decoder->forward(torch::cat({y, c}, 1), std::make_tuple(h, cst));
    auto lp = torch::log_softmax(m_output(torch::cat({y, h}, 1)), -1);  // [B, K]
    auto tok = lp.detach().argmax(-1);
    logp.push_back(lp);
    alphas.push_back(alpha);
    sel.push_back(s);
    logsel.push_back(logAlpha.gather(1, s.unsqueeze(1)).squeeze(1));
    toks.push_back(tok);
    auto next = teacher ? options.targets.select(1, t).to(torch::kLong) : tok;
    y = torch::one_hot(next, m_numClasses).to(x.scalar_type());
  }
  out.logProbs = torch::stack(logp, 1);
  out.alpha = torch::stack(alphas, 1);
  out.selected = torch::stack(sel, 1);
  out.logPSelect = torch::stack(logsel, 1);
  out.tokens = torch::stack(toks, 1);
  for (int k = 0; k < nstn; ++k) {
    out.patches.push_back(torch::stack(patches[k], 1));
    out.thetas.push_back(torch::stack(thetas[k], 1));
  }
  if (!weights.empty()) out.contextWeights = torch::stack(weights, 1);
  return out;
}

}  // namespace foveal::core
