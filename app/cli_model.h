#pragma once
// The model options that init-model and train share: the stages (--transformation, --features,
// --sequence, --projection, --prediction, --cell, --fiducials) and the glimpse (--attention),
// applied over a starting configuration (a named model or a preset's).
#include <set>
#include <string>
#include <vector>

#include "cli_args.h"
#include "formats/model_format.h"
#include "model/model_config.h"

namespace foveal::app {

/// The valued options and flags applyStageOptions() reads.
extern const std::set<std::string> kStageOptions;
extern const std::set<std::string> kStageFlags;

/// Overrides the stages named on the command line; the result is validated by its user.
void applyStageOptions(const CliArgs& args, core::ModelConfig& config);

/// The options of every model file format (formats/model_format.h: DTRB's --character,
/// --imgH, ..., EasyOCR's --easyocr, ...) and --format, accepted by every command that opens a
/// model; what was given, as the import's key/value pairs.
/// The option that names a model file's format where --format names what a command writes
/// (trace --dataset --format hocr,alto,page).
inline constexpr const char* kModelFormatOption = "model-format";
/// The format options a command was given; `formatIsOutput`: its --format is not the model's.
core::ImportOptions importOptions(const CliArgs& args, bool formatIsOutput = false);
/// The inputs of a command that reads `models` and writes `out`, for its output guard
/// (data/output_guard.h): each model file and the companions its format reads (EasyOCR's yaml:
/// core::modelFileInputs). Just the files when `out` does not exist: nothing can be replaced, and
/// no file is read twice.
std::vector<std::string> modelInputs(const std::vector<std::string>& models,
                                     const core::ImportOptions& options, const std::string& out);
/// `base` plus the formats' valued options (and --format), or their flags.
std::set<std::string> withImportOptions(std::set<std::string> base);
std::set<std::string> withImportFlags(std::set<std::string> base);
/// The formats and their options, for the help.
std::string importUsage();

}  // namespace foveal::app
