#include "cli_model.h"

namespace foveal::app {

const std::set<std::string> kStageOptions = {
    "transformation", "features", "sequence", "prediction", "cell", "fiducials", "attention"};
const std::set<std::string> kStageFlags = {"projection", "no-projection"};
void applyStageOptions(const CliArgs& a, core::ModelConfig& c) {
  c.transformation = a.value("transformation", c.transformation);
  c.features = a.value("features", c.features);
  c.sequence = a.value("sequence", c.sequence);
  if (a.has("projection")) c.sequenceProjection = true;
  if (a.has("no-projection")) c.sequenceProjection = false;
  c.prediction = a.value("prediction", c.prediction);
  c.cell = a.value("cell", c.cell);
  c.fiducials = a.intValue("fiducials", c.fiducials);
  c.attention = a.value("attention", c.attention);
  if (c.prediction == "ctc" && !a.has("attention")) c.attention = "soft";  // CTC has no glimpse
}

}  // namespace foveal::app
