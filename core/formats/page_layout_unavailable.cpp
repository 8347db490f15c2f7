// A build without libxml2 (an engine-only build on a GPU server): page layouts are refused with
// what to install (page_layout.cpp reads them where libxml2 is found).
#include "base/error.h"
#include "formats/page_layout.h"

namespace foveal::core {

PageLayout parsePageLayout(const std::string&, const std::string& origin) {
  throw Error(origin +
              ": this build reads no page layouts (PAGE-XML, ALTO): it was built without "
              "libxml2 (Debian: libxml2-dev)");
}

PageLayout readPageLayout(const std::string& path) { return parsePageLayout({}, path); }

}  // namespace foveal::core
