#include "formats/torch_pickle.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>

#include "base/crc32.h"
#include "base/error.h"
#include "base/safe_read.h"

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
    const uint8_t* p = bytes.data() + at * es;
    float v = 0;
    switch (t.type) {
      case StoredType::Float32:
        v = loadLe<float>(p);
        break;
      case StoredType::Float64:
        v = static_cast<float>(loadLe<double>(p));
        break;
      case StoredType::Float16:
        v = halfToFloat(loadLe<uint16_t>(p));
        break;
      case StoredType::BFloat16: {
        const uint32_t bits = static_cast<uint32_t>(loadLe<uint16_t>(p)) << 16;
        std::memcpy(&v, &bits, 4);
        break;
      }
      case StoredType::Int64:
        v = static_cast<float>(loadLe<int64_t>(p));
        break;
      case StoredType::Int32:
        v = static_cast<float>(loadLe<int32_t>(p));
        break;
      case StoredType::Int16:
        v = static_cast<float>(loadLe<int16_t>(p));
        break;
      case StoredType::Int8:
        v = static_cast<float>(static_cast<int8_t>(*p));
        break;
      case StoredType::UInt8:
      case StoredType::Bool:
        v = static_cast<float>(*p);
        break;
    }
    out[static_cast<size_t>(i)] = v;
    for (size_t d = idx.size(); d-- > 0;) {  // row-major increment
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

namespace {

// ---------------------------------------------------------------------------------------------
// The pickle machine. Values live in one arena and refer to each other by index, so a pickle
// that makes a list contain itself leaks nothing and nothing walks it recursively.

struct Value {
  enum Kind { None, Bool, Int, Float, String, Bytes, Tuple, List, Dict, Global, Storage, Tensor };
  Kind kind = None;
  int64_t i = 0;
  double f = 0;
  std::string s;           // String, Bytes, Global ("module.name"), Storage key
  std::vector<int> items;  // Tuple, List; Dict: key, value, key, value...
  int tensor = -1;         // Tensor: index into the result's tensors (key filled in later)
  StoredType type = StoredType::Float32;  // Storage
  int64_t numel = 0;                      // Storage
};

const char* kindName(Value::Kind k) {
  static const char* names[] = {"None",  "bool", "int",  "float",  "str",     "bytes",
                                "tuple", "list", "dict", "global", "storage", "tensor"};
  return names[k];
}

constexpr size_t kMaxValues = 2'000'000;  // a DTRB state dict makes about 10,000
constexpr size_t kMaxStack = 100'000;

bool storageType(const std::string& global, StoredType& t) {
  static const std::map<std::string, StoredType> types = {
      {"torch.FloatStorage", StoredType::Float32}, {"torch.DoubleStorage", StoredType::Float64},
      {"torch.HalfStorage", StoredType::Float16},  {"torch.BFloat16Storage", StoredType::BFloat16},
      {"torch.LongStorage", StoredType::Int64},    {"torch.IntStorage", StoredType::Int32},
      {"torch.ShortStorage", StoredType::Int16},   {"torch.CharStorage", StoredType::Int8},
      {"torch.ByteStorage", StoredType::UInt8},    {"torch.BoolStorage", StoredType::Bool}};
  auto it = types.find(global);
  if (it == types.end()) return false;
  t = it->second;
  return true;
}

// The globals a state dict may name (as torch.load(weights_only=True) allows); the rest are
// refused with their name.
bool allowedGlobal(const std::string& g) {
  StoredType t;
  return g == "collections.OrderedDict" || g == "torch._utils._rebuild_tensor_v2" ||
         g == "torch._utils._rebuild_tensor" || g == "torch._utils._rebuild_parameter" ||
         g == "torch._utils._rebuild_parameter_with_state" || g == "torch.Size" ||
         g == "_codecs.encode" || g == "builtins.set" || g == "__builtin__.set" ||
         storageType(g, t);
}

class Unpickler {
 public:
  Unpickler(const uint8_t* data, size_t size, std::string origin, StoredStateDict& out)
      : m_p(data), m_end(data + size), m_begin(data), m_origin(std::move(origin)), m_out(out) {}

  /// Storages named by persistent ids: key -> arena index of the Storage value.
  std::map<std::string, int>& storages() { return m_storages; }
  const Value& at(int i) const { return m_values[static_cast<size_t>(i)]; }
  size_t consumed() const { return static_cast<size_t>(m_p - m_begin); }

  int load();

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(m_origin + ": " + what + " (at byte " + std::to_string(m_p - m_begin) + ")");
  }
  void need(size_t n) const {
    if (static_cast<size_t>(m_end - m_p) < n) fail("truncated pickle");
  }
  uint8_t byte() {
    need(1);
    return *m_p++;
  }
  template <typename T>
  T le() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, m_p, sizeof(T));
    m_p += sizeof(T);
    return v;
  }
  std::string bytes(uint64_t n) {
    if (n > static_cast<uint64_t>(m_end - m_p))
      fail("truncated pickle (a string runs past the end)");
    std::string s(reinterpret_cast<const char*>(m_p), static_cast<size_t>(n));
    m_p += n;
    return s;
  }
  std::string line() {
    const uint8_t* nl =
        static_cast<const uint8_t*>(std::memchr(m_p, '\n', static_cast<size_t>(m_end - m_p)));
    if (!nl) fail("truncated pickle (a text line has no end)");
    std::string s(reinterpret_cast<const char*>(m_p), static_cast<size_t>(nl - m_p));
    m_p = nl + 1;
    return s;
  }

  int make(Value v) {
    if (m_values.size() >= kMaxValues) fail("pickle holds too many objects");
    m_values.push_back(std::move(v));
    return static_cast<int>(m_values.size() - 1);
  }
  int makeInt(int64_t i) {
    Value v;
    v.kind = Value::Int;
    v.i = i;
    return make(std::move(v));
  }
  int makeStr(Value::Kind k, std::string s) {
    Value v;
    v.kind = k;
    v.s = std::move(s);
    return make(std::move(v));
  }
  void push(int v) {
    if (m_stack.size() >= kMaxStack) fail("pickle stack too deep");
    m_stack.push_back(v);
  }
  int pop() {
    if (m_stack.empty() || (!m_marks.empty() && m_stack.size() <= m_marks.back()))
      fail("malformed pickle (pops an empty stack)");
    int v = m_stack.back();
    m_stack.pop_back();
    return v;
  }
  int top() {
    if (m_stack.empty() || (!m_marks.empty() && m_stack.size() <= m_marks.back()))
      fail("malformed pickle (reads an empty stack)");
    return m_stack.back();
  }
  std::vector<int> popMark() {
    if (m_marks.empty()) fail("malformed pickle (no mark)");
    const size_t at = m_marks.back();
    m_marks.pop_back();
    std::vector<int> items(m_stack.begin() + static_cast<long>(at), m_stack.end());
    m_stack.resize(at);
    return items;
  }
  Value& val(int i) { return m_values[static_cast<size_t>(i)]; }
  int tuple(std::vector<int> items) {
    Value v;
    v.kind = Value::Tuple;
    v.items = std::move(items);
    return make(std::move(v));
  }
  int64_t intOf(int i, const char* what) {
    const Value& v = val(i);
    if (v.kind == Value::Int || v.kind == Value::Bool) return v.i;
    fail(std::string("expected an int for ") + what + ", got " + kindName(v.kind));
  }
  std::vector<int64_t> intsOf(int i, const char* what) {
    const Value& v = val(i);
    if (v.kind != Value::Tuple && v.kind != Value::List)
      fail(std::string("expected a tuple for ") + what + ", got " + kindName(v.kind));
    std::vector<int64_t> out;
    for (int x : v.items) out.push_back(intOf(x, what));
    return out;
  }
  int makeLong(const std::string& b) {
    if (b.size() <= 8) return makeInt(longFromBytes(b));
    if (b.size() > 64)
      fail("integer too large for a state dict (" + std::to_string(b.size()) + " bytes)");
    Value v;  // only the legacy format's magic number is this large: kept as its bytes
    v.kind = Value::Int;
    v.s = b;
    return make(std::move(v));
  }
  int64_t longFromBytes(const std::string& b) {
    uint64_t u = 0;
    for (size_t k = 0; k < b.size(); ++k)
      u |= static_cast<uint64_t>(static_cast<uint8_t>(b[k])) << (8 * k);
    if (!b.empty() && b.size() < 8 && (static_cast<uint8_t>(b.back()) & 0x80))
      u |= ~uint64_t(0) << (8 * b.size());  // sign-extend
    int64_t r;
    std::memcpy(&r, &u, 8);
    return r;
  }
  void setItem(int dict, int key, int value) {
    Value& d = val(dict);
    if (d.kind != Value::Dict) fail(std::string("SETITEM on a ") + kindName(d.kind));
    d.items.push_back(key);
    d.items.push_back(value);
  }
  int reduce(int callable, int args);
  int persistent(int id);
  int rebuildTensor(const std::vector<int>& args, bool v2);

  const uint8_t* m_p;
  const uint8_t* m_end;
  const uint8_t* m_begin;
  std::string m_origin;
  StoredStateDict& m_out;
  std::vector<Value> m_values;
  std::vector<int> m_stack;
  std::vector<size_t> m_marks;
  std::unordered_map<int64_t, int> m_memo;
  std::map<std::string, int> m_storages;
};

int Unpickler::persistent(int id) {
  const Value& t = val(id);
  if (t.kind != Value::Tuple || t.items.size() < 5 || val(t.items[0]).kind != Value::String ||
      val(t.items[0]).s != "storage")
    fail("unsupported persistent id (only tensor storages are accepted)");
  const Value& type = val(t.items[1]);
  StoredType st;
  if (type.kind != Value::Global || !storageType(type.s, st))
    fail("unsupported storage type '" +
         (type.kind == Value::Global ? type.s : std::string(kindName(type.kind))) + "'");
  if (val(t.items[2]).kind != Value::String) fail("storage key is not a string");
  // A copy: make() below may move every value (found by the ASan run of the whole suite).
  const std::string key = val(t.items[2]).s;
  const int64_t numel = intOf(t.items[4], "storage size");
  if (numel < 0) fail("negative storage size");
  if (t.items.size() >= 6 && val(t.items[5]).kind != Value::None)
    fail(
        "storage views (PyTorch < 0.4) are not supported; re-save the state dict with a newer "
        "PyTorch");
  auto it = m_storages.find(key);
  if (it != m_storages.end()) {
    const Value& s = val(it->second);
    if (s.type != st || s.numel != numel)
      fail("storage '" + key + "' is described twice, differently");
    return it->second;
  }
  Value v;
  v.kind = Value::Storage;
  v.s = key;
  v.type = st;
  v.numel = numel;
  const int idx = make(std::move(v));
  m_storages[key] = idx;
  return idx;
}

int Unpickler::rebuildTensor(const std::vector<int>& args, bool v2) {
  if (args.size() < 4) fail("tensor with too few arguments");
  const Value& storage = val(args[0]);
  if (storage.kind != Value::Storage)
    fail(std::string("tensor over a ") + kindName(storage.kind) + ", not a storage");
  StoredTensor t;
  t.type = storage.type;
  t.offset = intOf(args[1], "tensor offset");
  t.shape = intsOf(args[2], "tensor size");
  t.stride = intsOf(args[3], "tensor stride");
  (void)v2;
  if (t.shape.size() != t.stride.size()) fail("tensor size and stride differ in length");
  if (t.shape.size() > 16) fail("tensor with more than 16 dimensions");
  if (t.offset < 0) fail("negative tensor offset");
  // The last element must lie inside the storage; every size and stride within reason.
  int64_t last = t.offset, count = 1;
  bool empty = false;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] < 0 || t.shape[d] > (int64_t(1) << 40) || t.stride[d] < 0 ||
        t.stride[d] > (int64_t(1) << 40))
      fail("tensor size or stride out of range");
    if (t.shape[d] == 0)
      empty = true;
    else
      last += (t.shape[d] - 1) * t.stride[d];
    count *= std::max<int64_t>(t.shape[d], 1);
    if (count > (int64_t(1) << 40)) fail("tensor too large");
  }
  if (!empty && last >= storage.numel)
    fail("tensor reaches element " + std::to_string(last) + " of a storage of " +
         std::to_string(storage.numel));
  t.storage = args[0];  // the arena index for now; renumbered when the storages are read
  m_out.tensors.push_back(std::move(t));
  Value v;
  v.kind = Value::Tensor;
  v.tensor = static_cast<int>(m_out.tensors.size() - 1);
  return make(std::move(v));
}

int Unpickler::reduce(int callable, int args) {
  const Value& c = val(callable);
  if (c.kind != Value::Global) fail(std::string("REDUCE of a ") + kindName(c.kind));
  const Value& a = val(args);
  if (a.kind != Value::Tuple) fail("REDUCE arguments are not a tuple");
  const std::vector<int> items = a.items;
  const std::string g = c.s;
  if (g == "collections.OrderedDict") {
    Value d;
    d.kind = Value::Dict;
    if (!items.empty()) {  // OrderedDict([(k, v), ...])
      const Value& pairs = val(items[0]);
      if (pairs.kind != Value::List && pairs.kind != Value::Tuple)
        fail("OrderedDict of a non-list");
      for (int p : pairs.items) {
        const Value& kv = val(p);
        if (kv.kind != Value::Tuple || kv.items.size() != 2) fail("OrderedDict item is not a pair");
        d.items.push_back(kv.items[0]);
        d.items.push_back(kv.items[1]);
      }
    }
    return make(std::move(d));
  }
  if (g == "torch._utils._rebuild_tensor_v2") return rebuildTensor(items, true);
  if (g == "torch._utils._rebuild_tensor") return rebuildTensor(items, false);
  if (g == "torch._utils._rebuild_parameter" || g == "torch._utils._rebuild_parameter_with_state") {
    if (items.empty() || val(items[0]).kind != Value::Tensor) fail("parameter without a tensor");
    return items[0];
  }
  if (g == "torch.Size") {
    if (items.size() != 1) fail("torch.Size with wrong arguments");
    return items[0];
  }
  if (g == "_codecs.encode") {
    if (items.empty() || val(items[0]).kind != Value::String)
      fail("_codecs.encode of a non-string");
    // Python 3 pickles bytes at protocol 2 as encode(latin-1 text): map each code point back.
    const std::string& u = val(items[0]).s;
    std::string out;
    for (size_t k = 0; k < u.size(); ++k) {
      const auto b = static_cast<uint8_t>(u[k]);
      if (b < 0x80)
        out.push_back(static_cast<char>(b));
      else if ((b & 0xE0) == 0xC0 && k + 1 < u.size())
        out.push_back(static_cast<char>(((b & 0x1F) << 6) | (static_cast<uint8_t>(u[++k]) & 0x3F)));
      else
        fail("_codecs.encode of text outside latin-1");
    }
    return makeStr(Value::Bytes, out);
  }
  if (g == "builtins.set" || g == "__builtin__.set") {
    Value v;
    v.kind = Value::List;
    if (!items.empty()) v.items = val(items[0]).items;
    return make(std::move(v));
  }
  fail("refusing to call pickled global '" + g + "'");
}

int Unpickler::load() {
  for (;;) {
    const uint8_t op = byte();
    switch (op) {
      case 0x80:
        byte();
        break;  // PROTO
      case 0x95:
        le<uint64_t>();
        break;     // FRAME: the frame's length; its opcodes follow
      case '.': {  // STOP
        if (m_stack.size() != 1 || !m_marks.empty()) fail("malformed pickle (stack at STOP)");
        return m_stack.back();
      }
      case '(':
        m_marks.push_back(m_stack.size());
        break;
      case '0':
        pop();
        break;
      case '1':
        popMark();
        break;
      case '2':
        push(top());
        break;
      case 'N':
        push(make(Value{}));
        break;
      case 0x88:
      case 0x89: {
        Value v;
        v.kind = Value::Bool;
        v.i = op == 0x88;
        push(make(std::move(v)));
        break;
      }
      case 'J':
        push(makeInt(le<int32_t>()));
        break;
      case 'K':
        push(makeInt(byte()));
        break;
      case 'M':
        push(makeInt(le<uint16_t>()));
        break;
      case 0x8a:
        push(makeLong(bytes(byte())));
        break;
      case 0x8b: {
        const int32_t n = le<int32_t>();
        if (n < 0) fail("negative LONG4 length");
        push(makeLong(bytes(static_cast<uint64_t>(n))));
        break;
      }
      case 'I':
      case 'L': {
        std::string s = line();
        if (!s.empty() && s.back() == 'L') s.pop_back();
        if (s == "00" || s == "01") {
          Value v;
          v.kind = Value::Bool;
          v.i = s == "01";
          push(make(std::move(v)));
          break;
        }
        char* end = nullptr;
        errno = 0;
        const long long x = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || errno != 0) fail("bad integer '" + s.substr(0, 40) + "'");
        push(makeInt(x));
        break;
      }
      case 'F': {
        const std::string s = line();
        char* end = nullptr;
        const double x = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0') fail("bad float '" + s.substr(0, 40) + "'");
        Value v;
        v.kind = Value::Float;
        v.f = x;
        push(make(std::move(v)));
        break;
      }
      case 'G': {
        need(8);
        uint64_t u = 0;
        for (int k = 0; k < 8; ++k) u = (u << 8) | *m_p++;
        Value v;
        v.kind = Value::Float;
        std::memcpy(&v.f, &u, 8);
        push(make(std::move(v)));
        break;
      }
      case 'X':
        push(makeStr(Value::String, bytes(le<uint32_t>())));
        break;
      case 0x8c:
        push(makeStr(Value::String, bytes(byte())));
        break;
      case 0x8d:
        push(makeStr(Value::String, bytes(le<uint64_t>())));
        break;
      case 'T': {
        const int32_t n = le<int32_t>();
        if (n < 0) fail("negative string length");
        push(makeStr(Value::String, bytes(static_cast<uint64_t>(n))));
        break;
      }
      case 'U':
        push(makeStr(Value::String, bytes(byte())));
        break;
      case 'B':
        push(makeStr(Value::Bytes, bytes(le<uint32_t>())));
        break;
      case 'C':
        push(makeStr(Value::Bytes, bytes(byte())));
        break;
      case 0x8e:
      case 0x96:
        push(makeStr(Value::Bytes, bytes(le<uint64_t>())));
        break;
      case 'S':
      case 'V': {
        std::string s = line();
        if (op == 'S') {  // repr of a str: 'text' or "text" (escapes are kept as they are)
          if (s.size() < 2 || (s.front() != '\'' && s.front() != '"') || s.back() != s.front())
            fail("bad STRING literal");
          s = s.substr(1, s.size() - 2);
        }
        push(makeStr(Value::String, s));
        break;
      }
      case ']':
      case 0x8f: {
        Value v;
        v.kind = Value::List;
        push(make(std::move(v)));
        break;
      }
      case 'l':
      case 0x91: {
        Value v;
        v.kind = Value::List;
        v.items = popMark();
        push(make(std::move(v)));
        break;
      }
      case 'a': {
        const int x = pop();
        Value& l = val(top());
        if (l.kind != Value::List) fail(std::string("APPEND to a ") + kindName(l.kind));
        l.items.push_back(x);
        break;
      }
      case 'e':
      case 0x90: {
        auto items = popMark();
        Value& l = val(top());
        if (l.kind != Value::List) fail(std::string("APPENDS to a ") + kindName(l.kind));
        l.items.insert(l.items.end(), items.begin(), items.end());
        break;
      }
      case ')':
        push(tuple({}));
        break;
      case 't':
        push(tuple(popMark()));
        break;
      case 0x85: {
        const int a = pop();
        push(tuple({a}));
        break;
      }
      case 0x86: {
        const int b = pop(), a = pop();
        push(tuple({a, b}));
        break;
      }
      case 0x87: {
        const int c = pop(), b = pop(), a = pop();
        push(tuple({a, b, c}));
        break;
      }
      case '}': {
        Value v;
        v.kind = Value::Dict;
        push(make(std::move(v)));
        break;
      }
      case 'd': {
        auto items = popMark();
        if (items.size() % 2) fail("DICT with an odd number of items");
        Value v;
        v.kind = Value::Dict;
        v.items = std::move(items);
        push(make(std::move(v)));
        break;
      }
      case 's': {
        const int value = pop(), key = pop();
        setItem(top(), key, value);
        break;
      }
      case 'u': {
        auto items = popMark();
        if (items.size() % 2) fail("SETITEMS with an odd number of items");
        const int d = top();
        for (size_t k = 0; k < items.size(); k += 2) setItem(d, items[k], items[k + 1]);
        break;
      }
      case 'c': {
        const std::string module = line(), name = line();
        const std::string g = module + "." + name;
        if (!allowedGlobal(g))
          fail("refusing pickled global '" + g +
               "': a state dict holds only tensors and plain values (was the whole model saved "
               "instead of model.state_dict()?)");
        push(makeStr(Value::Global, g));
        break;
      }
      case 0x93: {
        const int name = pop(), module = pop();
        if (val(name).kind != Value::String || val(module).kind != Value::String)
          fail("STACK_GLOBAL of non-strings");
        const std::string g = val(module).s + "." + val(name).s;
        if (!allowedGlobal(g)) fail("refusing pickled global '" + g + "'");
        push(makeStr(Value::Global, g));
        break;
      }
      case 'R': {
        const int args = pop(), callable = pop();
        push(reduce(callable, args));
        break;
      }
      case 0x81: {  // NEWOBJ cls.__new__(cls, *args): only the allowed globals
        const int args = pop(), cls = pop();
        push(reduce(cls, args));
        break;
      }
      case 'b': {  // BUILD: an OrderedDict's __dict__ (state_dict()._metadata); nothing else
        pop();
        const Value& target = val(top());
        if (target.kind != Value::Dict && target.kind != Value::Tensor)
          fail(std::string("BUILD on a ") + kindName(target.kind));
        break;
      }
      case 'p': {
        const std::string s = line();
        char* end = nullptr;
        const long long k = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0') fail("bad PUT index");
        m_memo[k] = top();
        break;
      }
      case 'q':
        m_memo[byte()] = top();
        break;
      case 'r':
        m_memo[le<uint32_t>()] = top();
        break;
      case 0x94:
        m_memo[static_cast<int64_t>(m_memo.size())] = top();
        break;
      case 'g':
      case 'h':
      case 'j': {
        int64_t k;
        if (op == 'g') {
          const std::string s = line();
          char* end = nullptr;
          k = std::strtoll(s.c_str(), &end, 10);
          if (s.empty() || *end != '\0') fail("bad GET index");
        } else {
          k = op == 'h' ? byte() : le<uint32_t>();
        }
        auto it = m_memo.find(k);
        if (it == m_memo.end())
          fail("pickle reads memo entry " + std::to_string(k) + " before it is written");
        push(it->second);
        break;
      }
      case 'Q':
        push(persistent(pop()));
        break;
      case 'P':
        push(persistent(makeStr(Value::String, line())));
        break;
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        fail(std::string("unsupported pickle opcode ") + hex);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The state dict inside the unpickled object.

void collect(Unpickler& u, int root, const std::string& origin, StoredStateDict& out) {
  const Value& top = u.at(root);
  if (top.kind != Value::Dict)
    throw Error(origin + ": holds a pickled " + kindName(top.kind) + ", not a state dict");
  auto countTensors = [&](const Value& d) {
    int n = 0;
    for (size_t k = 1; k < d.items.size(); k += 2) n += u.at(d.items[k]).kind == Value::Tensor;
    return n;
  };
  const Value* dict = &top;
  if (countTensors(top) == 0) {  // {"state_dict": {...}, "epoch": ...} and similar wrappers
    for (const char* wrapper : {"state_dict", "model", "model_state_dict", "net", "module"}) {
      for (size_t k = 0; k + 1 < top.items.size(); k += 2) {
        const Value& key = u.at(top.items[k]);
        const Value& value = u.at(top.items[k + 1]);
        if (key.kind == Value::String && key.s == wrapper && value.kind == Value::Dict &&
            countTensors(value) > 0) {
          dict = &value;
          out.nestedIn = wrapper;
          break;
        }
      }
      if (dict != &top) break;
    }
  }
  if (countTensors(*dict) == 0)
    throw Error(origin + ": holds a dictionary without tensors, not a state dict");
  std::vector<StoredTensor> tensors;
  for (size_t k = 0; k + 1 < dict->items.size(); k += 2) {
    const Value& key = u.at(dict->items[k]);
    const Value& value = u.at(dict->items[k + 1]);
    if (key.kind != Value::String)
      throw Error(origin + ": state dict key is a " + kindName(key.kind) + ", not a string");
    if (value.kind != Value::Tensor) {
      out.otherKeys.push_back(key.s);
      continue;
    }
    StoredTensor t = out.tensors[static_cast<size_t>(value.tensor)];
    t.key = key.s;
    tensors.push_back(std::move(t));
  }
  out.tensors = std::move(tensors);
}

// Storage arena index -> index in out.storages, filled from `data(key, type, numel)`.
template <typename DataFn>
void attachStorages(Unpickler& u, StoredStateDict& out, DataFn data) {
  std::map<int, int> index;
  for (auto& t : out.tensors) {
    auto it = index.find(t.storage);
    if (it == index.end()) {
      const Value& s = u.at(t.storage);
      out.storages.push_back(data(s.s, s.type, s.numel));
      it = index.emplace(t.storage, static_cast<int>(out.storages.size() - 1)).first;
    }
    t.storage = it->second;
  }
}

// ---------------------------------------------------------------------------------------------
// The zip container (stored entries only, as torch.save writes them).

struct ZipEntry {
  uint64_t offset = 0, size = 0;
  uint32_t crc = 0;
};

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32(const uint8_t* p) { return loadLe<uint32_t>(p); }
uint64_t u64(const uint8_t* p) { return loadLe<uint64_t>(p); }

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

std::map<std::string, ZipEntry> readZip(const ByteView& b, const std::string& origin) {
  auto bad = [&](const std::string& what) {
    return Error(origin + ": corrupt zip archive (" + what + ")");
  };
  const size_t n = b.size();
  if (n < 22) throw bad("too short");
  size_t eocd = std::string::npos;
  for (size_t i = n - 22 + 1; i-- > 0 && n - i <= 22 + 65535;) {
    if (u32(&b[i]) == 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) throw bad("no end-of-directory record: truncated?");
  uint64_t count = u16(&b[eocd + 10]), cdSize = u32(&b[eocd + 12]), cdOffset = u32(&b[eocd + 16]);
  if ((count == 0xFFFF || cdOffset == 0xFFFFFFFF) && eocd >= 20 &&
      u32(&b[eocd - 20]) == 0x07064b50) {
    const uint64_t z = u64(&b[eocd - 20 + 8]);
    if (n < 56 || z > n - 56 || u32(&b[z]) != 0x06064b50)
      throw bad("bad zip64 end-of-directory record");
    count = u64(&b[z + 32]);
    cdSize = u64(&b[z + 40]);
    cdOffset = u64(&b[z + 48]);
  }
  if (cdOffset > n || cdSize > n - cdOffset) throw bad("directory outside the file: truncated?");
  std::map<std::string, ZipEntry> entries;
  size_t p = cdOffset;
  for (uint64_t e = 0; e < count; ++e) {
    if (p + 46 > n || u32(&b[p]) != 0x02014b50) throw bad("bad directory entry");
    const uint16_t method = u16(&b[p + 10]);
    const uint32_t crc = u32(&b[p + 16]);
    uint64_t csize = u32(&b[p + 20]), usize = u32(&b[p + 24]);
    const size_t nameLen = u16(&b[p + 28]), extraLen = u16(&b[p + 30]),
                 commentLen = u16(&b[p + 32]);
    uint64_t local = u32(&b[p + 42]);
    if (p + 46 + nameLen + extraLen + commentLen > n)
      throw bad("directory entry runs past the end");
    const std::string name(reinterpret_cast<const char*>(&b[p + 46]), nameLen);
    // zip64 extra field: the 0xFFFFFFFF fields, in order
    for (size_t x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen;) {
      const uint16_t id = u16(&b[x]), len = u16(&b[x + 2]);
      if (x + 4 + len > p + 46 + nameLen + extraLen) break;
      if (id == 0x0001) {
        size_t y = x + 4;
        auto take = [&](uint64_t& field) {
          if (field == 0xFFFFFFFF && y + 8 <= x + 4 + len) {
            field = u64(&b[y]);
            y += 8;
          }
        };
        take(usize);
        take(csize);
        take(local);
      }
      x += 4 + len;
    }
    if (method != 0)
      throw Error(origin + ": zip entry '" + name + "' is compressed (method " +
                  std::to_string(method) + "); torch.save stores its entries uncompressed");
    if (csize != usize) throw bad("entry '" + name + "' sizes disagree");
    if (n < 30 || local > n - 30 || u32(&b[local]) != 0x04034b50)
      throw bad("entry '" + name + "' has no local header");
    const uint64_t data = local + 30 + u16(&b[local + 26]) + u16(&b[local + 28]);
    if (data > n || usize > n - data)
      throw bad("entry '" + name + "' runs past the end: truncated?");
    entries[name] = ZipEntry{data, usize, crc};
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

StoredStateDict parseZip(const ByteView& b, const std::string& origin) {
  auto entries = readZip(b, origin);
  std::string prefix;
  bool found = false;
  for (const auto& [name, e] : entries) {
    const std::string tail = "data.pkl";
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
  Unpickler u(&b[pkl.offset], pkl.size, origin + " (data.pkl)", out);
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

StoredStateDict parseLegacy(const ByteView& b, const std::string& origin) {
  StoredStateDict out;
  out.format = "legacy";
  size_t pos = 0;
  {  // magic number, protocol version, system info: small pickles of plain values
    StoredStateDict scratch;
    for (const char* what : {"magic number", "protocol version", "system info"}) {
      Unpickler u(b.data() + pos, b.size() - pos, origin + " (" + what + ")", scratch);
      const int v = u.load();
      if (std::string(what) == "magic number" &&
          (u.at(v).kind != Value::Int ||
           u.at(v).s != std::string("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10)))
        throw Error(origin + ": not a torch.save file (wrong magic number)");
      if (std::string(what) == "protocol version" &&
          (u.at(v).kind != Value::Int || u.at(v).i != 1001))
        throw Error(origin + ": unsupported legacy protocol version");
      if (std::string(what) == "system info") {
        const Value& d = u.at(v);
        for (size_t k = 0; k + 1 < d.items.size(); k += 2)
          if (u.at(d.items[k]).s == "little_endian" && u.at(d.items[k + 1]).i == 0)
            throw Error(origin +
                        ": saved on a big-endian machine; only little-endian files are read");
      }
      pos += u.consumed();
    }
  }
  Unpickler u(b.data() + pos, b.size() - pos, origin, out);
  const int root = u.load();
  pos += u.consumed();
  collect(u, root, origin, out);
  // The storage keys, in the order their bytes follow.
  StoredStateDict scratch;
  Unpickler keysU(b.data() + pos, b.size() - pos, origin + " (storage keys)", scratch);
  const int keysV = keysU.load();
  pos += keysU.consumed();
  const Value& keys = keysU.at(keysV);
  if (keys.kind != Value::List) throw Error(origin + ": storage key list is not a list");
  std::map<std::string, std::shared_ptr<const std::vector<uint8_t>>> data;
  for (int k : keys.items) {
    const Value& key = keysU.at(k);
    if (key.kind != Value::String) throw Error(origin + ": storage key is not a string");
    auto it = u.storages().find(key.s);
    if (it == u.storages().end())
      throw Error(origin + ": storage '" + key.s + "' is listed but never used");
    const Value& s = u.at(it->second);
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
