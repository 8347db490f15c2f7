// libFuzzer harness: image bytes -> decodeImage. Any outcome but a GreyImage or a core::Error
// (a crash, a sanitizer report, another exception) is a finding.
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "fuzz_check.h"
#include "image/grey_image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  try {
    const auto image = foveal::core::decodeImage(bytes, "fuzz");
    FUZZ_CHECK(image.pixels.size() == static_cast<size_t>(image.width) * image.height,
               "a decoded image has width x height pixels");
  } catch (const foveal::core::Error&) {
  }
  return 0;
}
