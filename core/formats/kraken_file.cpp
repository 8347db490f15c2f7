#include "formats/kraken_file.h"

#ifdef FOVEAL_HAVE_PROTOBUF
#include <google/protobuf/descriptor.h>
#include <google/protobuf/stubs/common.h>
#if GOOGLE_PROTOBUF_VERSION < 4022000
#include <google/protobuf/stubs/logging.h>  // LogSilencer (gone with protobuf 22's abseil logging)
#endif
#endif
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include "base/error.h"
#include "base/little_endian.h"
#include "base/safe_read.h"
#ifdef FOVEAL_HAVE_PROTOBUF
#include "kraken_coreml.pb.h"  // generated from formats/kraken_coreml.proto
#endif

namespace foveal::core {

#ifdef FOVEAL_HAVE_PROTOBUF
namespace pb = foveal::kraken_coreml;
#endif
using nlohmann::json;

namespace {

constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;  // the safetensors library's own limit
constexpr int kMaxJsonDepth = 100;   // kraken's metadata nests 4 deep; nlohmann recurses on copy
constexpr int kMaxProtoDepth = 100;  // protobuf's own default recursion limit
constexpr uint64_t kMaxDimension = uint64_t(1) << 40;
constexpr const char* kNeither = " (neither a kraken safetensors file nor a CoreML model?)";

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw Error(origin + ": " + what);
}

std::string inQuotes(const std::string& s) {
  std::string q = s.size() > 80 ? s.substr(0, 77) + "..." : s;
  return "'" + q + "'";
}

/// a * b, or UINT64_MAX when it overflows (every product here is compared with a count that fits).
uint64_t mulSat(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a)
    return std::numeric_limits<uint64_t>::max();
  return a * b;
}

// ---- JSON as Python's json module writes it ----

/// Python's json.dumps writes NaN, Infinity and -Infinity (a training run's metric can be NaN);
/// JSON has no such tokens. They become null. Also refuses nesting deeper than kMaxJsonDepth,
/// before nlohmann (whose copies and dumps recurse) sees the text.
std::string strictJsonText(const std::string& text, const std::string& origin,
                           const std::string& what) {
  std::string out;
  out.reserve(text.size());
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        inString = false;
      }
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        fail(origin, what + " nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (text.compare(i, 3, "NaN") == 0) {
      out += "null";
      i += 2;
      continue;
    } else if (text.compare(i, 8, "Infinity") == 0) {
      out += "null";
      i += 7;
      continue;
    } else if (text.compare(i, 9, "-Infinity") == 0) {
      out += "null";
      i += 8;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

json parseJson(const std::string& text, const std::string& origin, const std::string& what) {
  json j = json::parse(strictJsonText(text, origin, what), nullptr, false);
  if (j.is_discarded()) fail(origin, what + " is not valid JSON");
  return j;
}

/// A codec is kraken's c2l: each label string -> its list of integer codes. kraken 7 writes it as
/// an object; a model that went through add_codec() holds it as JSON text.
json checkedCodec(json codec, const std::string& origin, const std::string& where) {
  if (codec.is_string()) codec = parseJson(codec.get<std::string>(), origin, where + " codec");
  if (!codec.is_object() || codec.empty())
    fail(origin, where + " codec is not an object of labels (kraken's c2l)");
  for (const auto& [label, codes] : codec.items()) {
    if (!codes.is_array() || codes.empty())
      fail(origin, where + " codec label " + inQuotes(label) + " has no list of codes");
    for (const auto& code : codes)
      if (!code.is_number_integer() || code.get<int64_t>() < 0)
        fail(origin, where + " codec label " + inQuotes(label) + " has a code that is not a " +
                         "non-negative integer");
  }
  return codec;
}

// ---- half and brain floats ----

float halfToFloat(uint16_t h) {
  const uint32_t sign = h >> 15, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -24);  // zero and subnormals, exactly
  else if (exp == 31)
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(static_cast<float>(man | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

float bitsToFloat(uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// ---- safetensors ----

struct Dtype {
  const char* name;
  int size;
  char kind;  ///< 'f' F32, 'h' F16, 'b' BF16, 'd' F64: a float type Foveal converts; 0 other
};
constexpr Dtype kDtypes[] = {
    {"F32", 4, 'f'}, {"F16", 2, 'h'}, {"BF16", 2, 'b'},  {"F64", 8, 'd'},   {"BOOL", 1, 0},
    {"U8", 1, 0},    {"I8", 1, 0},    {"F8_E5M2", 1, 0}, {"F8_E4M3", 1, 0}, {"I16", 2, 0},
    {"U16", 2, 0},   {"I32", 4, 0},   {"U32", 4, 0},     {"I64", 8, 0},     {"U64", 8, 0}};

const Dtype* findDtype(const std::string& name) {
  for (const auto& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

struct Entry {
  std::string name;
  const Dtype* dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  ///< into the byte buffer after the header
};

/// Little-endian bytes of `count` elements of a float type -> float32 (whatever the host's order).
std::vector<float> convert(const Dtype& type, const unsigned char* p, uint64_t count) {
  std::vector<float> v(count);
  for (uint64_t i = 0; i < count; ++i) {
    const unsigned char* q = p + i * type.size;
    switch (type.kind) {
      case 'f':
        v[i] = bitsToFloat(uint32_t(q[0]) | uint32_t(q[1]) << 8 | uint32_t(q[2]) << 16 |
                           uint32_t(q[3]) << 24);
        break;
      case 'h':
        v[i] = halfToFloat(static_cast<uint16_t>(q[0] | q[1] << 8));
        break;
      case 'b':  // the upper half of a float32
        v[i] = bitsToFloat(uint32_t(q[0]) << 16 | uint32_t(q[1]) << 24);
        break;
      default: {  // 'd'
        uint64_t bits = 0;
        for (int k = 0; k < 8; ++k) bits |= uint64_t(q[k]) << (8 * k);
        double d;
        std::memcpy(&d, &bits, sizeof d);
        v[i] = static_cast<float>(d);
      }
    }
  }
  return v;
}

Entry readEntry(const std::string& name, const json& info, const std::string& origin) {
  const std::string what = "safetensors header: tensor " + inQuotes(name);
  if (!info.is_object()) fail(origin, what + " is not an object");
  Entry e;
  e.name = name;
  const auto dtype = info.find("dtype");
  if (dtype == info.end() || !dtype->is_string()) fail(origin, what + " has no dtype");
  e.dtype = findDtype(dtype->get<std::string>());
  if (!e.dtype) fail(origin, what + " has an unknown dtype " + inQuotes(dtype->get<std::string>()));
  const auto shape = info.find("shape");
  if (shape == info.end() || !shape->is_array()) fail(origin, what + " has no shape");
  uint64_t count = 1;
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > kMaxDimension)
      fail(origin, what + " has a shape entry that is not a size: " + d.dump());
    e.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    count = mulSat(count, d.get<uint64_t>());
  }
  const auto offsets = info.find("data_offsets");
  if (offsets == info.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
    fail(origin, what + " has no data_offsets [begin, end]");
  e.begin = (*offsets)[0].get<uint64_t>();
  e.end = (*offsets)[1].get<uint64_t>();
  if (e.end < e.begin)
    fail(origin, what + " has data_offsets [" + std::to_string(e.begin) + ", " +
                     std::to_string(e.end) + "] that end before they begin");
  const uint64_t bytes = mulSat(count, static_cast<uint64_t>(e.dtype->size));
  if (bytes != e.end - e.begin)
    fail(origin, what + " holds " + std::to_string(e.end - e.begin) + " bytes, but its dtype " +
                     e.dtype->name + " and shape " + shape->dump() + " need " +
                     (bytes == std::numeric_limits<uint64_t>::max() ? std::string("more")
                                                                    : std::to_string(bytes)));
  return e;
}

/// kraken 7's loader: the model's `_tasks` (a list of strings or null) becomes its model_type.
json tasksAsModelType(const json& model, const std::string& origin, const std::string& where) {
  const auto tasks = model.find("_tasks");
  json types = json::array();
  if (tasks == model.end() || tasks->is_null()) return types;
  if (!tasks->is_array()) fail(origin, where + " _tasks is neither a list of strings nor null");
  for (const auto& t : *tasks) {
    if (!t.is_string()) fail(origin, where + " _tasks is neither a list of strings nor null");
    types.push_back(t);
  }
  return types;
}

// The safetensors header (its 8-byte length, then a JSON object), its length in `headerSize`.
json safetensorsHeader(const std::string& bytes, const std::string& origin, uint64_t& headerSize) {
  if (bytes.size() < 8)
    fail(origin, "truncated: " + std::to_string(bytes.size()) +
                     " bytes, but a safetensors file starts with an 8-byte header length");
  headerSize = getLittleEndian<uint64_t>(bytes, 0);
  if (headerSize > kMaxSafetensorsHeader)
    fail(origin, "safetensors header length " + std::to_string(headerSize) +
                     " is larger than the 100 MB the format allows" + kNeither);
  if (headerSize > bytes.size() - 8)
    fail(origin, "truncated: the safetensors header of " + std::to_string(headerSize) +
                     " bytes runs past the end of the file (" + std::to_string(bytes.size()) +
                     " bytes)");
  const std::string headerText = bytes.substr(8, headerSize);
  if (headerText.empty() || headerText[0] != '{')
    fail(origin, std::string("safetensors header does not start with '{'") + kNeither);
  json header = parseJson(headerText, origin, "safetensors header");
  if (!header.is_object()) fail(origin, "safetensors header is not a JSON object");
  return header;
}

// __metadata__ -> kraken_meta: {uuid: {...metadata of one model...}, ...}
json krakenMetaModels(const json& header, const std::string& origin) {
  const auto metadata = header.find("__metadata__");
  if (metadata == header.end())
    fail(origin, "safetensors header has no __metadata__ (kraken keeps its kraken_meta there: " +
                     std::string("not a kraken model)"));
  if (!metadata->is_object()) fail(origin, "safetensors __metadata__ is not an object");
  for (const auto& [key, value] : metadata->items())
    if (!value.is_string())
      fail(origin, "safetensors __metadata__ entry " + inQuotes(key) + " is not a string");
  const auto krakenMeta = metadata->find("kraken_meta");
  if (krakenMeta == metadata->end())
    fail(origin, "safetensors __metadata__ has no kraken_meta (not a kraken model)");
  json models = parseJson(krakenMeta->get<std::string>(), origin, "kraken_meta");
  if (!models.is_object() || models.empty())
    fail(origin, "kraken_meta is not an object of models keyed by uuid");
  return models;
}

// The uuid of kraken_meta's one TorchVGSLModel network.
std::string vgslModelId(const json& models, const std::string& origin) {
  std::string prefix;
  std::vector<std::string> others;
  for (const auto& [uuid, model] : models.items()) {
    const std::string where = "kraken_meta model " + inQuotes(uuid) + ":";
    if (!model.is_object()) fail(origin, where + " is not an object");
    const auto kind = model.find("_model");
    if (kind == model.end() || !kind->is_string())
      fail(origin, where + " has no _model (the model class)");
    if (kind->get<std::string>() != "TorchVGSLModel") {
      others.push_back(kind->get<std::string>());
      continue;
    }
    if (!prefix.empty())
      fail(origin, "kraken_meta holds two TorchVGSLModel networks (" + inQuotes(prefix) + ", " +
                       inQuotes(uuid) + "); Foveal reads files with one");
    prefix = uuid;
  }
  if (prefix.empty()) {
    std::string list;
    for (const auto& o : others) list += (list.empty() ? "" : ", ") + o;
    fail(origin, "kraken_meta holds no TorchVGSLModel network (only: " + list + ")");
  }
  return prefix;
}

// The tensors of the header, in the order of their bytes. They must tile the byte buffer
// (`bufferSize` bytes), as the safetensors library demands.
std::vector<Entry> tiledEntries(const json& header, uint64_t bufferSize,
                                const std::string& origin) {
  std::vector<Entry> entries;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    entries.push_back(readEntry(name, info, origin));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const auto& e : entries) {
    if (e.begin != at)
      fail(origin, "safetensors header: tensor " + inQuotes(e.name) + " begins at byte " +
                       std::to_string(e.begin) + " of the data, but the previous tensor ends at " +
                       std::to_string(at) + (e.begin < at ? " (they overlap)" : " (a gap)"));
    at = e.end;
  }
  if (at != bufferSize)
    fail(origin, at > bufferSize
                     ? "truncated: the tensors need " + std::to_string(at) +
                           " bytes of data, but the file holds " + std::to_string(bufferSize)
                     : "the tensors cover " + std::to_string(at) + " bytes of data, but " +
                           std::to_string(bufferSize) + " follow the header");
  return entries;
}

KrakenFile parseSafetensors(const std::string& bytes, const std::string& origin) {
  uint64_t headerSize = 0;
  const json header = safetensorsHeader(bytes, origin, headerSize);
  const json models = krakenMetaModels(header, origin);
  const std::string prefix = vgslModelId(models, origin);
  const std::string where = "kraken_meta model " + inQuotes(prefix) + ":";
  json meta = models.at(prefix);
  const auto vgslAt = meta.find("vgsl");
  if (vgslAt == meta.end() || !vgslAt->is_string() || vgslAt->get<std::string>().empty())
    fail(origin, where + " has no vgsl (the network's VGSL spec)");
  const std::string vgsl = vgslAt->get<std::string>();
  const auto codec = meta.find("codec");
  if (codec == meta.end() || codec->is_null())
    fail(origin, where + " has no codec (not a recognition model?)");
  meta["codec"] = checkedCodec(*codec, origin, where);
  meta["model_type"] = tasksAsModelType(meta, origin, where);

  const std::vector<Entry> entries = tiledEntries(header, bytes.size() - 8 - headerSize, origin);
  KrakenFile file;
  file.container = "safetensors";
  file.vgsl = vgsl;
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data()) + 8 + headerSize;
  for (const auto& e : entries) {
    const size_t dot = e.name.find('.');
    const std::string owner = dot == std::string::npos ? std::string() : e.name.substr(0, dot);
    if (dot == std::string::npos || !models.contains(owner))
      fail(origin, "tensor " + inQuotes(e.name) + " belongs to no model of kraken_meta");
    if (owner != prefix) continue;  // another model of the file (a reading-order MLP, ...)
    if (!e.dtype->kind)
      fail(origin, "tensor " + inQuotes(e.name) + " is stored as " + e.dtype->name +
                       ", not as floating point");
    KrakenTensor t;
    t.shape = e.shape;
    t.storedAs = e.dtype->name;
    t.values = convert(*e.dtype, data + e.begin, (e.end - e.begin) / e.dtype->size);
    file.weights.emplace(e.name.substr(dot + 1), std::move(t));
  }
  file.metaJson = meta.dump(-1, ' ', false, json::error_handler_t::replace);
  return file;
}

#ifdef FOVEAL_HAVE_PROTOBUF
// ---- CoreML ----

/// When the protobuf parser refuses the bytes it says nothing about where: walk the wire format
/// along the schema (the generated descriptors) and name the first field that is cut off or
/// malformed, as a path from the model ("neuralNetwork.layers[3].convolution.weights").
class WireDiagnosis {
 public:
  explicit WireDiagnosis(const std::string& bytes) : m_bytes(bytes) {}

  /// The problem, or "" when the walk finds none.
  std::string run() {
    try {
      walk(0, m_bytes.size(), pb::Model::descriptor(), "", 0, true);
    } catch (const std::string& problem) {
      return problem;
    }
    return "";
  }

 private:
  [[noreturn]] static void cutOff(const std::string& what, size_t at, bool cut) {
    throw what + " at byte " + std::to_string(at) + " is cut off" +
        (cut ? " (file truncated)" : "");
  }

  uint64_t varint(size_t& pos, size_t end, const std::string& what, bool cut) {
    const size_t at = pos;
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) cutOff(what, at, cut);
      const auto b = static_cast<unsigned char>(m_bytes[pos++]);
      v |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80)) return v;
    }
    throw what + " at byte " + std::to_string(at) + " is not a valid varint";
  }

  static bool validUtf8(const std::string& s) {
    size_t i = 0;
    while (i < s.size()) {
      const auto c = static_cast<unsigned char>(s[i]);
      int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
      if (n < 0 || (n > 0 && i + n >= s.size())) return false;
      for (int k = 1; k <= n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
      i += n + 1;
    }
    return true;
  }

  /// `cut`: the message runs to the end of a cut file (the model itself, or a field whose
  /// declared length runs past the end), rather than to the end its parent declared.
  void walk(size_t pos, size_t end, const google::protobuf::Descriptor* type,
            const std::string& path, int depth, bool cut) {
    if (depth > kMaxProtoDepth) throw path + " nests deeper than protobuf allows";
    std::map<int, int> seen;
    const std::string in = path.empty() ? "the model" : path;
    while (pos < end) {
      const size_t at = pos;
      const uint64_t tag = varint(pos, end, "a field tag in " + in, cut);
      const auto number = static_cast<int>(tag >> 3);
      const int wire = static_cast<int>(tag & 7);
      if (number == 0 || (tag >> 3) > 536870911)
        throw "a field tag in " + in + " at byte " + std::to_string(at) + " is invalid";
      const auto* field = type ? type->FindFieldByNumber(number) : nullptr;
      std::string name = field ? field->name() : "field " + std::to_string(number);
      if (field && field->is_repeated() && !(field->is_packed() && wire == 2))
        name += "[" + std::to_string(seen[number]++) + "]";
      const std::string sub = path.empty() ? name : path + "." + name;
      switch (wire) {
        case 0:
          varint(pos, end, sub, cut);
          break;
        case 1:
        case 5: {
          const size_t n = wire == 1 ? 8 : 4;
          if (end - pos < n) cutOff(sub, at, cut);
          pos += n;
          break;
        }
        case 2: {
          const uint64_t len = varint(pos, end, sub + "'s length", cut);
          const bool message =
              field && field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE;
          // in a cut file, name the innermost field that is cut (inside a message whose own
          // length fits, a wrong length would only send the walk through the next records)
          if (len > end - pos && message && cut)
            walk(pos, end, field->message_type(), sub, depth + 1, true);
          if (len > end - pos)
            throw sub + " at byte " + std::to_string(at) + " declares " + std::to_string(len) +
                " bytes, but only " + std::to_string(end - pos) + " remain" +
                (cut ? " (file truncated)" : " in " + in);
          if (message)
            walk(pos, pos + len, field->message_type(), sub, depth + 1, false);
          else if (field && field->type() == google::protobuf::FieldDescriptor::TYPE_STRING &&
                   !validUtf8(m_bytes.substr(pos, len)))
            throw sub + " at byte " + std::to_string(at) + " is not UTF-8 text";
          else if (field && field->is_packed() &&
                   field->type() == google::protobuf::FieldDescriptor::TYPE_FLOAT && len % 4)
            throw sub + " at byte " + std::to_string(at) + " holds " + std::to_string(len) +
                " bytes of packed floats, not a multiple of 4";
          pos += len;
          break;
        }
        case 3:
        case 4:
          throw sub + " at byte " + std::to_string(at) + " uses a group (wire type " +
              std::to_string(wire) + "), which CoreML never does";
        default:
          throw sub + " at byte " + std::to_string(at) + " has an invalid wire type " +
              std::to_string(wire);
      }
    }
  }

  const std::string& m_bytes;
};

std::string withoutSuffix(const std::string& s, const std::string& suffix) {
  if (s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0)
    return s.substr(0, s.size() - suffix.size());
  return s;
}

class CoremlWeights {
 public:
  CoremlWeights(const std::string& origin, std::map<std::string, KrakenTensor>& out)
      : m_origin(origin), m_out(out) {}

  void layer(const pb::NeuralNetworkLayer& l) {
    m_layer = "layer " + inQuotes(l.name());
    switch (l.layer_case()) {
      case pb::NeuralNetworkLayer::kConvolution:
        convolution(l);
        break;
      case pb::NeuralNetworkLayer::kInnerProduct:
        innerProduct(l);
        break;
      case pb::NeuralNetworkLayer::kUniDirectionalLSTM:
      case pb::NeuralNetworkLayer::kBiDirectionalLSTM:
        lstm(l);
        break;
      case pb::NeuralNetworkLayer::kCustom:
        if (l.custom().classname() == "groupnorm") groupNorm(l);
        break;  // reshape, dropout, identity, addition: no weights
      case pb::NeuralNetworkLayer::kEmbedding:
        if (withoutSuffix(l.name(), "_wave2vec2_emb") != l.name() && !m_haveMaskEmbedding) {
          m_haveMaskEmbedding = true;  // kraken takes the first such layer
          const auto& e = l.embedding();
          // nn.Embedding(1, C), which kraken's loader flattens (and then cannot load)
          const auto v = values(e.weights(), "weights", e.weights().floatvalue_size(), "");
          put("nn._wave2vec2mask.mask_emb.weight", {1, static_cast<int64_t>(v.size())}, v);
        }
        break;
      default:
        break;  // activations, softmax, pooling, permutes: no weights
    }
  }

 private:
  void put(const std::string& name, std::vector<int64_t> shape, std::vector<float> values) {
    KrakenTensor t;
    t.shape = std::move(shape);
    t.values = std::move(values);
    t.storedAs = "coreml";
    if (!m_out.emplace(name, std::move(t)).second)
      fail(m_origin, m_layer + " gives the weights " + inQuotes(name) + " a second time");
  }

  uint64_t dimension(uint64_t v, const std::string& what) {
    if (v == 0 || v > kMaxDimension)
      fail(m_origin, m_layer + ": " + what + " " + std::to_string(v) + " is not a size");
    return v;
  }

  /// The values of one WeightParams, which must hold `expected` floats (`why` says why).
  std::vector<float> values(const pb::WeightParams& w, const std::string& what, uint64_t expected,
                            const std::string& why) {
    const auto n = static_cast<uint64_t>(w.floatvalue_size());
    if (n != expected) {
      if (n == 0 &&
          (!w.float16value().empty() || !w.rawvalue().empty() || !w.int8rawvalue().empty()))
        fail(m_origin, m_layer + ": " + what +
                           " are stored as half-precision or quantised values (float16Value, " +
                           "rawValue), which kraken does not read");
      fail(m_origin,
           m_layer + ": " + what + " hold " + std::to_string(n) + " values, expected " +
               (expected == std::numeric_limits<uint64_t>::max() ? std::string("more")
                                                                 : std::to_string(expected)) +
               why);
    }
    return {w.floatvalue().begin(), w.floatvalue().end()};
  }

  void convolution(const pb::NeuralNetworkLayer& l) {
    const auto& c = l.convolution();
    if (c.kernelsize_size() != 2)
      fail(m_origin, m_layer + ": convolution kernelSize has " +
                         std::to_string(c.kernelsize_size()) + " entries, not (height, width)");
    const uint64_t out = dimension(c.outputchannels(), "outputChannels");
    const uint64_t in = dimension(c.kernelchannels(), "kernelChannels");
    const uint64_t kh = dimension(c.kernelsize(0), "kernel height");
    const uint64_t kw = dimension(c.kernelsize(1), "kernel width");
    const std::string name = "nn." + withoutSuffix(l.name(), "_conv") + ".co.";
    const auto w = values(c.weights(), "convolution weights", mulSat(mulSat(out, in), kh * kw),
                          " (outputChannels " + std::to_string(out) + " x kernelChannels " +
                              std::to_string(in) + " x " + std::to_string(kh) + " x " +
                              std::to_string(kw) + ")");
    const auto b = values(c.bias(), "convolution biases", out,
                          " (outputChannels " + std::to_string(out) + ")");
    const auto i64 = [](uint64_t v) { return static_cast<int64_t>(v); };
    if (c.isdeconvolution())
      put(name + "weight", {i64(in), i64(out), i64(kh), i64(kw)}, w);
    else
      put(name + "weight", {i64(out), i64(in), i64(kh), i64(kw)}, w);
    put(name + "bias", {i64(out)}, b);
  }

  void linear(const pb::InnerProductLayerParams& p, const std::string& prefix) {
    const uint64_t out = dimension(p.outputchannels(), "outputChannels");
    const uint64_t in = dimension(p.inputchannels(), "inputChannels");
    const auto w = values(
        p.weights(), "inner product weights", mulSat(out, in),
        " (outputChannels " + std::to_string(out) + " x inputChannels " + std::to_string(in) + ")");
    const auto b = values(p.bias(), "inner product biases", out,
                          " (outputChannels " + std::to_string(out) + ")");
    put(prefix + "weight", {static_cast<int64_t>(out), static_cast<int64_t>(in)}, w);
    put(prefix + "bias", {static_cast<int64_t>(out)}, b);
  }

  void innerProduct(const pb::NeuralNetworkLayer& l) {
    linear(l.innerproduct(), "nn." + withoutSuffix(l.name(), "_lin") + ".lin.");
    // kraken maps a wav2vec2 masking layer's projection twice: as above and as project_q
    if (withoutSuffix(l.name(), "_wave2vec2_lin") != l.name() && !m_haveMaskProjection) {
      m_haveMaskProjection = true;
      linear(l.innerproduct(), "nn._wave2vec2mask.project_q.");
    }
  }

  void lstm(const pb::NeuralNetworkLayer& l) {
    const bool bidi = l.layer_case() == pb::NeuralNetworkLayer::kBiDirectionalLSTM;
    const uint64_t in = dimension(
        bidi ? l.bidirectionallstm().inputvectorsize() : l.unidirectionallstm().inputvectorsize(),
        "inputVectorSize");
    const uint64_t hidden = dimension(
        bidi ? l.bidirectionallstm().outputvectorsize() : l.unidirectionallstm().outputvectorsize(),
        "outputVectorSize");
    const std::string name = "nn." + withoutSuffix(l.name(), "_transposed") + ".layer.";
    if (bidi && l.bidirectionallstm().weightparams_size() != 2)
      fail(m_origin, m_layer + ": a bidirectional LSTM with " +
                         std::to_string(l.bidirectionallstm().weightparams_size()) +
                         " sets of weights, not 2 (forward, backward)");
    const int directions = bidi ? 2 : 1;
    for (int d = 0; d < directions; ++d) {
      const auto& p =
          bidi ? l.bidirectionallstm().weightparams(d) : l.unidirectionallstm().weightparams();
      const std::string suffix = d == 1 ? "_reverse" : "";
      const std::string dir = bidi ? (d == 1 ? " (backward)" : " (forward)") : "";
      // torch's gate order i, f, g, o is CoreML's input, forget, block input, output
      const pb::WeightParams* ih[] = {&p.inputgateweightmatrix(), &p.forgetgateweightmatrix(),
                                      &p.blockinputweightmatrix(), &p.outputgateweightmatrix()};
      const pb::WeightParams* hh[] = {&p.inputgaterecursionmatrix(), &p.forgetgaterecursionmatrix(),
                                      &p.blockinputrecursionmatrix(),
                                      &p.outputgaterecursionmatrix()};
      const pb::WeightParams* bias[] = {&p.inputgatebiasvector(), &p.forgetgatebiasvector(),
                                        &p.blockinputbiasvector(), &p.outputgatebiasvector()};
      static const char* gates[] = {"input gate", "forget gate", "block input", "output gate"};
      std::vector<float> wih, whh, b;
      for (int g = 0; g < 4; ++g) {
        const auto a =
            values(*ih[g], std::string(gates[g]) + " weight matrix" + dir, mulSat(hidden, in),
                   " (outputVectorSize " + std::to_string(hidden) + " x inputVectorSize " +
                       std::to_string(in) + ")");
        wih.insert(wih.end(), a.begin(), a.end());
        const auto r = values(*hh[g], std::string(gates[g]) + " recursion matrix" + dir,
                              mulSat(hidden, hidden),
                              " (outputVectorSize " + std::to_string(hidden) + " squared)");
        whh.insert(whh.end(), r.begin(), r.end());
      }
      // kraken's legacy (clstm, ocropy) LSTMs have no biases: no bias tensors then
      const bool noBias = std::all_of(std::begin(bias), std::end(bias), [](const auto* v) {
        return v->floatvalue_size() == 0 && v->float16value().empty() && v->rawvalue().empty();
      });
      if (!noBias)
        for (int g = 0; g < 4; ++g) {
          const auto v = values(*bias[g], std::string(gates[g]) + " bias vector" + dir, hidden,
                                " (outputVectorSize " + std::to_string(hidden) + ")");
          b.insert(b.end(), v.begin(), v.end());
        }
      const auto h4 = static_cast<int64_t>(4 * hidden);
      put(name + "weight_ih_l0" + suffix, {h4, static_cast<int64_t>(in)}, std::move(wih));
      put(name + "weight_hh_l0" + suffix, {h4, static_cast<int64_t>(hidden)}, std::move(whh));
      if (!noBias) {
        // CoreML has one bias per gate where torch has two: kraken loads it as bias_hh
        put(name + "bias_hh_l0" + suffix, {h4}, std::move(b));
        put(name + "bias_ih_l0" + suffix, {h4}, std::vector<float>(4 * hidden, 0.0f));
      }
    }
  }

  void groupNorm(const pb::NeuralNetworkLayer& l) {
    const auto& c = l.custom();
    const auto it = c.parameters().find("in_channels");
    if (it == c.parameters().end() ||
        it->second.value_case() != pb::CustomLayerParams::CustomLayerParamValue::kIntValue ||
        it->second.intvalue() <= 0)
      fail(m_origin, m_layer + ": groupnorm has no in_channels parameter");
    const auto channels = static_cast<uint64_t>(it->second.intvalue());
    if (c.weights_size() < 2)
      fail(m_origin, m_layer + ": groupnorm has " + std::to_string(c.weights_size()) +
                         " weight vectors, not 2 (weight, bias)");
    const std::string why = " (in_channels " + std::to_string(channels) + ")";
    const std::string name = "nn." + l.name() + ".layer.";
    put(name + "weight", {static_cast<int64_t>(channels)},
        values(c.weights(0), "groupnorm weights", channels, why));
    put(name + "bias", {static_cast<int64_t>(channels)},
        values(c.weights(1), "groupnorm biases", channels, why));
  }

  const std::string& m_origin;
  std::map<std::string, KrakenTensor>& m_out;
  std::string m_layer;
  bool m_haveMaskEmbedding = false, m_haveMaskProjection = false;
};

/// kraken's loader makes model_type a list: kraken 6 wrote one string ("recognition"), and a file
/// without kraken_meta predates segmentation models, so it is a recogniser.
json coremlModelType(const json& meta, bool hasKrakenMeta, const std::string& origin) {
  if (!hasKrakenMeta) return json::array({"recognition"});
  const auto it = meta.find("model_type");
  if (it == meta.end() || it->is_null()) return json::array();  // kraken refuses; Foveal reads it
  if (it->is_string()) return it->get<std::string>().empty() ? json::array() : json::array({*it});
  if (it->is_array() && std::all_of(it->begin(), it->end(), [](const json& t) {
        return t.is_string() && !t.get<std::string>().empty();
      }))
    return *it;
  fail(origin, "kraken_meta model_type is neither a string nor a list of strings");
}

KrakenFile parseCoreml(const std::string& bytes, const std::string& origin) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    fail(origin, "larger than the 2 GiB a CoreML protobuf can be");
  pb::Model model;
  bool parsed;
  {
#if GOOGLE_PROTOBUF_VERSION < 4022000
    google::protobuf::LogSilencer quiet;  // it would print its own complaint to stderr
#endif
    parsed = model.ParseFromString(bytes);
  }
  if (!parsed) {
    const std::string where = WireDiagnosis(bytes).run();
    fail(origin, "not a CoreML model protobuf: " +
                     (where.empty() ? std::string("it does not parse") : where));
  }
  if (model.Type_case() != pb::Model::kNeuralNetwork)
    fail(origin, "a protobuf, but not a CoreML neural network (kraken writes one)");
  const auto& user = model.description().metadata().userdefined();
  const auto get = [&](const char* key) -> const std::string* {
    const auto it = user.find(key);
    return it == user.end() ? nullptr : &it->second;
  };
  const std::string* metaText = get("kraken_meta");
  const std::string* vgslText = get("vgsl");
  const std::string* codecText = get("codec");
  if (!metaText && !vgslText)
    fail(origin, "a CoreML model without kraken's metadata (no userDefined vgsl or kraken_meta)");

  json meta = metaText ? parseJson(*metaText, origin, "userDefined kraken_meta") : json::object();
  if (!meta.is_object()) fail(origin, "userDefined kraken_meta is not a JSON object");
  // kraken reads the top-level vgsl and codec first; kraken_meta's copies are the fallback
  std::string vgsl = vgslText ? *vgslText : "";
  if (vgsl.empty() && meta.contains("vgsl") && meta["vgsl"].is_string())
    vgsl = meta["vgsl"].get<std::string>();
  if (vgsl.empty()) fail(origin, "no VGSL spec (userDefined vgsl, kraken_meta vgsl)");
  meta["vgsl"] = vgsl;
  if (codecText)
    meta["codec"] =
        checkedCodec(parseJson(*codecText, origin, "userDefined codec"), origin, "userDefined");
  else if (meta.contains("codec") && !meta["codec"].is_null())
    meta["codec"] = checkedCodec(meta["codec"], origin, "kraken_meta");
  else
    fail(origin, "no codec (userDefined codec, kraken_meta codec): not a recognition model?");
  meta["model_type"] = coremlModelType(meta, metaText != nullptr, origin);
  if (const std::string* aux = get("aux_layers"))
    meta["aux_layers"] = parseJson(*aux, origin, "userDefined aux_layers");

  KrakenFile file;
  file.container = "coreml";
  file.vgsl = vgsl;
  CoremlWeights weights(origin, file.weights);
  for (const auto& l : model.neuralnetwork().layers()) weights.layer(l);
  file.metaJson = meta.dump(-1, ' ', false, json::error_handler_t::replace);
  return file;
}

#else
// A build without protobuf (an engine-only build against a pip PyTorch) reads safetensors only.
KrakenFile parseCoreml(const std::string&, const std::string& origin) {
  fail(origin,
       "a CoreML .mlmodel, and this build has no protobuf (Debian: libprotobuf-dev and "
       "protobuf-compiler) to read it: kraken 7's .safetensors files read without it");
}
#endif

bool plausibleSafetensorsLength(const std::string& head) {
  if (head.size() < 9) return false;
  const uint64_t n = getLittleEndian<uint64_t>(head, 0);
  return n >= 2 && n <= kMaxSafetensorsHeader && head[8] == '{';
}

/// A CoreML model starts with its specification version (field 1, optional) and its
/// description (field 2), whose first field is its inputs (1), outputs (10) or metadata (100).
/// `shortOk`: bytes that end before the description's first field still count (a cut file).
bool coremlStart(const std::string& head, bool shortOk) {
  size_t pos = 0;
  const auto varint = [&](uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && pos < head.size(); shift += 7) {
      const auto b = static_cast<unsigned char>(head[pos++]);
      v |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
  uint64_t v = 0;
  if (pos < head.size() && head[pos] == 0x08) {
    ++pos;
    if (!varint(v)) return shortOk && pos == head.size();
    if (v > 1000) return false;
  }
  if (pos >= head.size()) return shortOk && pos > 0;
  if (head[pos++] != 0x12) return false;
  if (!varint(v)) return shortOk && pos == head.size();
  if (v == 0) return false;
  if (pos >= head.size()) return shortOk;
  const auto first = static_cast<unsigned char>(head[pos]);
  return first == 0x0A || first == 0x52 || first == 0xA2;
}

}  // namespace

bool looksLikeSafetensors(const std::string& head) {
  return plausibleSafetensorsLength(head) && head.compare(9, 14, "\"__metadata__\"") == 0 &&
         head.find("\"kraken_meta\"", 9) != std::string::npos;
}

bool looksLikeCoreml(const std::string& head) { return coremlStart(head, false); }

KrakenFile parseKrakenFile(const std::string& bytes, const std::string& origin) {
  if (bytes.empty()) fail(origin, "empty file");
  // A safetensors file starts with its header's length and '{', a CoreML protobuf with field
  // tags: the two starts cannot be mistaken. Anything else is read as a damaged safetensors
  // file, whose checks say what is wrong.
  const std::string head = bytes.substr(0, 64);
  if (!plausibleSafetensorsLength(head) && coremlStart(head, true))
    return parseCoreml(bytes, origin);
  return parseSafetensors(bytes, origin);
}

KrakenFile readKrakenFile(const std::string& path) {
  return parseKrakenFile(readRegularFile(path, "kraken model", kMaxModelFileBytes), path);
}

}  // namespace foveal::core
