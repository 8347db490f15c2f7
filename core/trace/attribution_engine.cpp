#include "trace/attribution_engine.h"

#include <torch/autograd.h>
#include <torch/nn/functional/padding.h>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "base/gradient_scope.h"
#include "image/preprocess.h"
#include "model/charset.h"

namespace foveal::core {

ForcedReading forcedReading(const Recognizer& model, const Trace& trace) {
  const auto& cfg = model->config;
  ForcedReading r;
  r.ctc = cfg.isCtc();
  for (const auto& st : trace.steps) {
    r.tokens.push_back(st.tokenIndex);
    r.columns.push_back(st.columns);
  }
  if (r.ctc) return r;
  const int64_t steps = cfg.steps();
  if (static_cast<int64_t>(trace.steps.size()) > steps)
    throw Error("the trace has " + std::to_string(trace.steps.size()) +
                " steps but the model decodes at most " + std::to_string(steps));
  const auto longs = torch::TensorOptions().dtype(torch::kLong);
  r.targets = torch::full({1, steps}, cfg.makeCharset().endIndex(), longs);
  r.regions = torch::zeros({1, steps}, longs);
  auto tok = r.targets.accessor<int64_t, 2>();
  auto reg = r.regions.accessor<int64_t, 2>();
  for (size_t t = 0; t < trace.steps.size(); ++t) {
    tok[0][static_cast<int64_t>(t)] = trace.steps[t].tokenIndex;
    reg[0][static_cast<int64_t>(t)] = trace.steps[t].region;
  }
  return r;
}

torch::Tensor forcedLogProbs(Recognizer& model, const ForcedReading& reading,
                             const torch::Tensor& source, const torch::Tensor& tokenScale,
                             int64_t lastStep) {
  return forcedOutput(model, reading, source, tokenScale, lastStep).logProbs;
}

ForcedReading forcedReading(const Recognizer& model, const Trace& trace, const GreyImage& image) {
  ForcedReading r = forcedReading(model, trace);
  if (trace.contrastPass) r.contrast = contrastAdjustmentOf(image, model->config.preprocessing);
  return r;
}

RecognizerOutput forcedOutput(Recognizer& model, const ForcedReading& reading,
                              const torch::Tensor& source, const torch::Tensor& tokenScale,
                              int64_t lastStep) {
  const auto& cfg = model->config;
  auto in = inputFromSource(source, cfg.preprocessing, cfg.needsUpsampled(), &reading.contrast);
  DecodeOptions dec;
  if (!reading.ctc) {
    const int64_t b = source.size(0);
    dec.targets = reading.targets.expand({b, -1});
    dec.forcedSelection = reading.regions.expand({b, -1});
    dec.tokenScale = tokenScale;
    dec.lastStep = lastStep;
  }
  return model->forward(in.image, in.upsampled, dec);
}

namespace {
std::vector<torch::Tensor> objectiveColumns(const torch::Tensor& logProbs,
                                            const std::vector<torch::Tensor>& stepLogProbs,
                                            const ForcedReading& reading,
                                            const std::vector<StepTarget>& targets) {
  std::vector<torch::Tensor> columns;
  for (const auto& t : targets) {
    torch::Tensor f;
    if (!reading.ctc && static_cast<size_t>(t.step) < stepLogProbs.size()) {
      const auto& step = stepLogProbs[static_cast<size_t>(t.step)];  // [B, K]
      f = step.select(1, t.target);
      if (t.contrast >= 0) f = f - step.select(1, t.contrast);
    } else if (reading.ctc) {
      const auto& cols = reading.columns[static_cast<size_t>(t.step)];
      std::vector<int64_t> idx(cols.begin(), cols.end());
      auto at = logProbs.index_select(
          1, torch::tensor(idx, torch::TensorOptions().dtype(torch::kLong)));  // [B, c, K]
      f = at.select(2, t.target).sum(1);
      if (t.contrast >= 0) f = f - at.select(2, t.contrast).sum(1);
    } else {
      auto step = logProbs.select(1, t.step);  // [B, K]
      f = step.select(1, t.target);
      if (t.contrast >= 0) f = f - step.select(1, t.contrast);
    }
    columns.push_back(f);
  }
  return columns;
}
}  // namespace

torch::Tensor stepObjectives(const torch::Tensor& logProbs, const ForcedReading& reading,
                             const std::vector<StepTarget>& targets) {
  return torch::stack(objectiveColumns(logProbs, {}, reading, targets), 1);  // [B, S]
}

std::vector<torch::Tensor> stepObjectiveColumns(const RecognizerOutput& output,
                                                const ForcedReading& reading,
                                                const std::vector<StepTarget>& targets) {
  return objectiveColumns(output.logProbs, output.stepLogProbs, reading, targets);
}

PathRule integrationPath(int n) {
  if (n < 1) throw Error("integrated gradients need at least 1 point");
  PathRule r;
  for (int i = 0; i < n; ++i) {
    r.alphas.push_back((i + 0.5) / n);
    r.weights.push_back(1.0 / n);
  }
  return r;
}

std::vector<StepTarget> explainedTargets(const Recognizer& model, const Trace& trace,
                                         const AttributionOptions& o) {
  const int classes = model->numClasses();
  const int n = static_cast<int>(trace.steps.size());
  std::vector<int> steps = o.steps;
  if (steps.empty())
    for (int t = 0; t < n; ++t) steps.push_back(t);
  auto checkClass = [&](int c, const char* what) {
    if (c < -1 || c >= classes)
      throw Error(std::string(what) + " class " + std::to_string(c) +
                  " does not exist (the model has " + std::to_string(classes) + " classes)");
  };
  checkClass(o.target, "target");
  checkClass(o.contrast, "contrast");
  std::vector<StepTarget> out;
  for (int t : steps) {
    if (t < 0 || t >= n)
      throw Error("step " + std::to_string(t) + " does not exist: the reading has " +
                  std::to_string(n) + " steps (0 to " + std::to_string(n - 1) + ")");
    StepTarget s;
    s.step = t;
    s.target = o.target >= 0 ? o.target : trace.steps[static_cast<size_t>(t)].tokenIndex;
    s.contrast = o.contrast;
    if (s.contrast == s.target)
      throw Error("the contrast class is the target itself at step " + std::to_string(t));
    out.push_back(s);
  }
  if (out.empty()) throw Error("nothing to explain: the reading has no steps");
  return out;
}

namespace {

std::vector<double> toVector(const torch::Tensor& t) {
  auto c = t.detach().to(torch::kCPU, torch::kDouble).contiguous();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

// Sliding-patch origins along one axis: every `stride` from 0, and one touching the far edge.
std::vector<int64_t> patchOrigins(int64_t size, int64_t patch, int64_t stride) {
  std::vector<int64_t> out;
  if (patch >= size) return {0};
  for (int64_t p = 0; p + patch <= size; p += stride) out.push_back(p);
  if (out.back() + patch < size) out.push_back(size - patch);
  return out;
}

void requireTraceImage(const GreyImage& image, const Trace& trace) {
  if (image.width != trace.imageW || image.height != trace.imageH)
    throw Error("the image is " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                " but its trace was made from a " + std::to_string(trace.imageW) + "x" +
                std::to_string(trace.imageH) + " image");
}

void reportProgress(const AttributionOptions& o, double f) {
  if (o.progress && !o.progress(f)) throw AttributionCancelled();
}

// What every attribution method reads: the model, the forced reading, the explained targets and
// the source tensor [1, C, H, W].
struct ExplainInputs {
  Recognizer& model;
  const ForcedReading& reading;
  const std::vector<StepTarget>& targets;
  const torch::Tensor& src;
  int64_t lastStep;
  const AttributionOptions& o;
};

// [S] F at the image and (integrated gradients) at the baseline.
std::pair<torch::Tensor, torch::Tensor> objectiveValues(const ExplainInputs& in, bool ig,
                                                        bool tokens, int64_t T) {
  auto& model = in.model;
  const auto& reading = in.reading;
  const auto& src = in.src;
  torch::Tensor value, base;
  torch::NoGradGuard ng;
  if (ig) {  // the image and the baseline (mid-grey, no tokens) in one pass
    torch::Tensor scale;
    if (tokens) scale = torch::cat({torch::ones({1, T}), torch::zeros({1, T})});
    auto f =
        stepObjectives(forcedLogProbs(model, reading, torch::cat({src, torch::zeros_like(src)}),
                                      scale, in.lastStep),
                       reading, in.targets);
    value = f.select(0, 0);
    base = f.select(0, 1);
  } else {
    value =
        stepObjectives(forcedLogProbs(model, reading, src, {}, in.lastStep), reading, in.targets)
            .select(0, 0);
  }
  return {value, base};
}

std::vector<StepAttribution> stepAttributions(const std::vector<StepTarget>& targets,
                                              const torch::Tensor& value) {
  const int64_t S = static_cast<int64_t>(targets.size());
  std::vector<StepAttribution> steps(static_cast<size_t>(S));
  const auto v = toVector(value);
  for (int64_t s = 0; s < S; ++s) {
    auto& st = steps[static_cast<size_t>(s)];
    st.step = targets[static_cast<size_t>(s)].step;
    st.target = targets[static_cast<size_t>(s)].target;
    st.contrast = targets[static_cast<size_t>(s)].contrast;
    st.value = v[static_cast<size_t>(s)];
  }
  return steps;
}

// Saliency and gradient x input: one backward pass per target.
std::vector<torch::Tensor> gradientMaps(const ExplainInputs& in) {
  const auto& targets = in.targets;
  const auto& src = in.src;
  const int64_t S = static_cast<int64_t>(targets.size());
  std::vector<torch::Tensor> maps(static_cast<size_t>(S));  // [H, W] each
  // The parameters are constants here.
  const InputGradientsOnly inputsOnly;
  auto x = src.clone().requires_grad_(true);
  const auto f = stepObjectiveColumns(forcedOutput(in.model, in.reading, x, {}, in.lastStep),
                                      in.reading, targets);  // S of [1]
  for (int64_t s = 0; s < S; ++s) {
    auto g = torch::autograd::grad({f[static_cast<size_t>(s)].sum()}, {x}, {},
                                   /*retain_graph=*/s + 1 < S)[0]
                 .select(0, 0);  // [C, H, W]
    maps[static_cast<size_t>(s)] = in.o.method == AttributionMethod::Saliency
                                       ? g.abs().amax(0)
                                       : (g * src.select(0, 0)).sum(0);
    reportProgress(in.o, static_cast<double>(s + 1) / static_cast<double>(S));
  }
  return maps;
}

// Integrated gradients' sums over the path: [S, C, H, W] for the image, [S, max(T, 1)] for the
// tokens' scales.
std::pair<torch::Tensor, torch::Tensor> integratedGradients(const ExplainInputs& in, bool tokens,
                                                            int64_t T) {
  const auto& o = in.o;
  const auto& targets = in.targets;
  const auto& src = in.src;
  const int64_t S = static_cast<int64_t>(targets.size());
  const PathRule path = integrationPath(o.igSteps);
  const int64_t n = o.igSteps;
  auto gradImage = torch::zeros({S, src.size(1), src.size(2), src.size(3)});
  auto gradTokens = torch::zeros({S, std::max<int64_t>(T, 1)});
  const InputGradientsOnly inputsOnly;  // the parameters are constants here
  for (int64_t start = 0; start < n; start += o.batch) {
    const int64_t m = std::min<int64_t>(o.batch, n - start);
    // The path from the mid-grey baseline (alpha 0) to the image (alpha 1).
    auto alphas = torch::tensor(std::vector<double>(path.alphas.begin() + start,
                                                    path.alphas.begin() + start + m))
                      .to(torch::kFloat);
    auto weights = torch::tensor(std::vector<double>(path.weights.begin() + start,
                                                     path.weights.begin() + start + m))
                       .to(torch::kFloat);
    auto x = (alphas.view({m, 1, 1, 1}) * src).detach().requires_grad_(true);
    torch::Tensor scale;
    if (tokens) scale = alphas.view({m, 1}).expand({m, T}).clone().requires_grad_(true);
    const auto f = stepObjectiveColumns(forcedOutput(in.model, in.reading, x, scale, in.lastStep),
                                        in.reading, targets);
    for (int64_t s = 0; s < S; ++s) {
      std::vector<torch::Tensor> inputs{x};
      if (tokens) inputs.push_back(scale);
      // The weighted sum of the points' gradients: the rule's weights as the output's.
      // allow_unused: a model that feeds back no tokens (ViTSTR reads every character at
      // once; PARSeq without refinement in parallel mode) leaves their scale out of the
      // graph, and their attribution is zero.
      auto g = torch::autograd::grad({f[static_cast<size_t>(s)]}, inputs, {weights},
                                     /*retain_graph=*/s + 1 < S, /*create_graph=*/false,
                                     /*allow_unused=*/true);
      // The image is always in the graph: no gradient for it is a broken model, not a zero map.
      if (!g[0].defined())
        throw Error("integrated gradients: step " + std::to_string(targets[s].step) +
                    " does not depend on the image");
      gradImage[s] += g[0].sum(0);
      if (tokens && g[1].defined()) gradTokens[s] += g[1].sum(0);
    }
    reportProgress(o, static_cast<double>(start + m) / static_cast<double>(n));
  }
  return {gradImage, gradTokens};
}

// Integrated gradients' maps; each step's baseline value and (tokens) token attribution.
std::vector<torch::Tensor> integratedGradientMaps(const ExplainInputs& in, bool tokens, int64_t T,
                                                  const torch::Tensor& base,
                                                  std::vector<StepAttribution>& steps) {
  if (in.o.igSteps < 1) throw Error("integrated gradients need at least 1 step");
  const int64_t S = static_cast<int64_t>(in.targets.size());
  std::vector<torch::Tensor> maps(static_cast<size_t>(S));  // [H, W] each
  const auto [gradImage, gradTokens] = integratedGradients(in, tokens, T);
  const auto b = toVector(base);
  for (int64_t s = 0; s < S; ++s) {
    auto& st = steps[static_cast<size_t>(s)];
    maps[static_cast<size_t>(s)] = (gradImage[s] * in.src.select(0, 0)).sum(0);
    st.baselineValue = b[static_cast<size_t>(s)];
    if (tokens) {
      // The one-hot input minus the zero baseline: the gradient of the token's scale.
      auto all = toVector(gradTokens[s]);
      st.tokenAttribution.assign(all.begin(), all.begin() + std::min<int64_t>(st.step + 1, T));
    }
  }
  return maps;
}

// Occlusion: the drop in p(target) (contrastive: in log p(a) - log p(b)) when a patch is
// mid-grey, averaged over the patches that cover each pixel.
std::vector<torch::Tensor> occlusionMaps(const ExplainInputs& in, const torch::Tensor& value) {
  const auto& o = in.o;
  const auto& targets = in.targets;
  const auto& src = in.src;
  const int64_t S = static_cast<int64_t>(targets.size());
  const int64_t H = src.size(2), W = src.size(3);
  if (o.patch < 1 || o.stride < 1)
    throw Error("occlusion needs a patch and a stride of at least 1 pixel");
  torch::NoGradGuard ng;
  const bool contrastive = targets.front().contrast >= 0;
  auto score = [&](const torch::Tensor& f) { return contrastive ? f : f.exp(); };
  const auto reference = score(value);          // [S]
  std::vector<std::array<int64_t, 4>> patches;  // x, y, w, h
  const auto xs = patchOrigins(W, o.patch, o.stride), ys = patchOrigins(H, o.patch, o.stride);
  for (auto y : ys)
    for (auto x : xs)
      patches.push_back({x, y, std::min<int64_t>(o.patch, W), std::min<int64_t>(o.patch, H)});
  auto sums = torch::zeros({S, H, W});
  auto counts = torch::zeros({H, W});
  const int64_t np = static_cast<int64_t>(patches.size());
  for (int64_t start = 0; start < np; start += o.batch) {
    const int64_t m = std::min<int64_t>(o.batch, np - start);
    auto batch = src.repeat({m, 1, 1, 1});
    for (int64_t i = 0; i < m; ++i) {
      const auto& p = patches[static_cast<size_t>(start + i)];
      batch[i].narrow(1, p[1], p[3]).narrow(2, p[0], p[2]).zero_();
    }
    auto drop = reference.unsqueeze(0) -
                score(stepObjectives(forcedLogProbs(in.model, in.reading, batch, {}, in.lastStep),
                                     in.reading, targets));
    for (int64_t i = 0; i < m; ++i) {
      const auto& p = patches[static_cast<size_t>(start + i)];
      sums.narrow(1, p[1], p[3]).narrow(2, p[0], p[2]) += drop[i].view({S, 1, 1});
      counts.narrow(0, p[1], p[3]).narrow(1, p[0], p[2]) += 1.0;
    }
    reportProgress(o, static_cast<double>(start + m) / static_cast<double>(np));
  }
  auto mean = sums / counts.clamp_min(1.0).unsqueeze(0);
  std::vector<torch::Tensor> maps(static_cast<size_t>(S));  // [H, W] each
  for (int64_t s = 0; s < S; ++s) maps[static_cast<size_t>(s)] = mean[s];
  return maps;
}

// The maps into the explanation (at their steps), with each step's totals and image share.
void storeMaps(Explanation& e, std::vector<StepAttribution> steps,
               const std::vector<torch::Tensor>& maps) {
  for (size_t s = 0; s < steps.size(); ++s) {
    auto& st = steps[s];
    auto values = toVector(maps[s]);
    double total = 0, absImage = 0;
    for (double a : values) {
      total += a;
      absImage += std::abs(a);
    }
    st.imageTotal = total;
    if (!st.tokenAttribution.empty()) {
      double absTokens = 0;
      for (double a : st.tokenAttribution) absTokens += std::abs(a);
      st.imageShare = absImage + absTokens > 0 ? absImage / (absImage + absTokens) : 1.0;
    }
    e.maps[static_cast<size_t>(st.step)] = std::move(values);
  }
  e.steps = std::move(steps);
}

}  // namespace

Explanation explain(Recognizer& model, const GreyImage& image, const Trace& trace,
                    const AttributionOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  requireTraceImage(image, trace);
  if (o.batch < 1) throw Error("the attribution batch must be at least 1");
  c10::InferenceMode notInference(false);
  torch::AutoGradMode gradMode(true);
  const auto& cfg = model->config;
  const ForcedReading reading = forcedReading(model, trace, image);
  const auto targets = explainedTargets(model, trace, o);
  const auto src = sourceTensor(image, cfg.preprocessing);  // [1, C, H, W]

  Explanation e;
  e.method = o.method;
  e.width = image.width;
  e.height = image.height;
  e.maps.resize(trace.steps.size());

  // Only the explained steps' log p matter: an attention decoder stops after the last of them.
  int64_t lastStep = -1;
  if (!reading.ctc)
    for (const auto& t : targets) lastStep = std::max<int64_t>(lastStep, t.step);
  const bool ig = o.method == AttributionMethod::IntegratedGradients;
  const bool tokens = ig && o.tokens && !reading.ctc;
  const int64_t T = tokens ? reading.targets.size(1) : 0;
  const ExplainInputs in{model, reading, targets, src, lastStep, o};
  const auto [value, base] = objectiveValues(in, ig, tokens, T);
  std::vector<StepAttribution> steps = stepAttributions(targets, value);
  std::vector<torch::Tensor> maps(targets.size());  // [H, W] each

  switch (o.method) {
    case AttributionMethod::Saliency:
    case AttributionMethod::GradientInput:
      maps = gradientMaps(in);
      break;
    case AttributionMethod::IntegratedGradients:
      maps = integratedGradientMaps(in, tokens, T, base, steps);
      break;
    case AttributionMethod::Occlusion:
      maps = occlusionMaps(in, value);
      break;
  }
  storeMaps(e, std::move(steps), maps);
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return e;
}

torch::Tensor gaussianBlur(const torch::Tensor& source, double sigma) {
  if (sigma <= 0) return source;
  const int64_t radius = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(3 * sigma)));
  auto x = torch::arange(-radius, radius + 1, torch::kFloat);
  auto k = torch::exp(-(x * x) / (2 * sigma * sigma));
  k = k / k.sum();
  const int64_t c = source.size(1);
  auto t = source;
  // Separable: along the width, then the height; each channel on its own (groups = C).
  // Reflection needs the pad to be smaller than the side; clamp the radius per axis.
  for (int axis : {3, 2}) {
    const int64_t r = std::min<int64_t>(radius, t.size(axis) - 1);
    if (r < 1) continue;
    auto kr = k.narrow(0, radius - r, 2 * r + 1);
    kr = kr / kr.sum();
    std::vector<int64_t> pad =
        axis == 3 ? std::vector<int64_t>{r, r, 0, 0} : std::vector<int64_t>{0, 0, r, r};
    auto padded = torch::nn::functional::pad(
        t, torch::nn::functional::PadFuncOptions(pad).mode(torch::kReflect));
    auto weight = axis == 3 ? kr.view({1, 1, 1, 2 * r + 1}) : kr.view({1, 1, 2 * r + 1, 1});
    const std::vector<int64_t> one{1, 1}, zero{0, 0};
    t = torch::conv2d(padded, weight.repeat({c, 1, 1, 1}), torch::Tensor(), one, zero, one, c);
  }
  return t;
}

namespace {

// One image of the curves.
struct CurveEntry {
  int64_t request;  ///< -1: one of the three shared images; else the map's first request
  int64_t slot;     ///< shared: 0 image, 1 mid-grey, 2 blurred; else the curve point, insertion + P
  int step;         ///< the latest step read (shared: the latest asked for)
};

// The curves' images and, entry for entry, what each is.
struct CurveImages {
  std::vector<torch::Tensor> images;
  std::vector<CurveEntry> entries;
};

// The requests grouped by step and by map.
struct CurveGroups {
  std::vector<StepTarget> distinct;  // the distinct steps asked for, and each request's column
  std::vector<int64_t> column;
  std::vector<std::vector<size_t>> sharing;  // a map's first request: all its
  std::vector<int> groupStep;                // requests, their latest step
  int latest = 0;
};

CurveGroups groupCurveRequests(const Trace& trace, const std::vector<CurveRequest>& requests,
                               int64_t H, int64_t W) {
  const int64_t N = H * W;
  CurveGroups g;
  g.column.resize(requests.size());
  g.sharing.resize(requests.size());
  g.groupStep.assign(requests.size(), -1);
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& r = requests[i];
    if (r.map.size() != static_cast<size_t>(N))
      throw Error("a map for the curves has " + std::to_string(r.map.size()) + " values for a " +
                  std::to_string(W) + "x" + std::to_string(H) + " image");
    if (r.step < 0 || r.step >= static_cast<int>(trace.steps.size()))
      throw Error("step " + std::to_string(r.step) + " does not exist");
    const StepTarget target{r.step, trace.steps[static_cast<size_t>(r.step)].tokenIndex, -1};
    size_t j = 0;
    while (j < g.distinct.size() &&
           (g.distinct[j].step != target.step || g.distinct[j].target != target.target))
      ++j;
    if (j == g.distinct.size()) g.distinct.push_back(target);
    g.column[i] = static_cast<int64_t>(j);
    g.latest = std::max(g.latest, r.step);
    size_t first = i;
    for (size_t k = 0; k < i; ++k)
      if (!g.sharing[k].empty() && requests[k].map == r.map) {
        first = k;
        break;
      }
    g.sharing[first].push_back(i);
    g.groupStep[first] = std::max(g.groupStep[first], r.step);
  }
  return g;
}

// Each distinct map's 2 (P - 2) inner points: its deletion and insertion images.
void addInnerPoints(const std::vector<CurveRequest>& requests, const CurveGroups& g,
                    const torch::Tensor& src, const torch::Tensor& blurred, int64_t P,
                    CurveImages& c) {
  const int64_t H = src.size(2), W = src.size(3), N = H * W;
  for (size_t i = 0; i < requests.size() && P > 2; ++i) {
    if (g.sharing[i].empty()) continue;  // read with its map's first request
    const auto order = mapOrder(requests[i].map);
    std::vector<int64_t> rank(static_cast<size_t>(N));
    for (size_t k = 0; k < order.size(); ++k) rank[order[k]] = static_cast<int64_t>(k);
    auto rankT = torch::tensor(rank, torch::kLong).view({1, 1, H, W});
    std::vector<int64_t> counts;
    for (int64_t k = 1; k + 1 < P; ++k)
      counts.push_back(static_cast<int64_t>(std::llround(
          static_cast<double>(k) / static_cast<double>(P - 1) * static_cast<double>(N))));
    auto mask =
        (rankT < torch::tensor(counts, torch::kLong).view({P - 2, 1, 1, 1})).to(torch::kFloat);
    for (int64_t k = 0; k < P - 2; ++k) {
      c.images.push_back(src * (1 - mask[k]));                      // deletion
      c.images.push_back(blurred * (1 - mask[k]) + src * mask[k]);  // insertion
      c.entries.push_back({static_cast<int64_t>(i), k + 1, g.groupStep[i]});
      c.entries.push_back({static_cast<int64_t>(i), P + k + 1, g.groupStep[i]});
    }
  }
}

std::vector<size_t> stepOrder(const std::vector<CurveEntry>& entries) {
  std::vector<size_t> order(entries.size());  // by step, stable: the decoder stops early
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return entries[a].step < entries[b].step; });
  return order;
}

// The batches: an attention decoder runs every row of a batch to the batch's latest step, so a
// batch holds one step's images (a step's images split evenly into as few batches as the batch
// size allows); a sharp decoder would otherwise run its glimpse networks for rows whose step
// has passed (a seventh of its curves' work on seven-digit images). CTC reads every step at once.
std::vector<std::pair<int64_t, int64_t>> curveBatches(const std::vector<CurveEntry>& entries,
                                                      const std::vector<size_t>& order, bool ctc,
                                                      int64_t batchSize) {
  std::vector<std::pair<int64_t, int64_t>> batches;  // (start, size) in `order`
  const int64_t total = static_cast<int64_t>(entries.size());
  for (int64_t start = 0; start < total;) {
    int64_t end = start + 1;
    if (ctc)
      end = std::min<int64_t>(total, start + batchSize);
    else
      while (end < total && entries[order[static_cast<size_t>(end)]].step ==
                                entries[order[static_cast<size_t>(start)]].step)
        ++end;
    const int64_t group = end - start, parts = (group + batchSize - 1) / batchSize;
    for (int64_t k = 0; k < parts; ++k) {
      const int64_t a = start + group * k / parts, b = start + group * (k + 1) / parts;
      batches.emplace_back(a, b - a);
    }
    start = end;
  }
  return batches;
}

// The m images from `start` in `order`, read: the shared images' probabilities into `shared`
// ([shared image][distinct step]), the others' into their requests' curves.
void readCurveBatch(Recognizer& model, const ForcedReading& reading, const CurveGroups& g,
                    const CurveImages& c, const std::vector<size_t>& order, int64_t start,
                    int64_t m, int64_t P, std::vector<double>& shared,
                    std::vector<FaithfulnessCurves>& out) {
  std::vector<torch::Tensor> batch;
  int last = 0;
  for (int64_t i = 0; i < m; ++i) {
    const size_t e = order[static_cast<size_t>(start + i)];
    batch.push_back(c.images[e]);
    last = std::max(last, c.entries[e].step);
  }
  // Only the distinct steps up to `last` can be read from this batch (and only those are
  // used): the later ones read step `last` instead, to keep the columns.
  auto upToLast = g.distinct;
  if (!reading.ctc)
    for (auto& t : upToLast) t.step = std::min(t.step, last);
  auto f =
      stepObjectives(forcedLogProbs(model, reading, torch::cat(batch), {}, reading.ctc ? -1 : last),
                     reading, upToLast)
          .exp()
          .to(torch::kDouble)
          .contiguous();  // [m, distinct]
  auto acc = f.accessor<double, 2>();
  for (int64_t i = 0; i < m; ++i) {
    const auto& e = c.entries[order[static_cast<size_t>(start + i)]];
    if (e.request < 0) {
      for (size_t j = 0; j < g.distinct.size(); ++j)
        shared[static_cast<size_t>(e.slot) * g.distinct.size() + j] =
            acc[i][static_cast<int64_t>(j)];
      continue;
    }
    for (size_t r : g.sharing[static_cast<size_t>(e.request)]) {
      const double p = acc[i][g.column[r]];
      auto& curves = out[r];
      if (e.slot < P)
        curves.deletion[static_cast<size_t>(e.slot)] = p;
      else
        curves.insertion[static_cast<size_t>(e.slot - P)] = p;
    }
  }
}

// The curves' ends from the shared images, and their areas.
void finishCurves(std::vector<FaithfulnessCurves>& out, const CurveGroups& g,
                  const std::vector<double>& shared) {
  const size_t d = g.distinct.size();
  for (size_t r = 0; r < out.size(); ++r) {
    const size_t j = static_cast<size_t>(g.column[r]);
    auto& c = out[r];
    c.deletion.front() = shared[j];           // the image
    c.deletion.back() = shared[d + j];        // mid-grey
    c.insertion.front() = shared[2 * d + j];  // blurred
    c.insertion.back() = shared[j];           // the image
    c.deletionAuc = curveArea(c.deletion);
    c.insertionAuc = curveArea(c.insertion);
  }
}

}  // namespace

std::vector<FaithfulnessCurves> deletionInsertionCurves(Recognizer& model, const GreyImage& image,
                                                        const Trace& trace,
                                                        const std::vector<CurveRequest>& requests,
                                                        const CurveOptions& o) {
  if (o.points < 2) throw Error("a deletion curve needs at least 2 points");
  if (o.batch < 1) throw Error("the curve batch must be at least 1");
  requireTraceImage(image, trace);
  c10::InferenceMode guard;
  const auto& cfg = model->config;
  const ForcedReading reading = forcedReading(model, trace, image);
  const auto src = sourceTensor(image, cfg.preprocessing);  // [1, C, H, W]
  const int64_t H = src.size(2), W = src.size(3);
  const double sigma = o.blurSigma > 0 ? o.blurSigma : static_cast<double>(H) / 4.0;
  const auto blurred = gaussianBlur(src, sigma);
  const int64_t P = o.points;
  // The curves' images: the ends of every curve are the same three images whatever the map (the
  // image itself: deletion's first point and insertion's last; mid-grey; the blurred image), so
  // they are read once; each distinct map adds its 2 (P - 2) inner points, read once for every
  // request that gives that map (a random map shared by an image's steps: each image is read at
  // the group's latest step, and every step's probability taken from that one pass). Each image
  // is read at the steps asked for, and an attention decoder stops after the last step its batch
  // needs: the images are sorted by step.
  CurveImages c{{src, torch::zeros_like(src), blurred}, {}};
  const CurveGroups groups = groupCurveRequests(trace, requests, H, W);
  addInnerPoints(requests, groups, src, blurred, P, c);
  std::vector<FaithfulnessCurves> out(requests.size());
  if (requests.empty()) return out;
  for (int64_t k = 0; k < 3; ++k) c.entries.insert(c.entries.begin() + k, {-1, k, groups.latest});
  const std::vector<size_t> order = stepOrder(c.entries);
  std::vector<double> shared(3 * groups.distinct.size());  // [shared image][distinct step]
  for (auto& curves : out) {
    curves.deletion.assign(static_cast<size_t>(P), 0.0);
    curves.insertion.assign(static_cast<size_t>(P), 0.0);
  }
  for (const auto& [start, m] : curveBatches(c.entries, order, reading.ctc, o.batch))
    readCurveBatch(model, reading, groups, c, order, start, m, P, shared, out);
  finishCurves(out, groups, shared);
  return out;
}

}  // namespace foveal::core
