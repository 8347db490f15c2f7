#include "cli_explain.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cli_args.h"
#include "cli_model.h"
#include "engines/tesseract_spec.h"
#include "image/colour_png.h"
#include "model/charset.h"
#include "trace/model_session.h"
#include "trace/pixel_maps.h"

namespace fs = std::filesystem;

namespace foveal::app {

const char* kExplainUsage =
    R"(  explain     --model FILE IMAGE [--method attention|saliency|grad-input|ig|occlusion]
              [--ig-steps N] [--tokens] [--patch N] [--stride N] [--target TOKEN]
              [--contrast TOKEN] [--step T] [--beam N [--hypothesis I]] [--threads N]
              [--json | --out DIR]
              why each step read its token: a map over the source image's pixels per step,
              teacher-forced on the reading shown (greedy, or a beam hypothesis): gradient
              saliency, gradient x input, integrated gradients (default; --ig-steps, 32, from a
              mid-grey image; the table shows the completeness error; --tokens also attributes
              to the previous tokens: "from the image x %"), occlusion (--patch, 8, and
              --stride, 4, source pixels: the drop in p(token)), or the attention itself;
              --target explains another token at the step, --contrast TOKEN why the token
              rather than TOKEN; --step T one step (0 = the first); --json the figures and maps,
              --out DIR one PNG overlay per step and explanation.json
)";

namespace {

int classOf(const core::Charset& charset, const std::string& token, const char* option) {
  for (int i = 0; i < charset.size(); ++i)
    if (charset.token(i) == token) return i;
  throw std::invalid_argument(std::string("--") + option + " '" + token +
                              "': the model has no such token");
}

std::string safeName(const std::string& token) {
  std::string out;
  for (char c : token) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

void writeText(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw core::Error(path.string() + ": write failed");
}

// The attention map as an "explanation": the trace's own map over the source pixels.
core::Explanation attentionExplanation(const core::Trace& trace, const std::vector<int>& steps) {
  core::Explanation e;
  e.width = trace.imageW;
  e.height = trace.imageH;
  e.maps.resize(trace.steps.size());
  for (int t : steps) {
    e.maps[static_cast<size_t>(t)] =
        core::stepPixelMap(trace, core::kAttentionMap, static_cast<size_t>(t));
    core::StepAttribution s;
    s.step = t;
    s.target = trace.steps[static_cast<size_t>(t)].tokenIndex;
    s.value = std::log(std::max(trace.steps[static_cast<size_t>(t)].prob, 1e-300));
    for (double v : e.maps[static_cast<size_t>(t)]) s.imageTotal += v;
    e.steps.push_back(s);
  }
  return e;
}

// --method and the options of the attribution methods.
core::AttributionOptions parseAttributionOptions(const CliArgs& a, const std::string& method,
                                                 bool attention) {
  core::AttributionOptions o;
  if (!attention) {
    try {
      o.method = core::attributionMethodFromString(method);
    } catch (const core::Error& e) {
      throw std::invalid_argument(std::string("--method: ") + e.what() + " or attention");
    }
  }
  o.igSteps = a.intInRange("ig-steps", 32, 1, 4096);
  o.patch = a.intInRange("patch", 8, 1, 4096);
  o.stride = a.intInRange("stride", 4, 1, 4096);
  o.batch = a.intInRange("batch", 32, 1, 4096);
  o.tokens = a.has("tokens");
  // (--method attention leaves o.method at its default, ig: --tokens was ignored there.)
  if (o.tokens && (attention || o.method != core::AttributionMethod::IntegratedGradients))
    throw std::invalid_argument("--tokens goes with --method ig, not --method " + method);
  return o;
}

// --target, --contrast and --step, which need the model's charset and the reading's steps.
void chooseTargetsAndStep(const CliArgs& a, const core::Charset& charset, const core::Trace& trace,
                          bool attention, core::AttributionOptions& o) {
  if (a.has("target")) o.target = classOf(charset, a.value("target"), "target");
  if (a.has("contrast")) o.contrast = classOf(charset, a.value("contrast"), "contrast");
  if (a.has("step")) {
    const int n = static_cast<int>(trace.steps.size());
    const int t = a.intValue("step", 0);
    if (t < 0 || t >= n)
      throw std::invalid_argument("--step " + std::to_string(t) + ": the reading has " +
                                  std::to_string(n) + " steps (0 to " + std::to_string(n - 1) +
                                  ")");
    o.steps = {t};
  }
  if (attention && (o.target >= 0 || o.contrast >= 0))
    throw std::invalid_argument(
        "--target and --contrast need an attribution method, not attention");
}

// The figures and maps as JSON, with the method's name.
std::string explanationText(const core::Explanation& e, const core::Trace& trace,
                            const std::string& methodName) {
  auto j = nlohmann::json::parse(core::explanationJson(e, trace, /*withMaps=*/true));
  j["method"] = methodName;
  return j.dump(2);
}

// The table: a row per step explained, with its figures and the map's peak.
void printExplanationTable(const std::string& imagePath, const core::Trace& trace,
                           const std::string& stages, const std::string& methodName,
                           const core::Explanation& e, const core::Charset& charset) {
  std::printf("%s: \"%s\" read by %s; %s, %.2f s\n", imagePath.c_str(), trace.prediction.c_str(),
              stages.c_str(), methodName.c_str(), e.seconds);
  std::printf("%4s %-8s %-8s %10s %10s %12s %10s %12s\n", "step", "token", "target", "F", "map sum",
              "completeness", "image %", "peak (x, y)");
  for (const auto& s : e.steps) {
    const auto& map = e.maps[static_cast<size_t>(s.step)];
    size_t peak = 0;
    for (size_t i = 1; i < map.size(); ++i)
      if (std::abs(map[i]) > std::abs(map[peak])) peak = i;
    std::string target = charset.token(s.target);
    if (s.contrast >= 0) target += "-" + charset.token(s.contrast);
    char completeness[32] = "-", share[32] = "-";
    if (!std::isnan(s.baselineValue))
      std::snprintf(completeness, sizeof completeness, "%.2f %%", 100 * s.completenessError());
    if (!std::isnan(s.imageShare))
      std::snprintf(share, sizeof share, "%.0f%s", 100 * s.imageShare,
                    s.imageShare < core::kGuessedShare ? " guessed" : "");
    std::printf("%4d %-8s %-8s %10.4f %10.4f %12s %10s %5zu, %-5zu\n", s.step,
                trace.steps[static_cast<size_t>(s.step)].token.c_str(), target.c_str(), s.value,
                s.imageTotal, completeness, share, peak % static_cast<size_t>(e.width),
                peak / static_cast<size_t>(e.width));
  }
}

// --out DIR: one overlay PNG per step explained and explanation.json.
void writeOverlays(const fs::path& dir, const core::GreyImage& image, const core::Trace& trace,
                   const core::Explanation& e, const std::string& methodName) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw core::Error(dir.string() + ": cannot create output folder (" + ec.message() + ")");
  for (const auto& s : e.steps) {
    char stem[64];
    std::snprintf(stem, sizeof stem, "step%02d", s.step);
    const auto& step = trace.steps[static_cast<size_t>(s.step)];
    core::writeColourPng(
        core::overlayImage(image, e.maps[static_cast<size_t>(s.step)]),
        (dir / (std::string(stem) + "_" + safeName(step.token) + "_" + methodName + ".png"))
            .string());
  }
  writeText(dir / "explanation.json", explanationText(e, trace, methodName) + "\n");
  std::printf("wrote %zu overlays and explanation.json to %s\n", e.steps.size(),
              dir.string().c_str());
}

}  // namespace

int runExplainCommand(const std::vector<std::string>& args) {
  const CliArgs a(
      args,
      withImportOptions({"model", "method", "ig-steps", "patch", "stride", "target", "contrast",
                         "step", "out", "threads", "beam", "hypothesis", "batch"}),
      withImportFlags({"json", "tokens"}));
  core::setComputeThreads(a.intValue("threads", 0));
  if (a.positionals().size() != 1) throw std::invalid_argument("explain needs exactly one IMAGE");
  if (a.has("json") && a.has("out"))
    throw std::invalid_argument("--json and --out choose one output; give one");
  const std::string method = a.value("method", "ig");
  const bool attention = method == "attention";
  core::AttributionOptions o = parseAttributionOptions(a, method, attention);

  core::TraceOptions to;
  to.beamWidth = a.intInRange("beam", 1, 1, core::kMaxBeamWidth);
  to.beamHypothesis = a.intInRange("hypothesis", 1, 1, to.beamWidth) - 1;
  const std::string imagePath = a.positionals()[0];
  // Before Tesseract starts (or a build without it says it has none).
  core::refuseEngine(a.required("model"), core::kEngineNoGradients,
                     "explain reads a model file; trace --model " + a.required("model") +
                         " shows the engine's reading");
  auto session = core::ModelSession::open(a.required("model"), importOptions(a));
  const auto image = core::readImage(imagePath, /*keepColour=*/true);
  auto trace = session->trace(image, imagePath, to);
  if (trace.steps.empty())
    throw core::Error(imagePath + ": the model read nothing, so there is no step to explain");
  const core::Charset charset = session->config().makeCharset();
  chooseTargetsAndStep(a, charset, trace, attention, o);

  core::Explanation e;
  if (attention) {
    std::vector<int> steps = o.steps;
    if (steps.empty())
      for (int t = 0; t < static_cast<int>(trace.steps.size()); ++t) steps.push_back(t);
    e = attentionExplanation(trace, steps);
  } else {
    e = session->explain(image, trace, o);
    core::addToTrace(trace, e);
  }
  const std::string methodName = attention ? std::string("attention") : core::toString(o.method);
  if (a.has("json")) {
    std::cout << explanationText(e, trace, methodName) << "\n";
    return 0;
  }
  printExplanationTable(imagePath, trace, session->config().stageString(), methodName, e, charset);
  if (a.has("out")) writeOverlays(a.value("out"), image, trace, e, methodName);
  return 0;
}

}  // namespace foveal::app
