// libFuzzer harness: packed dataset files -> PackedDataset, then every entry's image and label.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>

#include "error.h"
#include "packed_dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/foveal-fuzz-packed-" + std::to_string(getpid()) + ".fvd";
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    foveal::core::data::PackedDataset ds(path);
    for (size_t i = 0; i < std::min<size_t>(ds.size(), 64); ++i) {
      try {
        ds.get(i);
        ds.label(i);
        ds.prepared(i);
      } catch (const foveal::core::Error&) {
      }
    }
  } catch (const foveal::core::Error&) {
  }
  return 0;
}
