// Text rendering in a build without OpenCV: every entry point says what is missing.
#include "base/error.h"
#include "data/synthetic_words.h"

namespace foveal::core::data {

namespace {
[[noreturn]] void unavailable(const std::string& what) {
  throw Error(what + " needs a build with OpenCV (FOVEAL_WITH_OPENCV=ON); this build has none");
}
}  // namespace

bool canRenderText() { return false; }
std::vector<std::string> defaultFonts() { return {}; }
DatasetPtr makeSyntheticWords(const WordSpec& spec) { unavailable(spec.toString()); }
GreyImage syntheticWordInk(const Dataset&, size_t) { unavailable("synthetic words"); }
std::string referenceFontPath() {
  return "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF/Roboto-Bold.ttf";
}
GreyImage referenceGlyph(const std::string&, const std::string&) {
  unavailable("reference glyphs");
}
std::vector<GreyImage> referenceGlyphs(const Charset&, const std::string&) {
  unavailable("reference glyphs");
}

}  // namespace foveal::core::data
