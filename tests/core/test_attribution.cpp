// Per-step attribution (core/trace/attribution): gradients against finite differences through
// the whole path from source pixels (resize, padding, TPS, STN), integrated gradients'
// completeness, occlusion against a hand computation, and maps that land on the source pixels a
// step can see.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <fstream>
#include <nlohmann/json.hpp>

#include "image/preprocess.h"
#include "model/charset.h"
#include "model/model_variants.h"
#include "test_models.h"
#include "trace/attribution_engine.h"
#include "trace/model_session.h"

using namespace foveal::core;
using foveal::test::tinyConfig;
using foveal::test::tinyGridConfig;

namespace {

// The model kinds attribution must handle: 1-D and 2-D attention, hard, sharp, CTC, TPS, and
// keep-ratio padding (Foveal's bilinear and DTRB's PIL bicubic).
std::vector<std::pair<std::string, ModelConfig>> kinds() {
  std::vector<std::pair<std::string, ModelConfig>> out;
  out.emplace_back("soft", tinyConfig("soft"));
  out.emplace_back("hard", tinyConfig("hard"));
  out.emplace_back("sharp-chain", tinyConfig("sharp", ContextKind::Chain));
  out.emplace_back("sharp-weighting-2stn", tinyConfig("sharp", ContextKind::Weighting, 2));
  out.emplace_back("soft-2d", tinyGridConfig("soft"));
  auto ctc = tinyConfig("soft");
  ctc.prediction = "ctc";
  out.emplace_back("ctc", ctc);
  auto tps = tinyConfig("soft");
  tps.transformation = "tps";
  out.emplace_back("tps-soft", tps);
  auto padded = tinyConfig("soft");
  padded.preprocessing.keepRatioPad = true;
  out.emplace_back("padded-soft", padded);
  auto dtrb = tinyConfig("soft");
  dtrb.cell = "dtrb";
  dtrb.preprocessing.keepRatioPad = true;
  dtrb.preprocessing.resize = "pil_bicubic";
  dtrb.preprocessing.colour = "pil_luma";
  out.emplace_back("padded-dtrb-bicubic", dtrb);
  return out;
}

GreyImage testImage(int w, int h, uint64_t seed) {
  GreyImage img;
  img.width = w;
  img.height = h;
  img.pixels.resize(static_cast<size_t>(w * h));
  uint64_t s = seed;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      // Strokes (dark bars every 9 px) with noise: enough structure for the gradients to vary.
      const int base = (x % 9 < 3) ? 40 : 200;
      img.pixels[static_cast<size_t>(y * w + x)] = static_cast<uint8_t>(base + (s >> 59));
    }
  return img;
}

// A reading for the model: attention, `steps` tokens and regions; CTC, one token per column
// group. Tokens and regions are arbitrary (teacher forcing does not care what the model reads).
Trace readingFor(const Recognizer& model, const GreyImage& image, int steps) {
  const auto& cfg = model->config;
  const Charset charset = cfg.makeCharset();
  Trace tr;
  tr.imageW = image.width;
  tr.imageH = image.height;
  tr.decoder = cfg.prediction;
  const int regions = static_cast<int>(model->geometry().regionCount());
  for (int t = 0; t < steps; ++t) {
    TraceStep st;
    st.tokenIndex = charset.specials() + (t * 3 + 1) % 10;
    st.region = (t * 5 + 2) % regions;
    if (cfg.isCtc()) st.columns = {2 + 3 * t, 3 + 3 * t};
    tr.steps.push_back(st);
  }
  if (!cfg.isCtc()) tr.steps.back().tokenIndex = charset.endIndex();
  return tr;
}

Recognizer makeModel(const ModelConfig& cfg, uint64_t seed) {
  torch::manual_seed(seed);
  Recognizer m(cfg);
  // Random attention weights are near uniform; sharpen them so steps look at different places.
  torch::NoGradGuard g;
  for (auto& p : m->named_parameters())
    if (p.key().rfind("prediction.attention.", 0) == 0) p.value().mul_(10.0);
  m->eval();
  return m;
}

Recognizer doubleCopy(const Recognizer& m) {
  auto copy = std::dynamic_pointer_cast<RecognizerImpl>(m->clone());
  Recognizer d(copy);
  d->to(torch::kDouble);
  d->eval();
  return d;
}

double objective(Recognizer& m, const ForcedReading& r, const torch::Tensor& src,
                 const StepTarget& t) {
  torch::NoGradGuard ng;
  return stepObjectives(forcedLogProbs(m, r, src), r, {t}).item<double>();
}

}  // namespace

class TestAttribution : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(2); }

  void kinds_data() {
    QTest::addColumn<int>("index");
    const auto all = kinds();
    for (size_t i = 0; i < all.size(); ++i) QTest::newRow(all[i].first.c_str()) << int(i);
  }

  // The gradient of F_t with respect to the source pixels (what saliency, gradient x input and
  // integrated gradients are made of) against central differences, in double precision: at the
  // pixels of largest gradient and along the last column (with keep-ratio padding, the column
  // the padding repeats: its gradient must collect the padding's).
  void gradientsMatchFiniteDifferences_data() { kinds_data(); }
  void gradientsMatchFiniteDifferences() {
    QFETCH(int, index);
    const ModelConfig cfg = kinds()[static_cast<size_t>(index)].second;
    auto mf = makeModel(cfg, 11 + index);
    auto md = doubleCopy(mf);
    const GreyImage img = testImage(60, 32, 5);
    const Trace tr = readingFor(md, img, 4);
    const auto reading = forcedReading(md, tr);
    const auto targets = explainedTargets(md, tr, {});
    const auto src = sourceTensor(img, cfg.preprocessing).to(torch::kDouble);
    const StepTarget target = targets[2];
    torch::Tensor grad;
    {
      torch::AutoGradMode on(true);
      auto x = src.clone().requires_grad_(true);
      auto f = stepObjectives(forcedLogProbs(md, reading, x), reading, {target});
      grad = torch::autograd::grad({f.sum()}, {x})[0].detach();
    }
    QVERIFY(grad.abs().max().item<double>() > 0);
    const int64_t w = src.size(3);
    std::vector<int64_t> pixels;  // flat indices into [C, H, W]
    auto flat = grad.abs().flatten();
    auto top = std::get<1>(flat.topk(4));
    for (int64_t i = 0; i < 4; ++i) pixels.push_back(top[i].item<int64_t>());
    for (int64_t y : {3, 17, 30}) pixels.push_back(y * w + (w - 1));
    const double h = 1e-5;
    for (int64_t p : pixels) {
      auto plus = src.clone(), minus = src.clone();
      plus.view(-1)[p] += h;
      minus.view(-1)[p] -= h;
      const double fd =
          (objective(md, reading, plus, target) - objective(md, reading, minus, target)) / (2 * h);
      const double g = grad.view(-1)[p].item<double>();
      QVERIFY2(std::abs(fd - g) <= 1e-6 + 1e-3 * std::abs(g),
               qPrintable(QString("pixel %1: autograd %2, finite differences %3")
                              .arg(p)
                              .arg(g, 0, 'g', 10)
                              .arg(fd, 0, 'g', 10)));
    }
    // The public path (float) gives the same gradients: saliency = |dF/dx|.
    AttributionOptions o;
    o.method = AttributionMethod::Saliency;
    o.steps = {target.step};
    const auto e = explain(mf, img, tr, o);
    QCOMPARE(e.width, 60);
    QCOMPARE(e.height, 32);
    const auto& map = e.maps[static_cast<size_t>(target.step)];
    QCOMPARE(map.size(), size_t(60 * 32));
    auto expected = grad.abs().amax(0).flatten();
    const double scale = expected.max().item<double>();
    double worst = 0;
    for (size_t i = 0; i < map.size(); ++i)
      worst = std::max(worst, std::abs(map[i] - expected[static_cast<int64_t>(i)].item<double>()));
    QVERIFY2(worst <= 2e-2 * scale,
             qPrintable(QString("float saliency off by %1 of %2").arg(worst).arg(scale)));
    // Steps not asked for have no map.
    QVERIFY(e.maps[0].empty() || target.step == 0);
  }

  // Integrated gradients: the map (and, with tokens, the tokens' share) sums to
  // F(image) - F(baseline) within 1 %.
  void integratedGradientsAreComplete_data() { kinds_data(); }
  void integratedGradientsAreComplete() {
    QFETCH(int, index);
    const ModelConfig cfg = kinds()[static_cast<size_t>(index)].second;
    auto m = makeModel(cfg, 31 + index);
    const GreyImage img = testImage(60, 32, 9);
    const Trace tr = readingFor(m, img, 3);
    // With the tokens (attention decoders) the image's and the tokens' shares together make the
    // sum; a CTC model has no tokens to attribute to.
    for (bool tokens : {true}) {
      AttributionOptions o;
      o.method = AttributionMethod::IntegratedGradients;
      o.igSteps = 64;
      o.tokens = tokens;
      const auto e = explain(m, img, tr, o);
      QCOMPARE(e.steps.size(), tr.steps.size());
      for (const auto& s : e.steps) {
        QVERIFY(std::isfinite(s.baselineValue));
        const double gap = s.value - s.baselineValue;
        QVERIFY2(s.completenessError() < 0.01,
                 qPrintable(QString("step %1 tokens %2: sum %3 (+ tokens) against F(x) - F(x') = "
                                    "%4, error %5")
                                .arg(s.step)
                                .arg(tokens)
                                .arg(s.imageTotal)
                                .arg(gap)
                                .arg(s.completenessError())));
        if (tokens && !cfg.isCtc()) {
          QCOMPARE(s.tokenAttribution.size(), size_t(s.step + 1));
          QVERIFY(s.imageShare >= 0 && s.imageShare <= 1);
        } else {
          QVERIFY(s.tokenAttribution.empty());
        }
      }
    }
  }

  // The decoder stopped after step t (attribution only needs the explained step) gives steps 0
  // to t exactly as the full teacher-forced decode does, for every kind; an explanation of one
  // step is the same whether the decoder stops or not.
  void decodingStopsAfterTheExplainedStep_data() { kinds_data(); }
  void decodingStopsAfterTheExplainedStep() {
    QFETCH(int, index);
    const ModelConfig cfg = kinds()[static_cast<size_t>(index)].second;
    auto m = makeModel(cfg, 41 + index);
    const GreyImage img = testImage(60, 32, 5);
    const Trace tr = readingFor(m, img, 4);
    const auto reading = forcedReading(m, tr);
    const auto src = sourceTensor(img, cfg.preprocessing).repeat({2, 1, 1, 1});
    torch::NoGradGuard ng;
    const auto full = forcedLogProbs(m, reading, src);
    for (int64_t last : {0, 2}) {
      const auto part = forcedLogProbs(m, reading, src, {}, last);
      if (cfg.isCtc()) {  // CTC reads every column at once: nothing to stop
        QVERIFY(torch::equal(part, full));
        continue;
      }
      QCOMPARE(part.size(1), last + 1);
      QVERIFY(full.size(1) > last + 1);
      QVERIFY2(
          torch::allclose(part, full.narrow(1, 0, last + 1), 1e-5, 1e-6),
          qPrintable(QString("stopped after %1: off by %2")
                         .arg(last)
                         .arg((part - full.narrow(1, 0, last + 1)).abs().max().item<double>())));
    }
  }

  // inputFromSource resizes each axis by its band of taps: the same antialiased resize as
  // interpolate (bilinear, and bicubic for PIL's), shrinking and growing, either axis or both,
  // in float and double, with the padding's repeated last column after it; and gradients.
  void resizeByBandsIsInterpolate_data() {
    QTest::addColumn<bool>("bicubic");
    QTest::addColumn<int>("srcW");
    QTest::addColumn<int>("srcH");
    QTest::addColumn<bool>("pad");
    QTest::newRow("bilinear 224x32 -> 100x32") << false << 224 << 32 << false;
    QTest::newRow("bilinear 60x20 -> 100x32") << false << 60 << 20 << false;
    QTest::newRow("bilinear 300x48, padded") << false << 300 << 48 << true;
    QTest::newRow("bilinear 40x32, padded") << false << 40 << 32 << true;
    QTest::newRow("bicubic 224x32 -> 100x32") << true << 224 << 32 << false;
    QTest::newRow("bicubic 57x71, padded") << true << 57 << 71 << true;
  }
  void resizeByBandsIsInterpolate() {
    QFETCH(bool, bicubic);
    QFETCH(int, srcW);
    QFETCH(int, srcH);
    QFETCH(bool, pad);
    namespace F = torch::nn::functional;
    Preprocessing pp;
    pp.inputW = 100;
    pp.inputH = 32;
    pp.keepRatioPad = pad;
    if (bicubic) pp.resize = "pil_bicubic";
    for (auto type : {torch::kFloat, torch::kDouble}) {
      torch::manual_seed(srcW);
      const auto src = (torch::rand({3, 1, srcH, srcW}) * 2 - 1).to(type);
      const auto in = inputFromSource(src, pp, /*withUpsampled=*/true);
      const int64_t w = in.contentW.front();
      auto interpolate = [&](const torch::Tensor& t) {
        return F::interpolate(
            t, F::InterpolateFuncOptions()
                   .size(std::vector<int64_t>{32, w})
                   .mode(bicubic ? F::InterpolateFuncOptions::mode_t(torch::kBicubic)
                                 : F::InterpolateFuncOptions::mode_t(torch::kBilinear))
                   .align_corners(false)
                   .antialias(true));
      };
      auto want = interpolate(src);
      QCOMPARE(in.image.sizes(), (std::vector<int64_t>{3, 1, 32, 100}));
      const double tol = type == torch::kFloat ? 2e-6 : 1e-12;
      const double off = (in.image.narrow(3, 0, w) - want).abs().max().item<double>();
      QVERIFY2(off < tol, qPrintable(QString("off by %1").arg(off)));
      if (w < 100)  // the padding repeats the last column
        QVERIFY(torch::equal(in.image.narrow(3, w, 100 - w),
                             in.image.narrow(3, w - 1, 1).expand({3, 1, 32, 100 - w})));
      QCOMPARE(in.upsampled.size(3), pp.upsampledW());
      // The gradient of a weighted sum is the resize's transpose applied to the weights.
      auto x = src.clone().requires_grad_(true);
      auto wts = torch::rand({3, 1, 32, w}).to(type);
      auto g1 = torch::autograd::grad(
          {(inputFromSource(x, pp, false).image.narrow(3, 0, w) * wts).sum()}, {x})[0];
      auto x2 = src.clone().requires_grad_(true);
      auto g2 = torch::autograd::grad({(interpolate(x2) * wts).sum()}, {x2})[0];
      const double goff = (g1 - g2).abs().max().item<double>();
      QVERIFY2(goff < 10 * tol, qPrintable(QString("gradient off by %1").arg(goff)));
    }
  }

  // The bands are made without the dense [to, from] matrix the resize once went through (issue
  // 65: 3.2 GB for a 16000-pixel line), yet hold that matrix's weights (interpolate of the
  // identity; OpenCV's fixed-point taps): the same input and gradient, shrinking and growing by
  // little and by much, from a source of one sample and from one narrower than a comb's spacing,
  // in float and double.
  void resizeBandsMatchTheDenseMatrix_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("srcW");
    QTest::addColumn<int>("srcH");
    const std::vector<std::pair<int, int>> sizes{{1, 32},   {3, 5},    {7, 32},    {99, 32},
                                                 {101, 33}, {250, 20}, {1000, 32}, {2048, 9}};
    for (const char* kind : {"bilinear", "bicubic", "opencv"})
      for (auto [w, h] : sizes)
        if (std::string(kind) != "opencv" || w <= 250)  // (its pre-resize makes wide matrices)
          QTest::newRow(qPrintable(QString("%1 %2x%3").arg(kind).arg(w).arg(h)))
              << QString(kind) << w << h;
  }
  void resizeBandsMatchTheDenseMatrix() {
    QFETCH(QString, kind);
    QFETCH(int, srcW);
    QFETCH(int, srcH);
    namespace F = torch::nn::functional;
    // The matrix [to, from] the bands were cut from before.
    auto dense = [](const QString& k, int64_t from, int64_t to, torch::ScalarType type,
                    bool columns) {
      if (k == "opencv") {
        auto m = torch::zeros({to, from}, torch::kDouble);
        const auto taps = opencvLinearTaps(static_cast<int>(from), static_cast<int>(to), columns);
        for (int64_t j = 0; j < to; ++j) {
          m[j][taps[size_t(j)].first] += taps[size_t(j)].w0 / 2048.0;
          m[j][taps[size_t(j)].second] += taps[size_t(j)].w1 / 2048.0;
        }
        return m.to(type);
      }
      const auto eye = torch::eye(from, torch::kDouble).view({1, 1, from, from}).to(type);
      return F::interpolate(
                 eye,
                 F::InterpolateFuncOptions()
                     .size(std::vector<int64_t>{from, to})
                     .mode(k == "bicubic" ? F::InterpolateFuncOptions::mode_t(torch::kBicubic)
                                          : F::InterpolateFuncOptions::mode_t(torch::kBilinear))
                     .align_corners(false)
                     .antialias(true))
          .view({from, to})
          .t();
    };
    // Rows (the height) then columns, by the dense matrices.
    auto byDense = [&](torch::Tensor t, const QString& k, int64_t h, int64_t w) {
      if (h != t.size(2)) t = torch::matmul(dense(k, t.size(2), h, t.scalar_type(), false), t);
      if (w != t.size(3)) t = torch::matmul(t, dense(k, t.size(3), w, t.scalar_type(), true).t());
      return t;
    };
    Preprocessing pp;
    pp.inputW = 100;
    pp.inputH = 32;
    if (kind == "bicubic") pp.resize = "pil_bicubic";
    if (kind == "opencv") {  // EasyOCR's readtext: OpenCV's resize to the height, then PIL's
      pp.resize = "pil_bicubic";
      pp.preResize = "opencv_linear";
      pp.keepRatioPad = true;
      pp.inputW = 2048;  // wide enough for every pre-resized width here
    }
    for (auto type : {torch::kFloat, torch::kDouble}) {
      torch::manual_seed(srcW * 7 + srcH);
      const auto src = (torch::rand({2, 1, srcH, srcW}) * 2 - 1).to(type);
      auto reference = [&](const torch::Tensor& x) {
        if (kind != "opencv") return byDense(x, kind, pp.inputH, pp.inputW);
        const auto size = easyocrResizedSize(srcW, srcH, pp.inputH);
        const auto collate = byDense(x, "opencv", size.height, size.width);
        const int kw = static_cast<int>(std::min<double>(
            pp.inputW, std::ceil(pp.inputH * double(size.width) / double(size.height))));
        return byDense(collate, "bicubic", pp.inputH, std::max(1, kw));
      };
      const auto x = src.clone().requires_grad_(true);
      const auto in = inputFromSource(x, pp, /*withUpsampled=*/false);
      auto x2 = src.clone().requires_grad_(true);
      const auto want = reference(x2);
      const int64_t w = want.size(3);
      QCOMPARE(in.contentW.front(), int(w));
      const auto got = in.image.narrow(3, 0, w);
      QCOMPARE(got.sizes(), want.sizes());
      const double off = (got - want).abs().max().item<double>();
      QVERIFY2(off < 1e-6, qPrintable(QString("%1: off by %2").arg(c10::toString(type)).arg(off)));
      // The gradient: the matrices' transposes applied to the weights. Growing 3 pixels to 100
      // sums a thousand terms into each: relative to the largest, as float rounds.
      auto wts = torch::rand(want.sizes()).to(type);
      const auto g1 = torch::autograd::grad({(got * wts).sum()}, {x})[0];
      const auto g2 = torch::autograd::grad({(want * wts).sum()}, {x2})[0];
      const double goff =
          (g1 - g2).abs().max().item<double>() / std::max(1.0, g2.abs().max().item<double>());
      QVERIFY2(
          goff < 1e-6,
          qPrintable(
              QString("%1: gradient off by %2 (relative)").arg(c10::toString(type)).arg(goff)));
    }
  }

  // An explanation of a 16000 x 32 line needs memory linear in its width: the resize's dense
  // matrix took 3.2 GB (issue 65). Peak resident memory, measured from a reset high-water mark
  // (Linux: writing 5 to /proc/self/clear_refs), stays under 400 MB for an IG explanation of a
  // step through Foveal's bilinear and DTRB's padded bicubic.
  void longLineExplanationNeedsLittleMemory_data() {
    QTest::addColumn<int>("index");
    QTest::newRow("soft") << 0;
    QTest::newRow("padded-dtrb-bicubic") << 8;
  }
  void longLineExplanationNeedsLittleMemory() {
    QFETCH(int, index);
    const auto kind = kinds()[static_cast<size_t>(index)];
    QCOMPARE(QString::fromStdString(kind.first), QString(QTest::currentDataTag()));
    auto m = makeModel(kind.second, 5);
    const GreyImage img = testImage(16000, 32, 3);
    const Trace tr = readingFor(m, img, 2);
    AttributionOptions o;
    o.method = AttributionMethod::IntegratedGradients;
    o.igSteps = 4;
    o.batch = 4;
    o.steps = {0};
    auto peakKb = []() -> long {
      std::ifstream status("/proc/self/status");
      std::string line;
      while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
      return -1;
    };
    auto rssKb = []() -> long {
      std::ifstream status("/proc/self/status");
      std::string line;
      while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
      return -1;
    };
    {
      std::ofstream reset("/proc/self/clear_refs");
      reset << "5";
      reset.close();
      if (!reset || peakKb() > rssKb() + 1024)
        QSKIP("this kernel cannot reset the peak resident memory (/proc/self/clear_refs)");
    }
    const long before = rssKb();
    const auto e = explain(m, img, tr, o);
    const long peak = peakKb();
    QCOMPARE(e.width, 16000);
    QCOMPARE(e.steps.size(), size_t(1));
    QVERIFY(std::isfinite(e.steps.front().imageTotal));
    const double mb = double(peak - before) / 1024.0;
    qInfo("peak resident memory of the explanation: %.0f MB above the %.0f MB before", mb,
          double(before) / 1024.0);
    QVERIFY2(mb < 400, qPrintable(QString("the explanation's peak took %1 MB").arg(mb)));
  }

  // The per-target objectives taken from the decoder's own steps are stepObjectives' columns, and
  // the gradient of an early step's objective does not run through later steps: the last step's
  // log p is not even in its graph (taken from the stacked log p it would be, and the backward
  // pass would run, with zeros, through every later step's decoder).
  void earlyStepsGradientsStopAtTheirStep_data() { kinds_data(); }
  void earlyStepsGradientsStopAtTheirStep() {
    QFETCH(int, index);
    const ModelConfig cfg = kinds()[static_cast<size_t>(index)].second;
    auto m = makeModel(cfg, 43 + index);
    const GreyImage img = testImage(60, 32, 6);
    const Trace tr = readingFor(m, img, 4);
    const auto reading = forcedReading(m, tr);
    AttributionOptions o;
    const auto targets = explainedTargets(m, tr, o);
    c10::InferenceMode notInference(false);
    torch::AutoGradMode grad(true);
    auto x = sourceTensor(img, cfg.preprocessing).repeat({2, 1, 1, 1}).requires_grad_(true);
    const auto out = forcedOutput(m, reading, x);
    const auto columns = stepObjectiveColumns(out, reading, targets);
    const auto stacked = stepObjectives(out.logProbs, reading, targets);
    QCOMPARE(static_cast<int64_t>(columns.size()), stacked.size(1));
    for (size_t s = 0; s < columns.size(); ++s)
      QVERIFY(torch::equal(columns[s], stacked.select(1, static_cast<int64_t>(s))));
    if (cfg.isCtc()) {  // every column reads the whole BiLSTM: no steps to stop at
      QVERIFY(out.stepLogProbs.empty());
      return;
    }
    QCOMPARE(static_cast<int64_t>(out.stepLogProbs.size()), out.logProbs.size(1));
    QVERIFY(columns.size() >= 2);
    const auto g = torch::autograd::grad({columns.front().sum()}, {x, out.stepLogProbs.back()}, {},
                                         /*retain_graph=*/true, false, /*allow_unused=*/true);
    QVERIFY(g[0].defined() && g[0].abs().sum().item<double>() > 0);
    QVERIFY2(!g[1].defined(), "the first step's objective depends on the last step's log p");
  }

  // Occlusion: each map pixel is the mean, over the patches that cover it, of the drop in
  // p(token) when that patch is mid-grey; here computed by hand for chosen pixels, with the last
  // patch of a row placed against the far edge.
  // A full-width CRNN (its last 2x2 convolution has 512 channels: the columns kernel) explained
  // on one image: the kernel's output was a view, and the in-place ReLU after it failed
  // ("is a view and is being modified inplace").
  void fullWidthCrnnExplains() {
    auto config = modelVariant("crnn", 1.0).config;
    auto m = makeModel(config, 5);
    const GreyImage img = testImage(100, 32, 7);
    const Trace tr = readingFor(m, img, 2);
    AttributionOptions o;
    o.method = AttributionMethod::Saliency;
    o.steps = {0};
    const auto e = explain(m, img, tr, o);
    QVERIFY(!e.maps.empty() && !e.maps[0].empty());
    double total = 0;
    for (double v : e.maps[0]) total += std::abs(v);
    QVERIFY(std::isfinite(total) && total > 0);
  }

  void occlusionMatchesAHandComputation() {
    auto m = makeModel(tinyConfig("soft"), 3);
    const GreyImage img = testImage(30, 32, 4);  // 30 px: origins 0, 4, ..., 20 and then 22
    const Trace tr = readingFor(m, img, 3);
    AttributionOptions o;
    o.method = AttributionMethod::Occlusion;
    o.patch = 8;
    o.stride = 4;
    o.batch = 7;  // several batches
    const auto e = explain(m, img, tr, o);
    const auto reading = forcedReading(m, tr);
    const auto src = sourceTensor(img, m->config.preprocessing);
    const StepTarget target{1, tr.steps[1].tokenIndex, -1};
    const double p0 = std::exp(objective(m, reading, src, target));
    auto dropFor = [&](int x0, int y0) {
      auto occluded = src.clone();
      occluded[0].narrow(1, y0, 8).narrow(2, x0, 8).zero_();
      return p0 - std::exp(objective(m, reading, occluded, target));
    };
    const auto& map = e.maps[1];
    QCOMPARE(map.size(), size_t(30 * 32));
    // (10, 10): x origins 4 and 8, y origins 4 and 8.
    const double a = (dropFor(4, 4) + dropFor(8, 4) + dropFor(4, 8) + dropFor(8, 8)) / 4;
    QVERIFY2(std::abs(map[10 * 30 + 10] - a) < 1e-6,
             qPrintable(QString("%1 against %2").arg(map[10 * 30 + 10]).arg(a)));
    // (29, 0): only the edge patch x = 22 and y = 0 covers it.
    const double b = dropFor(22, 0);
    QVERIFY(std::abs(map[29] - b) < 1e-6);
    // (21, 31): x origins 16 and 20 (the edge patch at 22 starts after it); y origin 24.
    const double c = (dropFor(16, 24) + dropFor(20, 24)) / 2;
    QVERIFY2(std::abs(map[31 * 30 + 21] - c) < 1e-6,
             qPrintable(QString("%1 against %2").arg(map[31 * 30 + 21]).arg(c)));
    QVERIFY(std::abs(a) + std::abs(b) + std::abs(c) > 0);
  }

  // A CTC column with no sequence stage sees only its receptive field: its token's saliency is
  // zero outside that field mapped to source pixels (through the resize, or the keep-ratio
  // padding), and not zero inside.
  void mapsLieOnTheSourcePixelsAStepSees_data() {
    QTest::addColumn<bool>("padded");
    QTest::addColumn<int>("width");
    QTest::newRow("resized 160 -> 100") << false << 160;
    QTest::newRow("padded 60 of 100") << true << 60;
  }
  void mapsLieOnTheSourcePixelsAStepSees() {
    QFETCH(bool, padded);
    QFETCH(int, width);
    auto cfg = tinyConfig("soft");
    cfg.prediction = "ctc";
    cfg.sequence = "none";
    cfg.preprocessing.keepRatioPad = padded;
    auto m = makeModel(cfg, 7);
    const GreyImage img = testImage(width, 32, 2);
    Trace tr;
    tr.imageW = width;
    tr.imageH = 32;
    tr.decoder = "ctc";
    TraceStep st;
    st.tokenIndex = 4;
    st.columns = {9};
    tr.steps.push_back(st);
    AttributionOptions o;
    o.method = AttributionMethod::Saliency;
    const auto e = explain(m, img, tr, o);
    const Box box = m->geometry().regionBoxes()[9];  // model-input pixels
    const int contentW = padded ? width : cfg.preprocessing.inputW;
    const double sx = static_cast<double>(width) / contentW;
    // The resize's filter reaches a little past the box (antialiasing: the scale factor).
    const double margin = padded ? 0.0 : 2.0;
    const double x0 = box.x * sx - margin, x1 = (box.x + box.w) * sx + margin;
    int inside = 0;
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < width; ++x) {
        const double v = e.maps[0][static_cast<size_t>(y * width + x)];
        if (v == 0) continue;
        QVERIFY2(
            x + 1 > x0 && x < x1,
            qPrintable(QString("pixel %1 outside %2..%3 has %4").arg(x).arg(x0).arg(x1).arg(v)));
        ++inside;
      }
    QVERIFY(inside > 32 * 10);
  }

  // "Read or guessed": with DTRB's cell (h0 = 0, input [c_t ; y_{t-1}], p from h_t) a decoder
  // whose cell ignores the context guesses every character from the previous tokens (image
  // share 0, flagged), and one that ignores the tokens reads them all (share 1).
  void imageShareSeparatesReadFromGuessed() {
    auto cfg = tinyConfig("soft");
    cfg.cell = "dtrb";
    const GreyImage img = testImage(60, 32, 12);
    for (bool blindToImage : {true, false}) {
      auto m = makeModel(cfg, 21);
      const int64_t classes = m->numClasses();
      {
        torch::NoGradGuard ng;
        auto w = m->named_parameters()["prediction.cell.weight_ih"];
        const int64_t context = w.size(1) - classes;
        if (blindToImage)
          w.narrow(1, 0, context).zero_();
        else
          w.narrow(1, context, classes).zero_();
      }
      const Trace tr = readingFor(m, img, 4);
      AttributionOptions o;
      o.method = AttributionMethod::IntegratedGradients;
      o.tokens = true;
      o.igSteps = 16;
      const auto e = explain(m, img, tr, o);
      for (const auto& s : e.steps) {
        if (blindToImage) {
          QCOMPARE(s.imageShare, 0.0);
          QVERIFY(s.imageShare < kGuessedShare);
          double tokens = 0;
          for (double a : s.tokenAttribution) tokens += std::abs(a);
          QVERIFY(tokens > 0);
        } else {
          QCOMPARE(s.imageShare, 1.0);
        }
      }
    }
  }

  void badRequestsAreRefusedWithTheirReason() {
    auto m = makeModel(tinyConfig("soft"), 1);
    const GreyImage img = testImage(40, 32, 1);
    const Trace tr = readingFor(m, img, 2);
    AttributionOptions o;
    o.steps = {5};
    try {
      explain(m, img, tr, o);
      QFAIL("a step past the reading was accepted");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("step 5 does not exist"));
    }
    o.steps = {};
    o.target = 999;
    QVERIFY_THROWS_EXCEPTION(Error, explain(m, img, tr, o));
    o.target = -1;
    QVERIFY_THROWS_EXCEPTION(Error, explain(m, testImage(41, 32, 1), tr, o));
    QVERIFY(attributionMethodFromString("ig") == AttributionMethod::IntegratedGradients);
    try {
      attributionMethodFromString("lime");
      QFAIL("an unknown method was accepted");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("occlusion"));
    }
    // Cancelling through the progress callback stops the computation.
    o.method = AttributionMethod::IntegratedGradients;
    o.batch = 4;
    int calls = 0;
    o.progress = [&](double) { return ++calls < 2; };
    QVERIFY_THROWS_EXCEPTION(AttributionCancelled, explain(m, img, tr, o));
    QCOMPARE(calls, 2);
  }

  // Contrastive: log p(a) - log p(b) is the difference of the two plain attributions (gradients
  // are linear), and the explanation lands in the trace as a named pixel map.
  void contrastiveIsTheDifferenceAndTheMapIsNamed() {
    auto m = makeModel(tinyConfig("hard"), 5);
    const GreyImage img = testImage(50, 32, 8);
    Trace tr = readingFor(m, img, 3);
    AttributionOptions o;
    o.method = AttributionMethod::GradientInput;
    o.steps = {1};
    const int a = tr.steps[1].tokenIndex, b = a + 1;
    const auto ea = explain(m, img, tr, o);
    o.target = b;
    const auto eb = explain(m, img, tr, o);
    o.target = -1;
    o.contrast = b;
    const auto ec = explain(m, img, tr, o);
    QCOMPARE(ec.steps[0].target, a);
    QCOMPARE(ec.steps[0].contrast, b);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < ec.maps[1].size(); ++i) {
      worst = std::max(worst, std::abs(ec.maps[1][i] - (ea.maps[1][i] - eb.maps[1][i])));
      scale = std::max(scale, std::abs(ec.maps[1][i]));
    }
    QVERIFY(scale > 0);
    QVERIFY(worst <= 1e-4 * scale);
    addToTrace(tr, ec);
    const StepMap* map = tr.map("grad-input");
    QVERIFY(map);
    QVERIFY(map->layout == MapLayout::Pixels);
    QCOMPARE(map->width, 50);
    QCOMPARE(map->steps.size(), tr.steps.size());
    QVERIFY(map->steps[0].empty());
    QCOMPARE(map->steps[1].size(), size_t(50 * 32));
    const auto j = nlohmann::json::parse(explanationJson(ec, tr, false));
    QCOMPARE(j["method"].get<std::string>(), std::string("grad-input"));
    QCOMPARE(j["steps"][0]["contrast"].get<int>(), b);
  }
};

QTEST_APPLESS_MAIN(TestAttribution)
#include "test_attribution.moc"
