#pragma once
// What is checked about an image file before and after it is decoded (issue 35): its size against
// a pixel limit the user can raise, read from the header before any pixel is decoded, and a JPEG
// cut short (libjpeg decodes it with grey rows and no error). readImage()/decodeImage() refuse
// both; the viewers (the window, `foveal-cli trace`) read a truncated JPEG with a warning instead.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "image/grey_image.h"

namespace foveal::core {

/// The most pixels (width x height) an image may have: FOVEAL_MAX_IMAGE_PIXELS when set to a
/// positive integer, else kDefaultMaxImagePixels. The models read text lines 32 px high; a
/// 20000 x 20000 PNG took 5.3 GB of memory to decode for a 100 x 32 input.
constexpr int64_t kDefaultMaxImagePixels = int64_t(64) << 20;  // 67 megapixels, 8192 x 8192
int64_t maxImagePixels();

/// The width and height a PNG, JPEG or BMP header states, read before decoding; {0, 0} for other
/// formats or a header too short to say.
std::pair<int64_t, int64_t> statedImageSize(const std::vector<uint8_t>& bytes);

/// True when `bytes` start like a JPEG whose end-of-image marker is missing: a file cut short.
bool isTruncatedJpeg(const std::vector<uint8_t>& bytes);

/// What libjpeg says is damaged in a JPEG's entropy-coded data ("Corrupt JPEG data: premature
/// end of data segment": a scan cut short yet closed by an end marker, a run of zeros in it),
/// read without decoding the pixels; empty for an intact JPEG, for other formats, and in a build
/// without libjpeg's headers (jpegDamageChecked() false), where only isTruncatedJpeg() applies.
std::string jpegDamage(const std::vector<uint8_t>& bytes);
bool jpegDamageChecked();

/// readImage / decodeImage for a viewer: a truncated JPEG is read, and `warning` (cleared first)
/// says so, naming the file; everything else is refused as readImage refuses it.
GreyImage readImageWarning(const std::string& path, bool keepColour, std::string& warning);
GreyImage decodeImageWarning(const std::vector<uint8_t>& bytes, const std::string& origin,
                             bool keepColour, std::string& warning);

}  // namespace foveal::core
