// libFuzzer harness: training state files (latest.state) -> readTrainingState, the checksummed
// envelope around LibTorch's archive (core/formats/state_file.h). The archive itself is LibTorch's
// to parse; what Foveal adds must refuse every damaged envelope with an Error.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "base/error.h"
#include "formats/state_file.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/foveal-fuzz-state-" + std::to_string(getpid());
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << input;
  try {
    const std::string payload = foveal::core::readTrainingState(path);
    if (input.rfind("PK", 0) == 0) {
      FUZZ_CHECK(payload == input, "a state from before checksums is passed on unchanged");
    } else {
      FUZZ_CHECK(foveal::core::sealTrainingState(payload) == input,
                 "an accepted state is exactly the sealed form of what it returns");
    }
  } catch (const foveal::core::Error&) {
  }
  return 0;
}
