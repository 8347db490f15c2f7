#pragma once
// The check every command runs before it writes a file or folder the user named: it must not
// replace something the user may want to keep. Found by trying: `eval --failures best.fvm`
// replaced a trained model with a TSV, `data pack --out model.fvm` and `init-model --out
// trained.fvm` overwrote models, `data convert --format folder` rewrote another dataset's gt.txt.
#include <string>
#include <vector>

namespace foveal::core::data {

/// Throws Error naming `out` and what it holds when writing it (as `role`, "failures file") would
/// replace one of `inputs` (the command reads it: refused even with `force`), a Foveal model file
/// or a dataset (a packed file, a folder with data.mdb or gt.txt), unless `force` (never an LMDB,
/// which is written in place: remove it first). A missing
/// `out`, or one holding anything else (a previous failures TSV, a PNG), passes.
void checkOutputPath(const std::string& out, const std::string& role,
                     const std::vector<std::string>& inputs, bool force);

/// The same for a command that writes several files into the folder `out` (`eval --errors DIR`,
/// `trace --dataset ... --out DIR`): a folder that already holds files is refused unless `force`
/// (a second run replaced the first one's table.csv and hOCR files), something that is not a
/// folder always. A missing or empty folder passes.
void checkOutputFolder(const std::string& out, const std::string& role, bool force);

}  // namespace foveal::core::data
