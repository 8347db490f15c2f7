// libFuzzer harness: ALTO and PAGE-XML page layouts -> parsePageLayout
// (core/formats/page_layout.h). Every malformed or hostile file must be refused with an Error; a
// layout read must be one kraken's parser could give: a known format, a positive image size, lines
// with distinct ids, and reading orders that name only the layout's own lines and regions, each at
// most once. The origin lies in a folder that does not exist, so an image a file names (for a zero
// size) is never found.
#include <cstdint>
#include <set>
#include <string>

#include "base/error.h"
#include "formats/page_layout.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace foveal::core;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string origin = "/nonexistent-foveal-fuzz/layout.xml";
  try {
    const PageLayout layout = parsePageLayout(bytes, origin);
    FUZZ_CHECK(layout.format == "page" || layout.format == "alto", "a layout names its format");
    FUZZ_CHECK(layout.imageWidth > 0 && layout.imageHeight > 0,
               "a layout's image size is positive (a zero is read from the image or refused)");
    std::set<std::string> lineIds, regionIds;
    for (const auto& l : layout.lines) {
      FUZZ_CHECK(l.id.empty() || lineIds.insert(l.id).second, "no two lines share an id");
      if (layout.format == "page" && l.hasBox)
        FUZZ_CHECK(l.bbox[0] <= l.bbox[2] && l.bbox[1] <= l.bbox[3],
                   "a PAGE line's box is the extent of its polygon");
      for (size_t i = 1; i < l.baseline.size(); ++i)
        FUZZ_CHECK(!(l.baseline[i] == l.baseline[i - 1]), "repeated baseline points are merged");
    }
    for (const auto& r : layout.regions) regionIds.insert(r.id);
    FUZZ_CHECK(layout.readingOrders.size() >= 2 && layout.readingOrders[0].id == "line_implicit" &&
                   layout.readingOrders[0].ids.size() == layout.lines.size(),
               "the first reading order is the lines' own order");
    for (const auto& o : layout.readingOrders) {
      std::set<std::string> seen;
      // The implicit and Transkribus orders list the elements as they come: regions may share
      // an id (kraken keeps them all); the flattened explicit orders name each once.
      const bool flattened =
          o.id != "line_implicit" && o.id != "region_implicit" && o.id != "region_transkribus";
      for (const auto& id : o.ids) {
        if (o.id == "line_implicit") continue;
        FUZZ_CHECK(seen.insert(id).second || !flattened,
                   "a flattened reading order names each id once");
        FUZZ_CHECK(o.level == "line" ? lineIds.count(id) > 0
                                     : regionIds.count(id) > 0 || o.id == "region_transkribus",
                   "a reading order names only the layout's own lines or regions");
      }
    }
    // Reading is deterministic: the same bytes give the same lines.
    const PageLayout again = parsePageLayout(bytes, origin);
    FUZZ_CHECK(again.lines.size() == layout.lines.size(), "reading twice gives the same lines");
  } catch (const Error&) {
  }
  return 0;
}
