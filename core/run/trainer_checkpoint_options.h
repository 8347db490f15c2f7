#pragma once
// What opening another trainer's checkpoint needs besides the file (issue 72, item 3): the
// options its import cannot read from the file, taken from what the trainer wrote beside it.
// deep-text-recognition-benchmark and EasyOCR's trainer write their options to opt.txt in the
// run folder (train.py: "------------ Options -------------", one "key: value" line per option,
// a dashed line; appended again by each start), and their .pth holds no charset, input size or
// padding. strhub's .ckpt, kraken's .mlmodel and Foveal's .fvm hold everything: no options.
// Torch-free and Qt-free.
#include <string>

#include "formats/dtrb_import.h"
#include "formats/model_format.h"

namespace foveal::core {

/// DTRB's options from the text of an opt.txt: the last block (the latest start). `path` names
/// the file in errors. Throws Error when the text holds no options block, or when a value the
/// import needs does not parse (naming the key and the line).
DtrbOptions parseDtrbOptTxt(const std::string& text, const std::string& path);

/// The import options for checkpoint `checkpoint` (a path relative to `runDir`, or absolute) of
/// a run folder: for a torch .pth, DTRB's from the opt.txt next to it or in the run folder (the
/// nearest); empty when there is none or the file is not a .pth. Throws Error naming opt.txt
/// when it exists and cannot be read or parsed.
ImportOptions trainerCheckpointOptions(const std::string& runDir, const std::string& checkpoint);

}  // namespace foveal::core
