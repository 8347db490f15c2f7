#include "cli_model.h"

#include <stdexcept>

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

const std::set<std::string> kDtrbOptions = {"character", "imgH", "imgW", "batch_max_length"};
const std::set<std::string> kDtrbFlags = {"sensitive", "PAD"};
const char* kDtrbUsage =
    "a deep-text-recognition-benchmark .pth is opened as DTRB's demo.py would: --character C "
    "or --sensitive (default: inferred from the class count), --imgH H --imgW W (32, 100), "
    "--PAD, --batch_max_length N (25)";

core::DtrbOptions dtrbOptions(const CliArgs& a) {
  core::DtrbOptions o;
  o.character = a.value("character", "");
  // An empty --character fell back to the default charset without a word.
  if (a.has("character") && o.character.empty())
    throw std::invalid_argument(
        "--character is empty: give the characters the model was trained with, or leave it out "
        "to infer them from the class count");
  o.sensitive = a.has("sensitive");
  if (!o.character.empty() && o.sensitive)
    throw std::invalid_argument("--character and --sensitive exclude each other");
  o.imgH = a.intValue("imgH", 32);
  o.imgW = a.intValue("imgW", 100);
  o.pad = a.has("PAD");
  o.batchMaxLength = a.intValue("batch_max_length", 25);
  return o;
}

std::set<std::string> withDtrbOptions(std::set<std::string> base) {
  base.insert(kDtrbOptions.begin(), kDtrbOptions.end());
  return base;
}
std::set<std::string> withDtrbFlags(std::set<std::string> base) {
  base.insert(kDtrbFlags.begin(), kDtrbFlags.end());
  return base;
}

}  // namespace foveal::app
