#pragma once
// What a run would see of a dataset (issue 37, item 7): every entry read as the trainer's loader
// reads it, and for each one dropped, why: characters outside the model's charset (which, how
// often), a label longer than the model can emit, for CTC a label that needs more feature columns
// than the model has (repeated characters need a blank between them), an empty label, an image
// that cannot be read. With the label-length and image-size histograms. `foveal-cli data check`
// and the New-run dialog show it; nothing usable left refuses the run. Torch-free.
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "model/charset.h"
#include "model/model_config.h"

namespace foveal::core::data {

/// What a model accepts of a label.
struct LabelLimits {
  Charset charset;     ///< the model's characters (case folding included)
  int maxLength = 0;   ///< characters the model can emit (0: no limit)
  int ctcColumns = 0;  ///< CTC: feature columns at the model's input width (0: not CTC)
  std::string model;   ///< for messages: the model file or preset and its stages
};

/// The limits of a model configuration: its charset, its maximum label length and, for CTC, its
/// feature columns at its input width (from the feature stage's layer table).
LabelLimits labelLimits(const ModelConfig& config, const std::string& name);

/// Columns a CTC path needs for `classes`: one per class, plus a blank between equal neighbours.
int ctcColumnsNeeded(const std::vector<int>& classes);

struct DataCheck {
  size_t entries = 0;  ///< entries read
  size_t usable = 0;   ///< entries a run would train on
  size_t outsideCharset = 0, tooLong = 0, tooLongForColumns = 0, emptyLabels = 0, unreadable = 0;
  /// Character (code point) outside the charset -> occurrences in the labels.
  std::map<std::string, size_t> outsideCharacters;
  std::map<size_t, size_t> lengthHistogram;  ///< label length (code points) -> entries
  /// Image width and height: the lower edge of a power-of-two bin (0: below 16) -> entries.
  std::map<int, size_t> widthHistogram, heightHistogram;
  int minW = 0, maxW = 0, minH = 0, maxH = 0;
  /// (entry index, message naming the entry) for the first problems of each kind, sorted.
  std::vector<std::pair<size_t, std::string>> examples;

  size_t dropped() const { return entries - usable; }
  /// The report as text (the CLI prints it; the New-run dialog shows it), each line ending in \n.
  std::string text(const LabelLimits& limits, size_t examples = 10) const;
  /// One line: "93 of 100 entries usable; 7 dropped: 4 with characters outside the charset, ...".
  std::string summary() const;
};

/// The lower edge of the power-of-two bin a size falls in (0 for sizes below 16).
int sizeBin(int pixels);

/// Reads entries [0, limit) of `ds` (every entry when limit is 0; an endless stream needs a
/// limit) on `threads` threads (0: the hardware's), decoding every image. `progress(done,
/// total)`, when given, is called now and then from the calling thread; returning false stops
/// the check early (the report covers what was read).
DataCheck checkDataset(const Dataset& ds, const LabelLimits& limits, size_t limit = 0,
                       int threads = 0, const std::function<bool(size_t, size_t)>& progress = {});

}  // namespace foveal::core::data
