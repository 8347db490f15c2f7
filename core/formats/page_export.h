#pragma once
// A page's layout (formats/page_layout.h) written back out with Foveal's readings of its lines
// (trace/kraken_lines.h: a LineReading per line), as PAGE-XML 2019 and ALTO v4 (4.3: the first
// with ReadingOrder), valid against the published schemas and as eScriptorium imports them.
// Torch-free; the single-image writers are formats/ocr_formats.h.
//
// What is written:
// - The page: its image file name and size. Regions in document order, each with its id, type
//   (PAGE: TextRegion with `custom="structure {type:X;}"` for a type other than "text", or the
//   region element kraken maps the type to when it holds no line; ALTO: TextBlock, Illustration
//   or GraphicalElement) and boundary polygon.
// - Lines in their order (layout.lines), in their regions; a run of lines without a region (its
//   region had no coordinates) in a TextRegion/TextBlock of its own around them. Per line: its id,
//   boundary polygon (PAGE Coords, ALTO Shape/Polygon; a line without one: its box), baseline
//   (PAGE Baseline, ALTO BASELINE), and the reading split into words at spaces, each character a
//   glyph whose polygon is the step's cut on the page (PAGE Word > Glyph > Coords with TextEquiv
//   conf; ALTO String > Glyph with its box, Shape/Polygon and GC; a multi-character label has no
//   ALTO Glyph, as in toAlto). The line's text: PAGE TextEquiv/Unicode = the trace's prediction
//   with its confidence; ALTO: its Strings' CONTENT (WC, like a PAGE Word's conf: the mean of
//   its characters' probabilities, as kraken's serialiser writes them) with one SP between words,
//   so runs of spaces and spaces at the ends are lost, and an empty reading is one String with an
//   empty CONTENT (ALTO's TextLine holds at least one), which kraken reads back as " ".
// - Glyph order: a kraken reading's steps are in frame order and its prediction in display order
//   (bidi); when the prediction is the steps reordered for display (kraken's get_display_map),
//   words and glyphs follow the prediction, each with its own cut, as kraken's records are
//   serialised; for any other reading, the steps' order.
// - Explicit reading orders (not the implicit ones, which are the document order written):
//   PAGE: the region-level ones as ReadingOrder > OrderedGroup of RegionRefIndexed (several, or
//   partial ones, as OrderedGroups in one UnorderedGroup, which kraken reads back as partial
//   orders); ALTO: the line-level ones as OrderedGroups of ElementRef to lines (partial ones all
//   in one UnorderedGroup). Each keeps its id.
// - Coordinates are rounded to whole pixels and clamped into the image (PAGE allows only
//   non-negative integers). Ids that are not valid xsd:IDs, empty or repeated get a generated one
//   ("foveal_line_N", "foveal_region_N"); references follow them.
#include <string>
#include <vector>

#include "formats/page_layout.h"
#include "trace/kraken_lines.h"

namespace foveal::core {

struct PageExportOptions {
  std::string software = "Foveal";  ///< PAGE Creator, ALTO processingSoftware
  std::string modelDescription;  ///< the model that read the lines (PAGE Comments, ALTO settings)
  std::string createdUtc;        ///< PAGE Created/LastChange (xsd:dateTime); empty: now
};

/// PAGE-XML 2019-07-15. `readings[i]` is the reading of `layout.lines[i]`; throws Error when the
/// counts differ.
std::string toPageXmlPage(const PageLayout& layout, const std::vector<LineReading>& readings,
                          const PageExportOptions& options = {});
/// ALTO v4 (declared 4.3; valid against 4.3 and 4.4). As toPageXmlPage.
std::string toAltoPage(const PageLayout& layout, const std::vector<LineReading>& readings,
                       const PageExportOptions& options = {});

}  // namespace foveal::core
