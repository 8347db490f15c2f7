#include "checkpoint.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
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

#include "error.h"

namespace foveal::core {

namespace {

constexpr char kMagic[8] = {'F', 'O', 'V', 'E', 'A', 'L', 'C', 'K'};
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 + 8 + 4 + 4;

uint32_t crc32(const std::string& a, const std::string& b) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = ~0u;
  for (const std::string* s : {&a, &b})
    for (unsigned char ch : *s) crc = table[(crc ^ ch) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

template <typename T>
void put(std::string& out, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

template <typename T>
T get(const std::string& in, size_t pos) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<T>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  return v;
}

}  // namespace

void saveCheckpoint(const std::string& path, Recognizer model, const std::string& extraJson) {
  std::ostringstream weights;
  {
    torch::serialize::OutputArchive archive;
    model->save(archive);
    archive.save_to(weights);
  }
  nlohmann::json meta;
  meta["format"] = "foveal-checkpoint";
  meta["format_version"] = kCheckpointFormat;
  meta["foveal_version"] = FOVEAL_VERSION;
  meta["model"] = nlohmann::json::parse(model->config.toJson());
  if (!extraJson.empty()) meta["extra"] = nlohmann::json::parse(extraJson);
  const std::string metaText = meta.dump();
  const std::string w = weights.str();

  std::string header(kMagic, sizeof(kMagic));
  put<uint32_t>(header, kCheckpointFormat);
  put<uint32_t>(header, 0);  // flags
  put<uint64_t>(header, metaText.size());
  put<uint64_t>(header, w.size());
  put<uint32_t>(header, crc32(metaText, w));
  put<uint32_t>(header, 0);  // reserved

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(path + ": cannot write checkpoint (folder missing or not writable)");
    out << header << metaText << w;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw Error(path + ": writing the checkpoint failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": cannot move the finished checkpoint into place");
  }
}

LoadedModel loadCheckpoint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open model file (missing or unreadable)");
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() >= sizeof(kMagic) && std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error(path + ": not a Foveal model file (unknown file signature)");
  if (data.size() < kHeaderSize)
    throw Error(path + ": truncated model file (" + std::to_string(data.size()) +
                " bytes, shorter than the header)");
  const auto version = get<uint32_t>(data, 8);
  if (version > kCheckpointFormat)
    throw Error(path + ": model file format version " + std::to_string(version) +
                " is newer than this Foveal reads (" + std::to_string(kCheckpointFormat) +
                "); update Foveal");
  if (version == 0) throw Error(path + ": corrupt model file (format version 0)");
  const auto metaLen = get<uint64_t>(data, 16);
  const auto weightLen = get<uint64_t>(data, 24);
  const auto crc = get<uint32_t>(data, 32);
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
  // LibTorch's Module::load replaces tensors whatever their shape and ignores extra entries, so
  // the weights are checked against the config here: same top-level entries, same shapes.
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& p : loaded.model->named_parameters()) shapes[p.key()] = p.value().sizes().vec();
  for (const auto& b : loaded.model->named_buffers()) shapes[b.key()] = b.value().sizes().vec();
  std::set<std::string> expectedKeys;
  for (const auto& c : loaded.model->named_children()) expectedKeys.insert(c.key());
  for (const auto& p : loaded.model->named_parameters(false)) expectedKeys.insert(p.key());
  for (const auto& b : loaded.model->named_buffers(false)) expectedKeys.insert(b.key());
  try {
    std::istringstream ws(weights);
    torch::serialize::InputArchive archive;
    archive.load_from(ws);
    const auto keys = archive.keys();
    const std::set<std::string> found(keys.begin(), keys.end());
    for (const auto& k : found)
      if (!expectedKeys.count(k))
        throw Error(path + ": weights do not match the model config (unexpected part '" + k + "')");
    loaded.model->load(archive);
  } catch (const c10::Error& e) {
    std::string msg = e.what_without_backtrace();
    if (msg.size() > 300) msg = msg.substr(0, 300) + "...";
    throw Error(path + ": weights do not match the model config (" + msg + ")");
  }
  auto mismatch = [&](const std::string& name, const torch::Tensor& t) {
    const auto it = shapes.find(name);
    if (it == shapes.end() || it->second != t.sizes().vec())
      throw Error(path + ": weights do not match the model config ('" + name + "' has shape " +
                  c10::str(t.sizes()) + ")");
  };
  for (const auto& p : loaded.model->named_parameters()) mismatch(p.key(), p.value());
  for (const auto& b : loaded.model->named_buffers()) mismatch(b.key(), b.value());
  loaded.model->eval();
  return loaded;
}

}  // namespace foveal::core
