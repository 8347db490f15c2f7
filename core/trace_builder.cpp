#include "trace_builder.h"

#include "charset.h"

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

Trace buildTrace(Recognizer& model, const RecognizerOutput& out, const ModelInput& input, int b,
                 int srcW, int srcH, int topk, bool stopAtEnd) {
  const auto& cfg = model->config;
  const Charset charset(cfg.charset, cfg.caseInsensitive);
  const auto rf = model->geometry();
  const auto& pp = cfg.preprocessing;
  const double sx = static_cast<double>(srcW) / pp.inputW,
               sy = static_cast<double>(srcH) / pp.inputH;

  Trace tr;
  tr.modelKind = toString(cfg.attention);
  tr.modelDescription = cfg.describe();
  tr.imageW = srcW;
  tr.imageH = srcH;
  for (const auto& box : rf.clippedBoxes())
    tr.regions.push_back({box.x * sx, box.y * sy, box.w * sx, box.h * sy});

  // Receptive-field crops of the model input (soft / hard patches): [M, 1, rh, rw].
  torch::Tensor crops;
  if (cfg.attention != AttentionKind::Sharp) {
    std::vector<float> th;
    for (const auto& box : rf.clippedBoxes())
      th.insert(th.end(), {static_cast<float>(box.w / pp.inputW), 0.f,
                           static_cast<float>((2 * box.x + box.w) / pp.inputW - 1), 0.f,
                           static_cast<float>(box.h / pp.inputH),
                           static_cast<float>((2 * box.y + box.h) / pp.inputH - 1)});
    auto theta = torch::tensor(th).view({rf.columns, 2, 3});
    auto img = input.image.select(0, b).unsqueeze(0).expand({rf.columns, -1, -1, -1});
    crops = sampleAffine(img.to(torch::kFloat).contiguous(), theta, static_cast<int64_t>(rf.sizeX),
                         static_cast<int64_t>(rf.clippedBox(0).h));
  }

  auto probs = out.logProbs.select(0, b).detach().exp().to(torch::kCPU);  // [T, K]
  const int64_t steps = probs.size(0);
  const int k = std::min<int>(topk, static_cast<int>(probs.size(1)));
  double confidence = 1.0, entropySum = 0.0;
  std::vector<int> tokens;
  for (int64_t t = 0; t < steps; ++t) {
    TraceStep st;
    auto p = probs.select(0, t);
    auto top = p.topk(k);
    auto vals = toVector(std::get<0>(top));
    auto idx = std::get<1>(top).to(torch::kLong);
    for (int i = 0; i < k; ++i) {
      const int ci = static_cast<int>(idx[i].item<int64_t>());
      st.topk.push_back({charset.token(ci), ci, vals[static_cast<size_t>(i)]});
    }
    st.tokenIndex = static_cast<int>(out.tokens.index({b, t}).item<int64_t>());
    st.token = charset.token(st.tokenIndex);
    st.prob = p[st.tokenIndex].item<double>();
    st.alpha = toVector(out.alpha.index({b, t}));
    st.entropy = entropy(st.alpha);
    st.region = static_cast<int>(out.selected.index({b, t}).item<int64_t>());
    for (size_t s = 0; s < out.thetas.size(); ++s) {
      StnTrace stn;
      stn.quad = patchQuad(out.thetas[s].index({b, t}), srcW, srcH);
      stn.patch = toGreyImage(out.patches[s].index({b, t}));
      st.stn.push_back(std::move(stn));
    }
    if (!st.stn.empty()) {
      st.patch = st.stn.back().patch;
    } else if (cfg.attention == AttentionKind::Soft) {
      auto a = out.alpha.index({b, t}).detach().to(torch::kCPU, torch::kFloat).view({-1, 1, 1, 1});
      st.patch = toGreyImage((crops * a).sum(0));
    } else {
      st.patch = toGreyImage(crops.select(0, st.region));
    }
    if (out.contextWeights.defined())
      st.contextWeights = toVector(out.contextWeights.index({b, t}));

    confidence *= st.prob;
    entropySum += st.entropy;
    tokens.push_back(st.tokenIndex);
    const bool end = st.tokenIndex == Charset::kEnd;
    tr.steps.push_back(std::move(st));
    if (end && stopAtEnd) break;
  }
  tr.prediction = charset.decode(tokens);
  tr.confidence = confidence;
  tr.meanEntropy = tr.steps.empty() ? 0.0 : entropySum / static_cast<double>(tr.steps.size());
  return tr;
}

}  // namespace foveal::core
