// libFuzzer harness: model files -> loadCheckpoint. The first byte picks the mode: even, the
// input is the file as it is (signature, lengths, checksum checks); odd, the rest is split into
// metadata and weights and wrapped in a valid header and CRC, so the fuzzer reaches the JSON
// config parser and LibTorch's archive reader behind the checksum.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include <torch/torch.h>

#include "base/crc32.h"
#include "base/error.h"
#include "formats/checkpoint.h"
#include "fuzz_check.h"

namespace {
uint32_t crc32(const std::string& a, const std::string& b) {
  return foveal::core::crc32(b.data(), b.size(), foveal::core::crc32(a.data(), a.size()));
}
template <typename T>
void put(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string file;
  if (data[0] % 2 == 0) {
    file.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  } else {
    const std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
    const size_t cut = rest.find('\0') == std::string::npos ? rest.size() : rest.find('\0');
    const std::string meta = rest.substr(0, cut);
    const std::string weights = cut < rest.size() ? rest.substr(cut + 1) : std::string();
    file = "FOVEALCK";
    put<uint32_t>(file, 2);  // kCheckpointFormat
    put<uint32_t>(file, 0);
    put<uint64_t>(file, meta.size());
    put<uint64_t>(file, weights.size());
    put<uint32_t>(file, crc32(meta, weights));
    put<uint32_t>(file, 0);
    file += meta + weights;
  }
  static const std::string path =
      "/tmp/foveal-fuzz-checkpoint-" + std::to_string(getpid()) + ".fvm";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << file;
  try {
    // A file that loads must give a usable model: a decode with finite probabilities.
    auto loaded = foveal::core::loadCheckpoint(path);
    const auto& pp = loaded.config.preprocessing;
    auto image = torch::zeros({1, 1, pp.inputH, pp.inputW});
    auto up = torch::zeros({1, 1, pp.inputH, pp.upsampledW()});
    torch::NoGradGuard guard;
    auto out = loaded.model->forward(image, up);
    FUZZ_CHECK(torch::isfinite(out.logProbs).all().item<bool>(),
               "a checkpoint that loads gives finite log-probabilities");
  } catch (const foveal::core::Error&) {
  }
  return 0;
}
