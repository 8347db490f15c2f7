#pragma once
// The image size range of a dataset survey (data_check.h's DataCheck, dataset_tools.h's
// DatasetInfo): one worker's part merged into the total. A part or total with maxW 0 has seen no
// image yet, and its minima mean nothing.
#include <algorithm>

namespace foveal::core::data {

template <typename Survey>
void mergeImageSizes(Survey& total, const Survey& part) {
  if (part.maxW <= 0) return;
  const bool had = total.maxW > 0;
  total.minW = had ? std::min(total.minW, part.minW) : part.minW;
  total.minH = had ? std::min(total.minH, part.minH) : part.minH;
  total.maxW = std::max(total.maxW, part.maxW);
  total.maxH = std::max(total.maxH, part.maxH);
}

}  // namespace foveal::core::data
