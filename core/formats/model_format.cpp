#include "formats/model_format.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/error.h"
#include "base/safe_read.h"
#include "engines/tesseract_spec.h"
#include "formats/checkpoint.h"
#include "formats/torch_file.h"

namespace foveal::core {

// Each format's entry, defined in its own source file.
ModelFormat fovealModelFormat();   // checkpoint.cpp
ModelFormat dtrbModelFormat();     // dtrb_import.cpp
ModelFormat easyocrModelFormat();  // easyocr_import.cpp
ModelFormat strhubModelFormat();   // strhub_import.cpp
ModelFormat krakenModelFormat();   // kraken_import.cpp

const std::vector<ModelFormat>& modelFormats() {
  // The registry: one line per format. Sniffers are asked in this order; the highest score wins
  // and a tie goes to the earlier line.
  static const std::vector<ModelFormat> formats = {
      fovealModelFormat(), easyocrModelFormat(), strhubModelFormat(),
      dtrbModelFormat(),   krakenModelFormat(),
  };
  return formats;
}

const ModelFormat* findModelFormat(const std::string& name) {
  for (const auto& f : modelFormats())
    if (f.name == name) return &f;
  return nullptr;
}

FileProbe::FileProbe(std::string path) : m_path(std::move(path)) {
  m_head = readFileHead(m_path, "model file", kMaxModelFileBytes, 64);
  if (m_head.compare(0, 8, "FOVEALCK") == 0)
    m_container = "foveal";
  else if (m_head.compare(0, 4, "PK\x03\x04") == 0)
    m_container = "torch-zip";
  else if (looksLikeTorchFile(m_head))
    m_container = "torch-legacy";
  else
    m_container = "unknown";
}

FileProbe::~FileProbe() = default;

bool FileProbe::isTorchFile() const { return m_container.rfind("torch-", 0) == 0; }

const StoredStateDict* FileProbe::stateDict() const {
  if (!isTorchFile()) return nullptr;
  if (!m_stateDict) m_stateDict = std::make_shared<const StoredStateDict>(readTorchFile(m_path));
  return m_stateDict.get();
}

std::string FileProbe::stem() const { return std::filesystem::path(m_path).stem().string(); }

std::string FileProbe::sibling(const std::string& extension) const {
  std::filesystem::path p(m_path);
  p.replace_extension(extension);
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) ? p.string() : std::string();
}

namespace {

void checkOptionsBelong(const ModelFormat& f, const ImportOptions& options,
                        const std::string& path) {
  for (const auto& [key, value] : options) {
    if (key == kFormatOption) continue;
    const bool known = std::any_of(f.options.begin(), f.options.end(),
                                   [&](const FormatOption& o) { return o.key == key; });
    if (known) continue;
    std::string list;
    for (const auto& o : f.options) list += (list.empty() ? "--" : ", --") + o.key;
    throw Error(path + ": --" + key + " is not an option of " + f.name + " files (" + f.summary +
                "; its options: " + (list.empty() ? "none" : list) + ")");
  }
}

}  // namespace

Recognised recogniseModelFile(const FileProbe& file, const ImportOptions& options) {
  const std::string& path = file.path();
  Recognised r;
  auto forced = options.find(kFormatOption);
  if (forced != options.end()) {
    r.format = findModelFormat(forced->second);
    if (!r.format) {
      std::string names;
      for (const auto& f : modelFormats()) names += (names.empty() ? "" : ", ") + f.name;
      throw Error(path + ": --format " + forced->second + " is not a model file format (" + names +
                  ")");
    }
    r.why = "--format " + r.format->name;
    checkOptionsBelong(*r.format, options, path);
    return r;
  }
  // A torch.save file the restricted reader refuses is refused here, with the reader's message:
  // no sniffer can see its keys.
  if (file.isTorchFile()) file.stateDict();
  Sniff best;
  std::string declined;
  for (const auto& f : modelFormats()) {
    Sniff s = f.sniff(file, options);
    if (s.score > best.score) {
      best = s;
      r.format = &f;
    } else if (s.score == 0 && !s.why.empty()) {
      declined += "; " + f.name + ": " + s.why;
    }
  }
  if (!r.format) {
    std::string what = file.container() == "unknown" ? "not a model file Foveal knows (neither "
                                                       "Foveal's own nor a torch.save file)"
                                                     : "a torch.save file of no format Foveal "
                                                       "knows";
    throw Error(path + ": " + what + declined);
  }
  r.why = best.why;
  checkOptionsBelong(*r.format, options, path);
  return r;
}

std::vector<std::string> modelFileInputs(const std::string& path, const ImportOptions& options) {
  std::vector<std::string> inputs = {path};
  try {
    FileProbe file(path);
    const Recognised r = recogniseModelFile(file, options);
    if (r.format->companions)
      for (auto& c : r.format->companions(file, options))
        if (!c.empty()) inputs.push_back(std::move(c));
  } catch (const Error&) {
    // Unreadable or unclaimed: the import refuses it with its own message, before it writes.
  }
  return inputs;
}

std::vector<FormatOption> allImportOptions() {
  std::vector<FormatOption> all;
  std::set<std::string> seen;
  for (const auto& f : modelFormats())
    for (const auto& o : f.options)
      if (seen.insert(o.key).second) all.push_back(o);
  return all;
}

int intOption(const ImportOptions& o, const std::string& key, int fallback, const std::string& file,
              int lo, int hi) {
  auto it = o.find(key);
  if (it == o.end()) return fallback;
  size_t used = 0;
  long v = 0;
  try {
    v = std::stol(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size() || v < lo || v > hi)
    throw Error(file + ": --" + key + " must be a whole number in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "] (got '" + it->second + "')");
  return static_cast<int>(v);
}

std::string stringOption(const ImportOptions& o, const std::string& key,
                         const std::string& fallback) {
  auto it = o.find(key);
  return it == o.end() ? fallback : it->second;
}

bool flagOption(const ImportOptions& o, const std::string& key) {
  auto it = o.find(key);
  return it != o.end() && it->second != "0" && it->second != "false";
}

LoadedModel loadModelFile(const std::string& path, const ImportOptions& options,
                          ImportReport* report) {
  refuseEngine(
      path, kEngineNothingToImport,
      "a model file is read here; " + path + " reads images with its own engine (trace, eval)");
  FileProbe file(path);
  const Recognised r = recogniseModelFile(file, options);
  ImportReport rep;
  rep.format = r.format->name;
  rep.why = r.why;
  LoadedModel loaded = r.format->load(file, options, rep);
  if (report) *report = std::move(rep);
  return loaded;
}

}  // namespace foveal::core
