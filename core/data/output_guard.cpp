#include "data/output_guard.h"

#include <filesystem>

#include "base/error.h"
#include "data/packed_dataset.h"
#include "formats/checkpoint.h"

namespace fs = std::filesystem;

namespace foveal::core::data {

void checkOutputPath(const std::string& out, const std::string& role,
                     const std::vector<std::string>& inputs, bool force) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  for (const auto& in : inputs) {
    std::error_code e2;
    if (!in.empty() && fs::exists(in, e2) && fs::equivalent(out, in, e2))
      throw Error(out + ": refusing to write the " + role +
                  " over an input of this command (it reads " + in + "); choose another name");
  }
  std::string holds;
  if (fs::is_regular_file(out, ec)) {
    if (looksLikeCheckpoint(out))
      holds = "a model file";
    else if (PackedDataset::looksPacked(out))
      holds = "a packed dataset";
  } else if (fs::is_directory(out, ec)) {
    if (fs::exists(fs::path(out) / "data.mdb", ec))
      holds = "an LMDB dataset";
    else if (fs::exists(fs::path(out) / "gt.txt", ec))
      holds = "a dataset (gt.txt)";
  }
  // LMDB is written in place (no temporary to rename): replacing one would destroy it before the
  // new one is whole, so not even --force does.
  if (holds == "an LMDB dataset")
    throw Error(out + ": already holds an LMDB dataset; refusing to replace it with the " + role +
                " (choose another name, or remove it first)");
  if (!holds.empty() && !force)
    throw Error(out + ": already holds " + holds + "; refusing to replace it with the " + role +
                " (choose another name, or add --force)");
}

}  // namespace foveal::core::data
