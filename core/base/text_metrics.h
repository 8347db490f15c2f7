#pragma once
// String comparison used by evaluation and by the GUI's failure display: Levenshtein distance
// over code points, its normalised form, and a per-character alignment of prediction to truth.
#include <string>
#include <vector>

namespace foveal::core {

/// Levenshtein distance between two UTF-8 strings, counted in code points.
int editDistance(const std::string& a, const std::string& b);

/// 1 - distance / max(len(a), len(b)) as in deep-text-recognition-benchmark's "norm ED"
/// (1.0 for two empty strings).
double normalisedEditDistance(const std::string& prediction, const std::string& truth);

struct CharOp {
  enum class Kind { Match, Substitute, Insert, Delete };
  Kind kind = Kind::Match;
  std::string predicted;  ///< empty for Delete (a truth character that was not read)
  std::string truth;      ///< empty for Insert (a read character that is not in the truth)
};

/// A minimal-edit alignment of prediction to truth, in reading order.
std::vector<CharOp> alignCharacters(const std::string& prediction, const std::string& truth);

/// For each predicted code point: true when it matches the aligned truth character.
std::vector<bool> correctPredictedCharacters(const std::string& prediction,
                                             const std::string& truth);

}  // namespace foveal::core
