#include "data/label_filter.h"

#include <cctype>

#include "base/error.h"
#include "model/charset.h"

namespace foveal::core::data {

std::optional<std::string> LabelFilter::apply(const std::string& in) const {
  std::string label;
  label.reserve(in.size());
  for (char ch : in) {
    const auto c = static_cast<unsigned char>(ch);
    if (removePunctuation && c < 0x80 && std::ispunct(c)) continue;
    label += caseInsensitive && c < 0x80 ? static_cast<char>(std::tolower(c)) : ch;
  }
  if (label.empty()) return std::nullopt;
  if (maxLength > 0 && splitUtf8(label).size() > static_cast<size_t>(maxLength))
    return std::nullopt;
  if (!charset.empty() && !Charset(charset, caseInsensitive).covers(label)) return std::nullopt;
  return label;
}

FilteredDataset::FilteredDataset(DatasetPtr base, const LabelFilter& filter, bool skipBad)
    : m_base(std::move(base)), m_filter(filter) {
  if (m_base->endless()) throw Error(m_base->describe() + ": an endless stream cannot be filtered");
  std::optional<Charset> cs;
  if (!filter.charset.empty()) cs.emplace(filter.charset, filter.caseInsensitive);
  LabelFilter noCharset = filter;
  noCharset.charset.clear();
  for (size_t i = 0; i < m_base->size(); ++i) {
    std::string raw;
    try {
      raw = m_base->label(i);
    } catch (const Error&) {
      if (!skipBad) throw;
      ++m_unreadable;
      continue;
    }
    auto out = noCharset.apply(raw);
    if (out && cs && !cs->covers(*out)) out.reset();
    if (!out) {
      ++m_filtered;
      continue;
    }
    m_keep.push_back(i);
    m_labels.push_back(std::move(*out));
  }
}

Sample FilteredDataset::get(size_t index) const {
  Sample s = m_base->get(m_keep.at(index));
  s.label = m_labels[index];
  return s;
}

std::vector<Box> FilteredDataset::charBoxes(size_t index) const {
  auto boxes = m_base->charBoxes(m_keep.at(index));
  if (boxes.size() != splitUtf8(m_labels[index]).size()) return {};
  return boxes;
}

std::string FilteredDataset::entryName(size_t index) const {
  return index < m_keep.size() ? m_base->entryName(m_keep[index])
                               : m_base->describe() + ": filtered entry " + std::to_string(index);
}

std::string FilteredDataset::describe() const {
  std::string s = m_base->describe() + ", filtered: " + std::to_string(m_keep.size()) + " kept, " +
                  std::to_string(m_filtered) + " left out by the label filter";
  if (m_unreadable) s += ", " + std::to_string(m_unreadable) + " unreadable skipped";
  return s;
}

}  // namespace foveal::core::data
