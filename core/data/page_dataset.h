#pragma once
// A folder of page images with their PAGE-XML or ALTO transcriptions (an eScriptorium or
// Transkribus export: one XML file per page naming its image) read as a dataset: every text line
// with a transcription is an entry, its image the line kraken's recogniser cuts out of the page
// (image/kraken_line.h: a baseline line straightened along its boundary polygon, a line without
// one cropped to its box), its label the transcription. `page:DIR` (or `page:FILE.xml`) in every
// command that takes a dataset: eval, eval --errors, the Errors page, train.
//
// The layouts are parsed (and the images' presence checked) when the dataset opens, so a
// malformed XML file or a missing image is an error naming the file before anything is read.
// A line is extracted when its entry is read, from the page image (the last pages decoded are
// kept, so reading a page's lines in order decodes it once). A line kraken would give an empty
// record for (outside the page, blank) is an entry that throws naming it when read, so loaders
// skip and count it like any other unreadable entry.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "image/kraken_line.h"

namespace foveal::core::data {

class PageDataset : public Dataset {
 public:
  /// `path`: a folder (its *.xml files, METS files aside, in name order) or one XML file.
  /// `legacyPolygons`: cut baseline lines with kraken's legacy extractor (what models trained
  /// with it expect; kraken's default for models whose metadata does not say). Throws Error
  /// naming the file: not there, not PAGE or ALTO (with the element), its image missing.
  explicit PageDataset(const std::string& path, bool legacyPolygons = false);

  size_t size() const override { return m_entries.size(); }
  Sample get(size_t index) const override;
  std::string label(size_t index) const override;
  std::string entryName(size_t index) const override;
  std::string describe() const override;

  /// The XML files read, in order.
  const std::vector<std::string>& layoutFiles() const { return m_files; }
  /// Lines of the layouts left out for having no transcription.
  size_t untranscribedLines() const { return m_untranscribed; }

 private:
  struct PageFile {
    std::string xml;
    std::string image;
  };
  struct Entry {
    size_t page = 0;     ///< in m_pages
    int lineNumber = 0;  ///< 1-based, among the page's lines in reading order
    std::string lineId;
    std::string text;
    KrakenLineSpec spec;
    std::string problem;  ///< non-empty: why the line cannot be read (no baseline nor box)
  };
  const Entry& entry(size_t index) const;
  std::shared_ptr<const GreyImage> pageImage(size_t page) const;

  std::string m_path;
  bool m_legacy = false;
  std::vector<std::string> m_files;
  std::vector<PageFile> m_pages;
  std::vector<Entry> m_entries;
  size_t m_untranscribed = 0;
  mutable std::mutex m_cacheMutex;
  mutable std::vector<std::pair<size_t, std::shared_ptr<const GreyImage>>> m_cache;
};

}  // namespace foveal::core::data
