#pragma once
// String comparison used by evaluation and by the GUI's failure display: Levenshtein distance
// over code points, its normalised form, a per-character alignment of prediction to truth, and
// the character error rate as dinglehopper defines it (over NFC grapheme clusters).
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

/// The user-perceived characters of `text`: its NFC normalisation split into extended grapheme
/// clusters (Unicode UAX #29), as dinglehopper counts characters (uniseg's grapheme_clusters of
/// unicodedata.normalize("NFC", ...)). A build without ICU (hasGraphemeClusters() false) splits
/// into code points, unnormalised.
std::vector<std::string> graphemeClusters(const std::string& text);
/// Whether this build segments grapheme clusters and normalises (ICU was found).
bool hasGraphemeClusters();

/// dinglehopper's character errors: the Levenshtein distance between the grapheme clusters of
/// truth and prediction, and the truth's length in clusters.
struct CharacterErrors {
  int distance = 0;
  int truthLength = 0;
};
CharacterErrors characterErrors(const std::string& prediction, const std::string& truth);

/// dinglehopper's CER: distance / truth length; 0 when they are equal, infinity when only the
/// truth is empty. Raw strings: no case folding, nothing dropped.
double characterErrorRate(const std::string& prediction, const std::string& truth);

}  // namespace foveal::core
