#pragma once
// An 8-bit grey image as plain bytes: what crosses from core to the GUI and the CLI.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace foveal::core {

struct GreyImage {
  GreyImage() = default;
  GreyImage(int w, int h, std::vector<uint8_t> grey = {}, std::vector<uint8_t> colour = {})
      : width(w), height(h), pixels(std::move(grey)), rgb(std::move(colour)) {}

  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  ///< row-major, width * height
  /// The file's colours, R G B interleaved (width * height * 3), when it was read with
  /// keepColour and has them; empty otherwise. Models whose preprocessing converts colour its own
  /// way (PIL's luma, RGB input) read these; `pixels` stays the decoder's grey.
  std::vector<uint8_t> rgb;

  bool empty() const { return width <= 0 || height <= 0; }
  uint8_t at(int x, int y) const { return pixels[static_cast<size_t>(y) * width + x]; }
};

/// Reads an image file as grey. With OpenCV: every format imgcodecs decodes; without: PGM/PPM.
/// Throws Error naming the file and the problem (missing, unreadable, corrupt, unsupported).
/// keepColour: also fill `rgb` when the file has colour.
GreyImage readImage(const std::string& path, bool keepColour = false);
/// Decodes image bytes already in memory (`origin` names them in errors).
GreyImage decodeImage(const std::vector<uint8_t>& bytes, const std::string& origin,
                      bool keepColour = false);

/// Writes an 8-bit grey PNG (no external library). Throws Error when the file cannot be written.
void writePng(const GreyImage& image, const std::string& path);
/// Encodes an 8-bit grey PNG in memory.
std::vector<uint8_t> encodePng(const GreyImage& image);

/// True when this build decodes compressed formats (PNG, JPEG, ...).
bool hasImageCodecs();

}  // namespace foveal::core
