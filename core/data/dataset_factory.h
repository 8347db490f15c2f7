#pragma once
// Turns a dataset argument into a Dataset: a path whose kind is recognised (packed file, LMDB
// folder, folder with gt.txt, gt.txt itself) or a spec for generated data:
//   digits:len=5,rotated,split=test,seed=1,count=100,mnist=FILE
//   words:seed=1,count=1000,minlen=2,maxlen=12,wordlist=FILE
//   page:DIR (page images with PAGE-XML / ALTO transcriptions, data/page_dataset.h)
// (keys may come in any order; see docs/manual/datasets.md).
#include <string>

#include "data/dataset.h"
#include "data/label_filter.h"

namespace foveal::core::data {

struct OpenOptions {
  LabelFilter filter;    ///< applied when active()
  bool skipBad = false;  ///< filtering: leave out entries whose label cannot be read
};

/// Throws Error naming the argument when it is neither an existing dataset nor a valid spec.
DatasetPtr openDataset(const std::string& argument, const OpenOptions& options = {});

/// The kind openDataset sees in `argument`: "packed", "lmdb", "folder", "digits", "words",
/// "page", or "" when none.
std::string datasetKind(const std::string& argument);

}  // namespace foveal::core::data
