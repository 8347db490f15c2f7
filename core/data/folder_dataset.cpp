#include "data/folder_dataset.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "base/safe_read.h"
#include "data/char_boxes.h"
#include "data/lmdb_dataset.h"
#include "model/charset.h"

namespace fs = std::filesystem;

namespace foveal::core::data {

FolderDataset::FolderDataset(const std::string& path) {
  std::error_code ec;
  m_gt = fs::is_directory(path, ec) && fs::path(path).filename() != "gt.txt"
             ? (fs::path(path) / "gt.txt").string()
             : path;
  m_root = fs::path(m_gt).parent_path().string();
  if (!fs::exists(m_gt, ec))
    throw Error(m_gt + ": cannot open gt.txt (missing" +
                (fs::is_directory(path, ec) ? ": the folder has no gt.txt)" : ")"));
  std::istringstream in(readRegularFile(m_gt, "gt.txt", kMaxTextFileBytes));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    // A UTF-8 byte order mark (Windows editors write one) is not part of the first path.
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    Entry e;
    e.line = n;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) {
      e.path = line;
      e.problem = "no TAB between image path and label";
    } else {
      e.path = line.substr(0, tab);
      e.label = line.substr(tab + 1);
      // The optional third column: only when it says what it is, so an older gt.txt whose
      // labels hold a TAB reads as before.
      const size_t last = e.label.rfind("\tboxes=");
      if (last != std::string::npos) {
        e.boxes = e.label.substr(last + 7);
        e.label.erase(last);
      }
      if (e.path.empty()) e.problem = "empty image path";
    }
    if (e.problem.empty()) {
      const size_t bad = invalidUtf8Offset(e.label);
      if (bad != std::string::npos)
        e.problem = "the label is not valid UTF-8 (byte " + std::to_string(bad + 1) + ")";
    }
    m_entries.push_back(std::move(e));
  }
}

const FolderDataset::Entry& FolderDataset::entry(size_t index) const {
  if (index >= m_entries.size())
    throw Error(m_gt + ": entry " + std::to_string(index) + " is out of range (" +
                std::to_string(m_entries.size()) + " entries)");
  const Entry& e = m_entries[index];
  if (!e.problem.empty()) throw Error(entryName(index) + ": " + e.problem);
  return e;
}

std::string FolderDataset::label(size_t index) const { return entry(index).label; }

Sample FolderDataset::get(size_t index) const {
  const Entry& e = entry(index);
  const fs::path p = fs::path(e.path).is_absolute() ? fs::path(e.path) : fs::path(m_root) / e.path;
  Sample s;
  try {
    s.image = readImage(p.string());
  } catch (const Error& err) {
    throw Error(entryName(index) + ": " + err.what());
  }
  s.label = e.label;
  return s;
}

std::vector<Box> FolderDataset::charBoxes(size_t index) const {
  const Entry& e = entry(index);
  if (e.boxes.empty()) return {};
  try {
    return parseCharBoxes(e.boxes);
  } catch (const Error& err) {
    throw Error(entryName(index) + ": " + err.what());
  }
}

std::string FolderDataset::entryName(size_t index) const {
  if (index >= m_entries.size()) return m_gt + ": entry " + std::to_string(index);
  return m_gt + ": line " + std::to_string(m_entries[index].line) + " (" + m_entries[index].path +
         ")";
}

std::string FolderDataset::describe() const {
  return "folder " + m_gt + " (" + std::to_string(m_entries.size()) + " entries)";
}

FolderWriter::FolderWriter(const std::string& folder) : m_folder(folder) {
  std::error_code ec;
  fs::create_directories(fs::path(folder) / "images", ec);
  if (ec) throw Error(folder + ": cannot create folder (" + ec.message() + ")");
}

void FolderWriter::add(const Sample& s) {
  if (s.label.find_first_of("\t\n\r") != std::string::npos)
    throw Error(m_folder + ": entry " + std::to_string(m_count) +
                ": label contains a TAB or line break");
  // PNG, or PGM in a build without image codecs, so the same build can read the folder back.
  char name[32];
  std::snprintf(name, sizeof name, "images/%09zu.%s", ++m_count, storageExtension());
  const std::string path = (fs::path(m_folder) / name).string();
  const std::string bytes = encodeForStorage(s.image);
  writeFileAtomically(path, bytes, "dataset image", Durability::CheckedClose);
  m_gt += std::string(name) + "\t" + s.label;
  if (!s.boxes.empty()) m_gt += "\tboxes=" + formatCharBoxes(s.boxes);
  m_gt += "\n";
}

void FolderWriter::finish() {
  const std::string path = (fs::path(m_folder) / "gt.txt").string();
  writeFileAtomically(path, m_gt, "dataset's gt.txt");
}

}  // namespace foveal::core::data
