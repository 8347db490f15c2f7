// The recognizer: shapes for every mechanism and setting, the STN at identity, gradients in sharp
// models, and the REINFORCE term of the hybrid loss.
#include <torch/torch.h>

#include <QtTest/QtTest>
#include <map>
#include <set>

#include "base/error.h"
#include "model/backbone.h"
#include "model/losses.h"
#include "model/recognizer.h"
#include "model/sharpener.h"
#include "test_models.h"

using namespace foveal::core;
using foveal::test::allConfigs;
using foveal::test::tinyConfig;

namespace {

struct Batch {
  torch::Tensor image, upsampled, targets, lengths;
};

// One data row per configuration of allConfigs(), as column "index".
void configRows() {
  QTest::addColumn<int>("index");
  const auto all = allConfigs();
  for (size_t i = 0; i < all.size(); ++i) QTest::newRow(all[i].name.c_str()) << static_cast<int>(i);
}

Batch makeBatch(const ModelConfig& c, int64_t b = 2) {
  Batch batch;
  batch.image = torch::rand({b, 1, 32, c.preprocessing.inputW}) * 2 - 1;
  batch.upsampled = torch::rand({b, 1, 32, c.preprocessing.upsampledW()}) * 2 - 1;
  batch.targets = torch::zeros({b, c.steps()}, torch::kLong);
  batch.lengths = torch::zeros({b}, torch::kLong);
  for (int64_t i = 0; i < b; ++i) {
    const int64_t len = i % 2 == 0 ? 3 : c.maxLength;
    batch.lengths[i] = len;
    batch.targets[i].narrow(0, 0, len).copy_(torch::randint(1, 11, {len}));
  }
  return batch;
}

LossTerms lossOf(Recognizer& model, const RecognizerOutput& out, const Batch& batch, double lambdaR,
                 double baseline, const torch::Tensor& references = {}) {
  LossInputs in;
  in.targets = batch.targets;
  in.lengths = batch.lengths;
  in.lambdaR = lambdaR;
  in.baseline = baseline;
  in.references = references;
  return model->loss(out, in);
}

// Bilinear sample of img [H, W] at pixel-centre coordinates, border padding (clamped).
double bilinear(const torch::TensorAccessor<float, 2>& img, int h, int w, double x, double y) {
  x = std::clamp(x, 0.0, w - 1.0);
  y = std::clamp(y, 0.0, h - 1.0);
  const int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
  const int x1 = std::min(x0 + 1, w - 1), y1 = std::min(y0 + 1, h - 1);
  const double fx = x - x0, fy = y - y0;
  return (1 - fy) * ((1 - fx) * img[y0][x0] + fx * img[y0][x1]) +
         fy * ((1 - fx) * img[y1][x0] + fx * img[y1][x1]);
}

}  // namespace

class TestModel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  // bf16 convolutions in training (CPUs with native bf16): fp32 features and gradients, close to
  // the fp32 computation; off, the modules' own fp32 result. A VGG narrower than 128 channels
  // (width 0.125, where bf16 is slower) stays in fp32, bit for bit, and says so.
  void bf16TrainingConvolutions() {
    if (!cpuHasNativeBf16()) QSKIP("this CPU has no native bf16 (or LibTorch no MKL-DNN)");
    QVERIFY(!cpuBf16Pays(64));
    QVERIFY(cpuBf16Pays(128));
    torch::manual_seed(3);  // the same image whichever tests ran before
    auto image = torch::rand({4, 1, 32, 100}) * 2 - 1;
    bool used = false;
    auto runWidth = [&](double width, bool bf16) {
      torch::manual_seed(4);
      VggBackbone net{VggBackboneOptions(width)};
      net->train();
      setCpuBf16Convolutions(bf16);
      auto f = net->forward(image);
      f.pow(2).mean().backward();
      used = cpuBf16Used();
      setCpuBf16Convolutions(false);
      return std::make_pair(f.detach(), net->named_parameters()["layers.0.weight"].grad().clone());
    };
    const auto [n32, h32] = runWidth(0.125, false);
    const auto [n16, h16] = runWidth(0.125, true);
    QVERIFY(!used);
    QVERIFY(torch::equal(n16, n32));
    QVERIFY(torch::equal(h16, h32));
    auto run = [&](bool bf16) { return runWidth(0.25, bf16); };
    const auto [f32, g32] = run(false);
    QVERIFY(!used);
    const auto [f16, g16] = run(true);
    QVERIFY(used);
    QCOMPARE(f16.scalar_type(), torch::kFloat);
    QCOMPARE(g16.scalar_type(), torch::kFloat);
    QVERIFY(!torch::equal(f16, f32));  // the bf16 path ran
    const double rel = ((f16 - f32).norm() / f32.norm()).item<double>();
    QVERIFY2(rel < 0.05, qPrintable(QString::number(rel)));
    const double cosine =
        (g16 * g32).sum().item<double>() / (g16.norm() * g32.norm()).item<double>();
    // bf16 keeps 8 bits of mantissa: the first layer's gradient, summed through every layer
    // above it, points within a few degrees of fp32's (0.9799 at 2 threads on an AVX512-BF16 EPYC
    // under load, 0.98-0.99 elsewhere); a broken bf16 path gives a cosine far below.
    QVERIFY2(cosine > 0.97, qPrintable(QString::number(cosine)));
    QVERIFY(!cpuBf16Convolutions());
  }

  // The small-batch inference path of soft and hard attention (per-column input gates, no
  // per-step input matrix product) computes what the straightforward decoder computes: same
  // log-probabilities and attention along a fixed trajectory (teacher forcing, and for hard
  // the same selected regions), batch 1 and 3.
  void leanDecoderMatchesStraightforward_data() {
    QTest::addColumn<std::string>("kind");
    QTest::addColumn<int>("batch");
    for (int b : {1, 3}) {
      QTest::newRow(qPrintable(QStringLiteral("soft b%1").arg(b))) << std::string("soft") << b;
      QTest::newRow(qPrintable(QStringLiteral("hard b%1").arg(b))) << std::string("hard") << b;
    }
  }
  void leanDecoderMatchesStraightforward() {
    QFETCH(std::string, kind);
    QFETCH(int, batch);
    torch::manual_seed(11);
    Recognizer model(foveal::test::tinyConfig(kind));
    model->eval();
    const auto steps = model->config.steps();
    auto image = torch::rand({batch, 1, 32, 100}) * 2 - 1;
    DecodeOptions opt;
    opt.targets = torch::randint(1, model->numClasses(), {batch, steps}, torch::kLong);
    opt.forcedSelection = torch::randint(0, 24, {batch, steps}, torch::kLong);
    auto reference = model->forward(image, {}, opt);  // grad mode on: the straightforward path
    RecognizerOutput lean;
    {
      torch::NoGradGuard ng;
      lean = model->forward(image, {}, opt);
    }
    QCOMPARE(lean.logProbs.sizes(), reference.logProbs.sizes());
    const double d = (lean.logProbs - reference.logProbs.detach()).abs().max().item<double>();
    QVERIFY2(d < 1e-4, qPrintable(QString::number(d)));
    QVERIFY(torch::allclose(lean.alpha, reference.alpha.detach(), 1e-4, 1e-5));
    QVERIFY(torch::equal(lean.selected, reference.selected));
  }

  // Inference without autograd runs the backbone as oneDNN primitives on reordered weights with
  // the batch norms folded in: it must compute what the modules compute, follow weight changes
  // (an optimiser step, a loaded checkpoint) and leave training untouched.
  void fastInferenceBackboneMatchesModules() {
    if (!fastConvolutions()) QSKIP("this LibTorch has no MKL-DNN (or FOVEAL_PLAIN_CONV is set)");
    torch::manual_seed(3);
    VggBackbone net(VggBackboneOptions(0.25));
    {
      torch::NoGradGuard ng;
      for (auto& b : net->named_buffers()) {
        if (b.key().find("running_mean") != std::string::npos) b.value().normal_(0, 0.3);
        if (b.key().find("running_var") != std::string::npos) b.value().uniform_(0.5, 2.0);
      }
      for (auto& p : net->named_parameters())
        if (p.key().find(".weight") != std::string::npos && p.value().dim() == 1)
          p.value().uniform_(0.5, 1.5);  // batch-norm scales
    }
    net->eval();
    for (int64_t b : {1, 3}) {
      auto image = torch::rand({b, 1, 32, 100}) * 2 - 1;
      auto reference = net->forward(image).detach();  // grad mode on: the modules
      torch::Tensor fast;
      {
        torch::NoGradGuard ng;
        fast = net->forward(image);
      }
      QCOMPARE(fast.sizes(), reference.sizes());
      QVERIFY2(torch::allclose(fast, reference, 1e-4, 1e-4),
               qPrintable(QString::number((fast - reference).abs().max().item<double>())));
    }
    // An in-place weight change (what ADADELTA and checkpoint loading do) is picked up.
    auto image = torch::rand({2, 1, 32, 100});
    {
      torch::NoGradGuard ng;
      net->named_parameters()["layers.0.weight"].mul_(-1.5);
    }
    auto reference = net->forward(image).detach();
    torch::NoGradGuard ng;
    QVERIFY(torch::allclose(net->forward(image), reference, 1e-4, 1e-4));
    // Training mode (batch statistics) never takes the fast path.
    net->train();
    auto trainOut = net->forward(image);
    QVERIFY(!torch::allclose(trainOut, reference, 1e-3, 1e-3));
  }

  void shapes_data() {
    QTest::addColumn<int>("index");
    QTest::addColumn<bool>("training");
    const auto configs = allConfigs();
    for (size_t i = 0; i < configs.size(); ++i) {
      QTest::newRow(qPrintable(QString::fromStdString(configs[i].name + " train")))
          << int(i) << true;
      QTest::newRow(qPrintable(QString::fromStdString(configs[i].name + " greedy")))
          << int(i) << false;
    }
  }
  void shapes() {
    QFETCH(int, index);
    QFETCH(bool, training);
    const auto cfg = allConfigs()[static_cast<size_t>(index)].config;
    torch::manual_seed(1);
    Recognizer model(cfg);
    model->train(training);
    const auto batch = makeBatch(cfg);
    DecodeOptions opt;
    if (training) opt.targets = batch.targets;
    const auto out = model->forward(batch.image, batch.upsampled, opt);
    const int64_t B = 2, T = cfg.steps(), K = 11, M = model->geometry().regionCount();
    QCOMPARE(M, int64_t(cfg.isGrid() ? 4 * 25 : 24));
    QCOMPARE(out.logProbs.sizes().vec(), (std::vector<int64_t>{B, T, K}));
    QCOMPARE(out.alpha.sizes().vec(), (std::vector<int64_t>{B, T, M}));
    QCOMPARE(out.selected.sizes().vec(), (std::vector<int64_t>{B, T}));
    QCOMPARE(out.logPSelect.sizes().vec(), (std::vector<int64_t>{B, T}));
    QCOMPARE(out.tokens.sizes().vec(), (std::vector<int64_t>{B, T}));
    QVERIFY(torch::allclose(out.logProbs.exp().sum(-1), torch::ones({B, T}), 1e-5, 1e-5));
    QVERIFY(torch::allclose(out.alpha.sum(-1), torch::ones({B, T}), 1e-5, 1e-5));
    QVERIFY((out.selected >= 0).all().item<bool>() && (out.selected < M).all().item<bool>());
    QVERIFY(torch::allclose(out.logPSelect,
                            out.alpha.gather(2, out.selected.unsqueeze(2)).squeeze(2).log(), 1e-4,
                            1e-5));
    QVERIFY(torch::equal(out.tokens, out.logProbs.argmax(-1)));
    if (!training || cfg.attention == "soft")
      QVERIFY(torch::equal(out.selected, out.alpha.argmax(-1)));

    if (cfg.attention != "sharp") {
      QVERIFY(out.patches.empty());
      QVERIFY(out.thetas.empty());
      return;
    }
    QCOMPARE(int(out.patches.size()), cfg.numStns);
    QCOMPARE(int(out.thetas.size()), cfg.numStns);
    QCOMPARE(out.patches.back().sizes().vec(), (std::vector<int64_t>{B, T, 1, 32, 24}));
    if (cfg.numStns == 2)
      QCOMPARE(out.patches.front().sizes().vec(), (std::vector<int64_t>{B, T, 1, 32, 64}));
    for (const auto& th : out.thetas)
      QCOMPARE(th.sizes().vec(), (std::vector<int64_t>{B, T, 2, 3}));
    if (cfg.context == ContextKind::Weighting) {
      QCOMPARE(out.contextWeights.sizes().vec(), (std::vector<int64_t>{B, T, 5 + 1}));  // Z: 5 cols
      QVERIFY(torch::allclose(out.contextWeights.sum(-1), torch::ones({B, T}), 1e-5, 1e-5));
    } else {
      QVERIFY(!out.contextWeights.defined());
    }
  }

  void sharpNeedsUpsampledImage() {
    Recognizer model(tinyConfig("sharp"));
    QVERIFY_THROWS_EXCEPTION(Error, model->forward(torch::zeros({1, 1, 32, 100}), {}));
  }

  // At initialisation the STN is the identity: the patch is a bilinear resize of the region,
  // computed here independently from the box geometry.
  void stnAtIdentityIsBilinearCropOfRegion_data() {
    QTest::addColumn<int>("column");
    for (int c : {0, 7, 12, 23}) QTest::newRow(qPrintable(QString::number(c))) << c;
  }
  void stnAtIdentityIsBilinearCropOfRegion() {
    QFETCH(int, column);
    auto cfg = tinyConfig("sharp");
    Sharpener sharpener(cfg);
    torch::manual_seed(3);
    auto up = torch::rand({1, 1, 32, 180});
    auto out = sharpener->forward(up, torch::tensor({int64_t(column)}));
    auto patch = out.patches[0].squeeze();  // [32, 24]
    const auto box = receptiveField(vggLayers(cfg.width), 100, 32).box(column);
    const double scale = 1.8, x0 = box.x * scale, w = box.w * scale;
    auto img = up.squeeze().contiguous();
    auto acc = img.accessor<float, 2>();
    for (int py = 0; py < 32; ++py)
      for (int px = 0; px < 24; ++px) {
        const double x = x0 + (px + 0.5) * w / 24.0 - 0.5;
        const double expected = bilinear(acc, 32, 180, x, py);
        QVERIFY2(std::abs(patch[py][px].item<double>() - expected) < 1e-5,
                 qPrintable(QString("pixel %1,%2").arg(px).arg(py)));
      }
    // Its quad in upsampled-image pixels is the box itself.
    auto th = out.thetas[0][0];
    QVERIFY(std::abs(((th[0][2] - th[0][0]).item<double>() + 1) / 2 * 180 - x0) < 1e-3);
  }

  // The coarse translation-only STN crops at the input's own pixel scale, centred.
  void translationStnCropsAtNativeScale() {
    auto cfg = tinyConfig("sharp", ContextKind::Pooling, 2);  // scale 2.0: 200 px
    Sharpener sharpener(cfg);
    auto up = torch::rand({1, 1, 32, 200});
    auto out = sharpener->forward(up, torch::tensor({int64_t(12)}));  // box x 29..74 -> 58..149
    auto coarse = out.patches[0].squeeze();                           // [32, 64]
    QCOMPARE(coarse.size(1), int64_t(64));
    // Region 92 px wide centred at 104: the 64 px crop starts at 72.
    const double diff = (coarse - up.squeeze().narrow(1, 72, 64)).abs().max().item<double>();
    QVERIFY2(diff < 1e-4, qPrintable(QString("max difference %1").arg(diff)));
    QCOMPARE(out.patches[1].size(3), int64_t(24));
  }

  void gradientsReachStnAndEncoder_data() {
    QTest::addColumn<int>("context");
    QTest::addColumn<int>("stns");
    for (int stns : {1, 2})
      for (int ctx : {0, 1, 2})
        QTest::newRow(qPrintable(QString("ctx%1 stns%2").arg(ctx).arg(stns))) << ctx << stns;
  }
  void gradientsReachStnAndEncoder() {
    QFETCH(int, context);
    QFETCH(int, stns);
    torch::manual_seed(5);
    const auto cfg = tinyConfig("sharp", static_cast<ContextKind>(context), stns);
    Recognizer model(cfg);
    model->train();
    const auto batch = makeBatch(cfg, 3);
    DecodeOptions opt;
    opt.targets = batch.targets;
    auto out = model->forward(batch.image, batch.upsampled, opt);
    auto terms = lossOf(model, out, batch, 1.0, 0.0);
    terms.total.backward();
    auto grads = model->named_parameters();
    auto nonzero = [&](const std::string& name) {
      auto* p = grads.find(name);
      return p && p->grad().defined() && p->grad().abs().sum().item<double>() > 0;
    };
    // The regressor starts at zero weights (identity), so at first only its last layer gets a
    // gradient; after one step the gradient reaches the localisation CNN too.
    for (int k = 0; k < stns; ++k) {
      const std::string stn = "prediction.glimpse.sharpener.stns." + std::to_string(k);
      QVERIFY2(nonzero(stn + ".fc2.weight"), (stn + ".fc2.weight").c_str());
      QVERIFY2(nonzero(stn + ".fc2.bias"), (stn + ".fc2.bias").c_str());
    }
    QVERIFY(nonzero("prediction.glimpse.sharpener.encoder.layers.0.weight"));
    QVERIFY(nonzero("features.layers.0.weight"));         // through x_s, alpha and h0
    QVERIFY(nonzero("prediction.attention.key.weight"));  // through REINFORCE log p(a_t)

    torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(0.05));
    sgd.step();
    model->zero_grad();
    out = model->forward(batch.image, batch.upsampled, opt);
    lossOf(model, out, batch, 1.0, 0.0).total.backward();
    grads = model->named_parameters();
    for (int k = 0; k < stns; ++k) {
      const std::string stn = "prediction.glimpse.sharpener.stns." + std::to_string(k);
      QVERIFY2(nonzero(stn + ".features.0.weight"), (stn + ".features.0.weight").c_str());
    }
  }

  void baselineFollowsItsFormula() {
    MovingBaseline b;
    QCOMPARE(b.update(-2.0), -2.0);
    QCOMPARE(b.update(-1.0), 0.9 * -2.0 + 0.1 * -1.0);
    QCOMPARE(b.update(-0.5), 0.9 * (0.9 * -2.0 + 0.1 * -1.0) + 0.1 * -0.5);
  }

  void lossTermsMatchHandComputation() {
    torch::manual_seed(9);
    const auto cfg = tinyConfig("hard");
    Recognizer model(cfg);
    model->train();
    const auto batch = makeBatch(cfg, 2);
    DecodeOptions opt;
    opt.targets = batch.targets;
    auto out = model->forward(batch.image, batch.upsampled, opt);
    const double b = -0.75;
    auto terms = lossOf(model, out, batch, 0.5, b);
    double nll = 0;
    for (int bi = 0; bi < 2; ++bi)
      for (int t = 0; t <= batch.lengths[bi].item<int>(); ++t)
        nll -= out.logProbs[bi][t][batch.targets[bi][t].item<int64_t>()].item<double>();
    QVERIFY(std::abs(terms.nll.item<double>() - nll / 2) < 1e-4);
    double reinforce = 0;
    for (int bi = 0; bi < 2; ++bi)
      for (int t = 0; t <= batch.lengths[bi].item<int>(); ++t) {
        const double lp = out.logProbs[bi][t][batch.targets[bi][t].item<int64_t>()].item<double>();
        reinforce -= 0.5 * (lp - b) * out.logPSelect[bi][t].item<double>();
      }
    QVERIFY(std::abs(terms.reinforce.item<double>() - reinforce / 2) < 1e-3);
    // Pure: the same inputs give the same terms again.
    auto again = lossOf(model, out, batch, 0.5, b);
    QCOMPARE(again.total.item<double>(), terms.total.item<double>());
    // The batch figures the trainer folds into the baseline: reward = mean log p(y_t | a_t).
    const BatchStats st = model->stats(out, batch.targets, batch.lengths);
    QVERIFY(std::abs(st.rewardSum + nll) < 1e-3);
  }

  // One SGD step on the REINFORCE term alone raises log p(a_t) of the chosen regions when the
  // advantage is positive and lowers it when negative.
  void reinforceMovesLogPSelectWithAdvantageSign_data() {
    QTest::addColumn<std::string>("kind");
    QTest::addColumn<double>("baseline");
    QTest::newRow("hard, positive advantage") << std::string("hard") << -100.0;
    QTest::newRow("hard, negative advantage") << std::string("hard") << 100.0;
    QTest::newRow("sharp, positive advantage") << std::string("sharp") << -100.0;
    QTest::newRow("sharp, negative advantage") << std::string("sharp") << 100.0;
    QTest::newRow("hard 2-D, positive advantage") << std::string("hard-2d") << -100.0;
    QTest::newRow("hard 2-D, negative advantage") << std::string("hard-2d") << 100.0;
  }
  void reinforceMovesLogPSelectWithAdvantageSign() {
    QFETCH(std::string, kind);
    QFETCH(double, baseline);
    torch::manual_seed(11);
    const auto cfg = kind == "hard-2d" ? foveal::test::tinyGridConfig("hard") : tinyConfig(kind);
    Recognizer model(cfg);
    model->train();
    const auto batch = makeBatch(cfg, 4);
    const auto mask = validSteps(batch.targets, batch.lengths);
    DecodeOptions opt;
    opt.targets = batch.targets;
    auto out = model->forward(batch.image, batch.upsampled, opt);
    auto terms = lossOf(model, out, batch, 1.0, baseline);
    model->zero_grad();
    terms.reinforce.backward();
    torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(1e-5));
    sgd.step();

    opt.forcedSelection = out.selected;
    auto after = model->forward(batch.image, batch.upsampled, opt);
    const double before = (out.logPSelect.detach() * mask).sum().item<double>();
    const double now = (after.logPSelect.detach() * mask).sum().item<double>();
    const double advantageSign = baseline < 0 ? 1.0 : -1.0;
    QVERIFY2((now - before) * advantageSign > 0,
             qPrintable(QString("log p(a) %1 -> %2").arg(before).arg(now)));
  }

  void softModelHasNoReinforceTerm() {
    const auto cfg = tinyConfig("soft");
    Recognizer model(cfg);
    const auto batch = makeBatch(cfg);
    DecodeOptions opt;
    opt.targets = batch.targets;
    auto out = model->forward(batch.image, batch.upsampled, opt);
    auto terms = lossOf(model, out, batch, 1.0, 0.0);
    QCOMPARE(terms.reinforce.item<double>(), 0.0);
    QCOMPARE(terms.total.item<double>(), terms.nll.item<double>());
  }

  void referenceTermUsesPatches() {
    torch::manual_seed(13);
    const auto cfg = tinyConfig("sharp", ContextKind::Pooling, 1, true);
    Recognizer model(cfg);
    model->train();
    const auto batch = makeBatch(cfg);
    DecodeOptions opt;
    opt.targets = batch.targets;
    auto out = model->forward(batch.image, batch.upsampled, opt);
    auto refs = torch::zeros({11, 1, 32, 24});
    auto terms = lossOf(model, out, batch, 1.0, 0.0, refs);
    QVERIFY(terms.reference.defined());
    // Against all-zero references the term is the mean squared patch over character steps.
    auto charMask =
        validSteps(batch.targets, batch.lengths) * (batch.targets != 0).to(torch::kFloat);
    auto expected = (out.patches[0].pow(2).mean({2, 3, 4}) * charMask).sum() / 2;
    QVERIFY(torch::allclose(terms.reference, expected, 1e-5, 1e-6));
    model->zero_grad();
    terms.reference.backward();
    const auto params = model->named_parameters();  // find() points into this dictionary
    auto* w = params.find("prediction.glimpse.sharpener.stns.0.fc2.bias");
    QVERIFY(w && w->grad().abs().sum().item<double>() > 0);
  }

  void recomputingKeysGivesTheSameDecode() {
    torch::manual_seed(19);
    const auto cfg = tinyConfig("soft");
    Recognizer model(cfg);
    model->eval();
    const auto batch = makeBatch(cfg);
    DecodeOptions opt;
    auto a = model->forward(batch.image, batch.upsampled, opt);
    opt.recomputeKeys = true;
    auto b = model->forward(batch.image, batch.upsampled, opt);
    QVERIFY(torch::allclose(a.logProbs, b.logProbs, 1e-6, 1e-6));
    QVERIFY(torch::equal(a.tokens, b.tokens));
  }

  // Teacher forcing with skipEndedRows: the rows whose label has ended get no glimpse (their
  // patches are zero after the end token's step), and with batch norm in eval mode (its
  // statistics the only thing the skipped rows could change) the loss and every parameter's
  // gradient are those of the full computation; in training mode it runs and stays finite.
  // Every context with one and two STNs, as gradientsReachStnAndEncoder.
  void skippingEndedRowsKeepsTheLoss_data() { gradientsReachStnAndEncoder_data(); }
  void skippingEndedRowsKeepsTheLoss() {
    QFETCH(int, context);
    QFETCH(int, stns);
    torch::manual_seed(23);
    const auto cfg = tinyConfig("sharp", static_cast<ContextKind>(context), stns);
    Recognizer model(cfg);
    const auto batch = makeBatch(cfg, 4);  // lengths 3, max, 3, max
    const auto references = torch::rand({11, 1, cfg.patchH, cfg.patchW});
    auto run = [&](bool skip) {
      DecodeOptions opt;
      opt.targets = batch.targets;
      opt.skipEndedRows = skip;
      model->zero_grad();
      auto out = model->forward(batch.image, batch.upsampled, opt);
      auto terms = lossOf(model, out, batch, 1.0, -0.5, references);
      terms.total.backward();
      std::vector<torch::Tensor> grads;
      for (const auto& p : model->parameters())
        grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
      return std::make_tuple(out, terms.total.item<double>(), grads);
    };
    model->eval();
    const auto [full, fullLoss, fullGrads] = run(false);
    const auto [skip, skipLoss, skipGrads] = run(true);
    QCOMPARE(skip.patches.size(), full.patches.size());
    const int64_t shortLen = batch.lengths[0].item<int64_t>();  // 3: the end token at step 3
    for (int64_t t = 0; t < full.patches[0].size(1); ++t) {
      const double fullMass = full.patches[0][0][t].abs().sum().item<double>();
      const double skipMass = skip.patches[0][0][t].abs().sum().item<double>();
      QVERIFY(fullMass > 0);
      if (t <= shortLen)
        QVERIFY(torch::allclose(skip.patches[0][0][t], full.patches[0][0][t], 1e-5, 1e-6));
      else
        QCOMPARE(skipMass, 0.0);
    }
    QVERIFY2(std::abs(skipLoss - fullLoss) < 1e-5 * (1 + std::abs(fullLoss)),
             qPrintable(QString("loss %1 against %2").arg(skipLoss).arg(fullLoss)));
    QCOMPARE(skipGrads.size(), fullGrads.size());
    for (size_t i = 0; i < fullGrads.size(); ++i)
      QVERIFY2((skipGrads[i] - fullGrads[i]).abs().max().item<double>() <
                   1e-4 * (1 + fullGrads[i].abs().max().item<double>()),
               qPrintable(QString("parameter %1").arg(i)));
    model->train();
    const auto [trained, trainedLoss, trainedGrads] = run(true);
    QVERIFY(std::isfinite(trainedLoss));
    QCOMPARE(trained.patches[0][0][shortLen + 1].abs().sum().item<double>(), 0.0);
  }

  void forcedSelectionReplaysDecode() {
    torch::manual_seed(17);
    const auto cfg = tinyConfig("sharp", ContextKind::Chain);
    Recognizer model(cfg);
    model->eval();
    const auto batch = makeBatch(cfg);
    DecodeOptions opt;
    opt.sample = true;
    auto a = model->forward(batch.image, batch.upsampled, opt);
    opt.sample = false;
    opt.forcedSelection = a.selected;
    auto b = model->forward(batch.image, batch.upsampled, opt);
    QVERIFY(torch::equal(a.selected, b.selected));
    QVERIFY(torch::allclose(a.logProbs, b.logProbs, 1e-5, 1e-6));
  }

  // Beam search. The log-probability of a token sequence: up to and including its first end.
  static double sequenceLogProb(const torch::Tensor& logProbs, const torch::Tensor& tokens) {
    auto lp = logProbs.to(torch::kDouble).contiguous();
    auto tok = tokens.to(torch::kLong).contiguous();
    double sum = 0;
    for (int64_t t = 0; t < tok.size(0); ++t) {
      const int64_t k = tok[t].item<int64_t>();
      sum += lp[t][k].item<double>();
      if (k == 0) break;
    }
    return sum;
  }
  // The tokens up to and including the first end (what a reading is made of).
  static std::vector<int64_t> reading(const torch::Tensor& tokens) {
    std::vector<int64_t> out;
    for (int64_t t = 0; t < tokens.size(0); ++t) {
      out.push_back(tokens[t].item<int64_t>());
      if (out.back() == 0) break;
    }
    return out;
  }

  void beamSearchOfWidthOneIsGreedy_data() { configRows(); }
  void beamSearchOfWidthOneIsGreedy() {
    QFETCH(int, index);
    torch::manual_seed(23);
    const auto cfg = allConfigs()[static_cast<size_t>(index)].config;
    Recognizer model(cfg);
    model->eval();
    torch::NoGradGuard ng;
    const auto batch = makeBatch(cfg, 3);
    auto greedy = model->forward(batch.image, batch.upsampled);
    auto beam = model->beamSearch(batch.image, batch.upsampled, 1);
    QCOMPARE(beam.tokens.sizes(), greedy.tokens.sizes());
    for (int64_t b = 0; b < 3; ++b) {
      const auto read = reading(greedy.tokens[b]);
      QVERIFY(reading(beam.tokens[b]) == read);
      const auto n = static_cast<int64_t>(read.size());
      QVERIFY(torch::equal(beam.selected[b].narrow(0, 0, n), greedy.selected[b].narrow(0, 0, n)));
      const double expected = sequenceLogProb(greedy.logProbs[b], greedy.tokens[b]);
      QVERIFY2(
          std::abs(beam.logProb[b].item<double>() - expected) < 1e-4,
          qPrintable(QStringLiteral("%1 vs %2").arg(beam.logProb[b].item<double>()).arg(expected)));
    }
  }

  // With width K^(T-1) no prefix is ever dropped, so the search must find the most probable of
  // all K^T token sequences, each scored here by teacher forcing.
  void beamSearchIsExactWhenWideEnough_data() {
    QTest::addColumn<std::string>("kind");
    QTest::addColumn<int>("context");
    QTest::newRow("soft") << std::string("soft") << int(ContextKind::Pooling);
    QTest::newRow("hard") << std::string("hard") << int(ContextKind::Pooling);
    QTest::newRow("sharp-weighting") << std::string("sharp") << int(ContextKind::Weighting);
  }
  void beamSearchIsExactWhenWideEnough() {
    QFETCH(std::string, kind);
    QFETCH(int, context);
    torch::manual_seed(29);
    auto cfg = tinyConfig(kind, static_cast<ContextKind>(context));
    cfg.maxLength = 2;  // T = 3 steps, K = 11 classes: 1331 sequences
    Recognizer model(cfg);
    model->eval();
    torch::NoGradGuard ng;
    const auto batch = makeBatch(cfg, 1);
    const int64_t k = model->numClasses(), steps = cfg.steps();
    QCOMPARE(steps, int64_t(3));
    const int64_t all = k * k * k;
    auto targets = torch::empty({all, steps}, torch::kLong);
    for (int64_t i = 0; i < all; ++i) {
      targets[i][0] = i / (k * k);
      targets[i][1] = (i / k) % k;
      targets[i][2] = i % k;
    }
    DecodeOptions forced;
    forced.targets = targets;
    auto scored = model->forward(batch.image.expand({all, -1, -1, -1}).contiguous(),
                                 batch.upsampled.expand({all, -1, -1, -1}).contiguous(), forced);
    double best = -1e30;
    int64_t bestIndex = -1;
    for (int64_t i = 0; i < all; ++i) {
      const double lp = sequenceLogProb(scored.logProbs[i], targets[i]);
      if (lp > best + 1e-9) {
        best = lp;
        bestIndex = i;
      }
    }
    auto beam = model->beamSearch(batch.image, batch.upsampled, static_cast<int>(k * k));
    const double found = beam.logProb[0].item<double>();
    QVERIFY2(std::abs(found - best) < 1e-4,
             qPrintable(QStringLiteral("beam %1, exhaustive %2").arg(found).arg(best)));
    QVERIFY(reading(beam.tokens[0]) == reading(targets[bestIndex]));
    // Every hypothesis of the exact search: the top readings of the enumeration, in order.
    std::map<std::vector<int64_t>, double> distinct;
    for (int64_t i = 0; i < all; ++i)
      distinct[reading(targets[i])] = sequenceLogProb(scored.logProbs[i], targets[i]);
    std::vector<double> ranked;
    for (const auto& [r, lp] : distinct) ranked.push_back(lp);
    std::sort(ranked.rbegin(), ranked.rend());
    for (int64_t h = 0; h < 8; ++h) {
      const double lp = beam.allLogProb[0][h].item<double>();
      QVERIFY2(std::abs(lp - ranked[static_cast<size_t>(h)]) < 1e-4,
               qPrintable(QStringLiteral("hypothesis %1: beam %2, exhaustive %3")
                              .arg(h)
                              .arg(lp)
                              .arg(ranked[static_cast<size_t>(h)])));
      QVERIFY(std::abs(distinct.at(reading(beam.allTokens[0][h])) - lp) < 1e-4);
    }
    // Narrower beams never beat the optimum, and greedy is one of them.
    auto greedy = model->forward(batch.image, batch.upsampled);
    QVERIFY(sequenceLogProb(greedy.logProbs[0], greedy.tokens[0]) <= best + 1e-4);
    for (int w : {2, 3, 5})
      QVERIFY(model->beamSearch(batch.image, batch.upsampled, w).logProb[0].item<double>() <=
              best + 1e-4);
  }

  // forward() with a beam returns the winner decoded again: its tokens, regions, and the
  // log-probabilities the search scored it with; images of a batch do not affect each other.
  void beamDecodeReplaysTheWinner_data() { configRows(); }
  void beamDecodeReplaysTheWinner() {
    QFETCH(int, index);
    torch::manual_seed(31);
    const auto cfg = allConfigs()[static_cast<size_t>(index)].config;
    Recognizer model(cfg);
    model->eval();
    torch::NoGradGuard ng;
    const auto batch = makeBatch(cfg, 3);
    DecodeOptions opt;
    opt.beamWidth = 4;
    auto out = model->forward(batch.image, batch.upsampled, opt);
    auto beam = model->beamSearch(batch.image, batch.upsampled, 4);
    QVERIFY(torch::equal(out.tokens, beam.tokens));
    QVERIFY(torch::equal(out.selected, beam.selected));
    QCOMPARE(out.alpha.size(1), cfg.steps());
    for (int64_t b = 0; b < 3; ++b) {
      const double replayed = sequenceLogProb(out.logProbs[b], out.tokens[b]);
      QVERIFY2(
          std::abs(replayed - beam.logProb[b].item<double>()) < 1e-4,
          qPrintable(QStringLiteral("%1 vs %2").arg(replayed).arg(beam.logProb[b].item<double>())));
      auto one = model->beamSearch(batch.image.narrow(0, b, 1), batch.upsampled.narrow(0, b, 1), 4);
      QVERIFY(reading(one.tokens[0]) == reading(beam.tokens[b]));
      QVERIFY(std::abs(one.logProb[0].item<double>() - beam.logProb[b].item<double>()) < 1e-4);
    }
  }

  // The N best: sorted by log p, the first is the best the search returns, each one's score is
  // the log p of its tokens decoded again with its tokens and regions forced (forward() with
  // beamHypothesis), and no two are the same reading.
  void beamSearchListsTheNBest_data() { configRows(); }
  void beamSearchListsTheNBest() {
    QFETCH(int, index);
    torch::manual_seed(37);
    const auto cfg = allConfigs()[static_cast<size_t>(index)].config;
    Recognizer model(cfg);
    model->eval();
    torch::NoGradGuard ng;
    const int width = 5;
    const auto batch = makeBatch(cfg, 2);
    auto beam = model->beamSearch(batch.image, batch.upsampled, width);
    QCOMPARE(beam.allTokens.sizes(), (torch::IntArrayRef{2, width, cfg.steps()}));
    QCOMPARE(beam.allLogProb.sizes(), (torch::IntArrayRef{2, width}));
    QVERIFY(torch::equal(beam.allTokens.select(1, 0), beam.tokens));
    QVERIFY(torch::equal(beam.allSelected.select(1, 0), beam.selected));
    QVERIFY(torch::equal(beam.allLogProb.select(1, 0), beam.logProb));
    for (int64_t b = 0; b < 2; ++b) {
      std::set<std::vector<int64_t>> readings;
      for (int64_t h = 0; h < width; ++h) {
        const double lp = beam.allLogProb[b][h].item<double>();
        QVERIFY(std::isfinite(lp));  // 11 classes: five prefixes always exist
        if (h > 0) QVERIFY(lp <= beam.allLogProb[b][h - 1].item<double>());
        QVERIFY(readings.insert(reading(beam.allTokens[b][h])).second);
      }
    }
    for (int h = 0; h < width; ++h) {
      DecodeOptions opt;
      opt.beamWidth = width;
      opt.beamHypothesis = h;
      auto out = model->forward(batch.image, batch.upsampled, opt);
      QVERIFY(torch::equal(out.tokens, beam.allTokens.select(1, h)));
      QVERIFY(torch::equal(out.selected, beam.allSelected.select(1, h)));
      for (int64_t b = 0; b < 2; ++b) {
        const double replayed = sequenceLogProb(out.logProbs[b], out.tokens[b]);
        const double scored = beam.allLogProb[b][h].item<double>();
        QVERIFY2(
            std::abs(replayed - scored) < 1e-4,
            qPrintable(QStringLiteral("hypothesis %1: %2 vs %3").arg(h).arg(replayed).arg(scored)));
      }
    }
    DecodeOptions past;
    past.beamWidth = width;
    past.beamHypothesis = width;
    QVERIFY_THROWS_EXCEPTION(Error, model->forward(batch.image, batch.upsampled, past));
  }

  void beamSearchIsForInferenceOnly() {
    const auto cfg = tinyConfig("hard");
    Recognizer model(cfg);
    const auto batch = makeBatch(cfg);
    DecodeOptions opt;
    opt.beamWidth = 3;
    model->train();
    QVERIFY_THROWS_EXCEPTION(Error, model->forward(batch.image, batch.upsampled, opt));
    model->eval();
    opt.sample = true;
    QVERIFY_THROWS_EXCEPTION(Error, model->forward(batch.image, batch.upsampled, opt));
    QVERIFY_THROWS_EXCEPTION(Error, model->beamSearch(batch.image, batch.upsampled, 0));
  }
};

QTEST_APPLESS_MAIN(TestModel)
#include "test_model.moc"
