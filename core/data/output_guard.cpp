#include "data/output_guard.h"

#include <filesystem>

#include "base/atomic_file.h"
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
  // A device, FIFO or socket is never replaced, --force or not (the atomic writer's rename
  // turned /dev/full into a regular file when run as root).
  if (const char* kind = specialFileKind(out); kind && !fs::is_directory(out, ec))
    throw Error(out + ": is " + kind + ", not a regular file; refusing to write the " + role +
                " over it (choose another name)");
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

void checkOutputFolder(const std::string& out, const std::string& role, bool force) {
  std::error_code ec;
  if (!fs::exists(out, ec)) return;
  if (!fs::is_directory(out, ec)) {
    const char* kind = specialFileKind(out);
    throw Error(out + ": is " + (kind ? kind : "a file") +
                ", not a folder; refusing to write the " + role + " there (choose another name)");
  }
  size_t files = 0;
  std::string first;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    if (files++ == 0) first = it->path().filename().string();
  }
  if (ec) throw Error(out + ": cannot list the folder (" + ec.message() + ")");
  if (files > 0 && !force)
    throw Error(out + ": already holds " + std::to_string(files) + " file" +
                (files == 1 ? "" : "s") + " (" + first + (files > 1 ? ", ..." : "") +
                "), an earlier run's perhaps; refusing to write the " + role +
                " over them (choose another folder, or add --force)");
}

}  // namespace foveal::core::data
