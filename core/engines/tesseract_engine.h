#pragma once
// Tesseract as a reference engine (issue 36): it reads the same line image as a Foveal model,
// with its own preprocessing, and its reading becomes a Trace: per character (Tesseract's
// symbols) the token, its confidence as a probability (Tesseract's 0-100 / 100), its box in
// source pixels, and its alternatives from the LSTM's choices (lstm_choice_mode=2: for each
// symbol, the characters its timesteps considered, with their confidences) as the step's top-k.
// Its per-timestep alternatives (the LSTM's raw choices at every timestep, as `tesseract -c
// lstm_choice_mode=1` writes them in hOCR) make the trace look like a CTC model's: the timesteps
// are the columns (Trace::columnTopk, "<blank>" for Tesseract's null character), each symbol's
// timesteps its columns, its map the token's probability over the line's timesteps, normalised.
// libtesseract does not say where a timestep lies: x is fitted per word (tesseract_engine.cpp).
// Focus = the box's centre (focus rule "symbol-box"), so pointing accuracy and IoU apply as to any
// model. A space between Tesseract's words is a step " " whose box is the gap.
//
// The only header that names Tesseract; libtesseract stays in tesseract_engine.cpp. A build
// without it compiles tesseract_unavailable.cpp instead, whose open() says so.
#include <memory>
#include <string>

#include "engines/tesseract_spec.h"
#include "image/grey_image.h"
#include "trace/trace.h"

namespace foveal::core {

/// Whether this build has libtesseract.
bool tesseractAvailable();
/// "Tesseract 5.3.0", or why there is none ("this build has no Tesseract ...").
std::string tesseractVersion();

/// The focus rule of a Tesseract trace: focus at the centre of each symbol's box.
inline constexpr const char* kTesseractFocusRule = "symbol-box";

class TesseractEngine {
 public:
  /// Starts Tesseract's LSTM engine for `spec`. Throws Error when this build has no Tesseract or
  /// the language's traineddata is missing (naming the folder searched and the Debian package).
  static std::shared_ptr<TesseractEngine> open(const TesseractSpec& spec);
  ~TesseractEngine();

  const TesseractSpec& spec() const;
  /// "Tesseract 5.3.0 (eng, psm 7, LSTM)".
  std::string describe() const;
  /// Reads `image` (one line with psm 7). Calls are serialised: one engine, one image at a time.
  Trace read(const GreyImage& image, const std::string& source) const;

  struct Impl;

 private:
  explicit TesseractEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> d;
};

}  // namespace foveal::core
