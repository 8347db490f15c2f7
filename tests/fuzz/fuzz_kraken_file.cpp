// libFuzzer harness: kraken model files -> parseKrakenFile (core/formats/kraken_file.h), both
// containers: the safetensors files of kraken 7 (a length, a JSON header, the tensor bytes) and the
// CoreML protobuf of kraken <= 6. Every malformed file must be refused with an Error; a file that
// is read must give tensors whose values fill their shapes and metadata that is a JSON object
// with the VGSL spec and the codec.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "formats/kraken_file.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const auto file = foveal::core::parseKrakenFile(bytes, "fuzz.mlmodel");
    FUZZ_CHECK(file.container == "safetensors" || file.container == "coreml",
               "a file read names its container");
    FUZZ_CHECK(!file.vgsl.empty(), "a file read has a VGSL spec");
    for (const auto& [name, t] : file.weights) {
      FUZZ_CHECK(!name.empty(), "every tensor has a name");
      uint64_t n = 1;
      for (auto d : t.shape) {
        FUZZ_CHECK(d >= 0, "no dimension is negative");
        n *= static_cast<uint64_t>(d);
      }
      FUZZ_CHECK(n == t.values.size(), "a tensor holds one value per element of its shape");
    }
    const auto meta = nlohmann::json::parse(file.metaJson, nullptr, false);
    FUZZ_CHECK(meta.is_object(), "the metadata is a JSON object");
    FUZZ_CHECK(meta.contains("vgsl") && meta["vgsl"] == file.vgsl, "the metadata holds the spec");
    FUZZ_CHECK(meta.contains("codec") && meta["codec"].is_object(), "the metadata holds a codec");
    FUZZ_CHECK(meta.contains("model_type") && meta["model_type"].is_array(),
               "the metadata holds model_type as a list");
  } catch (const foveal::core::Error&) {
  }
  return 0;
}
