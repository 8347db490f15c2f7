#pragma once
// Per-step maps as source-image pixels (Torch-free): attention's values per region laid out over
// the image as the views draw them, and a map coloured over its image for files (foveal-cli
// explain --out). Faithfulness compares maps of both layouts through these.
#include <string>
#include <vector>

#include "image/grey_image.h"
#include "trace/trace.h"

namespace foveal::core {

/// `values` (one per region, a grid's cells row by row) over the trace's imageW x imageH pixels,
/// row by row: each value placed at its region's centre (Trace::regionCentres; without them the
/// columns' box centres and evenly spaced rows), bilinear between neighbouring centres and
/// constant beyond the outermost ones, as the inspector's heat map. Throws Error when the values
/// do not cover the regions.
std::vector<double> regionMapToPixels(const Trace& trace, const std::vector<double>& values);

/// Step `step` of the trace's map `name` in source pixels (a Regions map through
/// regionMapToPixels); empty when the trace has no such map or the step no values.
std::vector<double> stepPixelMap(const Trace& trace, const std::string& name, size_t step);

/// The image in grey with `map` (width x height values) coloured over it: a signed map in red
/// (positive) and blue (negative), a non-negative one in a heat ramp, each scaled by its largest
/// magnitude. The result carries `rgb` (image/colour_png.h writes it).
GreyImage overlayImage(const GreyImage& image, const std::vector<double>& map);

}  // namespace foveal::core
