// libFuzzer harness: packed dataset files -> PackedDataset, then every entry's image, label and
// character boxes.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "base/error.h"
#include "data/packed_dataset.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/foveal-fuzz-packed-" + std::to_string(getpid()) + ".fvd";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    foveal::core::data::PackedDataset ds(path);
    for (size_t i = 0; i < std::min<size_t>(ds.size(), 64); ++i) {
      try {
        const auto sample = ds.get(i);
        const auto prepared = ds.prepared(i);
        // What a packed file yields has the sizes its header promises.
        FUZZ_CHECK(sample.image.pixels.size() == size_t(sample.image.width) * sample.image.height,
                   "an entry's image has width x height pixels");
        FUZZ_CHECK(prepared.upsampled.width == ds.upsampledW(),
                   "a prepared entry has the upsampled width the header declares");
        FUZZ_CHECK(ds.label(i) == sample.label, "label() and get() agree on an entry's label");
        const auto boxes = ds.charBoxes(i);
        FUZZ_CHECK(boxes.size() == prepared.boxes.size(),
                   "charBoxes() and prepared() agree on an entry's boxes");
        for (const auto& b : boxes)
          FUZZ_CHECK(std::isfinite(b.x) && std::isfinite(b.y) && b.w >= 0 && b.h >= 0,
                     "a character box is finite and not inverted");
      } catch (const foveal::core::Error&) {
      }
    }
  } catch (const foveal::core::Error&) {
  }
  return 0;
}
