#include "cli_model.h"

#include <filesystem>
#include <stdexcept>

#include "model/charset.h"

namespace foveal::app {

const std::set<std::string> kStageOptions = {"transformation", "features",   "sequence",
                                             "prediction",     "cell",       "fiducials",
                                             "attention",      "preprocess", "positions"};
const std::set<std::string> kStageFlags = {"projection", "no-projection", "keep-ratio-pad"};
void applyStageOptions(const CliArgs& a, core::ModelConfig& c) {
  c.transformation = a.value("transformation", c.transformation);
  c.features = a.value("features", c.features);
  c.sequence = a.value("sequence", c.sequence);
  if (a.has("projection")) c.sequenceProjection = true;
  if (a.has("no-projection")) c.sequenceProjection = false;
  c.prediction = a.value("prediction", c.prediction);
  c.cell = a.value("cell", c.cell);
  c.fiducials = a.intValue("fiducials", c.fiducials);
  c.positions = a.value("positions", c.positions);
  c.attention = a.value("attention", c.attention);
  if (c.prediction == "ctc" && !a.has("attention")) c.attention = "soft";  // CTC has no glimpse
  // Preprocessing: Foveal's own (grey, bilinear with antialiasing) or DTRB's (PIL's luma and
  // bicubic resize); --keep-ratio-pad as DTRB's --PAD.
  const std::string pre = a.value("preprocess", "");
  if (pre == "dtrb") {
    c.preprocessing.colour = "pil_luma";
    c.preprocessing.resize = "pil_bicubic";
  } else if (pre == "foveal") {
    c.preprocessing.colour = "grey";
    c.preprocessing.resize = "bilinear_antialias";
  } else if (!pre.empty()) {
    throw std::invalid_argument("--preprocess must be foveal or dtrb (got '" + pre + "')");
  }
  if (a.has("keep-ratio-pad")) c.preprocessing.keepRatioPad = true;
}

core::ImportOptions importOptions(const CliArgs& a, bool formatIsOutput) {
  core::ImportOptions o;
  // An empty --character fell back to the default charset without a word.
  if (a.has("character") && a.value("character").empty())
    throw std::invalid_argument(
        "--character is empty: give the characters the model was trained with, or leave it out "
        "to infer them from the class count");
  if (a.has("character")) core::checkCharsetUtf8(a.value("character"), "--character");
  // `trace` and the data commands use --format for what they write: there the model file's
  // format is --model-format (accepted everywhere).
  if (!formatIsOutput && a.has(core::kFormatOption))
    o[core::kFormatOption] = a.value(core::kFormatOption);
  if (a.has(kModelFormatOption)) o[core::kFormatOption] = a.value(kModelFormatOption);
  for (const auto& opt : core::allImportOptions()) {
    if (!a.has(opt.key)) continue;
    o[opt.key] = opt.flag ? "1" : a.value(opt.key);
  }
  return o;
}

std::vector<std::string> modelInputs(const std::vector<std::string>& models,
                                     const core::ImportOptions& options, const std::string& out) {
  std::error_code ec;
  if (!std::filesystem::exists(out, ec)) return models;
  std::vector<std::string> inputs;
  for (const auto& m : models)
    for (auto& f : core::modelFileInputs(m, options)) inputs.push_back(std::move(f));
  return inputs;
}

std::set<std::string> withImportOptions(std::set<std::string> base) {
  base.insert(core::kFormatOption);
  base.insert(kModelFormatOption);
  for (const auto& opt : core::allImportOptions())
    if (!opt.flag) base.insert(opt.key);
  return base;
}

std::set<std::string> withImportFlags(std::set<std::string> base) {
  for (const auto& opt : core::allImportOptions())
    if (opt.flag) base.insert(opt.key);
  return base;
}

std::string importUsage() {
  std::string out =
      "Model files are opened through their format, recognised by content (--format NAME "
      "chooses one; --model-format NAME where --format names an output):\n";
  for (const auto& f : core::modelFormats()) {
    out += "  " + f.name + ": " + f.summary + "\n";
    for (const auto& o : f.options)
      out += "    --" + o.key + (o.flag ? "" : " VALUE") + "  " + o.help +
             (o.defaultValue.empty() ? "" : " (default " + o.defaultValue + ")") + "\n";
  }
  return out;
}

}  // namespace foveal::app
