#pragma once
// Synthetic scene-text words and reference glyphs, rendered from installed fonts with OpenCV's
// FreeType module (core/data/imaging/). A build without OpenCV has these declarations but every
// call throws an Error that says so (canRenderText() tells beforehand).
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "model/charset.h"

namespace foveal::core::data {

/// Words from a word list, each rendered in a random installed font and case, then distorted:
/// perspective, a curved baseline, blur, contrast and background variation, noise. Sample i is a
/// pure function of (seed, i), like the digit sequences.
struct WordSpec {
  uint64_t seed = 1;
  size_t count = 10000;
  bool stream = false;  ///< endless
  int minLength = 2;
  int maxLength = 12;
  std::string wordList = "/usr/share/dict/words";
  std::vector<std::string> fonts;  ///< empty: defaultFonts()
  std::string toString() const;
};

bool canRenderText();
/// DejaVu and Roboto TrueType files found under /usr/share/fonts.
std::vector<std::string> defaultFonts();
/// Throws Error when the word list or the fonts cannot be read, or the build has no OpenCV.
/// Its charBoxes() are the glyph boxes from the renderer: each character's own ink taken through
/// the word's distortions (it renders the entry again).
DatasetPtr makeSyntheticWords(const WordSpec& spec);
/// The ink of entry `index` of a makeSyntheticWords dataset, before colours, blur and noise (the
/// image's size; 0 = none): what its glyph boxes are checked against. Throws Error for another
/// dataset.
GreyImage syntheticWordInk(const Dataset& words, size_t index);

/// Roboto Bold, the reference glyph font (fc-match "Roboto:bold" on Debian).
std::string referenceFontPath();
/// The 24x32 image of one token (a code point), rendered from Roboto Bold at size 36, white on
/// black and centred: the target patch of the sharp + reference model.
GreyImage referenceGlyph(const std::string& token, const std::string& fontPath = "");
/// One glyph per class of `charset`; index 0 (the end token) is blank.
std::vector<GreyImage> referenceGlyphs(const Charset& charset, const std::string& fontPath = "");

}  // namespace foveal::core::data
