#pragma once
// Opening deep-text-recognition-benchmark (DTRB) checkpoints: a `torch.save(state_dict)` of
// DTRB's Model (with or without DataParallel's "module." prefix) becomes a Foveal model of the
// same stages and sizes, read from the keys and shapes (the mapping: docs/ARCHITECTURE.md "Other
// people's models"). The charset is not in the file: DTRB's --character, --sensitive, or one of
// DTRB's two standard sets when the class count fits. Preprocessing is DTRB's (PIL luma or RGB, PIL
// bicubic, optional keep-ratio padding), recorded in the model. Torch-free header.
#include <string>
#include <vector>

#include "formats/model_format.h"
#include "model/model_config.h"

namespace foveal::core {

/// DTRB's demo.py options that the file does not hold.
struct DtrbOptions {
  std::string character;   ///< --character; empty: inferred from the class count
  bool sensitive = false;  ///< --sensitive: Python's string.printable[:-6] (94 characters)
  int imgH = 32, imgW = 100;
  bool pad = false;         ///< --PAD
  int batchMaxLength = 25;  ///< --batch_max_length
};

/// DTRB's default --character and the --sensitive set.
extern const char* const kDtrbDefaultCharacters;    // 0-9a-z, 36
extern const char* const kDtrbSensitiveCharacters;  // string.printable[:-6], 94

/// What the keys and shapes say, before a charset is chosen.
struct DtrbArchitecture {
  std::string transformation, features, sequence, prediction;  ///< DTRB's names: TPS, VGG, ...
  int fiducials = 0, inputChannels = 1, outputChannels = 0, hiddenSize = 0, numClasses = 0;
  bool modulePrefix = false;
  std::string format;  ///< "zip" or "legacy"
  /// The charset assumed from the class count when no --character/--sensitive is given (empty:
  /// none fits, the user must give one), and why.
  std::string assumedCharacters, assumption;
  std::string describe() const;  ///< e.g. "TPS-ResNet-BiLSTM-Attn, output_channel 512, ..."
};

/// Reads the file and works out the architecture (throws Error naming the file, the key, its
/// shape and what was expected for anything that does not fit).
DtrbArchitecture inspectDtrb(const std::string& path);

struct DtrbImport {
  ModelConfig config;
  DtrbArchitecture architecture;
  std::vector<std::string> notes;  ///< assumptions to tell the user (charset assumed, ...)
  /// Where the model came from, a JSON object (stored in the metadata of an imported .fvm).
  std::string provenanceJson;
};

/// True when the file starts like a torch.save file.
bool isTorchFile(const std::string& path);

/// The DTRB format's options (model_format.h) as DTRB's demo flags, checked (`path` names the
/// file in errors), and back.
DtrbOptions dtrbOptionsFrom(const ImportOptions& options, const std::string& path);
ImportOptions importOptionsOf(const DtrbOptions& options);

}  // namespace foveal::core
