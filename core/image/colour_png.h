#pragma once
// Colour PNGs for the files Foveal writes that are not images it reads (explanation overlays).
// Apart from grey_image.h, which nearly every file includes.
#include <string>

#include "image/grey_image.h"

namespace foveal::core {

/// Writes the image's colours (`rgb`, R G B interleaved) as an 8-bit RGB PNG. Throws Error when
/// it has none or the file cannot be written.
void writeColourPng(const GreyImage& image, const std::string& path);

}  // namespace foveal::core
