#include "data/page_dataset.h"

#include <algorithm>
#include <filesystem>

#include "base/error.h"
#include "formats/page_layout.h"
#include "model/charset.h"
#include "trace/kraken_lines.h"

namespace fs = std::filesystem;

namespace foveal::core::data {

namespace {

// The decoded pages kept: a page's lines are read in order, and a shuffled training epoch
// jumps between a few pages at a time in each loader worker.
constexpr size_t kCachedPages = 4;

bool isMets(const fs::path& p) {
  std::string stem = p.stem().string();
  std::transform(stem.begin(), stem.end(), stem.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return stem == "mets";
}

bool isBlank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

}  // namespace

PageDataset::PageDataset(const std::string& path, bool legacyPolygons)
    : m_path(path), m_legacy(legacyPolygons) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& e : fs::directory_iterator(path, ec)) {
      const fs::path p = e.path();
      std::string ext = p.extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (ext == ".xml" && e.is_regular_file(ec) && !isMets(p)) m_files.push_back(p.string());
    }
    if (ec) throw Error(path + ": cannot list the folder (" + ec.message() + ")");
    std::sort(m_files.begin(), m_files.end());
    if (m_files.empty()) throw Error(path + ": no PAGE-XML or ALTO files (*.xml) in the folder");
  } else if (fs::is_regular_file(path, ec)) {
    m_files.push_back(path);
  } else {
    throw Error(path +
                ": no such folder or XML file (page:DIR takes a folder of PAGE-XML or "
                "ALTO files and their page images)");
  }
  for (const auto& xml : m_files) {
    const PageLayout layout = readPageLayout(xml);  // names the file and the element
    if (!fs::is_regular_file(layout.imagePath, ec))
      throw Error(xml + ": its page image \"" + layout.imageFilename +
                  "\" is missing (looked for " + layout.imagePath + ")");
    const size_t page = m_pages.size();
    m_pages.push_back({xml, layout.imagePath});
    int number = 0;
    for (const auto& line : layout.lines) {
      ++number;
      if (isBlank(line.text)) {
        ++m_untranscribed;
        continue;
      }
      Entry e;
      e.page = page;
      e.lineNumber = number;
      e.lineId = line.id;
      e.text = line.text;
      const size_t bad = invalidUtf8Offset(e.text);
      if (bad != std::string::npos)
        e.problem = "the transcription is not valid UTF-8 (byte " + std::to_string(bad + 1) + ")";
      try {
        e.spec = krakenLineOf(line, layout.textDirection);
      } catch (const Error& err) {
        e.problem = err.what();
      }
      m_entries.push_back(std::move(e));
    }
  }
}

const PageDataset::Entry& PageDataset::entry(size_t index) const {
  if (index >= m_entries.size())
    throw Error(m_path + ": entry " + std::to_string(index) + " out of range (" +
                std::to_string(m_entries.size()) + " lines)");
  return m_entries[index];
}

std::shared_ptr<const GreyImage> PageDataset::pageImage(size_t page) const {
  {
    std::lock_guard<std::mutex> lock(m_cacheMutex);
    for (auto it = m_cache.begin(); it != m_cache.end(); ++it)
      if (it->first == page) {
        auto found = *it;
        m_cache.erase(it);
        m_cache.push_back(found);  // most recent last
        return found.second;
      }
  }
  // Decoded outside the lock: other workers go on with their pages meanwhile.
  auto image = std::make_shared<const GreyImage>(readImage(m_pages[page].image, true));
  std::lock_guard<std::mutex> lock(m_cacheMutex);
  m_cache.emplace_back(page, image);
  if (m_cache.size() > kCachedPages) m_cache.erase(m_cache.begin());
  return image;
}

Sample PageDataset::get(size_t index) const {
  const Entry& e = entry(index);
  if (!e.problem.empty()) throw Error(entryName(index) + ": " + e.problem);
  const auto page = pageImage(e.page);
  // No resize and no padding: the extracted line itself (the input transforms are the model's).
  KrakenInputSpec in;
  in.height = 0;
  in.width = 0;
  in.channels = 1;
  in.padding = 0;
  in.legacyPolygons = m_legacy;
  const KrakenLine line = extractKrakenLine(*page, e.spec, in);
  if (line.empty || line.extracted.empty())
    throw Error(entryName(index) + ": kraken cuts no line image here (" + line.emptyReason + ")");
  Sample s;
  s.image = line.extracted;
  s.label = e.text;
  return s;
}

std::string PageDataset::label(size_t index) const { return entry(index).text; }

std::string PageDataset::entryName(size_t index) const {
  const Entry& e = entry(index);
  return m_pages[e.page].xml + ": line " + std::to_string(e.lineNumber) +
         (e.lineId.empty() ? std::string() : " (" + e.lineId + ")");
}

std::string PageDataset::describe() const {
  return "pages " + m_path + " (" + std::to_string(m_pages.size()) + " page" +
         (m_pages.size() == 1 ? "" : "s") + ", " + std::to_string(m_entries.size()) +
         " transcribed lines" +
         (m_untranscribed ? ", " + std::to_string(m_untranscribed) + " without text" : "") +
         (m_legacy ? ", legacy polygon extractor" : "") + ")";
}

}  // namespace foveal::core::data
