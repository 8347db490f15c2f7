#pragma once
// The `tesseract:LANG[,psm=N][,chars=SET]` spec that names Tesseract wherever a model is named
// (eval --model, trace --model, the GUI's Models dock). Plain parsing: no Tesseract needed.
#include <string>

namespace foveal::core {

struct TesseractSpec {
  std::string language = "eng";  ///< traineddata name(s), '+'-joined as Tesseract takes them
  int psm = 7;                   ///< page segmentation mode; 7: the image is one text line
  std::string characters;        ///< tessedit_char_whitelist; empty: every character
  /// The spec back as text: "tesseract:eng,psm=7".
  std::string toString() const;
};

/// Whether `text` names Tesseract (starts with "tesseract:").
bool isTesseractSpec(const std::string& text);

/// Reads "tesseract:LANG[,psm=N][,chars=SET]". Throws Error naming the spec and what is wrong
/// (an empty or odd language, a psm outside 0-13, an unknown key).
TesseractSpec parseTesseractSpec(const std::string& text);

}  // namespace foveal::core
