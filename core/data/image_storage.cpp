// How image bytes are stored in LMDB records and folder datasets (with or without liblmdb).
#include <string>

#include "data/lmdb_dataset.h"
#include "image/grey_image.h"

namespace foveal::core::data {

std::string encodeForStorage(const GreyImage& image) {
  if (hasImageCodecs()) {
    const auto png = encodePng(image);
    return std::string(png.begin(), png.end());
  }
  std::string pgm =
      "P5\n" + std::to_string(image.width) + " " + std::to_string(image.height) + "\n255\n";
  pgm.append(image.pixels.begin(), image.pixels.end());
  return pgm;
}

const char* storageExtension() { return hasImageCodecs() ? "png" : "pgm"; }

}  // namespace foveal::core::data
