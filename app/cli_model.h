#pragma once
// The model options that init-model and train share: the stages (--transformation, --features,
// --sequence, --projection, --prediction, --cell, --fiducials) and the glimpse (--attention),
// applied over a starting configuration (a named model or a preset's).
#include <set>
#include <string>

#include "cli_args.h"
#include "formats/dtrb_import.h"
#include "model/model_config.h"

namespace foveal::app {

/// The valued options and flags applyStageOptions() reads.
extern const std::set<std::string> kStageOptions;
extern const std::set<std::string> kStageFlags;

/// Overrides the stages named on the command line; the result is validated by its user.
void applyStageOptions(const CliArgs& args, core::ModelConfig& config);

/// DTRB's demo options for opening a .pth (--character, --sensitive, --imgH, --imgW, --PAD,
/// --batch_max_length), accepted by every command that opens a model.
extern const std::set<std::string> kDtrbOptions;
extern const std::set<std::string> kDtrbFlags;
extern const char* kDtrbUsage;
core::DtrbOptions dtrbOptions(const CliArgs& args);
/// `base` plus the DTRB options.
std::set<std::string> withDtrbOptions(std::set<std::string> base);
std::set<std::string> withDtrbFlags(std::set<std::string> base);

}  // namespace foveal::app
