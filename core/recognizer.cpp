#include "recognizer.h"

#include <limits>

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
                                      const torch::Tensor& hPrev,
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
  return sharpContext(sh.features, x.index({batch, selected}), hPrev, weights);
}

torch::Tensor RecognizerImpl::sharpContext(const torch::Tensor& z, const torch::Tensor& xs,
                                           const torch::Tensor& hPrev,
                                           std::vector<torch::Tensor>& weights) {
  auto pooled = z.mean(1);  // z: Z_t [B, Mz, C]; xs: x_s [B, D]
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
  return pooled;
}

torch::Tensor RecognizerImpl::encode(const torch::Tensor& image) {
  auto f = m_backbone->forward(image);        // [B, M, C]
  return std::get<0>(m_encoder->forward(f));  // [B, M, D]
}

RecognizerOutput RecognizerImpl::forward(const torch::Tensor& image, const torch::Tensor& upsampled,
                                         const DecodeOptions& options) {
  if (config.attention == AttentionKind::Sharp && !upsampled.defined())
    throw Error("sharp attention needs the upsampled image");
  auto x = encode(image);
  if (options.beamWidth <= 1) return decode(x, upsampled, options);
  if (is_training() || options.sample || options.targets.defined() ||
      options.forcedSelection.defined())
    throw Error(
        "beam search is for inference with argmax regions: not in training, not with "
        "sampling, teacher forcing or forced regions");
  // Search, then decode the winner again with its tokens and regions forced: the same
  // computation as the hypothesis had in the beam, with every output (alpha, patches, ...) kept.
  const BeamResult best = beamSearchEncoded(x, upsampled, options.beamWidth);
  DecodeOptions replay = options;
  replay.beamWidth = 1;
  replay.targets = best.tokens;
  replay.forcedSelection = best.selected;
  RecognizerOutput out = decode(x, upsampled, replay);
  out.tokens = best.tokens;
  return out;
}

RecognizerOutput RecognizerImpl::decode(const torch::Tensor& x, const torch::Tensor& upsampled,
                                        const DecodeOptions& options) {
  const bool sharp = config.attention == AttentionKind::Sharp;
  const bool stochastic =
      config.attention != AttentionKind::Soft && (is_training() || options.sample);
  const int64_t steps = config.steps();
  const int64_t bsz = x.size(0);
  const bool teacher = options.targets.defined();

  auto wx = m_attention->project(x);  // [B, M, depth], once per image
  auto h = m_init(x.mean(1));         // h0 = FC(mean X) [B, H]
  auto cst = torch::zeros_like(h);
  auto y = torch::zeros({bsz, m_numClasses}, x.options());  // y0 = 0

  // Small-batch inference with soft or hard attention (the latency path). The decoder's input
  // weights are applied to every column of X once: the context part of the LSTM gates is then
  // alpha_t (soft) or the selected row (hard) of that product, the previous token's part is a row
  // of the weights, and no step multiplies the [4H, K + D] input matrix again. At batch 1 those
  // per-step products are bound by reading the weights, not by arithmetic. Same function, other
  // summation order; batched inference and training keep the straightforward form (for them the
  // per-column product is more arithmetic than the per-step one).
  const bool lean = !sharp && !torch::GradMode::is_enabled() && bsz <= 4 && !options.recomputeKeys;
  torch::Tensor xGates, yGates, hhW, gBias, outY, outH, prev;
  if (lean) {
    const auto& wih = m_decoder->weight_ih;  // [4H, K + D]
    const auto k = m_numClasses;
    xGates = torch::matmul(x, wih.narrow(1, k, wih.size(1) - k).t());  // [B, M, 4H]
    yGates = wih.narrow(1, 0, k).t().contiguous();                     // [K, 4H]
    hhW = m_decoder->weight_hh.t();                                    // [H, 4H]
    gBias = m_decoder->bias_ih + m_decoder->bias_hh;
    const auto& wo = m_output->weight;           // [K, K + H]
    outY = wo.narrow(1, 0, k).t().contiguous();  // [K, K]
    outH = wo.narrow(1, k, wo.size(1) - k).t();  // [H, K]
  }
  const auto rows =
      torch::arange(bsz, torch::TensorOptions().dtype(torch::kLong).device(x.device()));

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
    torch::Tensor lp;  // log p(y_t) [B, K]
    if (lean) {
      auto gates = torch::addmm(gBias, h, hhW);
      if (config.attention == AttentionKind::Soft)
        gates += torch::bmm(alpha.unsqueeze(1), xGates).squeeze(1);
      else
        gates += xGates.index({rows, s});
      if (prev.defined()) gates += yGates.index_select(0, prev);
      auto g = gates.chunk(4, 1);  // LSTMCell's order: input, forget, cell, output
      cst = torch::sigmoid(g[1]) * cst + torch::sigmoid(g[0]) * torch::tanh(g[2]);
      h = torch::sigmoid(g[3]) * torch::tanh(cst);
      auto logits = torch::addmm(m_output->bias, h, outH);
      if (prev.defined()) logits += outY.index_select(0, prev);
      lp = torch::log_softmax(logits, -1);
    } else {
      auto c = context(x, alpha, s, upsampled, h, patches, thetas, weights);
      std::tie(h, cst) = m_decoder->forward(torch::cat({y, c}, 1), std::make_tuple(h, cst));
      lp = torch::log_softmax(m_output(torch::cat({y, h}, 1)), -1);
    }
    auto tok = lp.detach().argmax(-1);
    logp.push_back(lp);
    alphas.push_back(alpha);
    sel.push_back(s);
    logsel.push_back(logAlpha.gather(1, s.unsqueeze(1)).squeeze(1));
    toks.push_back(tok);
    auto next = teacher ? options.targets.select(1, t).to(torch::kLong) : tok;
    if (lean)
      prev = next;
    else
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

BeamResult RecognizerImpl::beamSearch(const torch::Tensor& image, const torch::Tensor& upsampled,
                                      int width) {
  if (config.attention == AttentionKind::Sharp && !upsampled.defined())
    throw Error("sharp attention needs the upsampled image");
  return beamSearchEncoded(encode(image), upsampled, width);
}

BeamResult RecognizerImpl::beamSearchEncoded(const torch::Tensor& x0, const torch::Tensor& up0,
                                             int width) {
  if (width < 1) throw Error("beam width must be at least 1, not " + std::to_string(width));
  const int64_t b = x0.size(0), steps = config.steps(), classes = m_numClasses;
  // More hypotheses than one step has candidates (K) changes nothing at the first step; later
  // steps have K x width candidates, so wider beams stay meaningful up to K^(T-1).
  const int64_t k = width;
  const int64_t n = b * k;
  const auto longs = torch::TensorOptions().dtype(torch::kLong).device(x0.device());
  auto x = x0.repeat_interleave(k, 0);  // [N, M, D]: image i's hypotheses are rows i*k .. i*k+k-1
  const bool sharp = config.attention == AttentionKind::Sharp;
  const int64_t regions = x0.size(1);
  const auto imageOfRow = torch::arange(n, longs).div(k, "floor");  // [N]
  auto wx = m_attention->project(x0).repeat_interleave(k, 0);
  auto h = m_init(x0.mean(1)).repeat_interleave(k, 0);
  auto cst = torch::zeros_like(h);
  auto y = torch::zeros({n, classes}, x.options());
  const float inf = std::numeric_limits<float>::infinity();
  // Every hypothesis starts as the empty prefix; only the first counts, or the first step would
  // fill the beam with k copies of the best token.
  auto score = torch::full({b, k}, -inf, x.options().dtype(torch::kFloat));
  score.select(1, 0).zero_();
  auto finished = torch::zeros({n}, longs.dtype(torch::kBool));
  // After the end token only the end token follows, and it costs nothing.
  auto endOnly = torch::full({classes}, -inf, score.options());
  endOnly[Charset::kEnd] = 0.0f;
  auto base = (torch::arange(b, longs) * k).unsqueeze(1);  // [B, 1]

  const auto rowsN = torch::arange(n, longs);
  std::vector<torch::Tensor> weights, parents, tokens, selections;
  for (int64_t t = 0; t < steps; ++t) {
    auto alpha = torch::softmax(m_attention->scores(wx, h), -1);  // [N, M]
    auto s = alpha.argmax(-1);                                    // [N]
    torch::Tensor c;
    if (sharp) {
      // Z_t depends only on the image and the region: hypotheses of one image that look at the
      // same region share one run of the sharpener (typically most of them do).
      auto key = imageOfRow * regions + s;
      auto unique = at::_unique(key, /*sorted=*/true, /*return_inverse=*/true);
      const auto& pairs = std::get<0>(unique);
      auto sh = m_sharpener->forward(up0.index_select(0, pairs.div(regions, "floor")),
                                     pairs.remainder(regions));
      auto z = sh.features.index_select(0, std::get<1>(unique));
      c = sharpContext(z, x.index({rowsN, s}), h, weights);
      weights.clear();
    } else {
      std::vector<std::vector<torch::Tensor>> none;  // soft and hard have no patches
      c = context(x, alpha, s, {}, h, none, none, weights);
    }
    std::tie(h, cst) = m_decoder->forward(torch::cat({y, c}, 1), std::make_tuple(h, cst));
    auto lp = torch::log_softmax(m_output(torch::cat({y, h}, 1)), -1).to(torch::kFloat);
    lp = torch::where(finished.unsqueeze(1), endOnly.unsqueeze(0), lp);  // [N, K]
    auto candidates = (score.reshape({n, 1}) + lp).reshape({b, k * classes});
    auto [top, index] = candidates.topk(k, 1);  // sorted: hypothesis 0 is the best
    auto parent = index.div(classes, "floor");  // [B, k]
    auto token = index.remainder(classes);      // [B, k]
    auto rows = (parent + base).reshape({n});
    h = h.index_select(0, rows);
    cst = cst.index_select(0, rows);
    auto tok = token.reshape({n});
    finished = finished.index_select(0, rows).logical_or(tok == Charset::kEnd);
    y = torch::one_hot(tok, classes).to(x.scalar_type());
    parents.push_back(parent);
    tokens.push_back(token);
    selections.push_back(s.reshape({b, k}).gather(1, parent));
    score = top;
  }
  // Walk the best hypothesis back through its parents.
  std::vector<torch::Tensor> bestTokens(static_cast<size_t>(steps)),
      bestSel(static_cast<size_t>(steps));
  auto hyp = torch::zeros({b, 1}, longs);
  for (int64_t t = steps - 1; t >= 0; --t) {
    const auto i = static_cast<size_t>(t);
    bestTokens[i] = tokens[i].gather(1, hyp).squeeze(1);
    bestSel[i] = selections[i].gather(1, hyp).squeeze(1);
    hyp = parents[i].gather(1, hyp);
  }
  BeamResult r;
  r.tokens = torch::stack(bestTokens, 1);
  r.selected = torch::stack(bestSel, 1);
  r.logProb = score.select(1, 0).clone();
  return r;
}

}  // namespace foveal::core
