#include "model/stages/attention_prediction.h"

#include <algorithm>
#include <limits>

#include "base/error.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

namespace nn = torch::nn;

torch::Tensor validSteps(const torch::Tensor& targets, const torch::Tensor& lengths) {
  auto t = torch::arange(targets.size(1), targets.options().dtype(torch::kLong)).unsqueeze(0);
  return (t <= lengths.to(torch::kLong).unsqueeze(1)).to(torch::kFloat);  // [B, T]
}

AttentionPredictionImpl::AttentionPredictionImpl(const ModelConfig& config_, int64_t inputDim)
    : config(config_), m_inputDim(inputDim) {
  reset();
}

void AttentionPredictionImpl::reset() {
  m_charset = config.makeCharset();
  m_numClasses = m_charset.size();
  m_paperCell = config.cell == "paper";
  const int64_t hid = config.hidden(), d = m_inputDim, k = m_numClasses;
  if (m_paperCell) m_init = register_module("init", nn::Linear(d, hid));
  m_attention = register_module(
      "attention", AdditiveAttention(AdditiveAttentionOptions(d, hid, config.depth())));
  m_glimpse = buildGlimpse(StageContext{config, d, hid});
  register_module("glimpse", m_glimpse.module);
  m_cell = register_module("cell", nn::LSTMCell(k + m_glimpse->contextDim(), hid));
  m_output = register_module("output", nn::Linear(m_paperCell ? k + hid : hid, k));
}

AttentionPredictionImpl::Keys AttentionPredictionImpl::keys(const torch::Tensor& x, bool lean) {
  Keys k;
  k.x = x;
  k.wx = m_attention->project(x);  // [B, M, depth], once per image
  k.lean = lean;
  if (!lean) return k;
  // The cell's input is [y; c] (paper) or [c; y] (DTRB); its output layer reads [y; h] (paper)
  // or h (DTRB).
  const auto& wih = m_cell->weight_ih;  // [4H, K + D]
  const int64_t classes = m_numClasses, ctx = wih.size(1) - classes;
  const int64_t tokenAt = m_paperCell ? 0 : ctx, contextAt = m_paperCell ? classes : 0;
  k.xGates = torch::matmul(x, wih.narrow(1, contextAt, ctx).t());  // [B, M, 4H]
  k.yGates = wih.narrow(1, tokenAt, classes).t().contiguous();     // [K, 4H]
  k.hhW = m_cell->weight_hh.t();                                   // [H, 4H]
  k.gBias = m_cell->bias_ih + m_cell->bias_hh;
  const auto& wo = m_output->weight;  // [K, K + H] (paper) or [K, H]
  if (m_paperCell) {
    k.outY = wo.narrow(1, 0, classes).t().contiguous();        // [K, K]
    k.outH = wo.narrow(1, classes, wo.size(1) - classes).t();  // [H, K]
  } else {
    k.outH = wo.t();
  }
  return k;
}

AttentionPredictionImpl::State AttentionPredictionImpl::initialState(const torch::Tensor& x,
                                                                     int64_t rows) {
  State s;
  const int64_t b = x.size(0);
  if (m_paperCell) {
    s.h = m_init(x.mean(1));  // h0 = FC(mean X) [B, H]
  } else {
    s.h = torch::zeros({b, config.hidden()}, x.options());
    s.prev = torch::full({b}, m_charset.goIndex(),
                         torch::TensorOptions().dtype(torch::kLong).device(x.device()));
  }
  s.c = torch::zeros_like(s.h);
  if (rows != b) {  // beam search: every image's state repeated for its hypotheses
    const int64_t k = rows / b;
    s.h = s.h.repeat_interleave(k, 0);
    s.c = s.c.repeat_interleave(k, 0);
    if (s.prev.defined()) s.prev = s.prev.repeat_interleave(k, 0);
  }
  return s;
}

namespace {

// A glimpse of some rows as one of all `rows`: zero in the others.
torch::Tensor scatterRows(const torch::Tensor& t, const torch::Tensor& index, int64_t rows) {
  if (!t.defined()) return t;
  auto size = t.sizes().vec();
  size[0] = rows;
  return torch::zeros(size, t.options()).index_copy(0, index, t);
}

GlimpseOutput scatterRows(GlimpseOutput g, const torch::Tensor& index, int64_t rows) {
  g.context = scatterRows(g.context, index, rows);
  for (auto& p : g.patches) p = scatterRows(p, index, rows);
  for (auto& t : g.thetas) t = scatterRows(t, index, rows);
  g.weights = scatterRows(g.weights, index, rows);
  return g;
}

}  // namespace

AttentionPredictionImpl::StepOutput AttentionPredictionImpl::step(
    const Keys& k, State& st, const torch::Tensor& upsampled, const torch::Tensor& imageOfRow,
    const torch::Tensor& forced, Select select, const DecodeOptions& options,
    const torch::Tensor& glimpseRows) {
  StepOutput o;
  auto e = m_attention->scores(options.recomputeKeys ? m_attention->project(k.x) : k.wx,
                               st.h);  // [N, M]
  o.logAlpha = torch::log_softmax(e, -1);
  o.alpha = o.logAlpha.exp();
  if (forced.defined()) {
    o.selected = forced;
  } else if (select == Select::Sample) {
    torch::NoGradGuard ng;
    o.selected = torch::multinomial(o.alpha.detach(), 1, false, options.generator).squeeze(1);
  } else {
    o.selected = o.alpha.detach().argmax(-1);
  }
  torch::Tensor logits;
  if (k.lean) {
    auto gates = torch::addmm(k.gBias, st.h, k.hhW);
    gates += m_glimpse->mixColumns(k.xGates, o.alpha, o.selected);
    if (st.prev.defined()) gates += k.yGates.index_select(0, st.prev);
    auto g = gates.chunk(4, 1);  // LSTMCell's order: input, forget, cell, output
    st.c = torch::sigmoid(g[1]) * st.c + torch::sigmoid(g[0]) * torch::tanh(g[2]);
    st.h = torch::sigmoid(g[3]) * torch::tanh(st.c);
    logits = torch::addmm(m_output->bias, st.h, k.outH);
    if (m_paperCell && st.prev.defined()) logits += k.outY.index_select(0, st.prev);
  } else {
    const auto rows = k.x.size(0);
    if (glimpseRows.defined()) {
      const auto& r = glimpseRows;
      // Row i reads image i unless imageOfRow says otherwise: the rows kept read their images
      // in place (no copy of the upsampled batch at every step).
      GlimpseInput in{k.x.index_select(0, r),
                      o.alpha.index_select(0, r),
                      o.selected.index_select(0, r),
                      upsampled,
                      imageOfRow.defined()  ? imageOfRow.index_select(0, r)
                      : upsampled.defined() ? r
                                            : torch::Tensor(),
                      st.h.index_select(0, r)};
      o.glimpse = scatterRows(m_glimpse->glimpse(in), r, rows);
    } else {
      GlimpseInput in{k.x, o.alpha, o.selected, upsampled, imageOfRow, st.h};
      o.glimpse = m_glimpse->glimpse(in);
    }
    auto y = st.prev.defined() ? torch::one_hot(st.prev, m_numClasses).to(k.x.scalar_type())
                               : torch::zeros({rows, m_numClasses}, k.x.options());
    if (st.prevScale.defined()) y = y * st.prevScale.unsqueeze(1);
    auto input =
        m_paperCell ? torch::cat({y, o.glimpse.context}, 1) : torch::cat({o.glimpse.context, y}, 1);
    std::tie(st.h, st.c) = m_cell->forward(input, std::make_tuple(st.h, st.c));
    logits = m_output(m_paperCell ? torch::cat({y, st.h}, 1) : st.h);
  }
  o.logProbs = torch::log_softmax(logits, -1);
  return o;
}

RecognizerOutput AttentionPredictionImpl::predict(const torch::Tensor& x,
                                                  const torch::Tensor& upsampled,
                                                  const DecodeOptions& options) {
  const bool stochastic = config.selectsRegions() && (is_training() || options.sample);
  const int64_t steps = options.lastStep >= 0
                            ? std::min<int64_t>(config.steps(), options.lastStep + 1)
                            : config.steps();
  const int64_t bsz = x.size(0);
  const bool teacher = options.targets.defined();
  // Small-batch inference (the latency path): at batch 1 the per-step [4H, K + D] products are
  // bound by reading the weights, not by arithmetic; batched inference and training keep the
  // straightforward form (for them the per-column product is more arithmetic).
  const bool lean = m_glimpse->mixesColumns() && !torch::GradMode::is_enabled() && bsz <= 4 &&
                    !options.recomputeKeys && !options.tokenScale.defined();
  const Keys k = keys(x, lean);
  State st = initialState(x, bsz);
  const bool skipEnded = teacher && options.skipEndedRows && !lean && config.attention == "sharp";

  RecognizerOutput out;
  std::vector<torch::Tensor> logp, alphas, sel, logsel, toks, weights;
  std::vector<std::vector<torch::Tensor>> patches, thetas;
  const bool mayStop =
      options.stopWhenAllEnded && !teacher && !is_training() && !options.forcedSelection.defined();
  torch::Tensor ended =
      mayStop ? torch::zeros({bsz}, x.options().dtype(torch::kBool)) : torch::Tensor();
  for (int64_t t = 0; t < steps; ++t) {
    auto forced = options.forcedSelection.defined()
                      ? options.forcedSelection.select(1, t).to(torch::kLong)
                      : torch::Tensor();
    if (options.tokenScale.defined()) st.prevScale = options.tokenScale.select(1, t);
    // Rows whose label ended before step t (teacher forcing: its end token at t - 1 or before)
    // need no glimpse: every loss term masks their later steps.
    torch::Tensor glimpseRows;
    if (skipEnded && t > 0) {
      auto active = options.targets.select(1, t - 1) != m_charset.endIndex();
      const auto n = active.sum().item<int64_t>();
      // (One row left: the whole batch, so that batch norm never sees a lone image.)
      if (n >= 2 && n < bsz) glimpseRows = active.nonzero().squeeze(1);
    }
    auto o = step(k, st, upsampled, {}, forced, stochastic ? Select::Sample : Select::Argmax,
                  options, glimpseRows);
    auto tok = o.logProbs.detach().argmax(-1);
    logp.push_back(o.logProbs);
    alphas.push_back(o.alpha);
    sel.push_back(o.selected);
    logsel.push_back(o.logAlpha.gather(1, o.selected.unsqueeze(1)).squeeze(1));
    toks.push_back(tok);
    patches.resize(o.glimpse.patches.size());
    thetas.resize(o.glimpse.thetas.size());
    for (size_t s = 0; s < o.glimpse.patches.size(); ++s) {
      patches[s].push_back(o.glimpse.patches[s]);
      thetas[s].push_back(o.glimpse.thetas[s]);
    }
    if (o.glimpse.weights.defined()) weights.push_back(o.glimpse.weights);
    st.prev = teacher ? options.targets.select(1, t).to(torch::kLong) : tok;
    if (mayStop) {
      ended = ended.logical_or(tok == m_charset.endIndex());
      if (ended.all().item<bool>()) break;
    }
  }
  out.logProbs = torch::stack(logp, 1);
  out.stepLogProbs = std::move(logp);
  out.alpha = torch::stack(alphas, 1);
  out.selected = torch::stack(sel, 1);
  out.logPSelect = torch::stack(logsel, 1);
  out.tokens = torch::stack(toks, 1);
  for (size_t s = 0; s < patches.size(); ++s) {
    out.patches.push_back(torch::stack(patches[s], 1));
    out.thetas.push_back(torch::stack(thetas[s], 1));
  }
  if (!weights.empty()) out.contextWeights = torch::stack(weights, 1);
  return out;
}

BeamResult AttentionPredictionImpl::beamSearch(const torch::Tensor& x0, const torch::Tensor& up0,
                                               int width) {
  if (width < 1) throw Error("beam width must be at least 1, not " + std::to_string(width));
  const int64_t b = x0.size(0), steps = config.steps(), classes = m_numClasses;
  // More hypotheses than one step has candidates (K) changes nothing at the first step; later
  // steps have K x width candidates, so wider beams stay meaningful up to K^(T-1).
  const int64_t k = width;
  const int64_t n = b * k;
  const auto longs = torch::TensorOptions().dtype(torch::kLong).device(x0.device());
  Keys keysN;
  keysN.x = x0.repeat_interleave(k, 0);  // [N, M, D]: image i's hypotheses are rows i*k .. i*k+k-1
  keysN.wx = m_attention->project(x0).repeat_interleave(k, 0);
  State st = initialState(x0, n);
  const auto imageOfRow = torch::arange(n, longs).div(k, "floor");  // [N]
  const float inf = std::numeric_limits<float>::infinity();
  // Every hypothesis starts as the empty prefix; only the first counts, or the first step would
  // fill the beam with k copies of the best token.
  auto score = torch::full({b, k}, -inf, x0.options().dtype(torch::kFloat));
  score.select(1, 0).zero_();
  auto finished = torch::zeros({n}, longs.dtype(torch::kBool));
  // After the end token only the end token follows, and it costs nothing.
  const int end = m_charset.endIndex();
  auto endOnly = torch::full({classes}, -inf, score.options());
  endOnly[end] = 0.0f;
  auto base = (torch::arange(b, longs) * k).unsqueeze(1);  // [B, 1]

  DecodeOptions none;
  std::vector<torch::Tensor> parents, tokens, selections;
  for (int64_t t = 0; t < steps; ++t) {
    auto o = step(keysN, st, up0, imageOfRow, {}, Select::Argmax, none);
    auto lp = o.logProbs.to(torch::kFloat);
    lp = torch::where(finished.unsqueeze(1), endOnly.unsqueeze(0), lp);  // [N, K]
    auto candidates = (score.reshape({n, 1}) + lp).reshape({b, k * classes});
    auto [top, index] = candidates.topk(k, 1);  // sorted: hypothesis 0 is the best
    auto parent = index.div(classes, "floor");  // [B, k]
    auto token = index.remainder(classes);      // [B, k]
    auto rows = (parent + base).reshape({n});
    st.h = st.h.index_select(0, rows);
    st.c = st.c.index_select(0, rows);
    auto tok = token.reshape({n});
    finished = finished.index_select(0, rows).logical_or(tok == end);
    st.prev = tok;
    parents.push_back(parent);
    tokens.push_back(token);
    selections.push_back(o.selected.reshape({b, k}).gather(1, parent));
    score = top;
  }
  // Walk every hypothesis back through its parents (final scores are sorted: topk).
  std::vector<torch::Tensor> allTokens(static_cast<size_t>(steps)),
      allSel(static_cast<size_t>(steps));
  auto hyp = torch::arange(k, longs).unsqueeze(0).expand({b, k}).contiguous();  // [B, k]
  for (int64_t t = steps - 1; t >= 0; --t) {
    const auto i = static_cast<size_t>(t);
    allTokens[i] = tokens[i].gather(1, hyp);
    allSel[i] = selections[i].gather(1, hyp);
    hyp = parents[i].gather(1, hyp);
  }
  BeamResult r;
  r.allTokens = torch::stack(allTokens, 2);  // [B, k, T]
  r.allSelected = torch::stack(allSel, 2);
  r.allLogProb = score.clone();
  r.tokens = r.allTokens.select(1, 0).contiguous();
  r.selected = r.allSelected.select(1, 0).contiguous();
  r.logProb = score.select(1, 0).clone();
  return r;
}

LossTerms AttentionPredictionImpl::loss(const RecognizerOutput& out, const LossInputs& in) const {
  LossTerms terms;
  const auto bsz = static_cast<double>(in.targets.size(0));
  auto mask = validSteps(in.targets, in.lengths).to(out.logProbs.dtype());
  auto logpy =
      out.logProbs.gather(2, in.targets.to(torch::kLong).unsqueeze(2)).squeeze(2);  // [B,T]
  terms.nll = -(logpy * mask).sum() / bsz;
  if (!config.selectsRegions() || in.lambdaR == 0.0) {
    terms.reinforce = torch::zeros({}, out.logProbs.options());
  } else {
    // Equation 9: the reward log p(y_t | a_t) against the baseline, with its gradient stopped.
    auto advantage = (logpy.detach() - in.baseline) * mask;
    terms.reinforce = -in.lambdaR * (advantage * out.logPSelect).sum() / bsz;
  }
  terms.total = terms.nll + terms.reinforce;

  if (in.references.defined() && !out.patches.empty()) {
    auto patches = out.patches.back();  // [B, T, 1, ph, pw]
    // References are indexed by class; the end token's slot is never read (masked below).
    auto ref = in.references.to(patches.device())
                   .index_select(0, in.targets.flatten().to(torch::kLong))
                   .view(patches.sizes());
    auto perStep = (patches - ref).pow(2).mean({2, 3, 4});  // [B, T]
    // The end token has no glyph: only character steps count.
    auto charMask = mask * (in.targets != m_charset.endIndex()).to(mask.dtype());
    terms.reference = (perStep * charMask).sum() / bsz;
    terms.total = terms.total + in.referenceWeight * terms.reference;
  }
  return terms;
}

BatchStats AttentionPredictionImpl::stats(const RecognizerOutput& out, const torch::Tensor& targets,
                                          const torch::Tensor& lengths) const {
  torch::NoGradGuard ng;
  BatchStats s;
  auto mask = validSteps(targets, lengths);
  auto logpy = out.logProbs.gather(2, targets.unsqueeze(2)).squeeze(2);
  s.rewardSum = (logpy * mask).sum().item<double>();
  s.rewardCount = mask.sum().item<double>();
  auto ok = (out.tokens == targets) | (mask == 0);
  s.correct = ok.all(1).sum().item<double>();
  return s;
}

std::vector<std::vector<int>> AttentionPredictionImpl::readings(const RecognizerOutput& out) const {
  auto tokens = out.tokens.to(torch::kCPU).contiguous();
  auto a = tokens.accessor<int64_t, 2>();
  const int end = m_charset.endIndex(), specials = m_charset.specials();
  std::vector<std::vector<int>> r(static_cast<size_t>(tokens.size(0)));
  for (int64_t b = 0; b < tokens.size(0); ++b)
    for (int64_t t = 0; t < tokens.size(1); ++t) {
      const int c = static_cast<int>(a[b][t]);
      if (c == end) break;
      if (c >= specials) r[static_cast<size_t>(b)].push_back(c);
    }
  return r;
}

std::shared_ptr<torch::nn::Module> makeAttention(const StageContext& c) {
  return std::make_shared<AttentionPredictionImpl>(c.config, c.inputDim);
}

}  // namespace foveal::core
