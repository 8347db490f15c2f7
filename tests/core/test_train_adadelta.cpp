// ADADELTA against hand-computed steps of Zeiler's update rule (with PyTorch's weight decay), its
// state surviving save/load, and the training config: JSON round trip, presets, errors.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "train/adadelta.h"
#include "train/step_kernels.h"
#include "train/train_config.h"

using namespace foveal::core;
using namespace foveal::core::train;

namespace {

// One parameter element through the published rule, in double.
struct Scalar {
  double theta, eg2 = 0, edx2 = 0;
  void step(double grad, double lr, double rho, double eps, double wd) {
    const double g = grad + wd * theta;
    eg2 = rho * eg2 + (1 - rho) * g * g;
    const double dx = std::sqrt(edx2 + eps) / std::sqrt(eg2 + eps) * g;
    edx2 = rho * edx2 + (1 - rho) * dx * dx;
    theta -= lr * dx;
  }
};

}  // namespace

class TestTrainAdadelta : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void handComputedSteps_data() {
    QTest::addColumn<double>("lr");
    QTest::addColumn<double>("wd");
    QTest::newRow("paper") << 1.0 << 4e-5;
    QTest::newRow("no decay, lr 0.5") << 0.5 << 0.0;
    QTest::newRow("strong decay") << 1.0 << 0.1;
  }
  void handComputedSteps() {
    QFETCH(double, lr);
    QFETCH(double, wd);
    const double rho = 0.95, eps = 1e-6;
    auto p = torch::tensor({1.5, -2.0, 0.25}, torch::kDouble).requires_grad_();
    AdadeltaOptions o(lr);
    o.weight_decay(wd);
    Adadelta opt({p}, o);
    std::vector<Scalar> ref = {{1.5}, {-2.0}, {0.25}};
    const std::vector<std::vector<double>> grads = {
        {0.3, -1.0, 4.0}, {0.1, 0.5, -2.0}, {-0.7, 0.0, 1.0}, {2.0, -3.0, 0.01}};
    for (const auto& g : grads) {
      p.mutable_grad() = torch::tensor(g, torch::kDouble);
      opt.step();
      for (size_t i = 0; i < ref.size(); ++i) ref[i].step(g[i], lr, rho, eps, wd);
      for (size_t i = 0; i < ref.size(); ++i)
        QVERIFY2(std::abs(p[static_cast<int64_t>(i)].item<double>() - ref[i].theta) < 1e-12,
                 qPrintable(QString("element %1: %2 vs %3")
                                .arg(i)
                                .arg(p[static_cast<int64_t>(i)].item<double>())
                                .arg(ref[i].theta)));
    }
    // The first step of ADADELTA moves by about sqrt(eps)/sqrt((1-rho) g^2 + eps) * g: small.
    QVERIFY(std::abs(p[0].item<double>() - 1.5) < 0.05);
  }

  void firstStepByHand() {
    // theta 1, g 2, no decay: E[g2] = 0.05 * 4 = 0.2; dx = sqrt(1e-6)/sqrt(0.2 + 1e-6) * 2.
    auto p = torch::ones({1}, torch::kDouble).requires_grad_();
    AdadeltaOptions o(1.0);
    o.weight_decay(0);
    Adadelta opt({p}, o);
    p.mutable_grad() = torch::full({1}, 2.0, torch::kDouble);
    opt.step();
    const double dx = std::sqrt(1e-6) / std::sqrt(0.2 + 1e-6) * 2.0;
    QCOMPARE(p.item<double>(), 1.0 - dx);
    QVERIFY(opt.stateOf(torch::zeros({1}, torch::kDouble)) == nullptr);  // not a parameter
    QVERIFY(opt.stateOf(p) != nullptr);
    const auto& st = *opt.stateOf(p);
    QCOMPARE(st.square_avg().item<double>(), 0.05 * 4.0);
    QCOMPARE(st.acc_delta().item<double>(), 0.05 * dx * dx);
    QCOMPARE(st.step(), int64_t(1));
  }

  // The single fused pass (float, contiguous: every parameter of a CPU model) against the
  // tensor ops it replaces, with weight decay, over steps whose state grows from zero; a
  // parameter the pass does not take (a transposed view) still updates by the tensor ops.
  void fusedPassMatchesTheTensorOps() {
    torch::manual_seed(4);
    auto a = torch::randn({70001}).requires_grad_();  // odd: a partial vector at the end
    auto b = a.detach().clone().requires_grad_();
    auto c = torch::randn({40, 30}).t().requires_grad_();  // not contiguous
    auto d = c.detach().clone().requires_grad_();
    AdadeltaOptions o(0.7);
    o.weight_decay(1e-2);
    Adadelta fused({a, c}, o), plain({b, d}, o);
    for (int i = 0; i < 5; ++i) {
      const auto g = torch::randn({70001}) * (i + 1), h = torch::randn({30, 40});
      a.mutable_grad() = g;
      b.mutable_grad() = g.clone();
      c.mutable_grad() = h;
      d.mutable_grad() = h.clone();
      setFusedAdadelta(true);
      fused.step();
      setFusedAdadelta(false);
      plain.step();
      setFusedAdadelta(true);
      const double err = (a - b).abs().max().item<double>();
      QVERIFY2(err < 1e-6, qPrintable(QString("step %1: %2").arg(i).arg(err)));
      QVERIFY(torch::equal(c, d));
    }
  }

  // The gradient norm's sum of squares: one pass in double, against a plain double loop, at
  // lengths with and without a partial group of eight.
  void squaredSumIsTheDoubleSum() {
    for (int64_t n : {0, 5, 8, 1003, 65536}) {
      const auto x = torch::randn({n});
      const float* p = x.data_ptr<float>();
      double want = 0;
      for (int64_t i = 0; i < n; ++i) want += static_cast<double>(p[i]) * p[i];
      const double got = squaredSum(p, n);
      QVERIFY2(std::abs(got - want) <= 1e-12 * std::max(1.0, want),
               qPrintable(QString("n %1: %2 vs %3").arg(n).arg(got).arg(want)));
    }
  }

  void stateSurvivesSaveLoad() {
    torch::manual_seed(3);
    auto a = torch::randn({4, 3}).requires_grad_();
    auto b = a.detach().clone().requires_grad_();
    Adadelta optA({a});
    for (int i = 0; i < 3; ++i) {
      a.mutable_grad() = torch::randn({4, 3});
      optA.step();
    }
    std::stringstream buf;
    {
      torch::serialize::OutputArchive out;
      optA.save(out);
      out.save_to(buf);
    }
    b.detach().copy_(a.detach());  // b: same weights, fresh optimiser, then the loaded state
    Adadelta optB({b});
    {
      torch::serialize::InputArchive in;
      in.load_from(buf);
      optB.load(in);
    }
    for (int i = 0; i < 3; ++i) {
      auto g = torch::randn({4, 3});
      a.mutable_grad() = g;
      b.mutable_grad() = g.clone();
      optA.step();
      optB.step();
    }
    QVERIFY(torch::equal(a, b));
    // Without the state the trajectory differs: the test can fail.
    auto c = a.detach().clone().requires_grad_();
    Adadelta optC({c});
    c.mutable_grad() = torch::ones({4, 3});
    a.mutable_grad() = torch::ones({4, 3});
    optA.step();
    optC.step();
    QVERIFY(!torch::allclose(a, c));
  }

  void configJsonRoundTrip() {
    auto c = presetConfig("digits-sharp-pooling-reference", 0.25);
    c.batchSize = 17;
    c.lambdaR = 0.5;
    c.evalData = {"digits:len=3,split=test,count=10"};
    c.skipEndedRows = true;
    const auto back = TrainConfig::fromJson(c.toJson());
    QCOMPARE(back.toJson(), c.toJson());
    QCOMPARE(back.model.width, 0.25);
    QVERIFY(back.model.reference);
    QCOMPARE(back.batchSize, 17);
    QVERIFY(back.skipEndedRows);
    // A config written before the option reads as off: a resumed run keeps its computation.
    auto j = nlohmann::json::parse(c.toJson());
    j.erase("skip_ended_rows");
    QVERIFY(!TrainConfig::fromJson(j.dump()).skipEndedRows);
  }

  void presetsFollowThePaper() {
    const auto all = presets();
    QCOMPARE(int(all.size()), 17);
    for (const auto& p : all) {
      const bool digits = p.name.rfind("digits-", 0) == 0;
      QCOMPARE(p.config.batchSize, 192);
      QCOMPARE(p.config.lr, 1.0);
      QCOMPARE(p.config.rho, 0.95);
      QCOMPARE(p.config.weightDecay, 4e-5);
      QCOMPARE(p.config.lambdaR, digits ? 1.0 : 0.1);
      QCOMPARE(p.config.model.preprocessing.regionScale, digits ? 1.8 : 2.0);
      QCOMPARE(p.config.iterations, digits ? int64_t(30000) : int64_t(400000));
      p.config.validate();
    }
    QCOMPARE(presetConfig("text-sharp-chain-1stn").model.numStns, 1);
    QCOMPARE(presetConfig("text-sharp-weighting-2stn").model.numStns, 2);
    QVERIFY(presetConfig("text-sharp-weighting-2stn").model.context == ContextKind::Weighting);
    QCOMPARE(digitProtocolSets().size(), size_t(10));
    // The field's models on the digit task, their stages from the one catalogue.
    QCOMPARE(presetConfig("digits-crnn").model.stageString(), std::string("none-vgg-bilstm-ctc"));
    QCOMPARE(presetConfig("digits-rare").model.stageString(),
             std::string("tps-vgg-bilstm-attention(soft)"));
    QCOMPARE(presetConfig("digits-trba").model.stageString(),
             std::string("tps-resnet-bilstm-attention(soft)"));
    QCOMPARE(presetConfig("digits-rare").model.cell, std::string("dtrb"));
    QCOMPARE(presetConfig("digits-crnn").model.charset, std::string("0123456789"));
  }

  void badConfigsNameTheProblem() {
    try {
      presetConfig("digits-soft-x");
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("unknown preset 'digits-soft-x'"));
      QVERIFY(QString(e.what()).contains("digits-sharp-chain"));
    }
    auto c = presetConfig("digits-soft");
    c.batchSize = 0;
    try {
      TrainConfig::fromJson(c.toJson(), "run/config.json");
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).startsWith("run/config.json: ") &&
                   QString(e.what()).contains("batch size"),
               e.what());
    }
    try {
      TrainConfig::fromJson("{\"model\": 3}", "x.json");
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).startsWith("x.json"), e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestTrainAdadelta)
#include "test_train_adadelta.moc"
