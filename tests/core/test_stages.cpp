// The model as stages (docs/DESIGN.md "Model stages"): every combination of stages, glimpses and
// cells initialises, decodes, traces, saves and trains one step; TPS at its initial state; CTC
// decoding and loss against hand computations; the ResNet's receptive fields by autograd; the
// registry.
#include <torch/torch.h>
#include <QtTest/QtTest>

#include <cmath>
#include <functional>
#include <map>
#include <thread>

#include "base/cpu_features.h"
#include "base/error.h"
#include "base/gradient_scope.h"
#include "base/kernel_routes.h"
#include "base/route_cache.h"
#include "formats/checkpoint.h"
#include "model/additive_attention.h"
#include "model/conv_dispatch.h"
#include "model/conv_plan.h"
#include "model/dnnl_matmul.h"
#include "model/model_variants.h"
#include "model/recognizer.h"
#include "model/sharpener.h"
#include "model/stages/ctc_prediction.h"
#include "model/stages/lstm_autograd.h"
#include "model/stages/lstm_inference.h"
#include "model/stages/resnet_features.h"
#include "model/stages/stage_registry.h"
#include "model/stages/tps.h"
#include "model/winograd.h"
#include "trace/model_session.h"

using namespace foveal::core;

namespace {

ModelConfig tiny(ModelConfig c) {
  c.width = 0.125;
  c.maxLength = 6;
  return c;
}

// transformation x features x sequence (none, bilstm, bilstm + projection) x prediction (ctc,
// attention with each glimpse and each cell), all from the registry.
std::vector<std::pair<std::string, ModelConfig>> combinations() {
  std::vector<std::pair<std::string, ModelConfig>> out;
  for (const auto& tr : stageNames(StageKind::Transformation))
    for (const auto& fe : stageNames(StageKind::Features))
      for (const auto& seq : {std::string("none"), std::string("bilstm"), std::string("proj")})
        for (const auto& pr : stageNames(StageKind::Prediction)) {
          std::vector<std::pair<std::string, std::string>> heads;  // (glimpse, cell)
          // CTC reads one row of columns: a grid stage is refused with it (test_grid_model).
          if (pr == "ctc" && stageOption(StageKind::Features, fe).grid) continue;
          if (pr == "ctc")
            heads.emplace_back("soft", "paper");
          else
            for (const auto& g : stageNames(StageKind::Glimpse))
              for (const auto& cell : stageNames(StageKind::Cell)) heads.emplace_back(g, cell);
          for (const auto& [g, cell] : heads) {
            ModelConfig c;
            c.transformation = tr;
            c.features = fe;
            c.sequence = seq == "none" ? "none" : "bilstm";
            c.sequenceProjection = seq == "proj";
            c.prediction = pr;
            c.attention = g;
            c.cell = cell;
            std::string name = tr + "-" + fe + "-" + seq + "-" + pr;
            if (pr != "ctc") name += "(" + g + "," + cell + ")";
            out.emplace_back(name, tiny(c));
          }
        }
  return out;
}

GreyImage testImage(int w = 160, int h = 32) {
  GreyImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(static_cast<size_t>(w * h));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      img.pixels[static_cast<size_t>(y * w + x)] = static_cast<uint8_t>((x * 7 + y * 3) % 256);
  return img;
}

// The gradients of y and of want (the module's) for the output gradient g, parameter by
// parameter: "" when every one is within tolerance * (floor + its largest value), else which
// one is not.
QString gradientMismatch(const torch::Tensor& y, const torch::Tensor& want, const torch::Tensor& g,
                         const std::vector<torch::Tensor>& params, double tolerance, double floor) {
  auto got = torch::autograd::grad({y}, params, {g});
  auto ref = torch::autograd::grad({want}, params, {g});
  for (size_t i = 0; i < got.size(); ++i) {
    const double error = (got[i] - ref[i]).abs().max().item<double>();
    if (error >= tolerance * (floor + ref[i].abs().max().item<double>()))
      return QString("gradient %1 off by %2").arg(i).arg(error);
  }
  return {};
}

// LibTorch's intra-op thread count for a scope, restored when it ends, also when a QVERIFY returns
// early: the convolutions' routes depend on the count, so a failed test must not leave the tests
// after it on another one.
// Routes measured on the machine (base/route_cache.h) into `file` for a scope; the tests' fixed
// thresholds and no cache file again after it.
class MeasuredRoutes {
 public:
  explicit MeasuredRoutes(const QString& file) {
    setRouteTuning(true);
    setRouteCacheFile(file.toStdString());
  }
  ~MeasuredRoutes() {
    setRouteTuning(false);
    setRouteCacheFile("");
  }
  MeasuredRoutes(const MeasuredRoutes&) = delete;
  MeasuredRoutes& operator=(const MeasuredRoutes&) = delete;
};

class ThreadCount {
 public:
  explicit ThreadCount(int n) : m_before(at::get_num_threads()) { set(n); }
  ~ThreadCount() { at::set_num_threads(m_before); }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;
  void set(int n) const { at::set_num_threads(n); }

 private:
  int m_before;
};

// A fused pass's output `got` against the module's own `want`, both from x: the same sizes,
// values within 1e-5, and the gradients of x and of every parameter of `module` through
// gradientMismatch (1e-5 relative, floor 1). Empty when they agree, else what differs.
QString moduleMismatch(const torch::Tensor& got, const torch::Tensor& want, const torch::Tensor& x,
                       const torch::nn::Module& module) {
  if (got.sizes() != want.sizes()) return "the output's sizes differ";
  const double error = (got - want).abs().max().item<double>();
  if (error >= 1e-5) return QString("the output off by %1").arg(error);
  std::vector<torch::Tensor> params{x};
  for (auto& p : module.parameters()) params.push_back(p);
  return gradientMismatch(got, want, torch::randn_like(got), params, 1e-5, 1);
}

// grid_sample (bilinear, border padding, align_corners=false) at affineGrid's points
// (affine_grid's, computed with tensor operations): what sampleAffine does.
torch::Tensor gridSampleReference(const torch::Tensor& source, const torch::Tensor& theta,
                                  int64_t w, int64_t h) {
  namespace F = torch::nn::functional;
  return F::grid_sample(source, affineGrid(theta, w, h),
                        F::GridSampleFuncOptions()
                            .mode(torch::kBilinear)
                            .padding_mode(torch::kBorder)
                            .align_corners(false));
}

}  // namespace

class TestStages : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void registryNamesEveryOption() {
    QCOMPARE(stageNames(StageKind::Transformation), (std::vector<std::string>{"none", "tps"}));
    QCOMPARE(stageNames(StageKind::Features), (std::vector<std::string>{"vgg", "vgg2d", "resnet"}));
    QCOMPARE(stageNames(StageKind::Sequence), (std::vector<std::string>{"none", "bilstm"}));
    QCOMPARE(stageNames(StageKind::Prediction), (std::vector<std::string>{"ctc", "attention"}));
    QCOMPARE(stageNames(StageKind::Glimpse), (std::vector<std::string>{"soft", "hard", "sharp"}));
    QVERIFY(stageOption(StageKind::Glimpse, "sharp").needsUpsampled);
    QVERIFY(!stageOption(StageKind::Glimpse, "hard").needsUpsampled);
    QVERIFY(stageOption(StageKind::Glimpse, "hard").selectsRegions);
    QVERIFY(!stageOption(StageKind::Glimpse, "soft").selectsRegions);
    try {
      stageOption(StageKind::Features, "rcnn");
      QFAIL("an unknown stage was accepted");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("unknown features 'rcnn' (known: vgg, vgg2d, resnet)"),
               e.what());
    }
    ModelConfig c;
    c.sequence = "transformer";
    QVERIFY_THROWS_EXCEPTION(Error, c.validate());
  }

  void everyCombinationDecodesTracesSavesAndTrains_data() {
    QTest::addColumn<int>("index");
    const auto all = combinations();
    for (size_t i = 0; i < all.size(); ++i)
      QTest::newRow(all[i].first.c_str()) << static_cast<int>(i);
  }
  void everyCombinationDecodesTracesSavesAndTrains() {
    QFETCH(int, index);
    const ModelConfig cfg = combinations()[static_cast<size_t>(index)].second;
    torch::manual_seed(3);
    Recognizer model(cfg);
    const int64_t b = 2, k = cfg.makeCharset().size();
    const int64_t m = model->geometry().regionCount();
    auto image = torch::rand({b, 1, 32, 100}) * 2 - 1;
    auto up = cfg.needsUpsampled() ? torch::rand({b, 1, 32, cfg.preprocessing.upsampledW()}) * 2 - 1
                                   : torch::Tensor();
    // Targets in the model's class layout: characters after the special classes, then the end.
    const Charset charset = cfg.makeCharset();
    auto targets = torch::full({b, cfg.steps()}, std::max(0, charset.endIndex()), torch::kLong);
    auto lengths = torch::tensor({3, 5}, torch::kLong);
    for (int64_t i = 0; i < b; ++i)
      for (int64_t t = 0; t < lengths[i].item<int64_t>(); ++t)
        targets[i][t] = charset.specials() + (t * 3 + i) % 10;

    model->eval();
    {
      torch::NoGradGuard ng;
      auto out = model->forward(image, up);
      if (cfg.isCtc()) {
        QCOMPARE(out.logProbs.sizes().vec(), (std::vector<int64_t>{b, m, k}));
        QVERIFY(!out.alpha.defined());
      } else {
        QCOMPARE(out.logProbs.sizes().vec(), (std::vector<int64_t>{b, cfg.steps(), k}));
        QCOMPARE(out.alpha.sizes().vec(), (std::vector<int64_t>{b, cfg.steps(), m}));
      }
      QVERIFY(torch::allclose(out.logProbs.exp().sum(-1), torch::ones({b, out.logProbs.size(1)}),
                              1e-4, 1e-4));
      QCOMPARE(out.fiducials.defined(), cfg.transformation == "tps");
      if (out.fiducials.defined()) {
        QCOMPARE(out.fiducials.sizes().vec(), (std::vector<int64_t>{b, cfg.fiducials, 2}));
        QCOMPARE(out.rectified.sizes().vec(), image.sizes().vec());
      }
      QCOMPARE(model->readings(out).size(), size_t(b));
    }

    // One training step: loss finite, gradients reach the first and the last stage.
    model->train();
    DecodeOptions opt;
    opt.targets = targets;
    auto out = model->forward(image, up, opt);
    LossInputs in;
    in.targets = targets;
    in.lengths = lengths;
    in.lambdaR = 1.0;
    auto terms = model->loss(out, in);
    QVERIFY(std::isfinite(terms.total.item<double>()));
    QVERIFY(terms.nll.item<double>() > 0);
    terms.total.backward();
    const auto params = model->named_parameters();
    auto reached = [&](const std::string& prefix) {
      for (const auto& p : params)
        if (p.key().rfind(prefix, 0) == 0 && p.value().grad().defined() &&
            p.value().grad().abs().sum().item<double>() > 0)
          return true;
      return false;
    };
    QVERIFY(reached("features."));
    QVERIFY(reached("prediction."));
    if (cfg.sequence != "none") QVERIFY(reached("sequence."));
    if (cfg.transformation == "tps") QVERIFY(reached("transformation.fc2."));
    torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.01));
    sgd.step();

    // Save, load (format 3), trace: the same reading.
    QTemporaryDir dir;
    const std::string path = (dir.path() + "/m.fvm").toStdString();
    saveCheckpoint(path, model);
    auto session = ModelSession::open(path);
    QCOMPARE(session->config().stageString(), cfg.stageString());
    const Trace tr = session->trace(testImage(), "test");
    QCOMPARE(tr.regions.size(), size_t(m));
    QCOMPARE(tr.decoder, cfg.prediction);
    QCOMPARE(tr.fiducials.size(), size_t(cfg.transformation == "tps" ? cfg.fiducials : 0));
    // What the trace says it has follows from the stages (the views ask it, not the model kind).
    QVERIFY(tr.hasMap(kAttentionMap));
    QCOMPARE(tr.mapNames(), std::vector<std::string>{kAttentionMap});
    QCOMPARE(tr.map(kAttentionMap)->steps.size(), tr.steps.size());
    QCOMPARE(tr.isCtc(), cfg.isCtc());
    QCOMPARE(tr.hasTps(), cfg.transformation == "tps");
    QCOMPARE(tr.isGrid(), model->geometry().regionRows() > 1);
    const bool sharp = !cfg.isCtc() && cfg.attention == "sharp";
    QCOMPARE(tr.hasStn(), sharp && !tr.steps.empty());
    const StepPatch patch = sharp                                     ? StepPatch::Stn
                            : !cfg.isCtc() && cfg.attention == "soft" ? StepPatch::AlphaWeighted
                                                                      : StepPatch::Region;
    QCOMPARE(toString(tr.patch), toString(patch));
    for (size_t t = 0; t < tr.steps.size(); ++t) {
      const auto& s = tr.steps[t];
      QCOMPARE(tr.attention(t).size(), size_t(m));
      QVERIFY(s.region >= 0 && s.region < m);
      if (cfg.isCtc()) QVERIFY(!s.columns.empty());
    }
    if (cfg.isCtc()) QCOMPARE(tr.columnTopk.size(), size_t(m));
    const Trace again = ModelSession::open(path)->trace(testImage(), "test");
    QCOMPARE(again.toJson(), tr.toJson());
  }

  // docs/DESIGN.md: the field's named models in the stage vocabulary.
  void fieldModelsAreTheirStages() {
    QCOMPARE(modelVariant("crnn").config.stageString(), std::string("none-vgg-bilstm-ctc"));
    QCOMPARE(modelVariant("rare").config.stageString(),
             std::string("tps-vgg-bilstm-attention(soft)"));
    QCOMPARE(modelVariant("trba").config.stageString(),
             std::string("tps-resnet-bilstm-attention(soft)"));
    Recognizer trba(tiny(modelVariant("trba").config));
    QCOMPARE(trba->geometry().columns, 26);  // DTRB's ResNet at 100x32
    Recognizer crnn(tiny(modelVariant("crnn").config));
    QCOMPARE(crnn->geometry().columns, 24);
  }

  // The localiser's initial output (RARE Fig. 6a) relates to the base fiducials by the affine map
  // x' = x, y' = (y - x) / 2, which a thin-plate spline reproduces exactly: the initial
  // rectification samples the input there, whatever the image.
  void tpsAtItsInitialStateIsAKnownAffineRectification() {
    const int64_t w = 100, h = 32, f = 20;
    Tps tps(TpsOptions(f, w, h));
    tps->eval();
    torch::NoGradGuard ng;
    auto image = torch::rand({2, 1, h, w});
    auto t = tps->transform(image);
    QVERIFY(torch::allclose(t.fiducials[0], tpsInitialFiducials(f).to(torch::kFloat), 0, 1e-6));
    auto g = tps->grid(t.fiducials);  // [2, H, W, 2]
    for (int64_t i : {0L, 7L, 31L})
      for (int64_t j : {0L, 13L, 50L, 99L}) {
        const double x = (2.0 * j + 1) / w - 1, y = (2.0 * i + 1) / h - 1;
        QVERIFY(std::abs(g[0][i][j][0].item<double>() - x) < 1e-4);
        QVERIFY(std::abs(g[0][i][j][1].item<double>() - (y - x) / 2) < 1e-4);
      }
    // A horizontal ramp I(u, v) = u sampled at x' (align_corners = true: u = (x' + 1)/2 (W - 1)).
    auto ramp =
        torch::arange(w, torch::kFloat).view({1, 1, 1, w}).expand({1, 1, h, w}).contiguous();
    auto r = tps->transform(ramp).image;
    for (int64_t j : {0L, 40L, 99L}) {
      const double x = (2.0 * j + 1) / w - 1;
      QVERIFY(std::abs(r[0][0][5][j].item<double>() - (x + 1) / 2 * (w - 1)) < 1e-3);
    }
  }

  // The localiser's inference plan (oneDNN, batch norms folded) against the modules (the path
  // taken where gradients are recorded): at full width and at the digit models', with batch norm
  // statistics that are not the identity; and after the weights change (the plan is rebuilt).
  void tpsLocaliserPlanMatchesTheModules() {
    if (!ConvPlan::available()) QSKIP("built without oneDNN (or FOVEAL_PLAIN_CONV is set)");
    for (double width : {1.0, 0.125}) {
      torch::manual_seed(12);
      Tps tps(TpsOptions(20, 100, 32).channel_width(width));
      {
        torch::NoGradGuard ng;
        for (auto& b : tps->named_buffers())
          if (b.key().find("running_mean") != std::string::npos)
            b.value().normal_(0, 0.3);
          else if (b.key().find("running_var") != std::string::npos)
            b.value().uniform_(0.5, 2);
        for (auto& p : tps->named_parameters())
          if (p.key().rfind("fc2.", 0) == 0) p.value().normal_(0, 0.05);
      }
      tps->eval();
      for (int round = 0; round < 2; ++round) {
        auto image = torch::rand({3, 1, 32, 100}) * 2 - 1;
        const auto want = tps->localise(image).detach();  // gradients on: the modules
        torch::NoGradGuard ng;
        const auto got = tps->localise(image);
        QCOMPARE(got.sizes(), want.sizes());
        const double err = (got - want).abs().max().item<double>();
        QVERIFY2(
            err < 1e-4,
            qPrintable(QString("width %1, round %2: off by %3").arg(width).arg(round).arg(err)));
        for (auto& p : tps->named_parameters())  // as an optimiser step would
          if (p.key().rfind("conv.", 0) == 0) p.value().mul_(1.1);
      }
    }
  }

  void ctcCollapsesRepeatsAndBlanks() {
    const auto p = collapseCtcPath({0, 3, 3, 0, 3, 1, 1, 0, 0, 2});
    QCOMPARE(p.tokens, (std::vector<int>{3, 3, 1, 2}));
    QCOMPARE(p.columns, (std::vector<std::vector<int>>{{1, 2}, {4}, {5, 6}, {9}}));
    QVERIFY(collapseCtcPath({0, 0, 0}).tokens.empty());
  }

  // The CTC loss against the definition: - log of the summed probability of every path (K^M of
  // them, M = 4 columns here) that collapses to the target.
  void ctcLossIsTheSumOverAlignments() {
    const int64_t m = 4, k = 3;
    torch::manual_seed(1);
    auto logits = torch::randn({1, m, k}, torch::kDouble);
    auto lp = torch::log_softmax(logits, -1);
    ModelConfig cfg = tiny(modelVariant("crnn").config);
    cfg.charset = "ab";
    CtcPrediction ctc(cfg, 4);
    RecognizerOutput out;
    out.logProbs = lp.to(torch::kFloat);
    for (const std::vector<int>& target :
         {std::vector<int>{1}, std::vector<int>{1, 2}, std::vector<int>{2, 2}}) {
      double total = 0;
      for (int code = 0; code < 81; ++code) {
        std::vector<int> path;
        double logp = 0;
        for (int64_t i = 0, c = code; i < m; ++i, c /= k) {
          path.push_back(static_cast<int>(c % k));
          logp += lp[0][i][c % k].item<double>();
        }
        if (collapseCtcPath(path).tokens == target) total += std::exp(logp);
      }
      LossInputs in;
      in.targets = torch::zeros({1, 4}, torch::kLong);
      for (size_t i = 0; i < target.size(); ++i) in.targets[0][static_cast<int64_t>(i)] = target[i];
      in.lengths = torch::tensor({static_cast<int64_t>(target.size())});
      const double loss = ctc->loss(out, in).nll.item<double>();
      QVERIFY2(std::abs(loss + std::log(total)) < 1e-4,
               qPrintable(QString("loss %1, expected %2").arg(loss).arg(-std::log(total))));
    }
  }

  // The greedy reading of a CTC model is the collapsed argmax path, and DTRB's confidence is the
  // product of every column's maximum.
  void ctcTraceMatchesItsDefinition() {
    ModelConfig cfg = tiny(modelVariant("crnn").config);
    auto session = ModelSession::create(cfg, 4);
    const Trace tr = session->trace(testImage(), "t");
    std::vector<int> path;
    double conf = 1;
    for (const auto& col : tr.columnTopk) {
      path.push_back(col.front().index);
      conf *= col.front().prob;
    }
    const auto collapsed = collapseCtcPath(path);
    QCOMPARE(tr.steps.size(), collapsed.tokens.size());
    for (size_t s = 0; s < tr.steps.size(); ++s) {
      QCOMPARE(tr.steps[s].tokenIndex, collapsed.tokens[s]);
      QCOMPARE(tr.steps[s].columns, collapsed.columns[s]);
    }
    QVERIFY(std::abs(tr.confidence - conf) < 1e-12);
  }

  // Issue 37, item 3: the CTC prefix beam search against the definition. Every path of M = 5
  // columns over blank + 2 classes (3^5 = 243 paths), collapsed: a reading's probability is the
  // sum over its paths. A width of 64 keeps every prefix (at most 2^6 - 1), so the search must
  // return exactly the readings, in order, with those probabilities; narrower searches return
  // readings whose scores never exceed their true probability and find the best one here.
  void ctcPrefixBeamSearchIsTheSumOverPaths() {
    const int m = 5, k = 3;
    torch::manual_seed(7);
    auto lp = torch::log_softmax(torch::randn({m, k}, torch::kDouble) * 1.5, -1).contiguous();
    const std::vector<double> v(lp.data_ptr<double>(), lp.data_ptr<double>() + m * k);
    std::map<std::vector<int>, double> exact;
    std::map<std::vector<int>, std::pair<double, std::vector<int>>> bestPath;
    for (int code = 0; code < 243; ++code) {
      std::vector<int> path;
      double logp = 0;
      for (int i = 0, c = code; i < m; ++i, c /= k) {
        path.push_back(c % k);
        logp += v[static_cast<size_t>(i * k + c % k)];
      }
      const auto reading = collapseCtcPath(path).tokens;
      exact[reading] += std::exp(logp);
      auto it = bestPath.find(reading);
      if (it == bestPath.end() || logp > it->second.first) bestPath[reading] = {logp, path};
    }
    std::vector<std::pair<double, std::vector<int>>> ranked;
    for (const auto& [reading, p] : exact) ranked.push_back({p, reading});
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    const auto all = ctcPrefixBeamSearch(v, m, k, 64);
    QCOMPARE(all.size(), ranked.size());
    for (size_t h = 0; h < all.size(); ++h) {
      QCOMPARE(all[h].tokens, ranked[h].second);
      QVERIFY2(std::abs(std::exp(all[h].logProb) - ranked[h].first) < 1e-12,
               qPrintable(QString("reading %1: %2 against %3")
                              .arg(h)
                              .arg(std::exp(all[h].logProb))
                              .arg(ranked[h].first)));
      // Its path is the most probable one that reads it.
      QCOMPARE(ctcBestPath(v, m, k, all[h].tokens), bestPath.at(all[h].tokens).second);
    }
    for (int width : {1, 2, 4}) {
      const auto narrow = ctcPrefixBeamSearch(v, m, k, width);
      QVERIFY(!narrow.empty() && narrow.size() <= static_cast<size_t>(width));
      QCOMPARE(narrow.front().tokens, ranked.front().second);
      for (const auto& hyp : narrow) QVERIFY(std::exp(hyp.logProb) <= exact.at(hyp.tokens) + 1e-12);
    }
    // Where greedy decoding is wrong: two columns, each blank 0.6 and "a" 0.4. The argmax path
    // reads "" (0.36); "a" has three paths (0.24 + 0.24 + 0.16 = 0.64).
    const std::vector<double> two = {std::log(0.6), std::log(0.4), std::log(0.6), std::log(0.4)};
    const auto hyps = ctcPrefixBeamSearch(two, 2, 2, 2);
    QCOMPARE(hyps.size(), size_t(2));
    QCOMPARE(hyps[0].tokens, std::vector<int>{1});
    QVERIFY(std::abs(std::exp(hyps[0].logProb) - 0.64) < 1e-12);
    QVERIFY(hyps[1].tokens.empty() && std::abs(std::exp(hyps[1].logProb) - 0.36) < 1e-12);
    QVERIFY(ctcBestPath(two, 2, 2, {1, 1}).empty());  // "aa" needs a blank between: 3 columns
    QVERIFY_THROWS_EXCEPTION(Error, ctcPrefixBeamSearch(two, 2, 2, 0));
  }

  // A CTC model traced with a beam: the N best readings, best first; the chosen one (the best, or
  // the second) is the prediction and its tokens are the steps.
  void ctcModelTracesWithABeam() {
    ModelConfig cfg = tiny(modelVariant("crnn").config);
    auto session = ModelSession::create(cfg, 4);
    TraceOptions o;
    o.beamWidth = 5;
    const Trace tr = session->trace(testImage(), "t", o);
    QVERIFY(tr.isCtc());
    QCOMPARE(tr.beamWidth, 5);
    QVERIFY(!tr.hypotheses.empty() && tr.hypotheses.size() <= 5);
    for (size_t h = 1; h < tr.hypotheses.size(); ++h)
      QVERIFY(tr.hypotheses[h - 1].logProb >= tr.hypotheses[h].logProb);
    QCOMPARE(tr.prediction, tr.hypotheses[0].reading);
    QCOMPARE(tr.steps.size(), tr.hypotheses[0].tokens.size());
    for (size_t s = 0; s < tr.steps.size(); ++s)
      QCOMPARE(tr.steps[s].tokenIndex, tr.hypotheses[0].tokens[s]);
    if (tr.hypotheses.size() > 1) {
      o.beamHypothesis = 1;
      const Trace second = session->trace(testImage(), "t", o);
      QCOMPARE(second.prediction, tr.hypotheses[1].reading);
      QCOMPARE(second.hypothesis, 1);
      QCOMPARE(second.steps.size(), tr.hypotheses[1].tokens.size());
    }
  }

  // docs/DESIGN.md's check on the VGG, applied to the ResNet: average pools, positive constant
  // weights, and the gradient of one output column is non-zero exactly inside its clipped box.
  void resnetBoxesAgreeWithAutograd_data() {
    QTest::addColumn<int>("column");
    for (int c : {0, 3, 13, 25}) QTest::newRow(qPrintable(QString::number(c))) << c;
  }
  void resnetBoxesAgreeWithAutograd() {
    QFETCH(int, column);
    ResNetFeatures net(ResNetFeaturesOptions(0.125).average_pools(true));
    net->eval();
    {
      torch::NoGradGuard g;
      for (auto& p : net->named_parameters())
        p.value().fill_(p.key().find("weight") != std::string::npos ? 0.05 : 0.0);
    }
    net->to(torch::kDouble);
    auto x = torch::ones({1, 1, 32, 100}, torch::dtype(torch::kDouble).requires_grad(true));
    auto f = net->grid(x).squeeze(1);  // [1, 26, C]
    QCOMPARE(f.size(1), int64_t(26));
    f.select(1, column).sum().backward();
    auto support = (x.grad().abs() > 0).squeeze();  // [32, 100]
    auto cols = support.any(0);
    const auto box = net->geometry(100, 32).clippedBox(column);
    const int x0 = std::max(0, static_cast<int>(box.x));
    const int x1 = std::min(100, static_cast<int>(box.x + box.w));
    for (int i = 0; i < 100; ++i)
      QVERIFY2(cols[i].item<bool>() == (i >= x0 && i < x1),
               qPrintable(
                   QString("column %1, x=%2, box %3..%4").arg(column).arg(i).arg(x0).arg(x1 - 1)));
    QVERIFY(support.any(1).all().item<bool>());
  }

  // The oneDNN inference plan (batch norms folded, ReLU and residual fused, Winograd on large
  // batches) computes what the modules compute.
  void convPlanMatchesTheModules_data() {
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("width");
    QTest::newRow("batch 1") << 1 << 100;
    QTest::newRow("batch 24") << 24 << 100;
    QTest::newRow("batch 3, 160 wide") << 3 << 160;
    QTest::newRow("batch 2, odd width 99") << 2 << 99;
  }
  void convPlanMatchesTheModules() {
    QFETCH(int, batch);
    QFETCH(int, width);
    torch::manual_seed(21);
    ResNetFeatures net(ResNetFeaturesOptions().out_channels(256));
    {
      torch::NoGradGuard g;
      for (auto& b : net->named_buffers()) {
        if (b.key().find("running_mean") != std::string::npos) b.value().normal_(0, 0.1);
        if (b.key().find("running_var") != std::string::npos) b.value().uniform_(0.5, 2.0);
      }
      for (auto& p : net->named_parameters())
        if (p.key().find("bn") != std::string::npos ||
            p.key().find("downsample.1") != std::string::npos)
          p.value().uniform_(p.key().find("weight") != std::string::npos ? 0.5 : -0.2,
                             p.key().find("weight") != std::string::npos ? 1.5 : 0.2);
    }
    net->eval();
    auto x = torch::rand({batch, 1, 32, width}) * 2 - 1;
    auto reference = net->featureMap(x).detach();  // autograd on: the modules
    torch::NoGradGuard ng;
    auto fast = net->featureMap(x);  // no autograd, eval: the plan where oneDNN has one
    QCOMPARE(fast.sizes(), reference.sizes());
    const double scale = reference.abs().max().item<double>();
    const double err = (fast - reference).abs().max().item<double>();
    QVERIFY2(err <= 1e-4 * std::max(1.0, scale),
             qPrintable(QString("max error %1 (max |f| %2)").arg(err).arg(scale)));
  }

  // The one-input-channel convolutions' kernel (thnn_conv2d) against the module's: outputs and
  // the gradients of the input, the weight and the bias; strided and padded as the networks use
  // it; a convolution of several input channels goes to the module unchanged.
  void singleChannelConvolutionMatchesTheModule() {
    torch::manual_seed(5);
    // Stride 1 runs the direct kernel (any kernel size and padding), stride 2 thnn_conv2d; 9
    // images over 2 threads split into unequal chunks for the weight gradient.
    const ThreadCount two(2);
    for (auto [stride, padding, bias, kernel] :
         {std::tuple{1, 1, true, 3}, std::tuple{1, 1, false, 3}, std::tuple{2, 0, true, 3},
          std::tuple{1, 0, true, 3}, std::tuple{1, 2, true, 5}}) {
      torch::nn::Conv2d conv(
          torch::nn::Conv2dOptions(1, 6, kernel).stride(stride).padding(padding).bias(bias));
      auto x = torch::randn({9, 1, 17, 29}, torch::requires_grad());
      auto y = convForward(*conv, x);
      auto want = conv->forward(x);
      QCOMPARE(y.sizes(), want.sizes());
      QVERIFY((y - want).abs().max().item<double>() < 1e-5);
      auto g = torch::randn_like(y);
      std::vector<torch::Tensor> params{x, conv->weight};
      if (bias) params.push_back(conv->bias);
      // Sums of ~4,000 products: float rounding relative to the gradient's size.
      const QString why = gradientMismatch(y, want, g, params, 1e-5, 1);
      QVERIFY2(why.isEmpty(),
               qPrintable(QString("kernel %1, padding %2: %3").arg(kernel).arg(padding).arg(why)));
    }
    // No input gradient asked for (the image): the weight's still right.
    torch::nn::Conv2d conv(torch::nn::Conv2dOptions(1, 4, 3).padding(1));
    auto x = torch::randn({5, 1, 8, 11});
    auto gw = torch::autograd::grad({convForward(*conv, x).square().sum()}, {conv->weight})[0];
    auto rw = torch::autograd::grad({conv->forward(x).square().sum()}, {conv->weight})[0];
    QVERIFY((gw - rw).abs().max().item<double>() < 1e-4);
    // The input gradient alone (an explanation's: no weight or bias gradient computed), plain
    // and fused with a ReLU and a pool.
    {
      torch::nn::Sequential fused(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).padding(1)),
                                  torch::nn::ReLU(), torch::nn::MaxPool2d(2));
      auto* c = fused[0]->as<torch::nn::Conv2dImpl>();
      auto xi = torch::randn({5, 1, 9, 14}, torch::requires_grad());
      auto gi = torch::autograd::grad({convForward(*c, xi).square().sum()}, {xi})[0];
      auto ri = torch::autograd::grad({c->forward(xi).square().sum()}, {xi})[0];
      QVERIFY((gi - ri).abs().max().item<double>() < 1e-4);
      auto gf = torch::autograd::grad({sequentialForward(*fused, xi).square().sum()}, {xi})[0];
      auto rf = torch::autograd::grad({fused->forward(xi).square().sum()}, {xi})[0];
      QVERIFY((gf - rf).abs().max().item<double>() < 1e-4);
    }
    // Few input channels (in x out at most 32) take the direct kernel too: widths that are and
    // are not multiples of 8, 3x3 and 5x5, with and without the input gradient; paddings beyond
    // kernel - 1 (the input gradient's convolution then crops its output).
    for (auto [in, out, kernel, padding, width] :
         {std::tuple{4, 4, 3, 1, 41}, std::tuple{4, 8, 3, 1, 16}, std::tuple{3, 5, 5, 2, 13},
          std::tuple{2, 3, 3, 0, 9}, std::tuple{2, 3, 3, 3, 10}, std::tuple{3, 2, 1, 1, 7}}) {
      torch::nn::Conv2d few(torch::nn::Conv2dOptions(in, out, kernel).padding(padding));
      for (bool inputGradient : {true, false}) {
        auto x = torch::randn({9, in, 11, width}).requires_grad_(inputGradient);
        auto y = convForward(*few, x);
        auto want = few->forward(x);
        QCOMPARE(y.sizes(), want.sizes());
        QVERIFY((y - want).abs().max().item<double>() < 1e-5);
        auto g = torch::randn_like(y);
        std::vector<torch::Tensor> params{few->weight, few->bias};
        if (inputGradient) params.push_back(x);
        const QString why = gradientMismatch(y, want, g, params, 1e-5, 1);
        QVERIFY2(
            why.isEmpty(),
            qPrintable(
                QString("%1 -> %2 channels, width %3: %4").arg(in).arg(out).arg(width).arg(why)));
      }
    }
    // Wider layers go to the module unchanged.
    torch::nn::Conv2d wide(torch::nn::Conv2dOptions(8, 16, 3).padding(1));
    auto x2 = torch::randn({2, 8, 8, 8});
    QVERIFY(torch::equal(convForward(*wide, x2), wide->forward(x2)));
  }

  // The kernel each layer ran on is noted while routes are recorded (issue 68: the benchmarks
  // print them), with the layer's shape and whether gradients were recorded; nothing is noted
  // while recording is off.
  void routesNameTheKernelsTheLayersRan() {
    if (!fastConvolutions()) QSKIP("built without MKL-DNN (or FOVEAL_PLAIN_CONV is set)");
    const ThreadCount count(2);
    torch::manual_seed(5);
    torch::nn::Conv2d wide(torch::nn::Conv2dOptions(256, 256, 3).padding(1));
    torch::nn::Conv2d narrow(torch::nn::Conv2dOptions(1, 8, 3).padding(1));
    const auto x = torch::randn({3, 256, 8, 12}, torch::requires_grad());
    const auto one = torch::randn({2, 1, 16, 20});
    convForward(*wide, x);  // not recording
    QVERIFY(!routeRecording());
    QVERIFY(recordedRoutes().empty());
    std::vector<RouteUse> routes;
    {
      RouteRecording recording;
      QVERIFY(routeRecording());
      convForward(*wide, x);
      convForward(*wide, x);
      convForward(*narrow, one);
      routes = recordedRoutes();
    }
    QVERIFY(!routeRecording());
    QCOMPARE(int(routes.size()), 2);
    QCOMPARE(QString::fromStdString(routes[0].layer),
             QString("conv 3x3 256->256 s1 on 8x12, batch 3, with gradients"));
    QVERIFY2(routes[0].route.find(winogradAllowed() ? "Winograd" : "LibTorch") != std::string::npos,
             routes[0].route.c_str());
    QCOMPARE(routes[0].count, int64_t(2));
    QCOMPARE(QString::fromStdString(routes[1].layer),
             QString("conv 3x3 1->8 s1 on 16x20, batch 2, with gradients"));
    QVERIFY2(routes[1].route.find("direct") != std::string::npos, routes[1].route.c_str());
    const std::string text = formatRoutes(routes);
    QVERIFY2(
        text.find("\n  conv 3x3 1->8 s1 on 16x20, batch 2, with gradients: ") != std::string::npos,
        text.c_str());
    QVERIFY2(text.find(" (x2)\n") != std::string::npos, text.c_str());
    QCOMPARE(formatRoutes({}), std::string("  (none recorded)\n"));
    // JSON: quotes and backslashes escaped, counts as numbers.
    QCOMPARE(routesJson({{"a \"b\"", "c\\d", 3}}),
             std::string("[{\"layer\": \"a \\\"b\\\"\", \"route\": \"c\\\\d\", \"count\": 3}]"));

    // The inference plan notes its convolutions with oneDNN's implementation, at every run.
    if (!ConvPlan::available()) return;
    ResNetFeatures net(ResNetFeaturesOptions().out_channels(64));
    net->eval();
    torch::NoGradGuard ng;
    const auto image = torch::rand({2, 1, 32, 100});
    net->featureMap(image);  // the plan compiled outside the recording
    {
      RouteRecording recording;
      net->featureMap(image);
      net->featureMap(image);
      routes = recordedRoutes();
    }
    QVERIFY(!routes.empty());
    bool planned = false;
    for (const auto& r : routes) {
      // Two runs: twice each layer (layers of one shape and route share an entry).
      QVERIFY2(r.count > 0 && r.count % 2 == 0, (r.layer + ": " + r.route).c_str());
      if (r.layer.find("inference plan") != std::string::npos && r.route.rfind("oneDNN ", 0) == 0 &&
          r.route.find('(') != std::string::npos)
        planned = true;
    }
    QVERIFY2(planned, formatRoutes(routes).c_str());
  }

  // Wide 3x3 layers (256 channels and more, stride 1, padding 1; on one thread from 64 in and
  // 128 out) run Winograd's F(4x4, 3x3) (winograd.h): values, the input and weight gradients
  // (Winograd's too) and the bias gradient against the module's, for sizes that are and are not
  // whole tiles (4x4) and channel counts that are and are not whole vectors (8), with and without
  // bias, over one and two threads; 5x5 kernels and other paddings stay with the module.
  void winogradMatchesTheModule_data() {
    QTest::addColumn<int>("in");
    QTest::addColumn<int>("out");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("width");
    QTest::addColumn<bool>("bias");
    QTest::addColumn<int>("threads");
    QTest::newRow("256-256 whole tiles") << 256 << 256 << 8 << 12 << true << 1;
    QTest::newRow("258-263 partial tiles") << 258 << 263 << 5 << 11 << true << 2;
    QTest::newRow("512-256 no bias, one row") << 512 << 256 << 1 << 26 << false << 2;
    QTest::newRow("256-264 tall") << 256 << 264 << 9 << 3 << true << 1;
    QTest::newRow("64-128 one thread") << 64 << 128 << 16 << 50 << true << 1;
    QTest::newRow("70-131 one thread, partial") << 70 << 131 << 7 << 9 << false << 1;
  }
  void winogradMatchesTheModule() {
    QFETCH(int, in);
    QFETCH(int, out);
    QFETCH(int, height);
    QFETCH(int, width);
    QFETCH(bool, bias);
    QFETCH(int, threads);
    torch::manual_seed(in + out + height);
    const ThreadCount count(threads);
    torch::nn::Conv2d conv(torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(bias));
    auto x = torch::randn({3, in, height, width}, torch::requires_grad());
    auto y = convForward(*conv, x);
    auto want = conv->forward(x);
    QCOMPARE(y.sizes(), want.sizes());
    // Winograd's transforms round differently from a direct sum: relative error ~1e-6 per
    // output; a wrong tap or tile would be off by the size of the outputs.
    const double scale = want.abs().max().item<double>();
    QVERIFY2(
        (y - want).abs().max().item<double>() < 2e-5 * scale,
        qPrintable(
            QString("forward: %1 of %2").arg((y - want).abs().max().item<double>()).arg(scale)));
    // Not the module's own kernel: exactly equal would mean convForward never took Winograd.
    QVERIFY(!torch::equal(y, want));
    auto g = torch::randn_like(y);
    std::vector<torch::Tensor> params{x, conv->weight};
    if (bias) params.push_back(conv->bias);
    const QString why = gradientMismatch(y, want, g, params, 2e-5, 0);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    // The weight gradient is Winograd's too (F(3x3, 4x4)), not the module's kernel.
    QVERIFY(!torch::equal(torch::autograd::grad({convForward(*conv, x)}, {conv->weight}, {g})[0],
                          torch::autograd::grad({conv->forward(x)}, {conv->weight}, {g})[0]));
    // Without gradients (inference): the module's own convolution, to the bit.
    {
      torch::NoGradGuard ng;
      QVERIFY(torch::equal(convForward(*conv, x), conv->forward(x)));
    }
    // The input gradient alone (integrated gradients: weights frozen).
    for (auto& p : conv->parameters()) p.requires_grad_(false);
    const QString alone =
        gradientMismatch(convForward(*conv, x), conv->forward(x), g, {x}, 2e-5, 0);
    QVERIFY2(alone.isEmpty(), qPrintable(alone));
  }

  // Narrower 3x3 layers (128 channels in and out, up to Winograd's 256) on two threads keep
  // oneDNN's forward and input gradient and take Winograd's weight gradient where the weight has
  // a gradient: the forward to the bit, the input gradient within rounding, the weight gradient
  // within Winograd's error but not the module's own; a frozen weight (integrated gradients) or
  // 64 channels in leave the whole layer to the module, and so does 64 -> 64 on one thread.
  void winogradWeightGradientsOfNarrowerLayers() {
    torch::manual_seed(37);
    const ThreadCount count(2);
    for (auto [in, out, height, width, bias] :
         {std::tuple{128, 128, 16, 50, true}, std::tuple{128, 131, 7, 9, false},
          std::tuple{130, 256, 5, 6, true}}) {
      const QString what = QString("%1 -> %2 on %3x%4").arg(in).arg(out).arg(height).arg(width);
      torch::nn::Conv2d conv(torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(bias));
      auto x = torch::randn({2, in, height, width}, torch::requires_grad());
      auto y = convForward(*conv, x);
      auto want = conv->forward(x);
      QVERIFY2(torch::equal(y, want), qPrintable(what));
      auto g = torch::randn_like(y);
      std::vector<torch::Tensor> params{x, conv->weight};
      if (bias) params.push_back(conv->bias);
      const QString why = gradientMismatch(y, want, g, params, 2e-5, 0);
      QVERIFY2(why.isEmpty(), qPrintable(what + ": " + why));
      QVERIFY2(!torch::equal(torch::autograd::grad({convForward(*conv, x)}, {conv->weight}, {g})[0],
                             torch::autograd::grad({conv->forward(x)}, {conv->weight}, {g})[0]),
               qPrintable(what + ": the module's own weight gradient"));
      conv->weight.requires_grad_(false);
      QVERIFY(torch::equal(torch::autograd::grad({convForward(*conv, x)}, {x}, {g})[0],
                           torch::autograd::grad({conv->forward(x)}, {x}, {g})[0]));
    }
    torch::nn::Conv2d narrow(torch::nn::Conv2dOptions(64, 128, 3).padding(1));
    auto x = torch::randn({2, 64, 8, 10}, torch::requires_grad());
    auto g = torch::randn({2, 128, 8, 10});
    QVERIFY(torch::equal(torch::autograd::grad({convForward(*narrow, x)}, {narrow->weight}, {g})[0],
                         torch::autograd::grad({narrow->forward(x)}, {narrow->weight}, {g})[0]));
    count.set(1);
    torch::nn::Conv2d sixtyFour(torch::nn::Conv2dOptions(64, 64, 3).padding(1));
    auto y64 = convForward(*sixtyFour, x);
    QVERIFY(torch::equal(y64, sixtyFour->forward(x)));
  }

  // Unpadded 2x2 stride-1 layers of 256 channels and more (the VGGs' last layer) train as matrix
  // products over their columns: values and every gradient against the module's (sums in
  // another order: within 1e-5 of the scale), not the module's own kernel, for maps of one and
  // of two output rows, with and without bias, channels-last input, one and two threads; the
  // input gradient alone with the weight frozen; without gradients and at 128 channels the
  // module's own convolution, to the bit.
  void columnsMatchTheModule() {
    torch::manual_seed(41);
    const ThreadCount count(1);
    for (auto [in, out, height, width, bias, threads] :
         {std::tuple{256, 256, 2, 25, true, 1}, std::tuple{260, 300, 3, 7, false, 2},
          std::tuple{512, 256, 2, 5, true, 2}}) {
      count.set(threads);
      const QString what = QString("%1 -> %2 on %3x%4").arg(in).arg(out).arg(height).arg(width);
      torch::nn::Conv2d conv(torch::nn::Conv2dOptions(in, out, 2).bias(bias));
      for (bool last : {false, true}) {
        auto x = torch::randn({3, in, height, width});
        if (last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
        x.requires_grad_(true);
        auto y = convForward(*conv, x);
        auto want = conv->forward(x);
        QCOMPARE(y.sizes(), want.sizes());
        const double scale = want.abs().max().item<double>();
        QVERIFY2((y - want).abs().max().item<double>() < 1e-5 * scale, qPrintable(what));
        QVERIFY2(!torch::equal(y, want), qPrintable(what + ": the module's own convolution"));
        auto g = torch::randn_like(y);
        std::vector<torch::Tensor> params{x, conv->weight};
        if (bias) params.push_back(conv->bias);
        const QString why = gradientMismatch(y, want, g, params, 1e-5, 0);
        QVERIFY2(why.isEmpty(), qPrintable(what + ": " + why));
      }
      auto x = torch::randn({2, in, height, width}, torch::requires_grad());
      {
        torch::NoGradGuard ng;
        QVERIFY(torch::equal(convForward(*conv, x), conv->forward(x)));
      }
      for (auto& p : conv->parameters()) p.requires_grad_(false);
      auto g = torch::randn_like(conv->forward(x));
      const QString alone =
          gradientMismatch(convForward(*conv, x), conv->forward(x), g, {x}, 1e-5, 0);
      QVERIFY2(alone.isEmpty(), qPrintable(what + ", frozen: " + alone));
    }
    torch::nn::Conv2d narrow(torch::nn::Conv2dOptions(128, 128, 2));
    auto x = torch::randn({2, 128, 2, 9}, torch::requires_grad());
    QVERIFY(torch::equal(convForward(*narrow, x), narrow->forward(x)));
  }

  // A batch norm in evaluation mode folded into the convolution before it (convBatchNorm, and
  // sequentialForward for a Conv2d then BatchNorm2d): the values and the gradients of the input,
  // the convolution's weight and bias and the batch norm's weight and bias as the two modules
  // give them, on a direct (few-channel), a Winograd (wide 3x3), a 1x1 and a strided layer; in
  // training mode the modules themselves (batch statistics, running averages updated).
  void batchNormFoldsIntoTheConvolution() {
    torch::manual_seed(21);
    for (auto [in, out, kernel, stride, padding] :
         {std::tuple{4, 4, 3, 1, 1}, std::tuple{256, 256, 3, 1, 1}, std::tuple{16, 32, 1, 1, 0},
          std::tuple{8, 24, 3, 2, 1}}) {
      torch::nn::Conv2d conv(
          torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding));
      torch::nn::BatchNorm2d bn(out);
      {
        torch::NoGradGuard ng;  // running statistics and an affine map that are not the identity
        bn->running_mean.uniform_(-0.5, 0.5);
        bn->running_var.uniform_(0.5, 2.0);
        bn->weight.uniform_(0.5, 1.5);
        bn->bias.uniform_(-0.3, 0.3);
      }
      bn->eval();
      auto x = torch::randn({3, in, 9, 13}, torch::requires_grad());
      auto y = convBatchNorm(*conv, *bn, x);
      auto want = bn->forward(conv->forward(x));
      const QString what =
          QString("%1 -> %2, %3x%3, stride %4").arg(in).arg(out).arg(kernel).arg(stride);
      QCOMPARE(y.sizes(), want.sizes());
      QVERIFY2((y - want).abs().max().item<double>() < 2e-5 * want.abs().max().item<double>(),
               qPrintable(what));
      auto g = torch::randn_like(y);
      std::vector<torch::Tensor> params{x, conv->weight, conv->bias, bn->weight, bn->bias};
      const QString why = gradientMismatch(y, want, g, params, 2e-5, 1);
      QVERIFY2(why.isEmpty(), qPrintable(what + ": " + why));
      torch::nn::Sequential seq(conv, bn);
      QVERIFY((sequentialForward(*seq, x) - want).abs().max().item<double>() <
              2e-5 * want.abs().max().item<double>());
      // Training mode: batch statistics, and the running mean moves as the module's does.
      bn->train();
      auto before = bn->running_mean.clone();
      auto t = convBatchNorm(*conv, *bn, x);
      QVERIFY(!torch::equal(bn->running_mean, before));
      bn->running_mean.detach().copy_(before);
      QVERIFY(bn->running_mean.equal(before));
    }
  }

  // On two threads 128 channels, and on any 5x5 kernels and other paddings, stay with the
  // module (on one thread 128 -> 128 is Winograd's: winogradMatchesTheModule).
  void winogradLeavesOtherLayersToTheModule() {
    const ThreadCount two(2);
    for (auto [in, out, kernel, padding] :
         {std::tuple{128, 128, 3, 1}, std::tuple{256, 256, 5, 2}, std::tuple{256, 256, 3, 0}}) {
      torch::nn::Conv2d conv(torch::nn::Conv2dOptions(in, out, kernel).padding(padding));
      auto x = torch::randn({2, in, 6, 7});
      QVERIFY(torch::equal(convForward(*conv, x), conv->forward(x)));
    }
  }

  // Routes measured on the machine (issue 68, base/route_cache.h): a 128 -> 128 layer with both
  // gradients has three candidates; the first pass times them, runs the fastest, names the times
  // in its route and writes the choice to the cache file; a choice in the file is obeyed without
  // measuring (oneDNN's: the module's values and gradients to the bit; Winograd's: within its
  // rounding, not the module's), lines of other machines are kept, and a file that is not a
  // cache, or a directory in its place, is left alone while the layer still runs.
  void measuredRoutesAreKeptPerMachine() {
    if (!fastConvolutions() || !winogradAllowed())
      QSKIP("built without MKL-DNN, or FOVEAL_PLAIN_CONV or FOVEAL_WINOGRAD=0 is set");
    QTemporaryDir dir;
    const QString file = dir.filePath("cache/kernel-routes.tsv");
    const MeasuredRoutes measured(file);
    const ThreadCount count(2);
    torch::manual_seed(68);
    torch::nn::Conv2d conv(torch::nn::Conv2dOptions(128, 128, 3).padding(1));
    const auto x = torch::randn({2, 128, 6, 7}, torch::requires_grad());
    const auto g = torch::randn({2, 128, 6, 7});
    std::vector<RouteUse> routes;
    {
      RouteRecording recording;
      const QString why = gradientMismatch(convForward(*conv, x), conv->forward(x), g,
                                           {x, conv->weight, conv->bias}, 2e-5, 0);
      QVERIFY2(why.isEmpty(), qPrintable(why));
      routes = recordedRoutes();
    }
    QCOMPARE(int(routes.size()), 1);
    for (const char* id : {"measured here: ", "winograd ", "onednn ", "onednn+winograd-weights "})
      QVERIFY2(routes[0].route.find(id) != std::string::npos, routes[0].route.c_str());
    QFile f(file);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(file));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    f.close();
    QCOMPARE(lines.size(), 2);  // the comment and the choice
    const QStringList fields = lines[1].split('\t');
    QCOMPARE(fields.size(), 4);
    QVERIFY2(fields[0].contains("LibTorch") && fields[0].contains("has "), qPrintable(fields[0]));
    QCOMPARE(fields[1], QString("conv 3x3 128->128 on 6x8, batch 2, 2 threads, input gradient, "
                                "weight gradient, bias"));
    QVERIFY2(QStringList({"winograd", "onednn", "onednn+winograd-weights"}).contains(fields[2]),
             qPrintable(fields[2]));
    const auto rewrite = [&](const QString& route) {
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(QString("other machine\t%1\twinograd\tx\n%2\t%1\t%3\tset by the test\n")
                  .arg(fields[1], fields[0], route)
                  .toUtf8());
      f.close();
      setRouteCacheFile(file.toStdString());  // forget, read again
    };
    const auto grads = [&](const torch::Tensor& y) {
      return torch::autograd::grad({y}, {x, conv->weight, conv->bias}, {g});
    };
    rewrite("onednn");
    {
      RouteRecording recording;
      const auto got = grads(convForward(*conv, x)), want = grads(conv->forward(x));
      for (int i = 0; i < 3; ++i) QVERIFY(torch::equal(got[i], want[i]));
      routes = recordedRoutes();
    }
    QVERIFY2(routes[0].route.find("set by the test") != std::string::npos, routes[0].route.c_str());
    rewrite("winograd");
    QVERIFY(!torch::equal(convForward(*conv, x), conv->forward(x)));
    // Another shape is measured and added; the other machine's line stays.
    const auto x3 = torch::randn({3, 128, 5, 9}, torch::requires_grad());
    convForward(*conv, x3);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    f.close();
    QVERIFY2(text.contains("other machine\t") && text.contains("set by the test") &&
                 text.contains("on 5x16, batch 4, 2 threads"),
             qPrintable(text));
    // Not a cache: a line of another form. Left as it is; the layer still runs, its route
    // measured and kept in memory.
    const QByteArray foreign = "not a route cache\n";
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(foreign);
    f.close();
    setRouteCacheFile(file.toStdString());
    const QString why = gradientMismatch(convForward(*conv, x3), conv->forward(x3),
                                         torch::randn({3, 128, 5, 9}), {x3, conv->weight}, 2e-5, 0);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), foreign);
    f.close();
    // A directory where the file should be: measured, kept in memory, nothing written.
    setRouteCacheFile(dir.path().toStdString());
    QVERIFY(convForward(*conv, x).defined());
    QVERIFY(QFileInfo(dir.path()).isDir());
  }

  // Explanations want the input's gradient alone (base/gradient_scope.h): inside the scope a
  // layer whose weight requires grad runs on constants (no path to the weight, nothing saved for
  // it), takes the route of an input-only layer (a 128 -> 128 layer on two threads: oneDNN's,
  // not oneDNN's with Winograd's weight gradient) and measures its candidates without a weight
  // gradient; the input's gradient is the module's; the scope nests, ends, and is the calling
  // thread's alone.
  void explanationsTreatParametersAsConstants() {
    if (!fastConvolutions() || !winogradAllowed())
      QSKIP("built without MKL-DNN, or FOVEAL_PLAIN_CONV or FOVEAL_WINOGRAD=0 is set");
    const ThreadCount two(2);
    torch::manual_seed(65);
    torch::nn::Conv2d conv(torch::nn::Conv2dOptions(128, 128, 3).padding(1));
    const auto x = torch::randn({2, 128, 6, 7}, torch::requires_grad());
    const auto g = torch::randn({2, 128, 6, 7});
    const auto routeOf = [&](const torch::Tensor& input) {
      RouteRecording recording;
      convForward(*conv, input);
      const auto routes = recordedRoutes();
      return routes.size() == 1 ? routes[0].layer + ": " + routes[0].route : std::string("(none)");
    };
    const std::string training = routeOf(x);
    QVERIFY2(training.find(", with gradients: ") != std::string::npos &&
                 training.find("Winograd weight gradient") != std::string::npos,
             training.c_str());
    {
      const InputGradientsOnly inputsOnly;
      QVERIFY(inputGradientsOnly());
      QCOMPARE(QString::fromStdString(routeOf(x)),
               QString("conv 3x3 128->128 s1 on 6x7, batch 2, input gradient only: LibTorch's "
                       "convolution (oneDNN)"));
      const auto y = convForward(*conv, x);
      const auto got = torch::autograd::grad({y}, {x, conv->weight}, {g}, false, false, true);
      QVERIFY(!got[1].defined());  // the weight is not in the graph
      const auto want = torch::autograd::grad({conv->forward(x)}, {x}, {g})[0];
      QVERIFY(torch::equal(got[0], want));
      { const InputGradientsOnly nested; }
      QVERIFY(inputGradientsOnly());
      bool other = true;
      std::thread([&] { other = inputGradientsOnly(); }).join();
      QVERIFY(!other);
      // Measured routes: the key and the candidates of an input gradient alone.
      QTemporaryDir dir;
      const MeasuredRoutes tuned(dir.filePath("kernel-routes.tsv"));
      const std::string measured = routeOf(x);
      QVERIFY2(measured.find("measured here: ") != std::string::npos &&
                   measured.find("onednn+winograd-weights") == std::string::npos,
               measured.c_str());
      QFile f(dir.filePath("kernel-routes.tsv"));
      QVERIFY(f.open(QIODevice::ReadOnly));
      const QString text = QString::fromUtf8(f.readAll());
      QVERIFY2(text.contains("\tconv 3x3 128->128 on 6x8, batch 2, 2 threads, input gradient, "
                             "bias\t"),
               qPrintable(text));
      const QString why =
          gradientMismatch(convForward(*conv, x), conv->forward(x), g, {x}, 2e-5, 0);
      QVERIFY2(why.isEmpty(), qPrintable(why));
    }
    QVERIFY(!inputGradientsOnly());
    QCOMPARE(routeOf(x), training);
    const auto w = torch::autograd::grad({convForward(*conv, x)}, {conv->weight}, {g})[0];
    QVERIFY(w.defined() && w.abs().sum().item<double>() > 0);
  }

  // The first layer's convolution, ReLU and 2x2 pooling fused (sequentialForward) against the
  // three modules: values and the gradients of the input, weights and bias, odd sizes, windows
  // that are all negative (no gradient) and positive ties (blocks of equal pixels, weights in
  // quarters: exact sums; the first maximum takes the gradient, as max_pool2d's).
  void firstLayerFusionMatchesTheModules() {
    torch::manual_seed(11);
    // The second layer (6 -> 3 channels, as an STN localiser's 4 -> 4) runs fused on the direct
    // kernel too; the third (3 -> 12, too many channels for it) unfused, its ReLU and pool as a
    // pool then a ReLU.
    torch::nn::Sequential seq(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 3).padding(1)),
                              torch::nn::ReLU(true), torch::nn::MaxPool2d(2),
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 3, 3)),
                              torch::nn::ReLU(true), torch::nn::MaxPool2d(2),
                              torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 12, 3).padding(1)),
                              torch::nn::ReLU(true), torch::nn::MaxPool2d(2));
    {
      torch::NoGradGuard ng;
      auto* c = seq[0]->as<torch::nn::Conv2dImpl>();
      c->weight.copy_((c->weight * 8).round() / 4);
      c->bias.copy_((c->bias * 8).round() / 4);
    }
    auto blocks = torch::randn({5, 1, 5, 8})
                      .round()
                      .repeat_interleave(4, 2)
                      .repeat_interleave(4, 3);  // [5, 1, 20, 32]
    for (auto x0 : {torch::randn({5, 1, 17, 29}), blocks.narrow(2, 0, 19).narrow(3, 0, 31)}) {
      auto x = x0.clone().requires_grad_(true);
      auto want = seq->forward(x);
      const QString why = moduleMismatch(sequentialForward(*seq, x), want, x, *seq);
      QVERIFY2(why.isEmpty(), qPrintable(why));
      torch::NoGradGuard ng;
      QVERIFY((sequentialForward(*seq, x) - want).abs().max().item<double>() < 1e-5);
    }
  }

  // A batch norm between the first convolution and its ReLU (the TPS localiser's first layer):
  // in evaluation mode folded and the four run as one fused pass (the output's node is the
  // direct kernel's, not a pool's), values and the gradients of the input and of every parameter
  // (the batch norm's too) equal to the modules'; in training mode the modules' own.
  void firstLayerFusionFoldsTheBatchNorm() {
    torch::manual_seed(12);
    torch::nn::Sequential seq(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 3).padding(1)),
                              torch::nn::BatchNorm2d(6), torch::nn::ReLU(true),
                              torch::nn::MaxPool2d(2));
    auto* bn = seq[1]->as<torch::nn::BatchNorm2dImpl>();
    {
      torch::NoGradGuard ng;
      bn->running_mean.normal_(0, 0.3);
      bn->running_var.uniform_(0.5, 2);
      bn->weight.uniform_(0.5, 1.5);
      bn->bias.uniform_(-0.3, 0.3);
    }
    seq->eval();
    auto x = torch::randn({4, 1, 15, 22}).requires_grad_(true);
    auto got = sequentialForward(*seq, x);
    QVERIFY(got.grad_fn() && got.grad_fn()->name().find("DirectConv") != std::string::npos);
    const QString why = moduleMismatch(got, seq->forward(x), x, *seq);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    seq->train();
    auto trained = sequentialForward(*seq, x);
    QVERIFY(trained.grad_fn()->name().find("DirectConv") == std::string::npos);
  }

  // Conv -> ReLU -> 2x2 pool as one direct pass (a sharp model's localiser and glimpse layers,
  // whose pooling runs eight windows at a time) against the modules: pooled widths of whole
  // blocks of eight, with a shorter last block and below eight; odd heights and widths (the pool
  // drops a row and a column); inputs and integer weights on a coarse grid, so that windows hold
  // equal maxima (the first takes the gradient, as max_pool2d's) and zeros; the input gradient
  // (asked for or not), the weight's and the bias's. Over two threads, unequal chunks.
  void fusedDirectLayerMatchesTheModules() {
    torch::manual_seed(13);
    const ThreadCount two(2);
    for (auto [in, out, height, width] :
         {std::tuple{1, 8, 32, 24}, std::tuple{1, 4, 32, 82}, std::tuple{4, 4, 16, 41},
          std::tuple{1, 8, 33, 100}, std::tuple{2, 3, 7, 13}}) {
      torch::nn::Sequential seq(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1)),
                                torch::nn::ReLU(), torch::nn::MaxPool2d(2));
      auto* conv = seq[0]->as<torch::nn::Conv2dImpl>();
      {
        torch::NoGradGuard ng;
        conv->weight.copy_(torch::randint(-2, 3, conv->weight.sizes()));
        conv->bias.copy_(torch::randint(-1, 2, conv->bias.sizes()) / 2.0);
      }
      for (bool inputGradient : {true, false}) {
        auto x = (torch::randn({9, in, height, width}) * 2).round().div_(2);
        x.requires_grad_(inputGradient);
        auto got = sequentialForward(*seq, x);
        QVERIFY(got.grad_fn() && got.grad_fn()->name().find("DirectConv") != std::string::npos);
        auto want = seq->forward(x);
        QVERIFY(torch::equal(got, want));
        std::vector<torch::Tensor> params{conv->weight, conv->bias};
        if (inputGradient) params.push_back(x);
        const QString why = gradientMismatch(got, want, torch::randn_like(got), params, 1e-5, 1);
        QVERIFY2(why.isEmpty(), qPrintable(QString("%1 -> %2 on %3 x %4: %5")
                                               .arg(in)
                                               .arg(out)
                                               .arg(height)
                                               .arg(width)
                                               .arg(why)));
      }
    }
  }

  // The 2x2 pooling against max_pool2d: values and input gradients, odd sizes (the last row and
  // column dropped), ties (the first maximum in the window takes the gradient, as max_pool2d's),
  // with and without gradients recorded; rows of sixteen windows and more (eight at a time) with
  // a shorter last block.
  void quarterPoolingIsMaxPool() {
    torch::manual_seed(7);
    for (auto shape : {std::vector<int64_t>{2, 3, 8, 10}, std::vector<int64_t>{1, 2, 7, 9},
                       std::vector<int64_t>{3, 5, 9, 41}}) {
      // Rounded to a coarse grid so that windows hold equal values.
      auto x = (torch::randn(shape) * 2).round().div_(2).requires_grad_(true);
      auto got = maxPool2x2(x);
      auto want = torch::max_pool2d(x, {2, 2}, {2, 2});
      QVERIFY(torch::equal(got, want));
      auto g = torch::randn_like(got);
      auto a = torch::autograd::grad({got}, {x}, {g})[0];
      auto b = torch::autograd::grad({want}, {x}, {g})[0];
      QVERIFY(torch::equal(a, b));
      torch::NoGradGuard ng;
      QVERIFY(torch::equal(maxPool2x2(x), want));
    }
  }

  // The VGGs' height-only pool ((2, 1) windows and strides) against max_pool2d, alone and after
  // a ReLU in a Sequential (run as relu(pool(y))): values and input gradients, odd heights (the
  // last row dropped), widths below, at and past eight values, ties (the first row's value takes
  // the gradient) and NaN (it wins, as in max_pool2d), with and without gradients recorded.
  void rowPoolingIsMaxPool() {
    torch::manual_seed(8);
    for (auto shape : {std::vector<int64_t>{2, 3, 8, 25}, std::vector<int64_t>{1, 2, 7, 5},
                       std::vector<int64_t>{3, 4, 5, 16}}) {
      auto x = (torch::randn(shape) * 2).round().div_(2);
      {
        torch::NoGradGuard ng;
        x[0][0][0][1] = NAN;  // the first row's: it wins over the second's value
        x[0][1][1][2] = NAN;  // the second row's
      }
      x.requires_grad_(true);
      auto got = maxPool2d(x, {2, 1}, {2, 1}, {0, 0});
      auto want = torch::max_pool2d(x, {2, 1}, {2, 1});
      QVERIFY(torch::equal(got.isnan(), want.isnan()));
      QVERIFY(torch::equal(got.nan_to_num(7), want.nan_to_num(7)));
      auto g = torch::randn_like(got);
      QVERIFY(torch::equal(torch::autograd::grad({got}, {x}, {g})[0],
                           torch::autograd::grad({want}, {x}, {g})[0]));
      torch::nn::Sequential seq(
          torch::nn::ReLU(),
          torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions({2, 1}).stride({2, 1})));
      auto y = x.detach().nan_to_num(0).requires_grad_(true);
      auto fused = sequentialForward(*seq, y);
      auto modules = seq->forward(y);
      QVERIFY(torch::equal(fused, modules));
      QVERIFY(torch::equal(torch::autograd::grad({fused}, {y}, {g})[0],
                           torch::autograd::grad({modules}, {y}, {g})[0]));
      torch::NoGradGuard ng;
      QVERIFY(torch::equal(maxPool2d(x.nan_to_num(3), {2, 1}, {2, 1}, {0, 0}),
                           torch::max_pool2d(x.nan_to_num(3), {2, 1}, {2, 1})));
    }
  }

  // Both pools on channels-last input (training's layout between oneDNN's convolutions) against
  // max_pool2d: values, NaN, ties (the first maximum in the window's row-major order takes the
  // gradient), odd sizes, channel counts below, at and past eight; the output stays channels
  // last, and the gradient is right whatever layout it comes back in.
  void channelsLastPoolingIsMaxPool() {
    torch::manual_seed(11);
    const auto last = at::MemoryFormat::ChannelsLast;
    for (auto shape : {std::vector<int64_t>{2, 16, 8, 6}, std::vector<int64_t>{3, 13, 7, 9},
                       std::vector<int64_t>{1, 3, 5, 5}, std::vector<int64_t>{2, 8, 4, 25}}) {
      auto x = (torch::randn(shape) * 2).round().div_(2);
      {
        torch::NoGradGuard ng;
        x[0][1][0][1] = NAN;
        x[0][2][1][0] = NAN;
      }
      x = x.contiguous(last).requires_grad_(true);
      for (bool rows : {false, true}) {
        const std::vector<int64_t> window =
            rows ? std::vector<int64_t>{2, 1} : std::vector<int64_t>{2, 2};
        auto got = maxPool2d(x, window, window, {0, 0});
        auto want = torch::max_pool2d(x.contiguous(), window, window);
        QVERIFY(got.is_contiguous(last));
        QVERIFY(torch::equal(got.isnan(), want.isnan()));
        QVERIFY(torch::equal(got.nan_to_num(7), want.nan_to_num(7)));
        for (bool gradLast : {false, true}) {
          auto g = torch::randn(want.sizes());
          if (gradLast) g = g.contiguous(last);
          auto a = torch::autograd::grad({got}, {x}, {g}, /*retain_graph=*/true)[0];
          auto b = torch::autograd::grad({want}, {x}, {g}, /*retain_graph=*/true)[0];
          QVERIFY2(torch::equal(a, b), rows ? "(2, 1)" : "2x2");
        }
      }
    }
  }

  // A narrow VGG's tail in training (oneDNN's convolutions channels last, the pools and the
  // batch norm in that layout) against the modules: values, the result's layout (contiguous)
  // and the gradients of the input and every parameter. (No bias before the batch norm, as in
  // the VGGs: its gradient would be zero, rounding noise in either layout.)
  void channelsLastTrainingMatchesTheModules() {
    torch::manual_seed(12);
    namespace nn = torch::nn;
    nn::Sequential seq(
        nn::Conv2d(nn::Conv2dOptions(8, 16, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
        nn::Conv2d(nn::Conv2dOptions(16, 13, 3).padding(1).bias(false)), nn::BatchNorm2d(13),
        nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions({2, 1}).stride({2, 1})),
        nn::Conv2d(nn::Conv2dOptions(13, 16, 2)), nn::ReLU());
    seq->train();
    auto x = torch::randn({5, 8, 12, 18}, torch::requires_grad());
    auto got = sequentialForward(*seq, x);
    auto want = seq->forward(x);
    QVERIFY(got.is_contiguous());
    const QString why = moduleMismatch(got, want, x, *seq);
    QVERIFY2(why.isEmpty(), qPrintable(why));
  }

  // The sharpener's sampling grid against LibTorch's affine_grid (align_corners=false), values and
  // the gradient of theta, for general affine maps and odd sizes.
  void affineGridMatchesLibTorch() {
    torch::manual_seed(6);
    auto theta = torch::randn({4, 2, 3}, torch::requires_grad());
    auto got = affineGrid(theta, 7, 5);
    auto want = torch::nn::functional::affine_grid(theta, {4, 1, 5, 7}, /*align_corners=*/false);
    QCOMPARE(got.sizes(), want.sizes());
    QVERIFY((got - want).abs().max().item<double>() < 1e-6);
    auto g = torch::randn_like(got);
    auto a = torch::autograd::grad({got}, {theta}, {g})[0];
    auto b = torch::autograd::grad({want}, {theta}, {g})[0];
    QVERIFY((a - b).abs().max().item<double>() < 1e-4);
  }

  // The region crop's separable sampling against grid_sample through affine_grid: regions
  // inside the image, over its edges (border padding), scaled up and down, two channels; with a
  // gradient wanted it is sampleAffine itself.
  void axisAlignedSamplingMatchesGridSample() {
    torch::manual_seed(9);
    auto source = torch::randn({5, 2, 13, 31});
    auto theta = torch::zeros({5, 2, 3});
    {
      auto a = theta.accessor<float, 3>();
      const float rows[5][4] = {{0.3f, -0.5f, 1.0f, 0.0f},
                                {0.25f, 0.9f, 0.8f, 0.1f},   // over the right edge
                                {1.3f, 0.0f, 1.2f, -0.2f},   // larger than the image
                                {0.05f, -1.0f, 0.5f, 0.7f},  // over the left and bottom edges
                                {1.0f, 0.0f, 1.0f, 0.0f}};   // the whole image
      for (int b = 0; b < 5; ++b) {
        a[b][0][0] = rows[b][0];
        a[b][0][2] = rows[b][1];
        a[b][1][1] = rows[b][2];
        a[b][1][2] = rows[b][3];
      }
    }
    for (auto [w, h] : {std::pair{17, 13}, std::pair{40, 9}, std::pair{3, 20}}) {
      auto got = sampleAxisAligned(source, theta, w, h);
      auto want = gridSampleReference(source, theta, w, h);
      QCOMPARE(got.sizes(), want.sizes());
      QVERIFY2((got - want).abs().max().item<double>() < 1e-5,
               qPrintable(QString("%1x%2").arg(w).arg(h)));
    }
    // The source's gradient (an explanation's image), float and double: grid_sample's.
    for (auto type : {torch::kFloat, torch::kDouble}) {
      const auto th = theta.to(type);
      auto s = source.to(type).requires_grad_(true);
      for (auto [w, h] : {std::pair{17, 13}, std::pair{40, 9}, std::pair{3, 20}}) {
        auto out = sampleAxisAligned(s, th, w, h);
        auto want = gridSampleReference(s, th, w, h);
        QVERIFY((out - want).abs().max().item<double>() < 1e-5);
        auto up = torch::randn(want.sizes()).to(type);
        auto got = torch::autograd::grad({(out * up).sum()}, {s})[0];
        auto ref = torch::autograd::grad({(want * up).sum()}, {s})[0];
        const double err = (got - ref).abs().max().item<double>();
        QVERIFY2(
            err < (type == torch::kDouble ? 1e-11 : 1e-5) * (1 + ref.abs().max().item<double>()),
            qPrintable(QString("%1x%2 source gradient off by %3").arg(w).arg(h).arg(err)));
      }
    }
  }

  // sampleAffine's own sampler against LibTorch's affine_grid and grid_sample: rotated, sheared,
  // scaled and shifted thetas, points over every edge (clamped: no gradient), all of them past
  // the last row and column; one to three channels, float and double; values and the gradients
  // of the source and of theta, and each of them alone. (No point falls on a whole pixel
  // coordinate: there bilinear sampling has a kink, and theta's gradient is the one-sided slope
  // that the last bit of the coordinate picks.)
  void affineSamplingMatchesGridSample_data() {
    QTest::addColumn<bool>("isDouble");
    QTest::addColumn<int>("channels");
    QTest::newRow("float, 1 channel") << false << 1;
    QTest::newRow("float, 2 channels") << false << 2;
    QTest::newRow("double, 1 channel") << true << 1;
    QTest::newRow("double, 3 channels") << true << 3;
  }
  void affineSamplingMatchesGridSample() {
    QFETCH(bool, isDouble);
    QFETCH(int, channels);
    const auto type = isDouble ? torch::kDouble : torch::kFloat;
    torch::manual_seed(10);
    auto source = torch::randn({6, channels, 13, 31}).to(type);
    auto theta =
        torch::tensor({0.3,  0.1,  -0.5,  -0.05, 0.97, 0.0,    // sheared
                       0.25, 0.0,  0.9,   0.0,   0.8,  0.1,    // over the right edge
                       1.3,  0.2,  0.0,   -0.3,  1.2,  -0.2,   // over every edge
                       0.7,  -0.6, 0.1,   0.6,   0.7,  0.0,    // rotated
                       1.01, 0.0,  0.003, 0.0,   0.99, 0.002,  // nearly the identity
                       0.0,  0.0,  1.0,   0.0,   0.0,  1.0})   // past the last row and column
            .view({6, 2, 3})
            .to(type);
    const double tol = isDouble ? 1e-12 : 2e-5;
    for (auto [w, h] : {std::pair{17, 13}, std::pair{40, 9}, std::pair{3, 20}}) {
      auto got = sampleAffine(source, theta, w, h);
      auto want = gridSampleReference(source, theta, w, h);
      QCOMPARE(got.sizes(), want.sizes());
      const double err = (got - want).abs().max().item<double>();
      QVERIFY2(err < tol, qPrintable(QString("%1x%2: off by %3").arg(w).arg(h).arg(err)));
      auto s = source.clone().requires_grad_(true);
      auto t = theta.clone().requires_grad_(true);
      auto g = torch::randn({6, channels, h, w}).to(type);
      const QString why =
          gradientMismatch(sampleAffine(s, t, w, h), gridSampleReference(s, t, w, h), g, {s, t},
                           isDouble ? 1e-10 : 1e-5, 1);
      QVERIFY2(why.isEmpty(), qPrintable(QString("%1x%2: %3").arg(w).arg(h).arg(why)));
      for (const auto& only : {s, t}) {
        auto a = torch::autograd::grad({(sampleAffine(s, t, w, h) * g).sum()}, {only})[0];
        auto b = torch::autograd::grad({(gridSampleReference(s, t, w, h) * g).sum()}, {only})[0];
        QVERIFY((a - b).abs().max().item<double>() < 1e-4 * (1 + b.abs().max().item<double>()));
      }
    }
  }

  // Both samplers reading the images of given rows in place (a training batch's rows whose label
  // goes on, the beam's pairs) against the same samplers on source.index_select(0, rows): rows
  // out of order and repeated, the values and theta's gradient equal; a source that records a
  // gradient goes through the copy, and its gradient is the copy's.
  void samplersReadRowsInPlace() {
    torch::manual_seed(14);
    auto source = torch::randn({5, 1, 13, 31});
    const auto rows = torch::tensor({3, 0, 3, 4, 1, 3}, torch::kLong);
    auto theta = (torch::tensor({0.3f, 0.1f, -0.5f, -0.05f, 0.97f, 0.0f}).view({1, 2, 3}) +
                  torch::randn({6, 2, 3}) * 0.1f)
                     .requires_grad_(true);
    for (auto [w, h] : {std::pair{17, 13}, std::pair{3, 20}}) {
      auto got = sampleAffine(source, theta, w, h, rows);
      auto want = sampleAffine(source.index_select(0, rows), theta, w, h);
      QVERIFY(torch::equal(got, want));
      auto g = torch::randn_like(want);
      QVERIFY(torch::equal(torch::autograd::grad({got}, {theta}, {g})[0],
                           torch::autograd::grad({want}, {theta}, {g})[0]));
      auto s = source.clone().requires_grad_(true);
      auto a = sampleAffine(s, theta, w, h, rows);
      auto b = sampleAffine(s.index_select(0, rows), theta, w, h);
      QVERIFY(torch::equal(a, b));
      QVERIFY(torch::equal(torch::autograd::grad({a}, {s}, {g})[0],
                           torch::autograd::grad({b}, {s}, {g})[0]));
    }
    // The regions' crop: constant, axis-aligned thetas.
    auto regions = torch::zeros({6, 2, 3});
    {
      auto r = regions.accessor<float, 3>();
      for (int i = 0; i < 6; ++i) {
        r[i][0][0] = 0.2f + 0.1f * i;
        r[i][0][2] = -0.6f + 0.25f * i;
        r[i][1][1] = 1.0f;
      }
    }
    torch::NoGradGuard ng;
    QVERIFY(torch::equal(sampleAxisAligned(source, regions, 11, 13, rows),
                         sampleAxisAligned(source.index_select(0, rows), regions, 11, 13)));
  }

  // The transformer stages' oneDNN products (inference) against LibTorch's: a Linear with its
  // bias, with GELU fused, without a bias; attention's per-head products over the strided views
  // the stage makes (q k^T / sqrt(hd) and a v), an expanded view; nothing while gradients are
  // recorded (the attribution path stays on LibTorch's autograd).
  void onednnProductsMatchLibTorch() {
    if (!ConvPlan::available()) QSKIP("built without oneDNN");
    torch::manual_seed(8);
    auto x = torch::randn({3, 17, 48});
    auto w = torch::randn({40, 48}) * 0.2, b = torch::randn({40});
    auto close = [](const torch::Tensor& got, const torch::Tensor& want) {
      QCOMPARE(got.sizes(), want.sizes());
      const double err = (got - want).abs().max().item<double>();
      QVERIFY2(err < 1e-5 * std::max(1.0, want.abs().max().item<double>()),
               qPrintable(QString("max error %1").arg(err)));
    };
    {
      torch::NoGradGuard ng;
      const auto plain = torch::nn::functional::linear(x, w, b);
      auto y = dnnl_ops::linear(x, w, b);
      QVERIFY(y.has_value());
      close(*y, plain);
      y = dnnl_ops::linear(x, w, b, true);
      QVERIFY(y.has_value());
      close(*y, torch::gelu(plain));
      y = dnnl_ops::linear(x, w, torch::Tensor());
      QVERIFY(y.has_value());
      close(*y, torch::nn::functional::linear(x, w));
      // Attention's views: [B, N, 3, H, hd] permuted to [3, B, H, N, hd].
      auto t = torch::randn({2, 9, 3, 4, 8}).permute({2, 0, 3, 1, 4});
      const double scale = 1.0 / std::sqrt(8.0);
      auto s = dnnl_ops::matmul(t[0], t[1].transpose(-2, -1), scale);
      QVERIFY(s.has_value());
      close(*s, torch::matmul(t[0] * scale, t[1].transpose(-2, -1)));
      auto a = s->softmax(-1);
      auto o = dnnl_ops::matmul(a, t[2]);
      QVERIFY(o.has_value());
      close(*o, torch::matmul(a, t[2]));
      auto e = torch::randn({1, 4, 8, 5}).expand({2, 4, 8, 5});
      auto l = torch::randn({2, 4, 9, 8});
      auto p = dnnl_ops::matmul(l, e);
      QVERIFY(p.has_value());
      close(*p, torch::matmul(l, e));
      QVERIFY(!dnnl_ops::matmul(torch::randn({2, 9, 8}), torch::randn({2, 7, 5})).has_value());
      // Into a given tensor (Winograd's 36 products): a transposed view as the first operand, as
      // the weight gradient's; mismatched shapes and expanded views refused, the output untouched.
      auto u = torch::randn({36, 11, 16}), v = torch::randn({36, 11, 24});
      auto into = torch::full({36, 16, 24}, 7.0f);
      QVERIFY(dnnl_ops::matmulInto(u.transpose(1, 2), v, into));
      close(into, torch::bmm(u.transpose(1, 2), v));
      auto kept = torch::full({36, 16, 24}, 7.0f);
      QVERIFY(!dnnl_ops::matmulInto(u, v, kept));
      QVERIFY(!dnnl_ops::matmulInto(torch::randn({1, 16, 11}).expand({36, 16, 11}), v, kept));
      QVERIFY(torch::equal(kept, torch::full({36, 16, 24}, 7.0f)));
    }
    auto wg = w.clone().requires_grad_(true);
    QVERIFY(!dnnl_ops::linear(x, wg, b).has_value());
    QVERIFY(!dnnl_ops::matmul(x.requires_grad_(true), torch::randn({3, 48, 5})).has_value());
  }

  // The small-batch LSTM (no BLAS, polynomial exp) against LibTorch's module.
  void lstmInferenceMatchesTheModule_data() {
    QTest::addColumn<int>("batch");
    QTest::addColumn<bool>("bidirectional");
    QTest::newRow("batch 1, two directions") << 1 << true;
    QTest::newRow("batch 3, two directions") << 3 << true;
    QTest::newRow("batch 2, one direction") << 2 << false;
  }
  void lstmInferenceMatchesTheModule() {
    QFETCH(int, batch);
    QFETCH(bool, bidirectional);
    torch::manual_seed(5);
    torch::nn::LSTM lstm(torch::nn::LSTMOptions(12, 20)
                             .num_layers(2)
                             .bidirectional(bidirectional)
                             .batch_first(true));
    auto x = torch::randn({batch, 7, 12}) * 2;
    auto expected = std::get<0>(lstm->forward(x)).detach();  // autograd on: the module
    torch::NoGradGuard ng;
    auto got = lstmInference(*lstm, x);
    QVERIFY(got.has_value());
    QCOMPARE(got->sizes(), expected.sizes());
    const double err = (*got - expected).abs().max().item<double>();
    QVERIFY2(err < 2e-6, qPrintable(QString("max error %1").arg(err)));
    QVERIFY(!lstmInference(*lstm, torch::randn({5, 7, 12})).has_value());  // batch over 4
  }
  void lstmGateFunctionsAreAccurate() {
    double worstS = 0, worstT = 0;
    for (float v = -100.0f; v <= 100.0f; v += 0.01f) {
      worstS =
          std::max(worstS, std::abs(double(lstmSigmoid(v)) - 1.0 / (1.0 + std::exp(-double(v)))));
      worstT = std::max(worstT, std::abs(double(lstmTanh(v)) - std::tanh(double(v))));
    }
    QVERIFY2(worstS < 2e-7, qPrintable(QString::number(worstS)));
    QVERIFY2(worstT < 5e-7, qPrintable(QString::number(worstT)));
  }

  // The fused LSTM with gradients against LibTorch's module: outputs, and the gradients of the
  // input and of every weight and bias, float and double, one and two layers and directions,
  // a single step; the input gradient alone (no weight gradient asked for); without gradients
  // (no-grad and inference mode) the module's output, and nothing recorded.
  void lstmFusedMatchesTheModule_data() {
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("steps");
    QTest::addColumn<int>("layers");
    QTest::addColumn<bool>("bidirectional");
    QTest::addColumn<bool>("isDouble");
    QTest::addColumn<int>("hidden");
    QTest::newRow("2 layers, two directions") << 6 << 9 << 2 << true << false << 13;
    QTest::newRow("1 layer, one direction") << 3 << 5 << 1 << false << false << 13;
    QTest::newRow("2 layers, one direction, double") << 4 << 7 << 2 << false << true << 13;
    QTest::newRow("1 layer, two directions, double") << 2 << 6 << 1 << true << true << 13;
    QTest::newRow("one step") << 5 << 1 << 2 << true << false << 13;
    // A wider layer (the gate loops' rows longer than a vector's multiple of 13).
    QTest::newRow("hidden 80, two directions") << 4 << 6 << 2 << true << false << 80;
    QTest::newRow("hidden 80, double") << 3 << 5 << 1 << false << true << 80;
  }
  void lstmFusedMatchesTheModule() {
    QFETCH(int, batch);
    QFETCH(int, steps);
    QFETCH(int, layers);
    QFETCH(bool, bidirectional);
    QFETCH(bool, isDouble);
    QFETCH(int, hidden);
    torch::manual_seed(8);
    torch::nn::LSTM lstm(torch::nn::LSTMOptions(10, hidden)
                             .num_layers(layers)
                             .bidirectional(bidirectional)
                             .batch_first(true));
    const auto type = isDouble ? torch::kDouble : torch::kFloat;
    lstm->to(type);
    auto x = (torch::randn({batch, steps, 10}) * 2).to(type).requires_grad_(true);
    auto got = lstmFused(*lstm, x);
    QVERIFY(got.has_value());
    auto want = std::get<0>(lstm->forward(x));
    QCOMPARE(got->sizes(), want.sizes());
    const double tol = isDouble ? 1e-12 : 2e-6;
    const double err = (*got - want).abs().max().item<double>();
    QVERIFY2(err < tol, qPrintable(QString("output off by %1").arg(err)));
    auto g = torch::randn(want.sizes()).to(type);
    std::vector<torch::Tensor> params{x};
    for (const auto& p : lstm->parameters()) params.push_back(p);
    const QString why = gradientMismatch(*got, want, g, params, isDouble ? 1e-11 : 1e-5, 1);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    // The input's gradient alone, as an explanation asks for it.
    auto onlyX = torch::autograd::grad({(*lstmFused(*lstm, x) * g).sum()}, {x})[0];
    auto refX = torch::autograd::grad({(std::get<0>(lstm->forward(x)) * g).sum()}, {x})[0];
    QVERIFY((onlyX - refX).abs().max().item<double>() < 10 * tol + 1e-6);
    {
      torch::NoGradGuard ng;
      auto plain = lstmFused(*lstm, x);
      QVERIFY(plain.has_value());
      QVERIFY(!plain->requires_grad());
      QVERIFY2((*plain - want).abs().max().item<double>() < tol, "no-grad output");
    }
    c10::InferenceMode inference;
    auto inferred = lstmFused(*lstm, x.detach());
    QVERIFY(inferred.has_value());
    QVERIFY2((*inferred - want).abs().max().item<double>() < tol, "inference-mode output");
  }

  void attentionScoresMatchTheModules_data() {
    QTest::addColumn<bool>("isDouble");
    QTest::addColumn<int>("depth");
    QTest::addColumn<int>("threads");
    QTest::newRow("float, depth 5, one thread") << false << 5 << 1;
    QTest::newRow("float, depth 32, two threads") << false << 32 << 2;
    QTest::newRow("float, depth 13, two threads") << false << 13 << 2;
    QTest::newRow("double, depth 13, two threads") << true << 13 << 2;
  }

  // The fused scores against w^T tanh(W k + U q) written with LibTorch's operators on the same
  // module's weights: values, and the gradients of the keys, the query and every parameter (the
  // key projection's too, through `projected`); the keys' alone; without gradients.
  void attentionScoresMatchTheModules() {
    QFETCH(bool, isDouble);
    QFETCH(int, depth);
    QFETCH(int, threads);
    if (plainAttentionScores()) QSKIP("FOVEAL_PLAIN_ATTENTION is set");
    const ThreadCount count(threads);
    torch::manual_seed(12);
    const auto type = isDouble ? torch::kDouble : torch::kFloat;
    AdditiveAttention att(AdditiveAttentionOptions(6, 7, depth));
    att->to(type);
    const auto params = att->named_parameters();
    const auto &wk = params["key.weight"], &wq = params["query.weight"], &bq = params["query.bias"],
               &ws = params["score.weight"];
    auto keys = (torch::randn({5, 11, 6}) * 2).to(type).requires_grad_(true);
    auto query = (torch::randn({5, 7}) * 2).to(type).requires_grad_(true);
    auto got = att->scores(att->project(keys), query);
    auto reference = [&] {
      return torch::linear(
                 torch::tanh(torch::linear(keys, wk) + torch::linear(query, wq, bq).unsqueeze(1)),
                 ws)
          .squeeze(-1);
    };
    auto want = reference();
    QCOMPARE(got.sizes(), want.sizes());
    const double tol = isDouble ? 1e-12 : 2e-6;
    const double err = (got - want).abs().max().item<double>();
    QVERIFY2(err < tol * (1 + want.abs().max().item<double>()),
             qPrintable(QString("scores off by %1").arg(err)));
    auto g = torch::randn(want.sizes()).to(type);
    std::vector<torch::Tensor> inputs{keys, query};
    for (const auto& p : att->parameters()) inputs.push_back(p);
    const QString why = gradientMismatch(got, want, g, inputs, isDouble ? 1e-11 : 1e-5, 1);
    QVERIFY2(why.isEmpty(), qPrintable(why));
    auto onlyKeys =
        torch::autograd::grad({(att->scores(att->project(keys), query) * g).sum()}, {keys})[0];
    auto refKeys = torch::autograd::grad({(reference() * g).sum()}, {keys})[0];
    QVERIFY((onlyKeys - refKeys).abs().max().item<double>() <
            (isDouble ? 1e-11 : 1e-5) * (1 + refKeys.abs().max().item<double>()));
    {
      c10::InferenceMode inference;
      auto inferred = att->scores(att->project(keys.detach()), query.detach());
      QVERIFY(!inferred.requires_grad());
      QVERIFY2((inferred - want).abs().max().item<double>() <
                   tol * (1 + want.abs().max().item<double>()),
               "inference-mode scores");
    }
  }

  void convPlanFusesBatchNormReluAndResidual() {
    if (!ConvPlan::available()) QSKIP("built without oneDNN (or FOVEAL_PLAIN_CONV is set)");
    torch::manual_seed(4);
    torch::nn::Conv2d a(torch::nn::Conv2dOptions(16, 32, 3).padding(1).bias(false));
    torch::nn::Conv2d b(torch::nn::Conv2dOptions(32, 32, 3).padding(1).bias(true));
    torch::nn::Conv2d skip(torch::nn::Conv2dOptions(16, 32, 1).bias(false));
    torch::nn::BatchNorm2d bn(32);
    {
      torch::NoGradGuard g;
      bn->running_mean.normal_(0, 0.5);
      bn->running_var.uniform_(0.5, 2);
      bn->weight.uniform_(0.5, 1.5);
      bn->bias.uniform_(-0.5, 0.5);
    }
    bn->eval();
    auto x = torch::randn({5, 16, 9, 13});
    auto expected = torch::relu(b(torch::relu(bn(a(x)))) + skip(x));
    expected = torch::max_pool2d(expected, {2, 2}, {2, 1}, {0, 1}).detach();
    ConvPlan plan;
    const int y = plan.conv(0, *a, bn.get(), {1, 1}, true);
    const int r = plan.conv(0, *skip, nullptr, {0, 0}, false);
    const int z = plan.conv(y, *b, nullptr, {1, 1}, true, r);
    plan.maxPool(z, {2, 2}, {2, 1}, {0, 1});
    torch::NoGradGuard ng;
    auto got = plan.run(x);
    QVERIFY(got.has_value());
    QCOMPARE(got->sizes(), expected.sizes());
    QVERIFY(torch::allclose(*got, expected, 1e-4, 1e-4));
    QVERIFY(!plan.run(torch::randn({2, 16, 9, 13}, torch::kDouble)).has_value());  // not float
  }

  // Foveal's Winograd on 8-channel blocks (winogradBlocked3x3) against conv2d: channels that
  // leave the last block partly padding (130 in, 133 out), sizes that are not multiples of the
  // 4x4 tile, the bias, a residual sum and the ReLU; the padding channels come out zero.
  void winogradOnBlocksMatchesConv2d() {
    torch::manual_seed(68);
    const int64_t n = 3, c = 130, o = 133, h = 7, w = 11, cb = (c + 7) / 8, ob = (o + 7) / 8;
    const auto x = torch::randn({n, c, h, w}), weight = torch::randn({o, c, 3, 3}) * 0.05;
    const auto bias = torch::randn({o}), residual = torch::randn({n, o, h, w});
    // NCHW -> [N, C / 8, H, W, 8], zero beyond the channels, and back.
    const auto toBlocks = [](const torch::Tensor& t, int64_t blocks) {
      auto padded = torch::zeros({t.size(0), blocks * 8, t.size(2), t.size(3)});
      padded.narrow(1, 0, t.size(1)).copy_(t);
      return padded.view({t.size(0), blocks, 8, t.size(2), t.size(3)})
          .permute({0, 1, 3, 4, 2})
          .contiguous();
    };
    const auto fromBlocks = [](const torch::Tensor& t) {  // every channel, padding included
      return t.permute({0, 1, 4, 2, 3}).reshape({t.size(0), t.size(1) * 8, t.size(2), t.size(3)});
    };
    const auto filters = winogradFilters(weight);
    QCOMPARE(filters.u.sizes(), (torch::IntArrayRef{36, cb * 8, ob * 8}));
    auto biasPadded = torch::zeros({ob * 8});
    biasPadded.narrow(0, 0, o).copy_(bias);
    const auto xb = toBlocks(x, cb);
    for (const bool accumulate : {false, true})
      for (const bool relu : {false, true}) {
        auto out = accumulate ? toBlocks(residual, ob) : torch::full({n, ob, h, w, 8}, 5.0f);
        winogradBlocked3x3(xb.data_ptr<float>(), n, h, w, filters, biasPadded.data_ptr<float>(),
                           out.data_ptr<float>(), accumulate, relu);
        auto want =
            torch::conv2d(x, weight, bias, 1, 1) + (accumulate ? residual : torch::zeros({}));
        if (relu) want = torch::relu(want);
        const auto got = fromBlocks(out);
        const double err = (got.narrow(1, 0, o) - want).abs().max().item<double>();
        QVERIFY2(err < 1e-4 * (1 + want.abs().max().item<double>()),
                 qPrintable(QString("accumulate %1, relu %2: max error %3")
                                .arg(accumulate)
                                .arg(relu)
                                .arg(err)));
        QVERIFY(torch::equal(got.narrow(1, o, ob * 8 - o), torch::zeros({n, ob * 8 - o, h, w})));
      }
  }

  // A plan of wide layers at batch 16 (enough tiles): each 3x3 layer of 128 channels and more
  // runs on a Winograd (oneDNN's where it offers one, AVX-512; Foveal's on the blocks
  // otherwise), a residual block's sum and ReLU fused, within Winograd's rounding of the modules;
  // at batch 1 (too few tiles) Foveal's is not taken.
  void convPlanRunsWideLayersOnWinograd() {
    if (!ConvPlan::available() || !winogradAllowed())
      QSKIP("built without oneDNN, or FOVEAL_PLAIN_CONV or FOVEAL_WINOGRAD=0 is set");
    const ThreadCount two(2);
    torch::manual_seed(5);
    torch::nn::Conv2d a(torch::nn::Conv2dOptions(64, 128, 3).padding(1).bias(false));
    torch::nn::Conv2d b(torch::nn::Conv2dOptions(128, 136, 3).padding(1));
    torch::nn::Conv2d d(torch::nn::Conv2dOptions(136, 136, 3).padding(1).bias(false));
    torch::nn::Conv2d e(torch::nn::Conv2dOptions(136, 136, 3).padding(1));
    torch::nn::BatchNorm2d bn(136);
    {
      torch::NoGradGuard g;
      for (auto* conv : {&a, &b, &d, &e}) (*conv)->weight.mul_(0.6);
      bn->running_mean.normal_(0, 0.5);
      bn->running_var.uniform_(0.5, 2);
      bn->weight.uniform_(0.5, 1.5);
      bn->bias.uniform_(-0.5, 0.5);
    }
    bn->eval();
    ConvPlan plan;
    const int y = plan.conv(0, *a, nullptr, {1, 1}, true);
    const int z = plan.conv(y, *b, nullptr, {1, 1}, true);
    const int u = plan.conv(z, *d, bn.get(), {1, 1}, true);
    plan.conv(u, *e, nullptr, {1, 1}, true, z);  // the block's input added
    torch::NoGradGuard ng;
    for (const int64_t batch : {16, 1}) {
      const auto x = torch::randn({batch, 64, 8, 25});
      const auto first = torch::relu(b(torch::relu(a(x))));
      const auto want = torch::relu(e(torch::relu(bn(d(first)))) + first);
      std::vector<RouteUse> routes;
      std::optional<torch::Tensor> got;
      {
        RouteRecording recording;
        got = plan.run(x);
        routes = recordedRoutes();
      }
      QVERIFY(got.has_value());
      const double err = (*got - want).abs().max().item<double>();
      QVERIFY2(err < 1e-4 * (1 + want.abs().max().item<double>()),
               qPrintable(QString("batch %1: max error %2").arg(batch).arg(err)));
      int winograd = 0, foveal = 0;
      for (const auto& r : routes) {
        if (r.route.find("Winograd") != std::string::npos) ++winograd;
        if (r.route.find("Foveal's Winograd") != std::string::npos) {
          ++foveal;
          QVERIFY2(r.layer.find("conv 3x3 64->") == std::string::npos, r.layer.c_str());
        }
      }
      if (batch == 16) QVERIFY2(winograd >= 2, qPrintable(QString::number(winograd)));
      if (batch == 1) QCOMPARE(foveal, 0);
      const auto residual = std::find_if(routes.begin(), routes.end(), [](const RouteUse& r) {
        return r.route.find("residual sum fused") != std::string::npos;
      });
      QVERIFY(residual != routes.end() && residual->layer.find("136->136") != std::string::npos);
      const bool onednnWinograd = std::any_of(routes.begin(), routes.end(), [](const RouteUse& r) {
        return r.route.find("oneDNN Winograd") != std::string::npos;
      });
      if (batch == 16 && !onednnWinograd)  // AVX2: oneDNN has no Winograd
        QVERIFY2(residual->route.find("Foveal's Winograd") != std::string::npos,
                 residual->route.c_str());
    }
  }

  // The plan's own max pools (unpadded windows over the blocked activations its convolutions
  // write) against max_pool2d: one channel block and several, channels that leave a block
  // partly padding, windows other than 2x2 and strides other than the window, sizes that floor;
  // a padded pool (oneDNN's) beside them.
  void convPlanPoolsMatchMaxPool_data() {
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("kernelH");
    QTest::addColumn<int>("kernelW");
    QTest::addColumn<int>("strideH");
    QTest::addColumn<int>("strideW");
    QTest::addColumn<int>("pad");
    QTest::newRow("8 channels, 2x2") << 8 << 2 << 2 << 2 << 2 << 0;
    QTest::newRow("12 channels, 2x2") << 12 << 2 << 2 << 2 << 2 << 0;
    QTest::newRow("32 channels, 2x1 stride (2, 1)") << 32 << 2 << 1 << 2 << 1 << 0;
    QTest::newRow("4 channels, 3x3 stride 2") << 4 << 3 << 3 << 2 << 2 << 0;
    QTest::newRow("16 channels, 2x2 stride 1") << 16 << 2 << 2 << 1 << 1 << 0;
    QTest::newRow("8 channels, padded (oneDNN)") << 8 << 2 << 2 << 2 << 1 << 1;
  }
  void convPlanPoolsMatchMaxPool() {
    if (!ConvPlan::available()) QSKIP("built without oneDNN (or FOVEAL_PLAIN_CONV is set)");
    QFETCH(int, channels);
    QFETCH(int, kernelH);
    QFETCH(int, kernelW);
    QFETCH(int, strideH);
    QFETCH(int, strideW);
    QFETCH(int, pad);
    torch::manual_seed(6);
    torch::nn::Conv2d a(torch::nn::Conv2dOptions(3, channels, 3).padding(1));
    torch::nn::Conv2d b(torch::nn::Conv2dOptions(channels, 8, 3).padding(1));
    auto x = torch::randn({5, 3, 11, 17});
    auto pooled =
        torch::max_pool2d(torch::relu(a(x)), {kernelH, kernelW}, {strideH, strideW}, {0, pad});
    auto expected = torch::relu(b(pooled)).detach();
    ConvPlan plan;
    const int y = plan.conv(0, *a, nullptr, {1, 1}, true);
    const int z = plan.maxPool(y, {kernelH, kernelW}, {strideH, strideW}, {0, pad});
    plan.conv(z, *b, nullptr, {1, 1}, true);
    torch::NoGradGuard ng;
    for (int run = 0; run < 2; ++run) {  // the second run reuses the compiled steps
      auto got = plan.run(x);
      QVERIFY(got.has_value());
      QCOMPARE(got->sizes(), expected.sizes());
      const double err = (*got - expected).abs().max().item<double>();
      QVERIFY2(err < 1e-4, qPrintable(QString("off by %1").arg(err)));
    }
  }

  // The DTRB cell: h0 = 0, y_0 = [GO], classes [GO], [s], characters; its latency path (batch 1,
  // no autograd) equals the straightforward step.
  void dtrbCellLatencyPathMatches() {
    ModelConfig cfg = tiny(modelVariant("rare").config);
    cfg.transformation = "none";
    QCOMPARE(cfg.makeCharset().goIndex(), 0);
    QCOMPARE(cfg.makeCharset().endIndex(), 1);
    torch::manual_seed(8);
    Recognizer model(cfg);
    model->eval();
    auto image = torch::rand({1, 1, 32, 100}) * 2 - 1;
    torch::NoGradGuard ng;
    auto lean = model->forward(image, {});
    DecodeOptions straight;
    straight.recomputeKeys = true;  // turns the latency path off
    auto plain = model->forward(image, {}, straight);
    QVERIFY(torch::equal(lean.tokens, plain.tokens));
    QVERIFY(torch::allclose(lean.logProbs, plain.logProbs, 1e-5, 1e-5));
    QVERIFY(torch::allclose(lean.alpha, plain.alpha, 1e-5, 1e-5));
  }
};

QTEST_APPLESS_MAIN(TestStages)
#include "test_stages.moc"
