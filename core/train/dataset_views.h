#pragma once
// Views over datasets that training and evaluation need: several sets read as one (the ten digit
// training sets of one preset), and the first N entries of a set (a quick evaluation). Torch-free.
#include <string>
#include <vector>

#include "data/dataset.h"

namespace foveal::core::train {

/// Finite datasets one after another. Throws Error when one of them is an endless stream (an
/// endless stream can only be used alone).
class ConcatDataset : public data::Dataset {
 public:
  explicit ConcatDataset(std::vector<data::DatasetPtr> parts);
  size_t size() const override { return m_offsets.back(); }
  data::Sample get(size_t index) const override;
  std::string label(size_t index) const override;
  std::string entryName(size_t index) const override;
  std::string describe() const override;
  std::vector<Box> charBoxes(size_t index) const override;

 private:
  std::pair<size_t, size_t> locate(size_t index) const;
  std::vector<data::DatasetPtr> m_parts;
  std::vector<size_t> m_offsets;  // m_offsets[k]: first index of part k; back(): total
};

/// The first `count` entries of a dataset (of its nominal epoch for a stream).
class PrefixDataset : public data::Dataset {
 public:
  PrefixDataset(data::DatasetPtr base, size_t count);
  size_t size() const override { return m_count; }
  data::Sample get(size_t index) const override { return m_base->get(index); }
  std::string label(size_t index) const override { return m_base->label(index); }
  std::string entryName(size_t index) const override { return m_base->entryName(index); }
  std::string describe() const override;
  std::vector<Box> charBoxes(size_t index) const override { return m_base->charBoxes(index); }

 private:
  data::DatasetPtr m_base;
  size_t m_count;
};

/// Opens each argument with data::openDataset; several are concatenated. Throws Error.
data::DatasetPtr openTrainingData(const std::vector<std::string>& arguments);

}  // namespace foveal::core::train
