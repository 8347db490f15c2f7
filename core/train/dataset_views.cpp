#include "train/dataset_views.h"

#include <algorithm>

#include "base/error.h"
#include "data/dataset_factory.h"

namespace foveal::core::train {

ConcatDataset::ConcatDataset(std::vector<data::DatasetPtr> parts) : m_parts(std::move(parts)) {
  if (m_parts.empty()) throw Error("concatenated dataset: no parts");
  m_offsets.push_back(0);
  for (const auto& p : m_parts) {
    if (p->endless())
      throw Error(p->describe() + ": an endless stream cannot be combined with other datasets");
    m_offsets.push_back(m_offsets.back() + p->size());
  }
}

std::pair<size_t, size_t> ConcatDataset::locate(size_t index) const {
  if (index >= size())
    throw Error("concatenated dataset: entry " + std::to_string(index) + " is past the end (" +
                std::to_string(size()) + " entries)");
  const auto it = std::upper_bound(m_offsets.begin(), m_offsets.end(), index);
  const size_t part = static_cast<size_t>(it - m_offsets.begin()) - 1;
  return {part, index - m_offsets[part]};
}

data::Sample ConcatDataset::get(size_t index) const {
  const auto [part, i] = locate(index);
  return m_parts[part]->get(i);
}

std::string ConcatDataset::label(size_t index) const {
  const auto [part, i] = locate(index);
  return m_parts[part]->label(i);
}

std::string ConcatDataset::entryName(size_t index) const {
  const auto [part, i] = locate(index);
  return m_parts[part]->entryName(i);
}

std::vector<Box> ConcatDataset::charBoxes(size_t index) const {
  const auto [part, i] = locate(index);
  return m_parts[part]->charBoxes(i);
}

std::string ConcatDataset::describe() const {
  std::string s =
      std::to_string(m_parts.size()) + " datasets, " + std::to_string(size()) + " entries:";
  for (const auto& p : m_parts) s += "\n  " + p->describe();
  return s;
}

PrefixDataset::PrefixDataset(data::DatasetPtr base, size_t count)
    : m_base(std::move(base)), m_count(count) {
  if (!m_base->endless()) m_count = std::min(m_count, m_base->size());
}

std::string PrefixDataset::describe() const {
  return m_base->describe() + " (first " + std::to_string(m_count) + ")";
}

data::DatasetPtr openTrainingData(const std::vector<std::string>& arguments) {
  if (arguments.empty()) throw Error("no training data given");
  std::vector<data::DatasetPtr> parts;
  for (const auto& a : arguments) parts.push_back(data::openDataset(a));
  if (parts.size() == 1) return parts[0];
  return std::make_shared<ConcatDataset>(std::move(parts));
}

}  // namespace foveal::core::train
