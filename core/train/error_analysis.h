#pragma once
// Error analysis (the Errors page and `foveal-cli eval --errors`): every image of a dataset as one
// or several models read it, with its edit distance and character error rate, a character
// confusion matrix built from the edit-distance alignment (insertions and deletions included),
// and accuracy and CER per label length and per character. The readings come from the batched
// evaluation (evaluation.h); everything else here is plain arithmetic on strings. Torch-free.
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "train/evaluation.h"

namespace foveal::core::train {

/// One image's errors for one model. Text scoring (lower-cased, letters and digits only) applies
/// to the distance and the CER as it does to the accuracy.
struct ImageErrors {
  bool correct = false;
  int distance = 0;  ///< Levenshtein distance in code points
  int length = 0;    ///< characters in the truth (as evaluation groups by length)
  double cer = 0;    ///< distance / scored truth length (the distance itself for an empty truth)
  /// Read or guessed (ErrorRunOptions::imageShare): over the reading's character steps, the
  /// smallest share of a step's integrated-gradient attribution that went to the image rather
  /// than to the previous tokens (core/trace/attribution.h). NaN where not measured: a right
  /// reading, a CTC model or an engine, or not asked for.
  double imageShare = std::numeric_limits<double>::quiet_NaN();
};

/// Counts over a group of images (all, or one label length).
struct GroupStats {
  int64_t images = 0;
  int64_t correct = 0;
  int64_t edits = 0;  ///< summed edit distances
  int64_t chars = 0;  ///< summed scored truth lengths
  double accuracy() const { return images ? static_cast<double>(correct) / images : 0.0; }
  /// Pooled CER: edits over truth characters.
  double cer() const { return chars ? static_cast<double>(edits) / chars : 0.0; }
};

/// One character's fate in the alignments: as a truth character it was matched, substituted or
/// deleted; `inserted` counts readings of it that align with no truth character.
struct CharStats {
  int64_t occurrences = 0;  ///< in the truths
  int64_t matched = 0, substituted = 0, deleted = 0, inserted = 0;
  double accuracy() const { return occurrences ? static_cast<double>(matched) / occurrences : 0.0; }
  /// (substituted + deleted) / occurrences.
  double errorRate() const {
    return occurrences ? static_cast<double>(substituted + deleted) / occurrences : 0.0;
  }
};

/// Truth character x read character. Row and column gap() stand for "no character": cell
/// (gap, r) is an insertion of r, cell (t, gap) a deletion of t. Each cell also keeps the images
/// (positions in ModelErrors::readings) whose alignment holds it, once each.
class ConfusionMatrix {
 public:
  /// Symbols sorted by code point order of their UTF-8 bytes.
  void build(const std::vector<std::string>& symbols);
  void add(int truth, int read, size_t image);

  const std::vector<std::string>& symbols() const { return m_symbols; }
  int size() const { return static_cast<int>(m_symbols.size()) + 1; }  ///< with the gap
  int gap() const { return static_cast<int>(m_symbols.size()); }
  /// Index of a character, gap() for "", -1 when it never occurred.
  int indexOf(const std::string& symbol) const;
  /// The character, "" for the gap.
  std::string symbol(int i) const;
  int64_t count(int truth, int read) const;
  const std::vector<size_t>& images(int truth, int read) const;
  int64_t maxOffDiagonal() const;

  /// Header row "truth\\read" then the symbols and "(none)"; one row per truth symbol.
  std::string csv() const;
  /// A heat map with the counts written in the cells, for servers without a display.
  std::string svg(const std::string& title) const;

 private:
  std::vector<std::string> m_symbols;
  std::vector<int64_t> m_counts;
  std::vector<std::vector<size_t>> m_images;
};

struct ModelErrors {
  std::string model;
  bool textScoring = false;
  std::vector<ImageReading> readings;  ///< in dataset order
  std::vector<ImageErrors> errors;     ///< parallel to readings
  ConfusionMatrix confusion;
  GroupStats overall;
  std::map<int, GroupStats> byLength;
  std::map<std::string, CharStats> byCharacter;
  int64_t skipped = 0;
  std::map<std::string, int64_t> skippedByReason;
  std::string skippedSummary;
  /// By dataset index: the position in readings, -1 where this model skipped the entry.
  std::vector<int> positions;
  /// Position in readings of dataset entry `index`, or -1 when this model skipped it.
  int positionOf(size_t index) const;
};

/// Aligns every reading with its truth and fills errors, confusion and the statistics.
ModelErrors analyseReadings(const std::string& model, std::vector<ImageReading> readings,
                            bool textScoring);

struct ErrorAnalysis {
  std::string dataset;      ///< the dataset argument
  std::string description;  ///< the dataset's own description
  std::vector<ModelErrors> models;
  /// The models that could read no entry of the dataset (every label outside their charset...):
  /// set aside, not analysed, and named in the summary (issue 64: one such model failed the
  /// whole page before).
  struct Unread {
    std::string model;
    int64_t skipped = 0;
    std::string why;  ///< the skipped entries' reasons, e.g. "40 label outside the charset"
  };
  std::vector<Unread> unread;

  /// Dataset entries read by at least one model, ascending.
  std::vector<size_t> entries() const;
  /// One row per entry: index, entry, truth, length, then per model reading, correct,
  /// confidence, edit distance, CER and entropy (empty where a model skipped the entry).
  std::string tableCsv() const;
  /// The same for the given entries only, in that order (the rows a filter shows).
  std::string tableCsv(const std::vector<size_t>& entries) const;
  /// Per model and label length: images, correct, accuracy, edits, chars, CER.
  std::string byLengthCsv() const;
  /// Per model and truth character: occurrences, matched, substituted, deleted, inserted,
  /// accuracy, error rate.
  std::string byCharacterCsv() const;
  /// Plain text: per model accuracy, CER, skipped entries and why, the most frequent confusions.
  std::string summary() const;
};

struct ErrorRunOptions {
  int64_t limit = 0;  ///< first N entries (0: all)
  int batchSize = 64;
  std::string scoring = "auto";
  std::string device = "cpu";
  int beamWidth = 1;
  ImportOptions importOptions;  ///< for imported model files among the models (model_format.h)
  /// Also measure each wrong reading's image share (ImageErrors::imageShare): integrated
  /// gradients over the image and the previous tokens for every character step of the image,
  /// read again greedily on its own. Attention models only; about a second an image.
  bool imageShare = false;
  int igSteps = 16;  ///< integrated gradients' points for imageShare
};

/// Progress over every model: images read so far and the total (models x entries). Returning
/// false cancels: runErrorAnalysis then throws EvalCancelled and returns nothing.
using ErrorProgress = EvalProgress;

/// Reads `dataset` with each model file (batched, greedy unless a beam width is given), skipping
/// and counting the entries a model cannot read; a model that can read no entry is set aside in
/// `unread`. Throws Error (a model that cannot be loaded, a dataset that cannot be opened, no
/// model able to read any entry) or EvalCancelled.
ErrorAnalysis runErrorAnalysis(const std::vector<std::string>& models, const std::string& dataset,
                               const ErrorRunOptions& options = {},
                               const ErrorProgress& progress = {});

/// Writes table.csv, by-length.csv, by-character.csv, summary.txt and, per model,
/// confusion-NAME.csv and confusion-NAME.svg (NAME: the model file's stem) into `dir`, creating
/// it. Returns the files written. Throws Error naming a file that cannot be written.
std::vector<std::string> writeErrorReport(const ErrorAnalysis& analysis, const std::string& dir);

}  // namespace foveal::core::train
