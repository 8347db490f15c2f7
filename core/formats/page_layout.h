#pragma once
// Page layouts (ALTO v4, PAGE-XML 2019 and the 2013 PAGE files eScriptorium and Transkribus
// write) read as kraken reads them (kraken/lib/xml: XMLPage, parse_alto, parse_page): the text
// lines with their baselines, boundary polygons and boxes, the regions, the page's image and size,
// and every reading order kraken derives. `foveal-cli trace --layout` reads each line of it: one
// with a baseline through kraken's baseline path (the boundary its polygon), one without through
// its box. Torch-free; libxml2 parses, never loading a DTD, an entity or anything from the network.
//
// What kraken does and this reader does alike:
// - The format is the root element's: `alto` (any namespace) or `PcGts`; the namespace is not
//   checked (kraken's own PAGE test files are of the 2013-07-15 schema).
// - Regions are the elements directly under PAGE's Page whose name ends in one of PAGE's region
//   types (TextRegion, ImageRegion, ... CustomRegion), or directly under ALTO's
//   Layout/Page/PrintSpace (TextBlock, Illustration, GraphicalElement, ComposedBlock). Nested
//   regions (a TextRegion in a TableRegion, a TextBlock in a ComposedBlock) are not read, and
//   their lines are not either.
// - Lines are the TextLines directly in those regions, in document order: kraken's
//   `line_implicit` order, the one its Segmentation (`to_container().lines`) and so its
//   recogniser follow. Explicit reading orders (PAGE ReadingOrder and Transkribus `custom`
//   indices, ALTO ReadingOrder) are kept as alternatives in `readingOrders`, flattened to line and
//   region ids as kraken flattens them.
// - A line is kept when kraken keeps it with `linetype='baselines'` (a parseable baseline) or with
//   `linetype='bbox'` (PAGE: parseable Coords; ALTO: numeric HPOS/VPOS/WIDTH/HEIGHT).
// - A region without parseable coordinates is dropped (and skipped by explicit orders), but its
//   lines are kept without a region id.
// - Image size: a width or height of 0 is replaced by the image file's (resolved against the XML
//   file's folder); refused when that file cannot be read. ALTO refuses a MeasurementUnit other
//   than `pixel`, an empty fileName and a missing Page; PAGE a Page without imageFilename.
#include <string>
#include <vector>

namespace foveal::core {

struct LayoutPoint {
  double x = 0, y = 0;
  bool operator==(const LayoutPoint& o) const { return x == o.x && y == o.y; }
};

/// One text line as kraken's BaselineLine / BBoxLine hold it.
struct LayoutLine {
  std::string id;        ///< its id (PAGE `id`, ALTO `ID`); empty when the file gives none
  std::string regionId;  ///< the region it is in; empty when that region has no coordinates
  /// The boundary polygon as kraken's baseline mode reads it (PAGE Coords, ALTO Shape/Polygon),
  /// repeated points merged; may be empty when the file has none. A PAGE line without a baseline
  /// keeps its Coords here too (its box is their extent); an ALTO one has none.
  std::vector<LayoutPoint> boundary;
  /// The baseline, repeated points merged; empty: no baseline, the line is read through `bbox`.
  /// kraken keeps a line whose baseline attribute holds no point pair (ALTO BASELINE="" or with
  /// no number, PAGE points="7") as a baseline line with an empty baseline; with no box either
  /// (hasBox false) such a line can be read neither way, and a caller refuses it by its id.
  std::vector<LayoutPoint> baseline;
  /// The box kraken's bbox mode reads (PAGE: the extent of Coords; ALTO: HPOS, VPOS,
  /// HPOS + WIDTH, VPOS + HEIGHT) as x0, y0, x1, y1; valid when hasBox.
  double bbox[4] = {0, 0, 0, 0};
  bool hasBox = false;
  std::string text;  ///< the transcription (PAGE TextEquiv/Unicode, ALTO String CONTENT and SP)
  /// kraken's tags, one entry per value: "key=value" (`type=heading`, `label_1=bar`), for PAGE
  /// `custom` entries other than type "key.subkey=value" (`readingOrder.index=3`).
  std::vector<std::string> tags;
  std::string split;    ///< a `split` tag's value (train, validation, test, ...), else empty
  std::string baseDir;  ///< kraken's base_dir: "L", "R", or empty when the file says nothing
};

struct LayoutRegion {
  std::string id;
  std::string type;  ///< kraken's region type: the file's type, else e.g. "text", "image"
  std::vector<LayoutPoint> boundary;
  std::vector<std::string> tags;  ///< as LayoutLine::tags
};

/// One of kraken's reading orders (XMLPage.reading_orders), flattened.
struct LayoutReadingOrder {
  std::string id;           ///< "line_implicit", "region_implicit", "region_transkribus", an
                            ///< explicit order's id, or that id + ":regions"
  std::string level;        ///< "line" or "region": what `ids` name
  bool isTotal = true;      ///< false for an order under a top-level UnorderedGroup
  std::string description;  ///< the group's caption (PAGE) or tag label (ALTO)
  std::vector<std::string> ids;
};

struct PageLayout {
  std::string format;         ///< "page" or "alto"
  std::string imageFilename;  ///< as the file names it
  std::string imagePath;      ///< imageFilename resolved against the XML file's folder
  int imageWidth = 0, imageHeight = 0;
  std::string textDirection = "horizontal-lr";  ///< kraken's Segmentation.text_direction
  std::vector<LayoutRegion> regions;            ///< with coordinates, in document order
  std::vector<LayoutLine> lines;                ///< in reading order, as kraken orders them
  std::vector<LayoutReadingOrder> readingOrders;
};

/// Reads the ALTO or PAGE-XML file at `path`. Throws Error naming the file and the element (with
/// its line number) when the file is not well-formed XML, not ALTO or PAGE-XML, declares entities
/// (a DOCTYPE with an entity is refused before any is expanded), or kraken's parser would refuse
/// it (in either of its line modes).
PageLayout readPageLayout(const std::string& path);
/// The same for a document already in memory; `origin` names it in errors and is the path image
/// file names are resolved against.
PageLayout parsePageLayout(const std::string& bytes, const std::string& origin);

}  // namespace foveal::core
