#pragma once
// One self-describing model file: magic, format version, lengths, CRC-32, the model config JSON
// (architecture, charset, preprocessing) and the weights. Writing is atomic (temp + rename).
#include <cstdint>
#include <string>

#include "formats/dtrb_import.h"
#include "formats/model_format.h"
#include "model/model_config.h"
#include "model/recognizer.h"

namespace foveal::core {

/// 3: the model as stages (parameter names transformation.*, features.*, sequence.*,
/// prediction.*; the config names its stages). 2: the attention model before the stages (read,
/// its parameter names mapped). 1, a LibTorch archive, was development-only.
constexpr uint32_t kCheckpointFormat = 3;

struct LoadedModel {
  ModelConfig config;
  Recognizer model{nullptr};
  std::string metadataJson;  ///< the whole metadata object as stored
};

/// Writes `model` with its config; `extraJson` (an object, may be empty) is stored under "extra".
/// Throws Error naming the path when the file cannot be written.
void saveCheckpoint(const std::string& path, Recognizer model, const std::string& extraJson = "");

/// Reads and checks everything; the model is returned in eval mode on the CPU. Throws Error
/// naming the file and the problem: missing, truncated, corrupt, foreign, newer format, bad
/// config, weights that do not match the config.
LoadedModel loadCheckpoint(const std::string& path);

/// Imports a deep-text-recognition-benchmark checkpoint (dtrb_import.h): the model in eval mode,
/// its metadata saying where it came from. Throws Error naming the file, the key, its shape and
/// what was expected.
LoadedModel importDtrb(const std::string& path, const DtrbOptions& options,
                       DtrbImport* info = nullptr);

/// Any model file Foveal opens, through the registry of formats (model_format.h): the format
/// `options` names ("format") or the one whose sniffer recognises the file, imported with
/// `options`; `report` says which format, why, and what the import assumed. What every command
/// and the GUI open.
LoadedModel loadModelFile(const std::string& path, const ImportOptions& options = {},
                          ImportReport* report = nullptr);

/// True when `path` is a regular file that starts with the model file signature (whatever its
/// state): what commands check before they overwrite a file.
bool looksLikeCheckpoint(const std::string& path);

}  // namespace foveal::core
