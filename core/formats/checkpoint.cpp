#include "formats/checkpoint.h"

#include <torch/nn/module.h>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "base/atomic_file.h"
#include "base/crc32.h"
#include "base/error.h"
#include "base/little_endian.h"
#include "base/safe_read.h"
#include "model/named_tensors.h"

namespace foveal::core {

namespace {

constexpr char kMagic[8] = {'F', 'O', 'V', 'E', 'A', 'L', 'C', 'K'};
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8 + 4 + 4;

uint32_t crc32(const std::string& a, const std::string& b) {
  return core::crc32(b.data(), b.size(), core::crc32(a.data(), a.size()));
}

// The weights: a flat list of named tensors written by Foveal itself, so that reading a model
// file never runs LibTorch's pickle/TorchScript parser on untrusted bytes (fuzzing showed that
// parser can abort the process on a crafted archive). Little-endian:
//   u32 count; count x { u32 name length, name, u8 dtype, u32 rank, i64 dims[rank], u64 bytes,
//   data }.
enum class DType : uint8_t { Float32 = 1, Float64 = 2, Int64 = 3 };

DType dtypeOf(const torch::Tensor& t) {
  if (t.scalar_type() == torch::kFloat) return DType::Float32;
  if (t.scalar_type() == torch::kDouble) return DType::Float64;
  if (t.scalar_type() == torch::kLong) return DType::Int64;
  throw Error(std::string("cannot store a tensor of type ") + c10::toString(t.scalar_type()));
}

std::string encodeTensors(const torch::nn::Module& m) {
  std::string out;
  const auto tensors = namedTensors(m);
  putLittleEndian<uint32_t>(out, static_cast<uint32_t>(tensors.size()));
  for (const auto& [name, tensor] : tensors) {
    const auto t = tensor.detach().to(torch::kCPU).contiguous();
    putLittleEndian<uint32_t>(out, static_cast<uint32_t>(name.size()));
    out += name;
    out.push_back(static_cast<char>(dtypeOf(t)));
    putLittleEndian<uint32_t>(out, static_cast<uint32_t>(t.dim()));
    for (int64_t d : t.sizes()) putLittleEndian<uint64_t>(out, static_cast<uint64_t>(d));
    const size_t bytes = static_cast<size_t>(t.numel()) * t.element_size();
    putLittleEndian<uint64_t>(out, bytes);
    out.append(static_cast<const char*>(t.data_ptr()), bytes);
  }
  return out;
}

// Format 2 named the attention model's parts directly; format 3 names them by stage.
std::string formatThreeName(const std::string& name) {
  static const std::pair<const char*, const char*> kRenames[] = {
      {"backbone.", "features."},
      {"encoder.", "sequence.lstm."},
      {"init.", "prediction.init."},
      {"attention.", "prediction.attention."},
      {"sharpener.", "prediction.glimpse.sharpener."},
      {"weighting.", "prediction.glimpse.weighting."},
      {"decoder.", "prediction.cell."},
      {"output.", "prediction.output."},
  };
  for (const auto& [from, to] : kRenames)
    if (name.rfind(from, 0) == 0) return to + name.substr(std::strlen(from));
  return name;
}

const char* dtypeName(DType d) {
  switch (d) {
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Int64:
      return "int64";
  }
  return "an unknown type";
}

// A weight table's entry: where its bytes lie in the table.
struct TableEntry {
  DType dtype;
  std::vector<int64_t> shape;
  size_t offset, bytes;
};

[[noreturn]] void weightsMismatch(const std::string& path, const std::string& what) {
  throw Error(path + ": weights do not match the model config (" + what + ")");
}

// The weight table's entries by name (format 2's names renamed as format 3's), their bounds
// checked against the table.
std::map<std::string, TableEntry> readWeightTable(const std::string& data, const std::string& path,
                                                  uint32_t version) {
  auto fail = [&](const std::string& what) { weightsMismatch(path, what); };
  size_t pos = 0;
  auto need = [&](size_t n) {
    if (n > data.size() - pos) fail("weight table ends early");
  };
  std::map<std::string, TableEntry> entries;
  need(4);
  const auto count = getLittleEndian<uint32_t>(data, pos);
  pos += 4;
  for (uint32_t i = 0; i < count; ++i) {
    need(4);
    const auto nameLen = getLittleEndian<uint32_t>(data, pos);
    pos += 4;
    need(nameLen);
    std::string name = data.substr(pos, nameLen);
    if (version == 2) name = formatThreeName(name);
    pos += nameLen;
    need(1 + 4);
    TableEntry e;
    e.dtype = static_cast<DType>(static_cast<uint8_t>(data[pos]));
    const auto rank = getLittleEndian<uint32_t>(data, pos + 1);
    pos += 5;
    if (rank > 8) fail("'" + name + "' has " + std::to_string(rank) + " dimensions");
    need(8ull * rank + 8);
    for (uint32_t d = 0; d < rank; ++d) {
      e.shape.push_back(static_cast<int64_t>(getLittleEndian<uint64_t>(data, pos)));
      pos += 8;
    }
    e.bytes = static_cast<size_t>(getLittleEndian<uint64_t>(data, pos));
    pos += 8;
    need(e.bytes);
    e.offset = pos;
    pos += e.bytes;
    if (!entries.emplace(std::move(name), std::move(e)).second) fail("a weight appears twice");
  }
  if (pos != data.size()) fail("unexpected bytes after the weight table");
  return entries;
}

void decodeTensors(const std::string& data, torch::nn::Module& m, const std::string& path,
                   uint32_t version, std::vector<std::string>& notes) {
  std::vector<std::string> widened;  // Float64 entries read into Float32 parameters
  auto fail = [&](const std::string& what) { weightsMismatch(path, what); };
  std::map<std::string, TableEntry> entries = readWeightTable(data, path, version);

  const auto tensors = namedTensors(m);
  for (const auto& [name, tensor] : tensors) {
    const auto it = entries.find(name);
    if (it == entries.end()) fail("'" + name + "' is missing");
    const TableEntry& e = it->second;
    const DType want = dtypeOf(tensor);
    // Float64 where Float32 belongs is converted, as load_state_dict does (and said); an integer
    // where weights belong, or the reverse, is refused by name.
    const bool convert = want == DType::Float32 && e.dtype == DType::Float64;
    if (e.dtype != want && !convert)
      throw Error(path + ": '" + name + "' holds " + dtypeName(e.dtype) + " values where " +
                  dtypeName(want) + " " +
                  (want == DType::Int64 ? "integers belong" : "weights belong") +
                  " (a corrupt or foreign model file)");
    const auto sourceType = convert ? torch::kDouble : tensor.scalar_type();
    const size_t elementBytes = convert ? 8 : tensor.element_size();
    if (e.shape != tensor.sizes().vec() ||
        e.bytes != static_cast<size_t>(tensor.numel()) * elementBytes)
      fail("'" + name + "' has another shape than " + c10::str(tensor.sizes()));
    if (convert) widened.push_back(name);
    torch::NoGradGuard guard;
    // Copied byte-wise: the bytes in the file need not be aligned for the tensor's type.
    auto source =
        torch::empty(tensor.sizes(), tensor.options().device(torch::kCPU).dtype(sourceType));
    std::memcpy(source.data_ptr(), data.data() + e.offset, e.bytes);
    // The trainer never writes NaN or Inf; a file that holds them would read garbage (found by
    // fuzz_checkpoint, whose structured mode gets past the checksum).
    if (source.is_floating_point() && !torch::isfinite(source).all().item<bool>())
      throw Error(path + ": corrupt model file ('" + name + "' holds NaN or Inf)");
    // Float64 beyond float's range would become infinite in the copy.
    if (convert && !torch::isfinite(source.to(torch::kFloat)).all().item<bool>())
      throw Error(path + ": '" + name + "' holds float64 values beyond the range of float32");
    tensor.copy_(source);
    entries.erase(it);
  }
  if (!entries.empty()) fail("unexpected part '" + entries.begin()->first + "'");
  if (!widened.empty())
    notes.push_back(std::to_string(widened.size()) + " tensor" + (widened.size() > 1 ? "s" : "") +
                    " stored as float64 converted to float32, as load_state_dict does (" +
                    widened.front() + (widened.size() > 1 ? ", ...)" : ")"));
}

}  // namespace

void saveCheckpoint(const std::string& path, Recognizer model, const std::string& extraJson) {
  const std::string w = encodeTensors(*model);
  nlohmann::json meta;
  meta["format"] = "foveal-checkpoint";
  meta["format_version"] = kCheckpointFormat;
  meta["foveal_version"] = FOVEAL_VERSION;
  meta["model"] = nlohmann::json::parse(model->config.toJson());
  if (!extraJson.empty()) meta["extra"] = nlohmann::json::parse(extraJson);
  const std::string metaText = meta.dump();

  std::string header(kMagic, sizeof(kMagic));
  putLittleEndian<uint32_t>(header, kCheckpointFormat);
  putLittleEndian<uint32_t>(header, 0);  // flags
  putLittleEndian<uint64_t>(header, metaText.size());
  putLittleEndian<uint64_t>(header, w.size());
  putLittleEndian<uint32_t>(header, crc32(metaText, w));
  putLittleEndian<uint32_t>(header, 0);  // reserved

  std::string bytes;
  bytes.reserve(header.size() + metaText.size() + w.size());
  bytes.append(header).append(metaText).append(w);
  writeFileAtomically(path, bytes, "checkpoint");
}

LoadedModel loadCheckpoint(const std::string& path) {
  // The signature first: a large file that is no model is refused without being read whole.
  const std::string head = readFileHead(path, "model file", kMaxModelFileBytes, sizeof(kMagic));
  if (head.size() >= sizeof(kMagic) && std::memcmp(head.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error(path + ": not a Foveal model file (unknown file signature)");
  const std::string data = readRegularFile(path, "model file", kMaxModelFileBytes);
  if (data.size() >= sizeof(kMagic) && std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error(path + ": not a Foveal model file (unknown file signature)");
  if (data.size() < kHeaderSize)
    throw Error(path + ": truncated model file (" + std::to_string(data.size()) +
                " bytes, shorter than the header)");
  const auto version = getLittleEndian<uint32_t>(data, 8);
  if (version > kCheckpointFormat)
    throw Error(path + ": model file format version " + std::to_string(version) +
                " is newer than this Foveal reads (" + std::to_string(kCheckpointFormat) +
                "); update Foveal");
  if (version == 0) throw Error(path + ": corrupt model file (format version 0)");
  if (version == 1)
    throw Error(path +
                ": model file format version 1 was a development format; re-create the "
                "model with this Foveal");
  const auto metaLen = getLittleEndian<uint64_t>(data, 16);
  const auto weightLen = getLittleEndian<uint64_t>(data, 24);
  const auto crc = getLittleEndian<uint32_t>(data, 32);
  const uint64_t expected = kHeaderSize + metaLen + weightLen;
  if (metaLen > data.size() || weightLen > data.size() || data.size() < expected)
    throw Error(path + ": truncated model file (" + std::to_string(data.size()) + " of " +
                std::to_string(expected) + " bytes)");
  if (data.size() > expected)
    throw Error(path + ": corrupt model file (" + std::to_string(data.size() - expected) +
                " unexpected bytes after the weights)");
  const std::string metaText = data.substr(kHeaderSize, metaLen);
  const std::string weights = data.substr(kHeaderSize + metaLen, weightLen);
  if (crc32(metaText, weights) != crc)
    throw Error(path + ": corrupt model file (checksum mismatch)");

  LoadedModel loaded;
  loaded.metadataJson = metaText;
  try {
    const auto meta = nlohmann::json::parse(metaText);
    if (meta.value("format", std::string()) != "foveal-checkpoint")
      throw Error(path + ": not a Foveal model file (metadata format field)");
    loaded.config = ModelConfig::fromJson(meta.at("model").dump(), path);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": corrupt model metadata (" + e.what() + ")");
  }

  loaded.model = Recognizer(loaded.config);
  std::vector<std::string> notes;
  decodeTensors(weights, *loaded.model, path, version, notes);
  if (!notes.empty()) {  // what was converted, kept with the metadata for whoever shows it
    auto meta = nlohmann::json::parse(loaded.metadataJson);
    meta["load_notes"] = notes;
    loaded.metadataJson = meta.dump();
  }
  loaded.model->eval();
  return loaded;
}

bool looksLikeCheckpoint(const std::string& path) {
  try {
    checkRegularFile(path, "model file", kMaxModelFileBytes);
  } catch (const Error&) {
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof(kMagic)] = {};
  return in.read(magic, sizeof magic) && std::memcmp(magic, kMagic, sizeof kMagic) == 0;
}

// The registry's entry for Foveal's own files (model_format.cpp): recognised by the signature;
// a file that is neither this nor a torch.save file comes here too, so that loadCheckpoint says
// what is wrong with it (truncated, foreign, not a model file).
ModelFormat fovealModelFormat() {
  ModelFormat f;
  f.name = "foveal";
  f.summary = "Foveal's own model file (.fvm)";
  f.sniff = [](const FileProbe& file, const ImportOptions&) {
    if (file.container() == "foveal")
      return Sniff{100, "starts with Foveal's model file signature (FOVEALCK)"};
    if (file.container() == "unknown")
      return Sniff{1, "not a torch.save file, so read as Foveal's own (its signature is checked)"};
    return Sniff{0, "not Foveal's signature"};
  };
  f.load = [](const FileProbe& file, const ImportOptions&, ImportReport& report) {
    LoadedModel loaded = loadCheckpoint(file.path());
    report.description = "Foveal model file: " + loaded.config.describe();
    try {
      const auto meta = nlohmann::json::parse(loaded.metadataJson);
      if (meta.contains("extra") && meta["extra"].contains("imported_from"))
        report.provenanceJson = meta["extra"]["imported_from"].dump();
    } catch (const nlohmann::json::exception&) {
    }
    return loaded;
  };
  return f;
}

}  // namespace foveal::core
