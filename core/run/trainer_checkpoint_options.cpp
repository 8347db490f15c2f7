#include "run/trainer_checkpoint_options.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "base/error.h"

namespace foveal::core {

namespace fs = std::filesystem;

namespace {

bool truthy(const std::string& v) { return v == "True" || v == "true" || v == "1"; }

int intValue(const std::map<std::string, std::pair<std::string, int>>& kv, const std::string& key,
             int fallback, const std::string& path) {
  const auto it = kv.find(key);
  if (it == kv.end()) return fallback;
  const std::string& v = it->second.first;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || n < 1 || n > 100000)
    throw Error(path + ": line " + std::to_string(it->second.second) + ": " + key + " is '" + v +
                "', not a positive whole number");
  return static_cast<int>(n);
}

}  // namespace

DtrbOptions parseDtrbOptTxt(const std::string& text, const std::string& path) {
  // train.py appends a block per start: the last one is the run's current options.
  std::istringstream in(text);
  std::string line;
  int number = 0;
  bool inBlock = false, sawBlock = false;
  std::map<std::string, std::pair<std::string, int>> kv, block;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("------------ Options", 0) == 0) {
      inBlock = true;
      block.clear();
      continue;
    }
    if (!inBlock) continue;
    if (line.size() >= 10 && line.find_first_not_of('-') == std::string::npos) {
      inBlock = false;
      sawBlock = true;
      kv = block;
      continue;
    }
    const size_t colon = line.find(": ");
    if (colon == std::string::npos || colon == 0) {
      // A value written as "key: " (an empty string) loses its space to nothing: keep it.
      if (!line.empty() && line.back() == ':')
        block[line.substr(0, line.size() - 1)] = {"", number};
      continue;
    }
    // The value runs to the end of the line: a charset may hold ':' and spaces.
    block[line.substr(0, colon)] = {line.substr(colon + 2), number};
  }
  if (inBlock && !block.empty()) {  // the last block without its closing line (being written)
    sawBlock = true;
    kv = block;
  }
  if (!sawBlock)
    throw Error(path +
                ": not deep-text-recognition-benchmark's opt.txt (no '------------ Options "
                "-------------' block)");
  DtrbOptions d;
  if (const auto c = kv.find("character"); c != kv.end()) d.character = c->second.first;
  // train.py replaces --character by string.printable[:-6] under --sensitive before it writes
  // the options, so the characters written are the classes either way.
  if (d.character.empty() && kv.count("sensitive") && truthy(kv["sensitive"].first))
    d.sensitive = true;
  d.imgH = intValue(kv, "imgH", d.imgH, path);
  d.imgW = intValue(kv, "imgW", d.imgW, path);
  d.batchMaxLength = intValue(kv, "batch_max_length", d.batchMaxLength, path);
  if (const auto p = kv.find("PAD"); p != kv.end()) d.pad = truthy(p->second.first);
  return d;
}

ImportOptions trainerCheckpointOptions(const std::string& runDir, const std::string& checkpoint) {
  fs::path file(checkpoint);
  if (file.is_relative()) file = fs::path(runDir) / file;
  if (file.extension() != ".pth") return {};
  // The nearest opt.txt: beside the checkpoint, then up to the run folder.
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(runDir, ec);
  for (fs::path dir = file.parent_path();; dir = dir.parent_path()) {
    const fs::path opt = dir / "opt.txt";
    if (fs::is_regular_file(opt, ec)) {
      std::ifstream in(opt, std::ios::binary);
      if (!in) throw Error(opt.string() + ": cannot read (" + std::strerror(errno) + ")");
      std::ostringstream ss;
      ss << in.rdbuf();
      return importOptionsOf(parseDtrbOptTxt(ss.str(), opt.string()));
    }
    // Up to the run folder, never above it (nor above a checkpoint outside it).
    const std::string here = fs::weakly_canonical(dir, ec).string();
    if (dir.empty() || here == root.string() || here.rfind(root.string() + "/", 0) != 0 ||
        dir.parent_path() == dir)
      break;
  }
  return {};
}

}  // namespace foveal::core
