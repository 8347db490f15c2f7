#pragma once
// deep-text-recognition-benchmark's label filters, for any source: lower-casing (its default,
// case-insensitive mode), punctuation removal, a maximum label length and a charset. Entries whose
// label fails are left out and counted, as the benchmark's LMDB loader does.
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace foveal::core::data {

struct LabelFilter {
  int maxLength = 0;               ///< code points; 0: no limit
  std::string charset;             ///< allowed characters; empty: any
  bool caseInsensitive = false;    ///< lower-case labels (ASCII) before the other checks
  bool removePunctuation = false;  ///< drop ASCII punctuation from labels

  bool active() const {
    return maxLength > 0 || !charset.empty() || caseInsensitive || removePunctuation;
  }
  /// The transformed label, or nothing when the entry is filtered out (empty, too long, or with a
  /// character outside the charset).
  std::optional<std::string> apply(const std::string& label) const;
};

/// A view of `base` holding only the entries the filter keeps, with transformed labels. Building
/// it reads every label once. With skipBad, entries whose label cannot be read are left out and
/// counted; without, the first such entry throws its Error.
class FilteredDataset : public Dataset {
 public:
  FilteredDataset(DatasetPtr base, const LabelFilter& filter, bool skipBad);

  size_t size() const override { return m_keep.size(); }
  Sample get(size_t index) const override;
  std::string label(size_t index) const override { return m_labels.at(index); }
  std::string entryName(size_t index) const override;
  std::string describe() const override;
  /// The base entry's boxes while the filter kept every character (case folding keeps them in
  /// place); empty when it removed some.
  std::vector<Box> charBoxes(size_t index) const override;

  size_t filteredOut() const { return m_filtered; }
  size_t unreadable() const { return m_unreadable; }
  /// Index in the base dataset of entry `index`.
  size_t baseIndex(size_t index) const { return m_keep.at(index); }
  const DatasetPtr& base() const { return m_base; }

 private:
  DatasetPtr m_base;
  LabelFilter m_filter;
  std::vector<size_t> m_keep;
  std::vector<std::string> m_labels;
  size_t m_filtered = 0, m_unreadable = 0;
};

}  // namespace foveal::core::data
