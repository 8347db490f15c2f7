#pragma once
// Measuring a recognizer on datasets (docs/DESIGN.md, Metrics): word accuracy (exact match; for
// text models lower-cased with punctuation dropped first, as deep-text-recognition-benchmark does),
// normalised edit distance, and the mean attention entropy H[alpha_t] (natural log) over the
// decoded steps of an image (up to and including the first end token, as traces count them),
// then over the images. Grouped per dataset and per label length. Where the data knows its
// character boxes (Dataset::charBoxes), localisation too (docs/DESIGN.md "Localisation",
// core/trace/localisation.h): pointing accuracy and mean IoU, over all images and over the
// correctly read ones. Torch-free.
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "formats/model_format.h"
#include "trace/localisation.h"

namespace foveal::core::train {

/// Called after each batch with the images read so far and the total (per dataset); returning
/// false stops the evaluation, which then throws EvalCancelled.
using EvalProgress = std::function<bool(int64_t done, int64_t total)>;

/// An evaluation stopped by its progress callback: nothing of it is returned.
class EvalCancelled : public Error {
 public:
  EvalCancelled() : Error("evaluation cancelled") {}
};

struct EvalOptions {
  int batchSize = 64;
  int64_t limit = 0;  ///< first N entries of each dataset (0: all)
  int loaderThreads = 2;
  std::string device = "cpu";
  /// "auto" (text scoring when the model's charset has letters), "exact" or "text".
  std::string scoring = "auto";
  bool keepFailures = true;
  int beamWidth = 1;  ///< >1: beam search of that width instead of greedy decoding
  /// Leave out entries the model cannot read (counted per reason in DatasetEval); false: stop
  /// at the first one with an Error naming it and why (what `foveal-cli eval` does unless
  /// --skip-bad). Either way a dataset with no readable entry at all is an Error.
  bool skipBad = true;
  /// For an imported model file (formats/model_format.h): the options its file does not hold.
  ImportOptions importOptions;
  /// The model's file, named when its outputs are not finite (empty: "the model").
  std::string model;
  /// Keep every image's reading (DatasetEval::images), for error analysis.
  bool keepImages = false;
  EvalProgress progress;
  /// Measure localisation where the data knows its character boxes (synthetic words render each
  /// entry a second time for them). The trainer's periodic evaluation leaves it off.
  bool localisation = true;
};

struct EvalStats {
  int64_t count = 0;
  int64_t correct = 0;
  double nedSum = 0;
  double entropySum = 0;
  /// Per-character accuracy: truth characters read right (a minimal-edit alignment of the
  /// reading to the truth, as the Errors page aligns them), of all truth characters. For digit
  /// sequences, the per-digit accuracy: 0.972^5 = 87 % word accuracy at five digits.
  int64_t charCorrect = 0;
  int64_t charTotal = 0;
  /// dinglehopper's character error rate (base/text_metrics.h): Levenshtein distance over the
  /// NFC grapheme clusters of the raw reading and truth (no case folding, nothing dropped), summed
  /// over the images, and the truths' lengths in clusters. cer() = distance / length.
  int64_t cerDistance = 0;
  int64_t cerLength = 0;
  LocalisationStats localisation;  ///< empty when the data has no character boxes
  double accuracy() const { return count ? static_cast<double>(correct) / count : 0.0; }
  double charAccuracy() const {
    return charTotal ? static_cast<double>(charCorrect) / charTotal : 0.0;
  }
  double ned() const { return count ? nedSum / count : 0.0; }
  /// Pooled over the images: edits over truth characters (dinglehopper's per-text CER, with the
  /// texts' edits and lengths summed); 0 with no truth characters.
  double cer() const {
    return cerLength ? static_cast<double>(cerDistance) / static_cast<double>(cerLength) : 0.0;
  }
  double entropy() const { return count ? entropySum / count : 0.0; }
  void add(const EvalStats& o);
};

struct EvalFailure {
  std::string dataset;
  size_t index = 0;   ///< entry in the dataset
  std::string entry;  ///< the dataset's name for it
  std::string truth;
  std::string prediction;
};

/// One image as a model read it (EvalOptions::keepImages).
struct ImageReading {
  size_t index = 0;   ///< entry in the dataset
  std::string entry;  ///< the dataset's name for it
  std::string truth;
  std::string reading;
  /// As the trace reports it: attention, the product of the chosen tokens' probabilities up to
  /// and including the end token; CTC, the product of every column's maximum.
  double confidence = 0;
  /// Mean attention entropy over the decoded steps (NaN for CTC, which has no attention).
  double entropy = std::numeric_limits<double>::quiet_NaN();
  /// The doubt of the reading's worst step (issue 67: the token probability is the signal that
  /// finds wrong steps best): the lowest probability a step gives its token; attention, over the
  /// steps up to and including the end token; CTC, over the characters, each the largest
  /// probability of its run of frames. NaN for a CTC reading of no character.
  double lowestStepProbability = std::numeric_limits<double>::quiet_NaN();
};

struct DatasetEval {
  std::string name;  ///< the dataset argument
  std::string description;
  EvalStats overall;
  std::map<int, EvalStats> byLength;  ///< by label length in characters
  int64_t skipped = 0;                ///< entries the model cannot read (label outside charset...)
  std::map<std::string, int64_t> skippedByReason;  ///< data::DataLoader::skippedByReason
  std::vector<std::string> skippedExamples;        ///< the first few skipped entries, named
  std::string skippedSummary;                      ///< data::DataLoader::skippedSummary
  std::vector<EvalFailure> failures;
  std::vector<ImageReading> images;  ///< in reading order, with EvalOptions::keepImages
};

struct EvalReport {
  std::string model;
  int beamWidth = 1;  ///< decoding: 1 greedy, more beam search
  std::vector<DatasetEval> datasets;
  /// Sets of the training pool's digits (digitTrainPoolSets()), read beside the digit protocol
  /// to show memorising; kept out of every pooled figure. JSON: "train_pool".
  std::vector<DatasetEval> trainPool;

  EvalStats overall() const;  ///< pooled over every image (of `datasets`)
  std::map<int, EvalStats> byLength() const;
  std::string toJson() const;
  std::string toTable() const;
  /// Tab-separated: dataset, index, entry, truth, prediction; one header line.
  std::string failuresTsv() const;
};

/// Whether a model of `charset` is scored as text: "text", "exact", or "auto" (text when the
/// charset has letters). Throws Error for another value.
bool wantsTextScoring(const std::string& charset, const std::string& scoring);

/// Lower-case (ASCII) and keep letters and digits only.
std::string normaliseForScoring(const std::string& text);

/// Whether `prediction` counts as reading `truth`, and its normalised edit distance.
struct Score {
  bool correct = false;
  double ned = 0;
  int charCorrect = 0;  ///< truth characters aligned to an equal read character
  int charTotal = 0;    ///< truth characters
  int cerDistance = 0;  ///< dinglehopper's: edits between the raw strings' grapheme clusters
  int cerLength = 0;    ///< the raw truth's grapheme clusters
};
Score scorePrediction(const std::string& prediction, const std::string& truth, bool textScoring);

/// Loads `modelPath` and evaluates it on each dataset argument. Throws Error.
EvalReport evaluateModelFile(const std::string& modelPath, const std::vector<std::string>& datasets,
                             const EvalOptions& options = {});

/// The paper's Table 1 row(s): n5 .. n13, r5 .. r13 and their mean, in %. Datasets of the report
/// are matched to the columns by their digit settings (digitProtocolSets()).
std::string digitProtocolTable(const std::vector<std::pair<std::string, EvalReport>>& rows);
/// The same layout for localisation: pointing accuracy (%) per setting and their mean, then
/// pooled over every step of every image (longer labels weigh more): pointing accuracy over all
/// and over the correctly read images, and the mean IoU over all and over the correctly read ones.
/// Both tables name a model file by its stem.
/// Per-digit accuracy (EvalStats::charAccuracy) in Table 1's layout.
std::string digitProtocolCharTable(const std::vector<std::pair<std::string, EvalReport>>& rows);

/// Memorising made visible (issue 34): per model, word accuracy on sequences drawn from the
/// training pool of digits against the test pool at 5 and 13 digits, and the per-digit accuracy
/// on each pool (over those two sets): the test sets from `datasets`, the others from
/// `trainPool`.
std::string digitPoolTable(const std::vector<std::pair<std::string, EvalReport>>& rows);

std::string digitProtocolLocalisationTable(
    const std::vector<std::pair<std::string, EvalReport>>& rows);

}  // namespace foveal::core::train
