#include "trace/truth_alignment.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/utf8.h"
#include "model/charset.h"
#include "model/kraken_bidi.h"
#include "model/kraken_codec.h"
#include "trace/localisation.h"
#include "trace/trace_builder.h"

namespace foveal::core {

namespace {

std::vector<TruthUnit> krakenUnits(const ModelConfig& config, const std::string& truth) {
  const KrakenCodec codec = KrakenCodec::fromJson(config.kraken.codecJson, "the model's codec");
  // The order kraken's network reads: the truth through the display reordering kraken applies to
  // its training lines (the same map rpred applies to a reading to give it back in logical order).
  const std::u32string logical = krakenCodepoints(truth, "the truth");
  const std::u32string display = krakenDisplayMap(logical, KrakenBaseDir::Auto).text;
  std::u32string missing;
  const auto codes = codec.encode(display, &missing);
  if (!missing.empty()) {
    std::string list;
    for (char32_t cp : missing) list += (list.empty() ? "'" : ", '") + utf8Of(cp) + "'";
    throw Error("the truth \"" + truth + "\" has " +
                (missing.size() == 1 ? std::string("a character")
                                     : std::to_string(missing.size()) + " characters") +
                " outside the model's codec: " + list);
  }
  std::vector<TruthUnit> units;
  for (const auto& c : codes) units.push_back({utf8Of(c.text), c.labels});
  return units;
}

}  // namespace

std::vector<TruthUnit> truthUnits(const ModelConfig& config, const std::string& truth) {
  if (!config.kraken.empty()) return krakenUnits(config, truth);
  return charsetUnits(config.makeCharset(), truth);
}

void alignTruth(Trace& tr, Recognizer& model, const RecognizerOutput& out, const ModelInput& input,
                int b, const std::string& truth) {
  tr.alignment = {};
  tr.alignment.truth = truth;
  if (truth.empty()) return;
  try {
    const auto& cfg = model->config;
    if (!cfg.isCtc() || !out.logProbs.defined())
      throw Error("forced alignment needs a CTC model, and " + cfg.stageString() +
                  " decodes by attention");
    const Charset charset = cfg.makeCharset();
    const auto lp =
        out.logProbs.select(0, b).detach().to(torch::kCPU, torch::kDouble).contiguous();  // [M, K]
    const int m = static_cast<int>(lp.size(0)), k = static_cast<int>(lp.size(1));
    const int contentW = static_cast<size_t>(b) < input.contentW.size()
                             ? input.contentW[static_cast<size_t>(b)]
                             : cfg.preprocessing.inputW;
    const bool kraken = !cfg.kraken.empty();
    // kraken reads the line's own frames (its batch may be padded beyond them), as applyKraken.
    const int frames = kraken ? std::min(m, model->geometry(contentW).columns) : m;
    const double* p = lp.data_ptr<double>();
    const std::vector<double> logProbs(p, p + static_cast<size_t>(frames) * k);
    std::vector<int> shown;
    if (out.tokens.defined()) {
      const auto path = out.tokens.select(0, b).to(torch::kCPU, torch::kLong).contiguous();
      for (int t = 0; t < frames && t < path.size(0); ++t)
        shown.push_back(static_cast<int>(path[t].item<int64_t>()));
    }
    std::vector<std::string> names;
    for (int c = 0; c < k; ++c) names.push_back(c == charset.blankIndex() ? "" : charset.token(c));

    // The frames -> box mapping of the greedy steps (buildTrace).
    FrameSpanMapper locate;
    if (kraken) {
      const KrakenScale scale =
          KrakenScale::forLine(contentW, std::max(1, frames), tr.imageW, cfg.kraken.padding);
      const int width = tr.imageW, height = tr.imageH;
      locate = [scale, width, height](const std::vector<int>& f, size_t) {
        const int x0 = scale.toPixel(f.front(), 0, width), x1 = scale.toPixel(f.back(), 0, width);
        return FrameSpanLocation{{static_cast<double>(x0), 0.0, static_cast<double>(x1 - x0),
                                  static_cast<double>(height)},
                                 {0.5 * (x0 + x1), 0.5 * height}};
      };
    } else {
      const auto rf = model->geometry(static_cast<int>(input.image.size(3)));
      const auto seenW = out.rectified.defined() ? out.rectified.size(-1) : input.image.size(-1);
      const bool wide = usesFocusBoxes(rf, static_cast<int>(seenW)) && tr.gridRows == 1 &&
                        tr.regionCentres.size() >= 2;
      const double stride = tr.regionCentres.size() >= 2
                                ? std::abs(tr.regionCentres[1].x - tr.regionCentres[0].x)
                                : 0.0;
      const Trace* geometry = &tr;
      locate = [geometry, wide, stride](const std::vector<int>& f, size_t characters) {
        TraceStep st;
        st.columns = f;
        const StepLocation at =
            locateStep(st, {}, geometry->regions, FocusRule::Columns, geometry->imageW,
                       geometry->imageH, geometry->regionCentres);
        FrameSpanLocation where{at.box, at.focus};
        if (wide)
          where.box = focusBox(at.focus.x, stride, characters, geometry->imageW, geometry->imageH);
        return where;
      };
    }
    tr.alignment = alignTranscription(truth, truthUnits(cfg, truth), logProbs, frames, k, shown,
                                      charset.blankIndex(), locate, names);
  } catch (const Error& e) {
    tr.alignment = {};
    tr.alignment.truth = truth;
    tr.alignment.error = e.what();
  }
}

}  // namespace foveal::core
