#pragma once
// The text form of a label's character boxes, shared by the formats that store them
// (docs/data/char-boxes.md): a gt.txt column "boxes=..." and an LMDB key "boxes-%09d". One box
// per character (UTF-8 code point) of the label, in reading order, separated by spaces; each box
// "x0,y0,x1,y1": its left, top, right and bottom edges in the image's pixels (pixel-edge
// coordinates, decimals allowed), as hOCR's bbox orders them.
#include <string>
#include <vector>

#include "model/geometry.h"

namespace foveal::core::data {

/// "0,0,32,32 32,0,64,32" (at most 6 significant digits per number).
std::string formatCharBoxes(const std::vector<Box>& boxes);
/// The inverse. Throws Error (the message says what is wrong, callers prefix the entry) for
/// anything but four finite numbers per box with x0 <= x1 and y0 <= y1.
std::vector<Box> parseCharBoxes(const std::string& text);
/// Throws Error naming the first box that does not lie in the `width` x `height` image with a
/// margin of half its size beyond each edge (boxes of +-1e30 were accepted by eval and written
/// into packs).
void checkCharBoxesInImage(const std::vector<Box>& boxes, int width, int height);

}  // namespace foveal::core::data
