#include "formats/torch_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "base/crc32.h"
#include "base/error.h"
#include "base/safe_read.h"
#include "formats/pickle_machine.h"
#include "formats/zip_reader.h"

namespace foveal::core {

std::string toString(StoredType t) {
  switch (t) {
    case StoredType::Float32:
      return "float32";
    case StoredType::Float64:
      return "float64";
    case StoredType::Float16:
      return "float16";
    case StoredType::BFloat16:
      return "bfloat16";
    case StoredType::Int64:
      return "int64";
    case StoredType::Int32:
      return "int32";
    case StoredType::Int16:
      return "int16";
    case StoredType::Int8:
      return "int8";
    case StoredType::UInt8:
      return "uint8";
    case StoredType::Bool:
      return "bool";
  }
  return "?";
}

int elementSize(StoredType t) {
  switch (t) {
    case StoredType::Float64:
    case StoredType::Int64:
      return 8;
    case StoredType::Float32:
    case StoredType::Int32:
      return 4;
    case StoredType::Float16:
    case StoredType::BFloat16:
    case StoredType::Int16:
      return 2;
    default:
      return 1;
  }
}

const StoredTensor* StoredStateDict::find(const std::string& key) const {
  for (const auto& t : tensors)
    if (t.key == key) return &t;
  return nullptr;
}

namespace {

float halfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31)
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

template <typename T>
T loadLe(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // little-endian host (x86-64, aarch64); checked by the build
  return v;
}

float elementAsFloat(StoredType type, const uint8_t* p) {
  switch (type) {
    case StoredType::Float32:
      return loadLe<float>(p);
    case StoredType::Float64:
      return static_cast<float>(loadLe<double>(p));
    case StoredType::Float16:
      return halfToFloat(loadLe<uint16_t>(p));
    case StoredType::BFloat16: {  // the upper half of a float32
      const uint32_t bits = static_cast<uint32_t>(loadLe<uint16_t>(p)) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      return v;
    }
    case StoredType::Int64:
      return static_cast<float>(loadLe<int64_t>(p));
    case StoredType::Int32:
      return static_cast<float>(loadLe<int32_t>(p));
    case StoredType::Int16:
      return static_cast<float>(loadLe<int16_t>(p));
    case StoredType::Int8:
      return static_cast<float>(static_cast<int8_t>(*p));
    case StoredType::UInt8:
    case StoredType::Bool:
      return static_cast<float>(*p);
  }
  return 0;
}

}  // namespace

std::vector<float> StoredStateDict::floats(const StoredTensor& t) const {
  const auto& bytes = *storages.at(static_cast<size_t>(t.storage));
  int64_t n = 1;
  for (auto s : t.shape) n *= s;
  std::vector<float> out(static_cast<size_t>(n));
  const int es = elementSize(t.type);
  std::vector<int64_t> idx(t.shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = t.offset;
    for (size_t d = 0; d < idx.size(); ++d) at += idx[d] * t.stride[d];
    out[static_cast<size_t>(i)] = elementAsFloat(t.type, bytes.data() + at * es);
    for (size_t d = idx.size(); d-- > 0;) {  // row-major increment
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

namespace {

using Bytes = std::shared_ptr<const std::vector<uint8_t>>;

// The file's bytes, wherever they are held (a read file is not copied into a vector first).
struct ByteView {
  const uint8_t* p = nullptr;
  size_t n = 0;
  const uint8_t& operator[](size_t i) const { return p[i]; }
  size_t size() const { return n; }
  bool empty() const { return n == 0; }
  const uint8_t* data() const { return p; }
  const uint8_t* begin() const { return p; }
};

// The persistent ids of a torch.save pickle: ('storage', type, key, location, numel) in both
// formats, the legacy one adding a view (None since PyTorch 0.4). Each storage becomes one arena
// value, however many tensors name it.
class StorageIds {
 public:
  Unpickler::PersistentLoad loader() {
    return [this](Unpickler& u, int id) { return load(u, id); };
  }
  /// Key -> arena index of the storage's value.
  const std::map<std::string, int>& byKey() const { return m_byKey; }

 private:
  int load(Unpickler& u, int id);

  std::map<std::string, int> m_byKey;
};

int StorageIds::load(Unpickler& u, int id) {
  const PickleValue& t = u.at(id);
  if (t.kind != PickleValue::Tuple || t.items.size() < 5 ||
      u.at(t.items[0]).kind != PickleValue::String || u.at(t.items[0]).s != "storage")
    u.fail("unsupported persistent id (only tensor storages are accepted)");
  const PickleValue& type = u.at(t.items[1]);
  StoredType st;
  if (type.kind != PickleValue::Global || !storageType(type.s, st))
    u.fail("unsupported storage type '" +
           (type.kind == PickleValue::Global ? type.s : std::string(kindName(type.kind))) + "'");
  if (u.at(t.items[2]).kind != PickleValue::String) u.fail("storage key is not a string");
  // A copy: make() below may move every value (found by the ASan run of the whole suite).
  const std::string key = u.at(t.items[2]).s;
  const int64_t numel = u.intOf(t.items[4], "storage size");
  if (numel < 0) u.fail("negative storage size");
  if (t.items.size() >= 6 && u.at(t.items[5]).kind != PickleValue::None)
    u.fail(
        "storage views (PyTorch < 0.4) are not supported; re-save the state dict with a newer "
        "PyTorch");
  auto it = m_byKey.find(key);
  if (it != m_byKey.end()) {
    const PickleValue& s = u.at(it->second);
    if (s.type != st || s.numel != numel)
      u.fail("storage '" + key + "' is described twice, differently");
    return it->second;
  }
  PickleValue v;
  v.kind = PickleValue::Storage;
  v.s = key;
  v.type = st;
  v.numel = numel;
  const int idx = u.make(std::move(v));
  m_byKey[key] = idx;
  return idx;
}

// ---------------------------------------------------------------------------------------------
// The state dict inside the unpickled object.

int tensorCount(const Unpickler& u, const PickleValue& dict) {
  int n = 0;
  for (size_t k = 1; k < dict.items.size(); k += 2)
    n += u.at(dict.items[k]).kind == PickleValue::Tensor;
  return n;
}

// The object itself, or when it holds no tensor, the dict under one of the usual wrappers'
// keys ({"state_dict": {...}, "epoch": ...}), whose key goes to `nestedIn`.
const PickleValue& findStateDict(const Unpickler& u, const PickleValue& top,
                                 std::string& nestedIn) {
  if (tensorCount(u, top) > 0) return top;
  for (const char* wrapper : {"state_dict", "model", "model_state_dict", "net", "module"}) {
    for (size_t k = 0; k + 1 < top.items.size(); k += 2) {
      const PickleValue& key = u.at(top.items[k]);
      const PickleValue& value = u.at(top.items[k + 1]);
      if (key.kind == PickleValue::String && key.s == wrapper && value.kind == PickleValue::Dict &&
          tensorCount(u, value) > 0) {
        nestedIn = wrapper;
        return value;
      }
    }
  }
  return top;
}

// A plain value as JSON (tensors and storages as their kind's name; nesting kept to a few
// levels: the arena may refer to itself).
nlohmann::json plainJson(const Unpickler& u, const PickleValue& v, int depth) {
  switch (v.kind) {
    case PickleValue::None:
      return nullptr;
    case PickleValue::Bool:
      return v.i != 0;
    case PickleValue::Int:
      return v.i;
    case PickleValue::Float:
      return v.f;
    case PickleValue::String:
      return v.s;
    case PickleValue::Tuple:
    case PickleValue::List: {
      auto a = nlohmann::json::array();
      if (depth < 6)
        for (int i : v.items) a.push_back(plainJson(u, u.at(i), depth + 1));
      return a;
    }
    case PickleValue::Dict: {
      auto o = nlohmann::json::object();
      if (depth < 6)
        for (size_t k = 0; k + 1 < v.items.size(); k += 2) {
          const PickleValue& key = u.at(v.items[k]);
          if (key.kind == PickleValue::String)
            o[key.s] = plainJson(u, u.at(v.items[k + 1]), depth + 1);
        }
      return o;
    }
    default:
      return std::string("<") + kindName(v.kind) + ">";
  }
}

// Lightning's "hyper_parameters" (an AttributeDict, read as a dict) beside the state dict.
void collectHyperParameters(const Unpickler& u, const PickleValue& top, StoredStateDict& out) {
  for (size_t k = 0; k + 1 < top.items.size(); k += 2) {
    const PickleValue& key = u.at(top.items[k]);
    const PickleValue& value = u.at(top.items[k + 1]);
    if (key.kind != PickleValue::String || key.s != "hyper_parameters") continue;
    if (value.kind != PickleValue::Dict) {
      out.hyperParametersKind = kindName(value.kind);
      continue;
    }
    out.hasHyperParameters = true;
    for (size_t h = 0; h + 1 < value.items.size(); h += 2) {
      const PickleValue& name = u.at(value.items[h]);
      if (name.kind == PickleValue::String)
        out.hyperParameters[name.s] = plainJson(u, u.at(value.items[h + 1]), 0).dump();
    }
  }
}

void collect(const Unpickler& u, int root, const std::string& origin, StoredStateDict& out) {
  const PickleValue& top = u.at(root);
  if (top.kind != PickleValue::Dict)
    throw Error(origin + ": holds a pickled " + kindName(top.kind) + ", not a state dict");
  const PickleValue& dict = findStateDict(u, top, out.nestedIn);
  if (&dict != &top) collectHyperParameters(u, top, out);
  if (tensorCount(u, dict) == 0)
    throw Error(origin + ": holds a dictionary without tensors, not a state dict");
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const PickleValue& key = u.at(dict.items[k]);
    const PickleValue& value = u.at(dict.items[k + 1]);
    if (key.kind != PickleValue::String)
      throw Error(origin + ": state dict key is a " + kindName(key.kind) + ", not a string");
    if (value.kind != PickleValue::Tensor) {
      out.otherKeys.push_back(key.s);
      continue;
    }
    StoredTensor t = u.tensors()[static_cast<size_t>(value.tensor)];
    t.key = key.s;
    out.tensors.push_back(std::move(t));
  }
}

// Storage arena index -> index in out.storages, filled from `data(key, type, numel)`, in the
// order the tensors first name them.
template <typename DataFn>
void attachStorages(const Unpickler& u, StoredStateDict& out, DataFn data) {
  std::map<int, int> index;
  for (auto& t : out.tensors) {
    auto it = index.find(t.storage);
    if (it == index.end()) {
      const PickleValue& s = u.at(t.storage);
      out.storages.push_back(data(s.s, s.type, s.numel));
      it = index.emplace(t.storage, static_cast<int>(out.storages.size() - 1)).first;
    }
    t.storage = it->second;
  }
}

// ---------------------------------------------------------------------------------------------
// The zip format.

// torch.save puts every record under one folder named after the file it wrote (`archive/` for a
// buffer): the one that holds data.pkl.
std::string recordPrefix(const std::map<std::string, ZipEntry>& entries,
                         const std::string& origin) {
  const std::string tail = "data.pkl";
  std::string prefix;
  bool found = false;
  for (const auto& [name, e] : entries) {
    if (name.size() >= tail.size() &&
        name.compare(name.size() - tail.size(), tail.size(), tail) == 0 &&
        (name.size() == tail.size() || name[name.size() - tail.size() - 1] == '/')) {
      if (found) throw Error(origin + ": zip archive holds two data.pkl records");
      prefix = name.substr(0, name.size() - tail.size());
      found = true;
    }
  }
  if (!found)
    throw Error(origin + ": a zip archive but not a torch.save file (no data.pkl record)");
  return prefix;
}

StoredStateDict parseZip(const ByteView& b, const std::string& origin) {
  const auto entries = readZipDirectory(b.data(), b.size(), origin);
  const std::string prefix = recordPrefix(entries, origin);
  auto record = [&](const std::string& name) -> const ZipEntry& {
    auto it = entries.find(prefix + name);
    if (it == entries.end()) throw Error(origin + ": record '" + prefix + name + "' is missing");
    const ZipEntry& e = it->second;
    if (crc32(&b[e.offset], e.size) != e.crc)
      throw Error(origin + ": record '" + prefix + name + "' fails its CRC check (file corrupt)");
    return e;
  };
  if (entries.count(prefix + "byteorder")) {
    const auto& e = record("byteorder");
    const std::string order(reinterpret_cast<const char*>(&b[e.offset]), e.size);
    if (order != "little")
      throw Error(origin + ": stored in '" + order +
                  "' byte order; only little-endian files are read");
  }
  const ZipEntry& pkl = record("data.pkl");
  StoredStateDict out;
  out.format = "zip";
  StorageIds storages;
  Unpickler u(&b[pkl.offset], pkl.size, origin + " (data.pkl)", storages.loader());
  const int root = u.load();
  collect(u, root, origin, out);
  attachStorages(u, out, [&](const std::string& key, StoredType type, int64_t numel) {
    const ZipEntry& e = record("data/" + key);
    const uint64_t want = static_cast<uint64_t>(numel) * static_cast<uint64_t>(elementSize(type));
    if (e.size < want)
      throw Error(origin + ": storage '" + key + "' holds " + std::to_string(e.size) + " bytes, " +
                  std::to_string(want) + " expected");
    return std::make_shared<const std::vector<uint8_t>>(
        b.begin() + static_cast<long>(e.offset), b.begin() + static_cast<long>(e.offset + want));
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// The legacy stream.

// Magic number, protocol version, system info: small pickles of plain values before the object.
// Returns where the object's pickle starts.
size_t legacyHeaderSize(const ByteView& b, const std::string& origin) {
  size_t pos = 0;
  for (const char* what : {"magic number", "protocol version", "system info"}) {
    StorageIds none;  // a storage named here is never read
    Unpickler u(b.data() + pos, b.size() - pos, origin + " (" + what + ")", none.loader());
    const int v = u.load();
    if (std::string(what) == "magic number" &&
        (u.at(v).kind != PickleValue::Int ||
         u.at(v).s != std::string("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10)))
      throw Error(origin + ": not a torch.save file (wrong magic number)");
    if (std::string(what) == "protocol version" &&
        (u.at(v).kind != PickleValue::Int || u.at(v).i != 1001))
      throw Error(origin + ": unsupported legacy protocol version");
    if (std::string(what) == "system info") {
      const PickleValue& d = u.at(v);
      for (size_t k = 0; k + 1 < d.items.size(); k += 2)
        if (u.at(d.items[k]).s == "little_endian" && u.at(d.items[k + 1]).i == 0)
          throw Error(origin +
                      ": saved on a big-endian machine; only little-endian files are read");
    }
    pos += u.consumed();
  }
  return pos;
}

// After the object, at `pos`: the list of storage keys, then each storage in that order as its
// element count and its bytes. `object` and `ids` are the object's pickle and its storages.
std::map<std::string, Bytes> readLegacyStorages(const ByteView& b, size_t pos,
                                                const Unpickler& object, const StorageIds& ids,
                                                const std::string& origin) {
  StorageIds none;
  Unpickler keysU(b.data() + pos, b.size() - pos, origin + " (storage keys)", none.loader());
  const int keysV = keysU.load();
  pos += keysU.consumed();
  const PickleValue& keys = keysU.at(keysV);
  if (keys.kind != PickleValue::List) throw Error(origin + ": storage key list is not a list");
  std::map<std::string, Bytes> data;
  for (int k : keys.items) {
    const PickleValue& key = keysU.at(k);
    if (key.kind != PickleValue::String) throw Error(origin + ": storage key is not a string");
    auto it = ids.byKey().find(key.s);
    if (it == ids.byKey().end())
      throw Error(origin + ": storage '" + key.s + "' is listed but never used");
    const PickleValue& s = object.at(it->second);
    if (b.size() - pos < 8) throw Error(origin + ": truncated (storage '" + key.s + "' missing)");
    const int64_t numel = loadLe<int64_t>(&b[pos]);
    pos += 8;
    if (numel != s.numel)
      throw Error(origin + ": storage '" + key.s + "' holds " + std::to_string(numel) +
                  " elements, " + std::to_string(s.numel) + " expected");
    const uint64_t bytes =
        static_cast<uint64_t>(numel) * static_cast<uint64_t>(elementSize(s.type));
    if (b.size() - pos < bytes)
      throw Error(origin + ": truncated (storage '" + key.s + "' runs past the end)");
    data[key.s] = std::make_shared<const std::vector<uint8_t>>(
        b.begin() + static_cast<long>(pos), b.begin() + static_cast<long>(pos + bytes));
    pos += bytes;
  }
  return data;
}

StoredStateDict parseLegacy(const ByteView& b, const std::string& origin) {
  StoredStateDict out;
  out.format = "legacy";
  size_t pos = legacyHeaderSize(b, origin);
  StorageIds storages;
  Unpickler u(b.data() + pos, b.size() - pos, origin, storages.loader());
  const int root = u.load();
  pos += u.consumed();
  collect(u, root, origin, out);
  const auto data = readLegacyStorages(b, pos, u, storages, origin);
  attachStorages(u, out, [&](const std::string& key, StoredType, int64_t) {
    auto it = data.find(key);
    if (it == data.end()) throw Error(origin + ": storage '" + key + "' has no data");
    return it->second;
  });
  return out;
}

}  // namespace

bool looksLikeTorchFile(const std::string& head) {
  if (head.size() >= 4 && head.compare(0, 4, "PK\x03\x04") == 0) return true;
  // Legacy: PROTO 2, LONG1 of 10 bytes holding the magic number.
  static const char magic[] = "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19";
  return head.size() >= 14 && head.compare(0, 14, std::string(magic, 14)) == 0;
}

StoredStateDict parseTorchFile(const uint8_t* data, size_t size, const std::string& origin) {
  const ByteView bytes{data, size};
  if (bytes.empty()) throw Error(origin + ": empty file");
  const std::string head(reinterpret_cast<const char*>(data), std::min<size_t>(size, 16));
  if (head.size() >= 4 && head.compare(0, 4, "PK\x03\x04") == 0) return parseZip(bytes, origin);
  if (looksLikeTorchFile(head)) return parseLegacy(bytes, origin);
  if (size > 262 && std::memcmp(&bytes[257], "ustar", 5) == 0)
    throw Error(origin + ": a tar-based torch.save file (PyTorch < 0.1.10) is not supported");
  throw Error(origin + ": not a torch.save file (neither a zip archive nor a legacy pickle)");
}

StoredStateDict readTorchFile(const std::string& path) {
  const std::string s = readRegularFile(path, "PyTorch checkpoint", kMaxModelFileBytes);
  return parseTorchFile(reinterpret_cast<const uint8_t*>(s.data()), s.size(), path);
}

}  // namespace foveal::core
