#include "engines/tesseract_spec.h"

#include <cctype>

#include "base/error.h"

namespace foveal::core {

namespace {
constexpr const char* kPrefix = "tesseract:";
}

bool isTesseractSpec(const std::string& text) { return text.rfind(kPrefix, 0) == 0; }

std::string TesseractSpec::toString() const {
  std::string s = kPrefix + language + ",psm=" + std::to_string(psm);
  if (!characters.empty()) s += ",chars=" + characters;
  return s;
}

void refuseEngine(const std::string& model, const std::string& lack, const std::string& hint) {
  if (isTesseractSpec(model)) throw Error(model + ": " + lack + " (" + hint + ")");
}

TesseractSpec parseTesseractSpec(const std::string& text) {
  if (!isTesseractSpec(text))
    throw Error("'" + text + "' is not a Tesseract spec (tesseract:LANG[,psm=N][,chars=SET])");
  const std::string rest = text.substr(std::string(kPrefix).size());
  auto fail = [&](const std::string& why) {
    throw Error("Tesseract spec '" + text + "': " + why +
                " (expected tesseract:LANG[,psm=N][,chars=SET], e.g. tesseract:eng,psm=7)");
  };
  TesseractSpec spec;
  const size_t comma = rest.find(',');
  spec.language = rest.substr(0, comma);
  if (spec.language.empty()) fail("no language");
  for (char c : spec.language)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '+' && c != '-')
      fail("language '" + spec.language + "' has a character a traineddata name does not");
  // chars= runs to the end: a character set may itself hold commas.
  std::string options = comma == std::string::npos ? "" : rest.substr(comma + 1);
  while (!options.empty()) {
    const size_t eq = options.find('=');
    if (eq == std::string::npos) fail("option '" + options + "' has no value");
    const std::string key = options.substr(0, eq);
    if (key == "chars") {
      spec.characters = options.substr(eq + 1);
      if (spec.characters.empty()) fail("chars= is empty");
      break;
    }
    const size_t end = options.find(',');
    const std::string value = options.substr(eq + 1, end == std::string::npos ? end : end - eq - 1);
    if (key == "psm") {
      size_t used = 0;
      int psm = -1;
      try {
        psm = std::stoi(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size() || value.empty() || psm < 0 || psm > 13)
        fail("psm must be a page segmentation mode 0-13, not '" + value + "'");
      // Modes 0 and 2 find the layout (0 the orientation and script) and read no text.
      if (psm == 0)
        fail("psm=0 detects orientation and script only and reads no text (psm=7: one line)");
      if (psm == 2)
        fail("psm=2 segments the page without reading it: no text (psm=7: one line, 3: a page)");
      spec.psm = psm;
    } else {
      fail("unknown option '" + key + "'");
    }
    options = end == std::string::npos ? "" : options.substr(end + 1);
  }
  return spec;
}

}  // namespace foveal::core
