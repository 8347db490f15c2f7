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

/// What an engine lacks that a model file has, for refuseEngine(): commands that differentiate
/// the network (explain, faithfulness) and those that read a model file's weights (import,
/// bench).
inline constexpr const char* kEngineNoGradients = "an engine has no gradients to explain";
inline constexpr const char* kEngineNothingToImport =
    "an engine, not a model file: nothing to import";

/// Throws Error "<spec>: <lack> (<hint>)" when `model` is an engine spec; nothing otherwise.
/// `lack` is kEngineNoGradients or kEngineNothingToImport; `hint` says what the command takes.
void refuseEngine(const std::string& model, const std::string& lack, const std::string& hint);

/// Reads "tesseract:LANG[,psm=N][,chars=SET]". Throws Error naming the spec and what is wrong
/// (an empty or odd language, a psm outside 0-13 or one that reads no text, 0 and 2, an unknown
/// key).
TesseractSpec parseTesseractSpec(const std::string& text);

}  // namespace foveal::core
