// Traces: every field of the JSON a user sees agrees with the tensors it was made from.
#include <torch/torch.h>
#include <QtTest/QtTest>
#include <nlohmann/json.hpp>

#include "formats/checkpoint.h"
#include "image/preprocess.h"
#include "model/charset.h"
#include "model/stages/stage_registry.h"
#include "test_models.h"
#include "trace/model_session.h"
#include "trace/trace_builder.h"

using namespace foveal::core;
using foveal::test::allConfigs;
using nlohmann::json;

class TestTrace : public QObject {
  Q_OBJECT
  QTemporaryDir m_dir;
  GreyImage m_image;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    const QString samples = QStringLiteral(FOVEAL_SAMPLES_DIR);
    m_image = readImage(
        (samples + (hasImageCodecs() ? "/images/digits-46214.png" : "/images/digits-46214.pgm"))
            .toStdString());
    QCOMPARE(m_image.width, 160);
  }

  void jsonAgreesWithTensors_data() {
    QTest::addColumn<int>("index");
    const auto configs = allConfigs();
    for (size_t i = 0; i < configs.size(); ++i) QTest::newRow(configs[i].name.c_str()) << int(i);
  }
  void jsonAgreesWithTensors() {
    QFETCH(int, index);
    auto cfg = allConfigs()[static_cast<size_t>(index)].config;
    const QString file = m_dir.filePath(QString("t%1.fvm").arg(index));
    {
      torch::manual_seed(200 + index);
      Recognizer m(cfg);
      // Random attention weights are near uniform; sharpen them so argmax regions vary.
      torch::NoGradGuard g;
      for (auto& p : m->named_parameters())
        if (p.key().rfind("prediction.attention.", 0) == 0) p.value().mul_(25.0);
      saveCheckpoint(file.toStdString(), m);
    }
    auto session = ModelSession::open(file.toStdString());
    const auto trace = session->trace(m_image, "digits.png");
    const json j = json::parse(trace.toJson());
    for (const char* key : {"prediction", "confidence", "regions", "steps"})
      QVERIFY2(j.contains(key), key);
    // The maps by name: attention over the regions, its values each step's "alpha".
    QCOMPARE(j["maps"].size(), size_t(1));
    QCOMPARE(j["maps"][0]["name"].get<std::string>(), std::string(kAttentionMap));
    QCOMPARE(j["maps"][0]["layout"].get<std::string>(), std::string("regions"));
    QCOMPARE(j["patch"].get<std::string>(), std::string(cfg.attention == "sharp"  ? "stn"
                                                        : cfg.attention == "soft" ? "alpha-weighted"
                                                                                  : "region"));

    // The same decode, straight from the tensors.
    auto loaded = loadCheckpoint(file.toStdString());
    auto input = preprocess({m_image}, cfg.preprocessing, cfg.attention == "sharp");
    torch::NoGradGuard ng;
    auto out = loaded.model->forward(input.image, input.upsampled);
    const Charset cs(cfg.charset);
    auto probs = out.logProbs[0].exp();

    // Regions: the backbone's boxes scaled into source pixels (160x32 source, 100x32 input);
    // a grid's cells row by row.
    const auto rf = featureGeometry(cfg.features, cfg.width, 100, 32);
    const int regions = rf.regionCount();
    QCOMPARE(int(j["regions"].size()), regions);
    QCOMPARE(j["grid"]["rows"].get<int>(), cfg.isGrid() ? 4 : 1);
    QCOMPARE(j["grid"]["columns"].get<int>(), cfg.isGrid() ? 25 : 24);
    for (int i = 0; i < regions; ++i) {
      if (!cfg.isGrid()) {
        QCOMPARE(j["regions"][i]["x"].get<double>(), (4.0 * i - 19) * 1.6);
        QCOMPARE(j["regions"][i]["w"].get<double>(), 46 * 1.6);
        QCOMPARE(j["regions"][i]["h"].get<double>(), 32.0);
        continue;
      }
      // Cell (r, c): centre (4c + 1.5, 8r + 3.5) in input pixels, 42 x 62 before clipping (by
      // hand from the layers), so every cell's box spans the 32 rows once clipped.
      const int r = i / 25, c = i % 25;
      const double x0 = 4.0 * c + 1.5 - 20.5, y0 = 8.0 * r + 3.5 - 30.5;
      QCOMPARE(j["regions"][i]["x"].get<double>(), x0 * 1.6);
      QCOMPARE(j["regions"][i]["w"].get<double>(), 42 * 1.6);
      QCOMPARE(j["regions"][i]["y"].get<double>(), std::max(0.0, y0));
      QCOMPARE(j["regions"][i]["h"].get<double>(), std::min(32.0, y0 + 62) - std::max(0.0, y0));
    }

    std::vector<int> tokens;
    double confidence = 1;
    const auto& steps = j["steps"];
    QVERIFY(!steps.empty());
    for (size_t t = 0; t < steps.size(); ++t) {
      const auto& s = steps[t];
      const auto ti = static_cast<int64_t>(t);
      const int tok = static_cast<int>(out.tokens[0][ti].item<int64_t>());
      tokens.push_back(tok);
      QCOMPARE(s["token"].get<std::string>(), cs.token(tok));
      QVERIFY(std::abs(s["prob"].get<double>() - probs[ti][tok].item<double>()) < 1e-6);
      confidence *= probs[ti][tok].item<double>();
      // top-5: sorted, the first is the token, each probability from the tensor.
      QCOMPARE(int(s["topk"].size()), 5);
      for (int k = 0; k < 5; ++k) {
        const int idx = s["topk"][k]["index"].get<int>();
        QVERIFY(std::abs(s["topk"][k]["prob"].get<double>() - probs[ti][idx].item<double>()) <
                1e-6);
        if (k > 0)
          QVERIFY(s["topk"][k]["prob"].get<double>() <= s["topk"][k - 1]["prob"].get<double>());
      }
      QCOMPARE(s["topk"][0]["index"].get<int>(), tok);
      // alpha and its entropy.
      auto alpha = out.alpha[0][ti];
      QCOMPARE(int(s["alpha"].size()), regions);
      for (int i = 0; i < regions; ++i)
        QVERIFY(std::abs(s["alpha"][i].get<double>() - alpha[i].item<double>()) < 1e-6);
      // 0 log 0 = 0: a peaked alpha has exact zeros.
      const double h = -torch::where(alpha > 0, alpha * alpha.log(), torch::zeros_like(alpha))
                            .sum()
                            .item<double>();
      QVERIFY(std::abs(s["entropy"].get<double>() - h) < 1e-5);
      QCOMPARE(s["region"].get<int64_t>(), out.selected[0][ti].item<int64_t>());
      // STN quads: the patch corners mapped through theta, then to source pixels.
      QCOMPARE(int(s["stn"].size()), int(out.thetas.size()));
      for (size_t k = 0; k < out.thetas.size(); ++k) {
        auto th = out.thetas[k][0][ti];
        const double corners[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
        for (int c = 0; c < 4; ++c) {
          const double xn = th[0][0].item<double>() * corners[c][0] +
                            th[0][1].item<double>() * corners[c][1] + th[0][2].item<double>();
          const double yn = th[1][0].item<double>() * corners[c][0] +
                            th[1][1].item<double>() * corners[c][1] + th[1][2].item<double>();
          QVERIFY(std::abs(s["stn"][k]["quad"][c][0].get<double>() - (xn + 1) / 2 * 160) < 1e-3);
          QVERIFY(std::abs(s["stn"][k]["quad"][c][1].get<double>() - (yn + 1) / 2 * 32) < 1e-3);
        }
        const auto& patch = trace.steps[t].stn[k].patch;
        QCOMPARE(int64_t(patch.width), out.patches[k].size(4));
        const double v = out.patches[k][0][ti][0][7][5].item<double>();
        QCOMPARE(int(patch.at(5, 7)), int(std::lround(std::clamp((v + 1) * 127.5, 0.0, 255.0))));
      }
      QVERIFY(!trace.steps[t].patch.empty());
    }
    // Steps stop at the first end token (or run to the last step).
    const bool ended = tokens.back() == Charset::kEnd;
    QVERIFY(ended || int(steps.size()) == cfg.steps());
    for (size_t t = 0; t + 1 < tokens.size(); ++t) QVERIFY(tokens[t] != Charset::kEnd);
    QCOMPARE(j["prediction"].get<std::string>(), cs.decode(tokens));
    QVERIFY(std::abs(j["confidence"].get<double>() - confidence) < 1e-9);

    // Localisation: each step's focus by its glimpse's rule, computed here from the JSON's own
    // alpha, regions and quads; evaluation's locateDecodedSteps gives the same points and boxes.
    const std::string rule = j["focus_rule"];
    const auto located = locateDecodedSteps(loaded.model, out, 0, 160, 32);
    QCOMPARE(located.size(), steps.size());
    for (size_t t = 0; t < steps.size(); ++t) {
      const auto& s = steps[t];
      double fx = 0, fy = 0;
      // A region's centre: its box's (x is never clipped; a column's box is clipped
      // symmetrically), or for a grid the cell's receptive-field centre, 8r + 4.
      auto cx = [&](int i) {
        return j["regions"][i]["x"].get<double>() + j["regions"][i]["w"].get<double>() / 2;
      };
      auto cy = [&](int i) { return cfg.isGrid() ? 8.0 * (i / 25) + 4.0 : 16.0; };
      for (int i = 0; i < regions; ++i) {
        QCOMPARE(j["region_centres"][i][0].get<double>(), cx(i));
        QCOMPARE(j["region_centres"][i][1].get<double>(), cy(i));
      }
      if (rule == "alpha-mean") {
        // 2-D: the alpha-weighted mean of the cells' centres (docs/DESIGN.md "Localisation").
        double sum = 0;
        for (int i = 0; i < regions; ++i) {
          fx += s["alpha"][i].get<double>() * cx(i);
          fy += s["alpha"][i].get<double>() * cy(i);
          sum += s["alpha"][i].get<double>();
        }
        fx /= sum;  // alpha is float: its sum is 1 to about 1e-7
        fy /= sum;
      } else if (rule == "selected") {
        fx = cx(s["region"].get<int>());
        fy = cy(s["region"].get<int>());
      } else {
        QCOMPARE(rule, std::string("stn-quad"));
        for (int c = 0; c < 4; ++c) fx += s["stn"].back()["quad"][c][0].get<double>() / 4;
        for (int c = 0; c < 4; ++c) fy += s["stn"].back()["quad"][c][1].get<double>() / 4;
      }
      QVERIFY2(std::abs(s["focus"][0].get<double>() - fx) < 1e-6, s.dump().c_str());
      QVERIFY2(std::abs(s["focus"][1].get<double>() - fy) < 1e-6, s.dump().c_str());
      QVERIFY(std::abs(located[t].focus.x - fx) < 1e-6);
      QVERIFY(std::abs(located[t].box.x - s["box"]["x"].get<double>()) < 1e-6);
      QVERIFY(std::abs(located[t].box.w - s["box"]["w"].get<double>()) < 1e-6);
      // Clipped to the image.
      QVERIFY(s["box"]["x"].get<double>() >= 0 &&
              s["box"]["x"].get<double>() + s["box"]["w"].get<double>() <= 160 + 1e-9);
    }
  }

  // A trace's per-step maps by name: attention's values are the steps' "alpha" (the field today's
  // readers read), every other map's are under the step's "maps", named in the trace's "maps"
  // with its layout; a step a map was not computed for has no values.
  void mapsAreNamedPerStep() {
    Trace tr;
    tr.imageW = 2;
    tr.imageH = 1;
    tr.regions = {{0, 0, 1, 1}, {1, 0, 1, 1}};
    tr.steps.resize(2);
    tr.addMap(kAttentionMap, "α").steps = {{0.25, 0.75}, {1.0, 0.0}};
    StepMap& saliency = tr.addMap("saliency", "∂ log p / ∂x", MapLayout::Pixels);
    saliency.width = 2;
    saliency.height = 1;
    saliency.steps = {{0.5, -0.5}};
    QVERIFY(tr.hasMap(kAttentionMap) && tr.hasMap("saliency") && !tr.hasMap("occlusion"));
    QCOMPARE(tr.mapNames(), (std::vector<std::string>{kAttentionMap, "saliency"}));
    QCOMPARE(tr.attention(1), (std::vector<double>{1.0, 0.0}));
    QVERIFY(tr.stepMap("saliency", 1).empty());
    QVERIFY(tr.stepMap("occlusion", 0).empty());
    QVERIFY(tr.attention(2).empty());

    const json j = json::parse(tr.toJson());
    QCOMPARE(j["maps"].size(), size_t(2));
    QCOMPARE(j["maps"][1]["name"].get<std::string>(), std::string("saliency"));
    QCOMPARE(j["maps"][1]["layout"].get<std::string>(), std::string("pixels"));
    QCOMPARE(j["maps"][1]["size"], json({2, 1}));
    QVERIFY(!j["maps"][0].contains("size"));
    QCOMPARE(j["steps"][0]["alpha"], json({0.25, 0.75}));
    QCOMPARE(j["steps"][0]["maps"]["saliency"], json({0.5, -0.5}));
    QVERIFY(!j["steps"][0]["maps"].contains(kAttentionMap));
    QCOMPARE(j["steps"][1]["maps"]["saliency"], json::array());
    // The CSV's alpha columns are the attention map's.
    QVERIFY(QString::fromStdString(tr.toCsv()).contains(",0.25,0.75,"));
  }

  void samplingIsReproducible() {
    auto session = ModelSession::create(foveal::test::tinyConfig("hard"), 3);
    TraceOptions opt;
    opt.sample = true;
    opt.seed = 42;
    opt.stopAtEnd = false;
    const auto a = session->trace(m_image, "x", opt);
    const auto b = session->trace(m_image, "x", opt);
    QCOMPARE(a.toJson(), b.toJson());
    opt.seed = 43;
    const auto c = session->trace(m_image, "x", opt);
    QVERIFY(a.toJson() != c.toJson());  // near-uniform alpha over 24 regions: samples differ
  }

  void softPatchIsAlphaWeightedReceptiveField() {
    auto session = ModelSession::create(foveal::test::tinyConfig("soft"), 4);
    const auto tr = session->trace(m_image, "x");
    QCOMPARE(tr.steps[0].patch.width, 46);
    QCOMPARE(tr.steps[0].patch.height, 32);
    QVERIFY(tr.steps[0].stn.empty());
  }

  // A beam trace lists the N best readings; choosing one shows its steps (its tokens and regions),
  // its reading and confidence; the table and the JSON list them too.
  void beamTraceListsTheNBest() {
    auto session = ModelSession::create(foveal::test::tinyConfig("hard"), 6);
    TraceOptions opt;
    opt.beamWidth = 4;
    const auto best = session->trace(m_image, "x", opt);
    QCOMPARE(best.hypotheses.size(), size_t(4));
    QCOMPARE(best.hypothesis, 0);
    QCOMPARE(best.prediction, best.hypotheses[0].reading);
    for (size_t h = 1; h < 4; ++h)
      QVERIFY(best.hypotheses[h].logProb <= best.hypotheses[h - 1].logProb);
    for (int h = 0; h < 4; ++h) {
      opt.beamHypothesis = h;
      const auto tr = session->trace(m_image, "x", opt);
      const auto& hyp = tr.hypotheses[static_cast<size_t>(h)];
      QCOMPARE(tr.hypothesis, h);
      QCOMPARE(tr.prediction, hyp.reading);
      QCOMPARE(tr.steps.size(), hyp.tokens.size());
      double logp = 0;
      for (size_t t = 0; t < tr.steps.size(); ++t) {
        QCOMPARE(tr.steps[t].tokenIndex, hyp.tokens[t]);
        QCOMPARE(tr.steps[t].region, hyp.regions[t]);
        logp += std::log(tr.steps[t].prob);
      }
      QVERIFY2(std::abs(logp - hyp.logProb) < 1e-4,
               qPrintable(QStringLiteral("%1 vs %2").arg(logp).arg(hyp.logProb)));
      const auto j = json::parse(tr.toJson());
      QCOMPARE(j["hypotheses"].size(), size_t(4));
      QCOMPARE(j["hypothesis"].get<int>(), h);
      QCOMPARE(j["hypotheses"][h]["reading"].get<std::string>(), hyp.reading);
    }
    const QString table = QString::fromStdString(best.toTable());
    QVERIFY(table.contains("the 4 best readings"));
    opt.beamHypothesis = 4;
    QVERIFY_THROWS_EXCEPTION(std::exception, session->trace(m_image, "x", opt));
    opt.beamWidth = 1;
    opt.beamHypothesis = 1;
    QVERIFY_THROWS_EXCEPTION(std::exception, session->trace(m_image, "x", opt));
    opt.beamHypothesis = 0;
    QVERIFY(session->trace(m_image, "x", opt).hypotheses.empty());
  }

  void tableListsEveryStep() {
    auto session =
        ModelSession::create(foveal::test::tinyConfig("sharp", ContextKind::Chain, 2), 5);
    const auto tr = session->trace(m_image, "digits.png");
    const QString table = QString::fromStdString(tr.toTable());
    QVERIFY(table.contains("prediction"));
    QCOMPARE(table.count("stn2 quad"), int(tr.steps.size()));
  }
};

QTEST_APPLESS_MAIN(TestTrace)
#include "test_trace.moc"
