#include "trace/trace_builder.h"

#include <algorithm>
#include <cmath>

#include "model/charset.h"
#include "model/stages/ctc_prediction.h"
#include "trace/kraken_trace.h"

namespace foveal::core {

PointF normalisedToSource(double xn, double yn, int srcW, int srcH) {
  return {(xn + 1.0) / 2.0 * srcW, (yn + 1.0) / 2.0 * srcH};
}

Quad patchQuad(const torch::Tensor& theta, int srcW, int srcH) {
  auto t = theta.detach().to(torch::kCPU, torch::kDouble).contiguous();
  auto a = t.accessor<double, 2>();
  Quad q;
  const double corners[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  for (int k = 0; k < 4; ++k) {
    const double u = corners[k][0], v = corners[k][1];
    q[k] = normalisedToSource(a[0][0] * u + a[0][1] * v + a[0][2],
                              a[1][0] * u + a[1][1] * v + a[1][2], srcW, srcH);
  }
  return q;
}

static std::vector<double> toVector(const torch::Tensor& t) {
  auto c = t.detach().to(torch::kCPU, torch::kDouble).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

namespace {

// Receptive-field crops of the model input [M, 1, rh, rw]: the patches of glimpses without STNs
// and of CTC steps.
torch::Tensor regionCrops(const ReceptiveField& rf, const Preprocessing& pp,
                          const torch::Tensor& image) {
  std::vector<float> th;
  for (const auto& box : rf.regionBoxes())
    th.insert(th.end(), {static_cast<float>(box.w / rf.inputW), 0.f,
                         static_cast<float>((2 * box.x + box.w) / rf.inputW - 1), 0.f,
                         static_cast<float>(box.h / pp.inputH),
                         static_cast<float>((2 * box.y + box.h) / pp.inputH - 1)});
  const int64_t n = rf.regionCount();
  auto theta = torch::tensor(th).view({n, 2, 3});
  auto img = image.unsqueeze(0).expand({n, -1, -1, -1});
  return sampleAffine(img.to(torch::kFloat).contiguous(), theta, static_cast<int64_t>(rf.sizeX),
                      static_cast<int64_t>(rf.regionHeight()));
}

std::vector<TokenProb> topTokens(const torch::Tensor& p, int k, const Charset& charset) {
  auto top = p.topk(k);
  auto vals = toVector(std::get<0>(top));
  auto idx = std::get<1>(top).to(torch::kLong);
  std::vector<TokenProb> out;
  for (int i = 0; i < k; ++i) {
    const int ci = static_cast<int>(idx[i].item<int64_t>());
    out.push_back({charset.token(ci), ci, vals[static_cast<size_t>(i)]});
  }
  return out;
}

// CTC: the steps are the emitted tokens of the greedy path.
void buildCtcSteps(Trace& tr, const RecognizerOutput& out, int b, int topk, const Charset& charset,
                   const torch::Tensor& crops, const std::string& confidenceRule) {
  auto probs = out.logProbs.select(0, b).detach().exp().to(torch::kCPU, torch::kDouble);  // [M, K]
  const int64_t m = probs.size(0);
  const int k = std::min<int>(topk, static_cast<int>(probs.size(1)));
  // The path shown: each column's argmax (greedy), or a beam search's reading along its most
  // probable path. Confidence: the product of the path's column probabilities (DTRB's demo: of
  // every column's maximum, which greedy decoding's path is).
  const auto shown = out.tokens.select(0, b).to(torch::kCPU, torch::kLong).contiguous();
  std::vector<int> path;
  std::vector<double> maxima;
  for (int64_t i = 0; i < m; ++i) {
    auto p = probs.select(0, i);
    tr.columnTopk.push_back(topTokens(p, k, charset));
    path.push_back(static_cast<int>(shown[i].item<int64_t>()));
    maxima.push_back(p[path.back()].item<double>());  // the path's own (greedy: the maximum)
  }
  const double confidence = ctcConfidence(confidenceRule, path, maxima, charset.blankIndex());
  const CtcPath collapsed = collapseCtcPath(path, charset.blankIndex());
  tr.patch = StepPatch::Region;
  StepMap& posterior = tr.addMap(kAttentionMap, "posterior over columns");
  double entropySum = 0.0;
  for (size_t s = 0; s < collapsed.tokens.size(); ++s) {
    TraceStep st;
    st.tokenIndex = collapsed.tokens[s];
    st.token = charset.token(st.tokenIndex);
    st.columns = collapsed.columns[s];
    // The emitting column where this token is most probable speaks for the step.
    int best = st.columns.front();
    for (int c : st.columns)
      if (probs[c][st.tokenIndex].item<double>() > probs[best][st.tokenIndex].item<double>())
        best = c;
    st.region = best;
    st.prob = probs[best][st.tokenIndex].item<double>();
    st.topk = tr.columnTopk[static_cast<size_t>(best)];
    auto row = probs.select(1, st.tokenIndex);
    posterior.steps.push_back(toVector(row / row.sum()));
    st.entropy = entropy(posterior.steps.back());
    st.patch = toGreyImage(crops.select(0, best));
    entropySum += st.entropy;
    tr.steps.push_back(std::move(st));
  }
  tr.prediction = charset.decode(collapsed.tokens);
  tr.confidence = confidence;
  tr.meanEntropy = tr.steps.empty() ? 0.0 : entropySum / static_cast<double>(tr.steps.size());
}

// What an attention step's context came from, by what the stages declare: the last STN's output
// (sharp), the regions' crops weighted by alpha (glimpses that mix columns: soft), or the crop of
// the region the step used (hard).
StepPatch patchRuleFor(const ModelConfig& config, bool hasStn) {
  if (hasStn) return StepPatch::Stn;
  return config.selectsRegions() ? StepPatch::Region : StepPatch::AlphaWeighted;
}

GreyImage stepPatch(StepPatch rule, const TraceStep& st, const torch::Tensor& alpha,
                    const torch::Tensor& crops) {
  switch (rule) {
    case StepPatch::Stn:
      return st.stn.back().patch;
    case StepPatch::AlphaWeighted: {
      auto a = alpha.detach().to(torch::kCPU, torch::kFloat).view({-1, 1, 1, 1});
      return toGreyImage((crops * a).sum(0));
    }
    case StepPatch::Region:
      break;
  }
  return toGreyImage(crops.select(0, st.region));
}

// Step t of image b of an attention decoder: its token and top-k, alpha (into `attention`), the
// region used, each STN's quad and patch, and the patch its context came from.
TraceStep attentionStep(const RecognizerOutput& out, int b, int64_t t, const torch::Tensor& p,
                        int k, const Charset& charset, StepPatch patch, const torch::Tensor& crops,
                        int srcW, int srcH, StepMap& attention) {
  TraceStep st;
  st.topk = topTokens(p, k, charset);
  st.tokenIndex = static_cast<int>(out.tokens.index({b, t}).item<int64_t>());
  st.token = charset.token(st.tokenIndex);
  st.prob = p[st.tokenIndex].item<double>();
  attention.steps.push_back(toVector(out.alpha.index({b, t})));
  st.entropy = entropy(attention.steps.back());
  st.region = static_cast<int>(out.selected.index({b, t}).item<int64_t>());
  for (size_t s = 0; s < out.thetas.size(); ++s) {
    StnTrace stn;
    stn.quad = patchQuad(out.thetas[s].index({b, t}), srcW, srcH);
    stn.patch = toGreyImage(out.patches[s].index({b, t}));
    st.stn.push_back(std::move(stn));
  }
  st.patch = stepPatch(patch, st, out.alpha.index({b, t}), crops);
  if (out.contextWeights.defined()) st.contextWeights = toVector(out.contextWeights.index({b, t}));
  return st;
}

// An attention decoder's steps (up to and including the first end token with `stopAtEnd`), then
// the reading they make: prediction, confidence, mean entropy.
void buildAttentionSteps(Trace& tr, const ModelConfig& cfg, const RecognizerOutput& out, int b,
                         int topk, const Charset& charset, const torch::Tensor& crops,
                         bool stopAtEnd) {
  auto probs = out.logProbs.select(0, b).detach().exp().to(torch::kCPU);  // [T, K]
  const int64_t steps = probs.size(0);
  const int k = std::min<int>(topk, static_cast<int>(probs.size(1)));
  const int end = charset.endIndex();
  tr.patch = patchRuleFor(cfg, !out.thetas.empty());
  StepMap& attention = tr.addMap(kAttentionMap, "α");
  double entropySum = 0.0;
  std::vector<int> tokens;
  for (int64_t t = 0; t < steps; ++t) {
    TraceStep st = attentionStep(out, b, t, probs.select(0, t), k, charset, tr.patch, crops,
                                 tr.imageW, tr.imageH, attention);
    entropySum += st.entropy;
    tokens.push_back(st.tokenIndex);
    const bool isEnd = st.tokenIndex == end;
    tr.steps.push_back(std::move(st));
    if (isEnd && stopAtEnd) break;
  }
  // Multi-head models: every head's map and the first pass's, for the steps traced.
  const auto traced = static_cast<int64_t>(tr.steps.size());
  if (out.headAlpha.defined()) {
    auto heads = out.headAlpha.select(0, b).detach().to(torch::kCPU, torch::kDouble);  // [T,H,M]
    for (int64_t h = 0; h < heads.size(1); ++h) {
      StepMap& m = tr.addMap(kAttentionHeadPrefix + std::to_string(h + 1),
                             "α head " + std::to_string(h + 1));
      for (int64_t t = 0; t < traced; ++t) m.steps.push_back(toVector(heads.index({t, h})));
    }
  }
  if (out.firstAlpha.defined()) {
    auto first = out.firstAlpha.select(0, b).detach();
    StepMap& m = tr.addMap(kFirstPassAttentionMap, "α, first pass");
    for (int64_t t = 0; t < traced; ++t) {
      auto v = toVector(first.select(0, t));
      double sum = 0;
      for (double x : v) sum += x;
      m.steps.push_back(sum > 0 ? v : std::vector<double>{});
    }
  }
  tr.prediction = charset.decode(tokens);
  std::vector<double> chosen;
  for (const auto& st : tr.steps) chosen.push_back(st.prob);
  tr.confidence = attentionConfidence(charset, tokens, chosen);
  tr.meanEntropy = tr.steps.empty() ? 0.0 : entropySum / static_cast<double>(tr.steps.size());
}

std::vector<PointF> scaleCentres(const ReceptiveField& rf, double sx, double sy) {
  std::vector<PointF> out;
  for (const auto& c : rf.regionCentres()) out.push_back({c.x * sx, c.y * sy});
  return out;
}

// The trace's model and geometry: what decoded it, the source image's size, and the regions
// and their centres scaled from the model input (sx, sy: source pixels per input pixel).
// padLeft: input columns before the image's first (kraken's padding), mapped left of the image.
Trace traceOfModel(const ModelConfig& cfg, const ReceptiveField& rf, int srcW, int srcH, double sx,
                   double sy, int padLeft = 0) {
  Trace tr;
  tr.modelKind = cfg.isCtc() ? "ctc" : cfg.attention;
  tr.decoder = cfg.prediction;
  tr.stages = cfg.stageString();
  tr.modelDescription = cfg.describe();
  tr.imageW = srcW;
  tr.imageH = srcH;
  tr.gridRows = rf.regionRows();
  tr.gridColumns = rf.columns;
  for (const auto& box : rf.regionBoxes())
    tr.regions.push_back({(box.x - padLeft) * sx, box.y * sy, box.w * sx, box.h * sy});
  tr.regionCentres = scaleCentres(rf, sx, sy);
  for (auto& c : tr.regionCentres) c.x -= padLeft * sx;
  return tr;
}

// TPS: the fiducial points on the source image and the rectified input the features saw.
void addTps(Trace& tr, const RecognizerOutput& out, int b, const Preprocessing& pp, double sx,
            double sy) {
  // align_corners = true coordinates: -1 and 1 are the centres of the outer pixels.
  auto f = out.fiducials.select(0, b).detach().to(torch::kCPU, torch::kDouble).contiguous();
  auto a = f.accessor<double, 2>();
  for (int64_t i = 0; i < f.size(0); ++i)
    tr.fiducials.push_back({((a[i][0] + 1.0) / 2.0 * (pp.inputW - 1) + 0.5) * sx,
                            ((a[i][1] + 1.0) / 2.0 * (pp.inputH - 1) + 0.5) * sy});
  tr.rectified = toGreyImage(out.rectified.select(0, b).detach());
}

// A CTC beam search's N best readings of image b: each path (BeamResult::allTokens, one class
// per column) collapsed to its reading; its tokens have no end token, and each token's "region"
// is its first emitting column. log p is the search's: of every path that reads it.
std::vector<BeamHypothesis> ctcBeamHypotheses(const Charset& charset, const BeamResult& beam,
                                              int b) {
  std::vector<BeamHypothesis> hyps;
  const auto paths =
      beam.allTokens.select(0, b).to(torch::kCPU, torch::kLong).contiguous();  // [N, M]
  const auto scores = beam.allLogProb.select(0, b).to(torch::kCPU, torch::kDouble).contiguous();
  const auto path = paths.accessor<int64_t, 2>();
  const auto sc = scores.accessor<double, 1>();
  for (int64_t h = 0; h < paths.size(0); ++h) {
    if (!std::isfinite(sc[h])) break;  // sorted: the unfilled slots come last
    std::vector<int> columns;
    for (int64_t c = 0; c < paths.size(1); ++c) columns.push_back(static_cast<int>(path[h][c]));
    const CtcPath collapsed = collapseCtcPath(columns, charset.blankIndex());
    BeamHypothesis hyp;
    hyp.logProb = sc[h];
    hyp.tokens = collapsed.tokens;
    for (const auto& cols : collapsed.columns) hyp.regions.push_back(cols.front());
    hyp.reading = charset.decode(hyp.tokens);
    hyps.push_back(std::move(hyp));
  }
  return hyps;
}

}  // namespace

// Receptive fields as wide as the input (a ResNet's, TPS-ResNet included) make every region the
// whole image: a region crop shows nothing of the step, and its box spans the view. For a row of
// such columns each step gets a character box instead: centred on its focus point, as wide as
// one character of the reading if its characters shared the image evenly (at least one column
// stride), the image's height. The trace and the evaluation's localisation (locateDecodedSteps)
// both use this box.
bool usesFocusBoxes(const ReceptiveField& rf, int inputWidth) {
  return rf.regionRows() == 1 && rf.regionCentres().size() >= 2 && rf.sizeX >= inputWidth;
}
Box focusBox(double focusX, double stride, size_t characters, int imageW, int imageH) {
  const double half =
      std::max(stride, imageW / static_cast<double>(std::max<size_t>(1, characters))) / 2.0;
  const double x0 = std::clamp(focusX - half, 0.0, static_cast<double>(imageW));
  const double x1 = std::clamp(focusX + half, 0.0, static_cast<double>(imageW));
  return {x0, 0.0, std::max(1.0, x1 - x0), static_cast<double>(imageH)};
}

namespace {

// The focus boxes of a trace, and each step's patch: what the features saw under its box.
// `seen` [C, H, W]: the model input as read (or the rectified image); sx: source pixels per
// input pixel.
void useFocusBoxes(Trace& tr, const torch::Tensor& seen, double sx) {
  if (tr.gridRows != 1 || tr.regionCentres.size() < 2 || tr.steps.empty()) return;
  const double stride = std::abs(tr.regionCentres[1].x - tr.regionCentres[0].x);
  const size_t characters = splitUtf8(tr.prediction).size();
  const int64_t inputW = seen.size(-1), inputH = seen.size(-2);
  for (size_t t = 0; t < tr.steps.size(); ++t) {
    TraceStep& st = tr.steps[t];
    st.box = focusBox(st.focus.x, stride, characters, tr.imageW, tr.imageH);
    // The crop of the model input (or the rectified image) under the box, at its own width.
    const double bx = st.box.x / sx, bw = st.box.w / sx;
    const double w = static_cast<double>(inputW);
    const auto theta = torch::tensor({static_cast<float>(bw / w), 0.f,
                                      static_cast<float>((2 * bx + bw) / w - 1), 0.f, 1.f, 0.f})
                           .view({1, 2, 3});
    const int64_t pw = std::max<int64_t>(4, std::lround(bw));
    st.patch = toGreyImage(
        sampleAffine(seen.unsqueeze(0).to(torch::kFloat).contiguous(), theta, pw, inputH)
            .select(0, 0));
  }
}

}  // namespace

FocusRule focusRuleFor(const ModelConfig& config, bool hasStn) {
  if (config.isCtc()) return FocusRule::Columns;
  if (hasStn) return FocusRule::StnQuad;
  return config.selectsRegions() ? FocusRule::Selected : FocusRule::AlphaMean;
}

std::vector<StepLocation> locateDecodedSteps(Recognizer& model, const RecognizerOutput& out, int b,
                                             int srcW, int srcH, int inputW, int contentW) {
  const auto& cfg = model->config;
  // As buildTrace: the geometry of the input as read, scaled by the columns the image fills.
  const auto rf = inputW > 0 ? model->geometry(inputW) : model->geometry();
  const double sx =
                   static_cast<double>(srcW) / (contentW > 0 ? contentW : cfg.preprocessing.inputW),
               sy = static_cast<double>(srcH) / cfg.preprocessing.inputH;
  const auto regions = scaleBoxes(rf.regionBoxes(), sx, sy);
  const auto centres = scaleCentres(rf, sx, sy);
  // Columns as wide as the input: the trace's character boxes (useFocusBoxes), not the regions.
  const bool wide = usesFocusBoxes(rf, inputW > 0 ? inputW : cfg.preprocessing.inputW);
  const double stride = centres.size() >= 2 ? std::abs(centres[1].x - centres[0].x) : 0.0;
  std::vector<StepLocation> located;
  if (cfg.isCtc()) {
    // The path read: the argmax per column, or a beam search's reading along its best path.
    auto path =
        (out.tokens.defined() ? out.tokens.select(0, b) : out.logProbs.select(0, b).argmax(1))
            .to(torch::kCPU, torch::kLong)
            .contiguous();
    const int64_t* p = path.data_ptr<int64_t>();
    const std::vector<int> columns(p, p + path.numel());
    const Charset charset = cfg.makeCharset();
    for (const auto& cols : collapseCtcPath(columns, charset.blankIndex()).columns) {
      TraceStep st;
      st.columns = cols;
      located.push_back(locateStep(st, {}, regions, FocusRule::Columns, srcW, srcH, centres));
    }
    if (wide)
      for (auto& l : located) l.box = focusBox(l.focus.x, stride, located.size(), srcW, srcH);
    return located;
  }
  const bool hasStn = !out.thetas.empty();
  const FocusRule rule = focusRuleFor(cfg, hasStn);
  const int end = cfg.makeCharset().endIndex();
  auto tokens = out.tokens.select(0, b).to(torch::kCPU, torch::kLong).contiguous();
  auto selected = out.selected.select(0, b).to(torch::kCPU, torch::kLong).contiguous();
  auto alpha = out.alpha.select(0, b).to(torch::kCPU, torch::kDouble).contiguous();  // [T, M]
  const int64_t T = tokens.size(0), M = alpha.size(1);
  const int64_t* tok = tokens.data_ptr<int64_t>();
  const int64_t* sel = selected.data_ptr<int64_t>();
  for (int64_t t = 0; t < T; ++t) {
    TraceStep st;
    st.region = static_cast<int>(sel[t]);
    std::vector<double> weights;
    if (rule == FocusRule::AlphaMean) {
      const double* a = alpha.data_ptr<double>() + t * M;
      weights.assign(a, a + M);
    }
    if (hasStn) st.stn.push_back({patchQuad(out.thetas.back().index({b, t}), srcW, srcH), {}});
    located.push_back(locateStep(st, weights, regions, rule, srcW, srcH, centres));
    if (tok[t] == end) break;
  }
  if (wide && !hasStn) {
    size_t characters = 0;  // the reading's, without the end token
    for (size_t t = 0; t < located.size(); ++t) characters += tok[t] != end;
    for (auto& l : located) l.box = focusBox(l.focus.x, stride, characters, srcW, srcH);
  }
  return located;
}

namespace {

// A kraken model reads its line as kraken does (trace/kraken_trace.h): image b's own frames
// (its input is contentW wide, padding included), the softmax, the codec, the cuts.
void applyKraken(Trace& tr, Recognizer& model, const RecognizerOutput& out, int b, int contentW,
                 int srcW, int srcH) {
  const int64_t m = out.logProbs.size(1);
  const int frames = std::min<int>(static_cast<int>(m), model->geometry(contentW).columns);
  auto probs =
      out.logProbs.select(0, b).slice(0, 0, frames).detach().exp().to(torch::kCPU, torch::kFloat);
  probs = probs.contiguous();
  const int classes = static_cast<int>(probs.size(1));
  std::vector<float> p(probs.data_ptr<float>(), probs.data_ptr<float>() + probs.numel());
  applyKrakenReading(tr, model->config, p, frames, classes, {contentW, srcW, srcH});
}

}  // namespace

Trace buildTrace(Recognizer& model, const RecognizerOutput& out, const ModelInput& input, int b,
                 int srcW, int srcH, int topk, bool stopAtEnd) {
  const auto& cfg = model->config;
  const Charset charset = cfg.makeCharset();
  // The geometry of the input as read: a variable-width model's input is as wide as its batch.
  const auto rf = model->geometry(static_cast<int>(input.image.size(3)));
  const auto& pp = cfg.preprocessing;
  // With keep-ratio padding the image fills only the first contentW input columns.
  const int contentW =
      static_cast<size_t>(b) < input.contentW.size() ? input.contentW[b] : pp.inputW;
  // kraken's lines have blank columns on both sides of the image (ModelConfig::kraken).
  const int pad = cfg.kraken.empty() ? 0 : cfg.kraken.padding;
  const double sx = static_cast<double>(srcW) / std::max(1, contentW - 2 * pad),
               sy = static_cast<double>(srcH) / pp.inputH;

  Trace tr = traceOfModel(cfg, rf, srcW, srcH, sx, sy, pad);
  if (out.fiducials.defined()) addTps(tr, out, b, pp, sx, sy);
  // What the features saw: the rectified image when there is a transformation.
  const auto seen = out.rectified.defined() ? out.rectified.select(0, b) : input.image.select(0, b);
  // Receptive-field crops of the model input (soft / hard / CTC patches): [M, 1, rh, rw].
  torch::Tensor crops;
  if (out.patches.empty()) crops = regionCrops(rf, pp, seen.detach());
  if (cfg.isCtc()) {
    buildCtcSteps(tr, out, b, topk, charset, crops, cfg.ctcConfidence);
    locateSteps(tr, FocusRule::Columns);
    if (cfg.kraken.empty() && usesFocusBoxes(rf, static_cast<int>(seen.size(-1))))
      useFocusBoxes(tr, seen.detach(), sx);
    if (!cfg.kraken.empty()) applyKraken(tr, model, out, b, contentW, srcW, srcH);
    if (out.beam.allTokens.defined()) tr.hypotheses = ctcBeamHypotheses(charset, out.beam, b);
    return tr;
  }
  buildAttentionSteps(tr, cfg, out, b, topk, charset, crops, stopAtEnd);
  locateSteps(tr, focusRuleFor(cfg, !out.thetas.empty()));
  if (out.thetas.empty() && usesFocusBoxes(rf, static_cast<int>(seen.size(-1))))
    useFocusBoxes(tr, seen.detach(), sx);
  if (out.beam.allTokens.defined()) tr.hypotheses = beamHypotheses(charset, out.beam, b);
  return tr;
}

std::vector<BeamHypothesis> beamHypotheses(const Charset& charset, const BeamResult& beam, int b) {
  std::vector<BeamHypothesis> hyps;
  const auto tokens = beam.allTokens.select(0, b).to(torch::kCPU).contiguous();     // [N, T]
  const auto regions = beam.allSelected.select(0, b).to(torch::kCPU).contiguous();  // [N, T]
  const auto scores = beam.allLogProb.select(0, b).to(torch::kCPU, torch::kDouble).contiguous();
  const auto tok = tokens.accessor<int64_t, 2>();
  const auto reg = regions.accessor<int64_t, 2>();
  const auto sc = scores.accessor<double, 1>();
  const int end = charset.endIndex();
  for (int64_t h = 0; h < tokens.size(0); ++h) {
    if (!std::isfinite(sc[h])) break;  // sorted: the unfilled slots come last
    BeamHypothesis hyp;
    hyp.logProb = sc[h];
    for (int64_t t = 0; t < tokens.size(1); ++t) {
      hyp.tokens.push_back(static_cast<int>(tok[h][t]));
      hyp.regions.push_back(static_cast<int>(reg[h][t]));
      if (tok[h][t] == end) break;
    }
    hyp.reading = charset.decode(hyp.tokens);
    hyps.push_back(std::move(hyp));
  }
  return hyps;
}

}  // namespace foveal::core
