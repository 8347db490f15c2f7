// libFuzzer harness: torch.save files -> parseTorchFile (core/formats/torch_file.h), the reader
// behind `foveal-cli import` and every .pth opened as a model. LibTorch's own parser aborted the
// process on fuzzed input; this one must refuse every malformed file with an Error, and every
// tensor it accepts must lie inside its storage.
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "formats/torch_file.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes(data, data + size);
  try {
    const auto sd = foveal::core::parseTorchFile(bytes, "fuzz.pth");
    FUZZ_CHECK(!sd.tensors.empty(), "an accepted state dict holds tensors");
    for (const auto& t : sd.tensors) {
      FUZZ_CHECK(t.storage >= 0 && static_cast<size_t>(t.storage) < sd.storages.size(),
                 "every tensor names a storage that was read");
      int64_t n = 1;
      for (auto s : t.shape) n *= s;
      if (n > (int64_t(1) << 22)) continue;  // large but valid: reading it costs only memory
      const auto values = sd.floats(t);      // reads every element: ASan checks the bounds
      FUZZ_CHECK(static_cast<int64_t>(values.size()) == n, "floats() gives one value per element");
    }
  } catch (const foveal::core::Error&) {
  }
  return 0;
}
