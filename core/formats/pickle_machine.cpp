#include "formats/pickle_machine.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "base/error.h"

namespace foveal::core {

namespace {

constexpr size_t kMaxValues = 2'000'000;  // a DTRB state dict makes about 10,000
constexpr size_t kMaxStack = 100'000;

// The opcodes, named as Python's pickle.py names them (kBinInt1 is BININT1), by family.
constexpr uint8_t kStop = '.';
constexpr uint8_t kProto = 0x80, kFrame = 0x95;
constexpr uint8_t kMark = '(', kPop = '0', kPopMark = '1', kDup = '2';
constexpr uint8_t kNone = 'N', kNewTrue = 0x88, kNewFalse = 0x89;
constexpr uint8_t kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kLong1 = 0x8a, kLong4 = 0x8b,
                  kBinFloat = 'G';
constexpr uint8_t kInt = 'I', kLong = 'L', kFloat = 'F';
constexpr uint8_t kBinUnicode = 'X', kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kBinString = 'T',
                  kShortBinString = 'U', kBinBytes = 'B', kShortBinBytes = 'C', kBinBytes8 = 0x8e,
                  kByteArray8 = 0x96;
constexpr uint8_t kString = 'S', kUnicode = 'V';
constexpr uint8_t kEmptyList = ']', kEmptySet = 0x8f, kList = 'l', kFrozenSet = 0x91, kAppend = 'a',
                  kAppends = 'e', kAddItems = 0x90;
constexpr uint8_t kEmptyTuple = ')', kTuple = 't', kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87;
constexpr uint8_t kEmptyDict = '}', kDict = 'd', kSetItem = 's', kSetItems = 'u';
constexpr uint8_t kPut = 'p', kBinPut = 'q', kLongBinPut = 'r', kMemoize = 0x94;
constexpr uint8_t kGet = 'g', kBinGet = 'h', kLongBinGet = 'j';
constexpr uint8_t kGlobal = 'c', kStackGlobal = 0x93;
constexpr uint8_t kReduce = 'R', kNewObj = 0x81, kBuild = 'b';
constexpr uint8_t kPersId = 'P', kBinPersId = 'Q';

// INT, PUT and GET carry a decimal number on a line of their own.
bool parseInt(const std::string& s, long long& x) {
  char* end = nullptr;
  x = std::strtoll(s.c_str(), &end, 10);
  return !s.empty() && *end == '\0';
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

// The globals a state dict may name (as torch.load(weights_only=True) allows); the rest are
// refused with their name.
// Lightning's AttributeDict (a dict subclass: a checkpoint's hyper_parameters), by the modules
// Lightning has defined it in (pytorch_lightning 1.x; lightning_fabric and the unified lightning
// package since 1.9/2.0). Built as a plain dictionary; nothing of the class runs.
bool attributeDict(const std::string& g) {
  return g == "lightning_fabric.utilities.data.AttributeDict" ||
         g == "lightning.fabric.utilities.data.AttributeDict" ||
         g == "pytorch_lightning.utilities.parsing.AttributeDict";
}

bool allowedGlobal(const std::string& g) {
  StoredType t;
  if (attributeDict(g)) return true;
  return g == "collections.OrderedDict" || g == "torch._utils._rebuild_tensor_v2" ||
         g == "torch._utils._rebuild_tensor" || g == "torch._utils._rebuild_parameter" ||
         g == "torch._utils._rebuild_parameter_with_state" || g == "torch.Size" ||
         g == "_codecs.encode" || g == "builtins.set" || g == "__builtin__.set" ||
         storageType(g, t);
}

}  // namespace

const char* kindName(PickleValue::Kind k) {
  static const char* names[] = {"None",  "bool", "int",  "float",  "str",     "bytes",
                                "tuple", "list", "dict", "global", "storage", "tensor"};
  return names[k];
}

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

Unpickler::Unpickler(const uint8_t* data, size_t size, std::string origin,
                     PersistentLoad persistentLoad)
    : m_p(data),
      m_end(data + size),
      m_begin(data),
      m_origin(std::move(origin)),
      m_persistentLoad(std::move(persistentLoad)) {}

Unpickler::Handler Unpickler::handler(uint8_t op) {
  struct Family {
    Handler run;
    std::array<uint8_t, 9> opcodes;  // 0 pads: it is no opcode
  };
  static const Family families[] = {
      {&Unpickler::framing, {kProto, kFrame}},
      {&Unpickler::stackOp, {kMark, kPop, kPopMark, kDup}},
      {&Unpickler::constant, {kNone, kNewTrue, kNewFalse}},
      {&Unpickler::binaryNumber, {kBinInt, kBinInt1, kBinInt2, kLong1, kLong4, kBinFloat}},
      {&Unpickler::textNumber, {kInt, kLong, kFloat}},
      {&Unpickler::binaryString,
       {kBinUnicode, kShortBinUnicode, kBinUnicode8, kBinString, kShortBinString, kBinBytes,
        kShortBinBytes, kBinBytes8, kByteArray8}},
      {&Unpickler::textString, {kString, kUnicode}},
      {&Unpickler::listOp,
       {kEmptyList, kEmptySet, kList, kFrozenSet, kAppend, kAppends, kAddItems}},
      {&Unpickler::tupleOp, {kEmptyTuple, kTuple, kTuple1, kTuple2, kTuple3}},
      {&Unpickler::dictOp, {kEmptyDict, kDict, kSetItem, kSetItems}},
      {&Unpickler::memoPut, {kPut, kBinPut, kLongBinPut, kMemoize}},
      {&Unpickler::memoGet, {kGet, kBinGet, kLongBinGet}},
      {&Unpickler::global, {kGlobal, kStackGlobal}},
      {&Unpickler::call, {kReduce, kNewObj, kBuild}},
      {&Unpickler::persistentId, {kPersId, kBinPersId}},
  };
  static const std::array<Handler, 256> table = [] {
    std::array<Handler, 256> t{};
    for (const Family& f : families)
      for (uint8_t op : f.opcodes)
        if (op) t[op] = f.run;
    return t;
  }();
  return table[op];
}

int Unpickler::load() {
  for (;;) {
    const uint8_t op = byte();
    if (op == kStop) return stop();
    const Handler run = handler(op);
    if (!run) unsupported(op);
    (this->*run)(op);
  }
}

// ---------------------------------------------------------------------------------------------
// Reading, the stack and the arena.

void Unpickler::fail(const std::string& what) const {
  throw Error(m_origin + ": " + what + " (at byte " + std::to_string(m_p - m_begin) + ")");
}

void Unpickler::need(size_t n) const {
  if (static_cast<size_t>(m_end - m_p) < n) fail("truncated pickle");
}

uint8_t Unpickler::byte() {
  need(1);
  return *m_p++;
}

template <typename T>
T Unpickler::le() {
  need(sizeof(T));
  T v;
  std::memcpy(&v, m_p, sizeof(T));  // little-endian host (x86-64, aarch64); checked by the build
  m_p += sizeof(T);
  return v;
}

std::string Unpickler::bytes(uint64_t n) {
  if (n > static_cast<uint64_t>(m_end - m_p)) fail("truncated pickle (a string runs past the end)");
  std::string s(reinterpret_cast<const char*>(m_p), static_cast<size_t>(n));
  m_p += n;
  return s;
}

std::string Unpickler::line() {
  const uint8_t* nl =
      static_cast<const uint8_t*>(std::memchr(m_p, '\n', static_cast<size_t>(m_end - m_p)));
  if (!nl) fail("truncated pickle (a text line has no end)");
  std::string s(reinterpret_cast<const char*>(m_p), static_cast<size_t>(nl - m_p));
  m_p = nl + 1;
  return s;
}

void Unpickler::push(int v) {
  if (m_stack.size() >= kMaxStack) fail("pickle stack too deep");
  m_stack.push_back(v);
}

// Values below the innermost mark belong to an enclosing container under construction: only
// popMark() takes them.
int Unpickler::pop() {
  if (m_stack.empty() || (!m_marks.empty() && m_stack.size() <= m_marks.back()))
    fail("malformed pickle (pops an empty stack)");
  int v = m_stack.back();
  m_stack.pop_back();
  return v;
}

int Unpickler::top() {
  if (m_stack.empty() || (!m_marks.empty() && m_stack.size() <= m_marks.back()))
    fail("malformed pickle (reads an empty stack)");
  return m_stack.back();
}

std::vector<int> Unpickler::popMark() {
  if (m_marks.empty()) fail("malformed pickle (no mark)");
  const size_t at = m_marks.back();
  m_marks.pop_back();
  std::vector<int> items(m_stack.begin() + static_cast<long>(at), m_stack.end());
  m_stack.resize(at);
  return items;
}

int Unpickler::make(PickleValue v) {
  if (m_values.size() >= kMaxValues) fail("pickle holds too many objects");
  m_values.push_back(std::move(v));
  return static_cast<int>(m_values.size() - 1);
}

int Unpickler::makeKind(PickleValue::Kind k) {
  PickleValue v;
  v.kind = k;
  return make(std::move(v));
}

int Unpickler::makeInt(int64_t i) {
  PickleValue v;
  v.kind = PickleValue::Int;
  v.i = i;
  return make(std::move(v));
}

int Unpickler::makeBool(bool b) {
  PickleValue v;
  v.kind = PickleValue::Bool;
  v.i = b;
  return make(std::move(v));
}

int Unpickler::makeFloat(double f) {
  PickleValue v;
  v.kind = PickleValue::Float;
  v.f = f;
  return make(std::move(v));
}

int Unpickler::makeStr(PickleValue::Kind k, std::string s) {
  PickleValue v;
  v.kind = k;
  v.s = std::move(s);
  return make(std::move(v));
}

int Unpickler::makeLong(const std::string& b) {
  if (b.size() <= 8) return makeInt(longFromBytes(b));
  if (b.size() > 64)
    fail("integer too large for a state dict (" + std::to_string(b.size()) + " bytes)");
  PickleValue v;  // only the legacy format's magic number is this large: kept as its bytes
  v.kind = PickleValue::Int;
  v.s = b;
  return make(std::move(v));
}

int Unpickler::tuple(std::vector<int> items) {
  PickleValue v;
  v.kind = PickleValue::Tuple;
  v.items = std::move(items);
  return make(std::move(v));
}

int64_t Unpickler::intOf(int i, const char* what) {
  const PickleValue& v = val(i);
  if (v.kind == PickleValue::Int || v.kind == PickleValue::Bool) return v.i;
  fail(std::string("expected an int for ") + what + ", got " + kindName(v.kind));
}

std::vector<int64_t> Unpickler::intsOf(int i, const char* what) {
  const PickleValue& v = val(i);
  if (v.kind != PickleValue::Tuple && v.kind != PickleValue::List)
    fail(std::string("expected a tuple for ") + what + ", got " + kindName(v.kind));
  std::vector<int64_t> out;
  for (int x : v.items) out.push_back(intOf(x, what));
  return out;
}

void Unpickler::setItem(int dict, int key, int value) {
  PickleValue& d = val(dict);
  if (d.kind != PickleValue::Dict) fail(std::string("SETITEM on a ") + kindName(d.kind));
  d.items.push_back(key);
  d.items.push_back(value);
}

// ---------------------------------------------------------------------------------------------
// The opcode families.

int Unpickler::stop() {
  if (m_stack.size() != 1 || !m_marks.empty()) fail("malformed pickle (stack at STOP)");
  return m_stack.back();
}

void Unpickler::unsupported(uint8_t op) const {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", op);
  fail(std::string("unsupported pickle opcode ") + hex);
}

void Unpickler::framing(uint8_t op) {
  if (op == kProto)
    byte();
  else
    le<uint64_t>();  // FRAME: the frame's length; its opcodes follow
}

void Unpickler::stackOp(uint8_t op) {
  switch (op) {
    case kMark:
      m_marks.push_back(m_stack.size());
      break;
    case kPop:
      pop();
      break;
    case kPopMark:
      popMark();
      break;
    default:  // kDup
      push(top());
  }
}

void Unpickler::constant(uint8_t op) {
  push(op == kNone ? make(PickleValue{}) : makeBool(op == kNewTrue));
}

void Unpickler::binaryNumber(uint8_t op) {
  switch (op) {
    case kBinInt:
      push(makeInt(le<int32_t>()));
      break;
    case kBinInt1:
      push(makeInt(byte()));
      break;
    case kBinInt2:
      push(makeInt(le<uint16_t>()));
      break;
    case kLong1:
      push(makeLong(bytes(byte())));
      break;
    case kLong4: {
      const int32_t n = le<int32_t>();
      if (n < 0) fail("negative LONG4 length");
      push(makeLong(bytes(static_cast<uint64_t>(n))));
      break;
    }
    default: {  // kBinFloat: a big-endian double
      need(8);
      uint64_t u = 0;
      for (int k = 0; k < 8; ++k) u = (u << 8) | *m_p++;
      double f;
      std::memcpy(&f, &u, 8);
      push(makeFloat(f));
    }
  }
}

void Unpickler::textNumber(uint8_t op) {
  if (op == kFloat) {
    const std::string s = line();
    char* end = nullptr;
    const double x = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0') fail("bad float '" + s.substr(0, 40) + "'");
    push(makeFloat(x));
    return;
  }
  std::string s = line();  // INT or LONG; protocol 0 spells the booleans as INT 00 and 01
  if (!s.empty() && s.back() == 'L') s.pop_back();
  if (s == "00" || s == "01") {
    push(makeBool(s == "01"));
    return;
  }
  long long x;
  errno = 0;
  if (!parseInt(s, x) || errno != 0) fail("bad integer '" + s.substr(0, 40) + "'");
  push(makeInt(x));
}

void Unpickler::binaryString(uint8_t op) {
  switch (op) {
    case kBinUnicode:
      push(makeStr(PickleValue::String, bytes(le<uint32_t>())));
      break;
    case kShortBinUnicode:
    case kShortBinString:
      push(makeStr(PickleValue::String, bytes(byte())));
      break;
    case kBinUnicode8:
      push(makeStr(PickleValue::String, bytes(le<uint64_t>())));
      break;
    case kBinString: {
      const int32_t n = le<int32_t>();
      if (n < 0) fail("negative string length");
      push(makeStr(PickleValue::String, bytes(static_cast<uint64_t>(n))));
      break;
    }
    case kBinBytes:
      push(makeStr(PickleValue::Bytes, bytes(le<uint32_t>())));
      break;
    case kShortBinBytes:
      push(makeStr(PickleValue::Bytes, bytes(byte())));
      break;
    default:  // kBinBytes8, kByteArray8
      push(makeStr(PickleValue::Bytes, bytes(le<uint64_t>())));
  }
}

void Unpickler::textString(uint8_t op) {
  std::string s = line();
  if (op == kString) {  // repr of a str: 'text' or "text" (escapes are kept as they are)
    if (s.size() < 2 || (s.front() != '\'' && s.front() != '"') || s.back() != s.front())
      fail("bad STRING literal");
    s = s.substr(1, s.size() - 2);
  }
  push(makeStr(PickleValue::String, s));
}

// Sets are read as lists: a state dict only carries them as plain values.
void Unpickler::listOp(uint8_t op) {
  switch (op) {
    case kEmptyList:
    case kEmptySet:
      push(makeKind(PickleValue::List));
      break;
    case kList:
    case kFrozenSet: {
      PickleValue v;
      v.kind = PickleValue::List;
      v.items = popMark();
      push(make(std::move(v)));
      break;
    }
    case kAppend: {
      const int x = pop();
      PickleValue& l = val(top());
      if (l.kind != PickleValue::List) fail(std::string("APPEND to a ") + kindName(l.kind));
      l.items.push_back(x);
      break;
    }
    default: {  // kAppends, kAddItems
      auto items = popMark();
      PickleValue& l = val(top());
      if (l.kind != PickleValue::List) fail(std::string("APPENDS to a ") + kindName(l.kind));
      l.items.insert(l.items.end(), items.begin(), items.end());
    }
  }
}

void Unpickler::tupleOp(uint8_t op) {
  switch (op) {
    case kEmptyTuple:
      push(tuple({}));
      break;
    case kTuple:
      push(tuple(popMark()));
      break;
    case kTuple1: {
      const int a = pop();
      push(tuple({a}));
      break;
    }
    case kTuple2: {
      const int b = pop(), a = pop();
      push(tuple({a, b}));
      break;
    }
    default: {  // kTuple3
      const int c = pop(), b = pop(), a = pop();
      push(tuple({a, b, c}));
    }
  }
}

void Unpickler::dictOp(uint8_t op) {
  switch (op) {
    case kEmptyDict:
      push(makeKind(PickleValue::Dict));
      break;
    case kDict: {
      auto items = popMark();
      if (items.size() % 2) fail("DICT with an odd number of items");
      PickleValue v;
      v.kind = PickleValue::Dict;
      v.items = std::move(items);
      push(make(std::move(v)));
      break;
    }
    case kSetItem: {
      const int value = pop(), key = pop();
      setItem(top(), key, value);
      break;
    }
    default: {  // kSetItems
      auto items = popMark();
      if (items.size() % 2) fail("SETITEMS with an odd number of items");
      const int d = top();
      for (size_t k = 0; k < items.size(); k += 2) setItem(d, items[k], items[k + 1]);
    }
  }
}

// The stack's top is read before the index: an empty stack is reported at the opcode.
void Unpickler::memoPut(uint8_t op) {
  if (op == kPut) {
    long long k;
    if (!parseInt(line(), k)) fail("bad PUT index");
    m_memo[k] = top();
    return;
  }
  const int v = top();
  if (op == kBinPut)
    m_memo[byte()] = v;
  else if (op == kLongBinPut)
    m_memo[le<uint32_t>()] = v;
  else  // kMemoize: the next free index
    m_memo[static_cast<int64_t>(m_memo.size())] = v;
}

void Unpickler::memoGet(uint8_t op) {
  long long k;
  if (op == kGet) {
    if (!parseInt(line(), k)) fail("bad GET index");
  } else {
    k = op == kBinGet ? byte() : le<uint32_t>();
  }
  auto it = m_memo.find(k);
  if (it == m_memo.end())
    fail("pickle reads memo entry " + std::to_string(k) + " before it is written");
  push(it->second);
}

void Unpickler::global(uint8_t op) {
  std::string g;
  if (op == kGlobal) {
    const std::string module = line(), name = line();
    g = module + "." + name;
    if (!allowedGlobal(g))
      fail("refusing pickled global '" + g +
           "': a state dict holds only tensors and plain values (was the whole model saved "
           "instead of model.state_dict()?)");
  } else {  // kStackGlobal
    const int name = pop(), module = pop();
    if (val(name).kind != PickleValue::String || val(module).kind != PickleValue::String)
      fail("STACK_GLOBAL of non-strings");
    g = val(module).s + "." + val(name).s;
    if (!allowedGlobal(g)) fail("refusing pickled global '" + g + "'");
  }
  push(makeStr(PickleValue::Global, g));
}

void Unpickler::call(uint8_t op) {
  if (op == kBuild) {  // an OrderedDict's __dict__ (state_dict()._metadata); nothing else
    pop();
    const PickleValue& target = val(top());
    if (target.kind != PickleValue::Dict && target.kind != PickleValue::Tensor)
      fail(std::string("BUILD on a ") + kindName(target.kind));
    return;
  }
  // REDUCE callable(*args) and NEWOBJ cls.__new__(cls, *args): only the allowed globals.
  const int args = pop(), callable = pop();
  push(reduce(callable, args));
}

void Unpickler::persistentId(uint8_t op) {
  const int id = op == kBinPersId ? pop() : makeStr(PickleValue::String, line());
  push(m_persistentLoad(*this, id));
}

// ---------------------------------------------------------------------------------------------
// The globals a REDUCE may call.

int Unpickler::reduce(int callable, int args) {
  const PickleValue& c = val(callable);
  if (c.kind != PickleValue::Global) fail(std::string("REDUCE of a ") + kindName(c.kind));
  const PickleValue& a = val(args);
  if (a.kind != PickleValue::Tuple) fail("REDUCE arguments are not a tuple");
  // Copies: make() may move every value.
  const std::vector<int> items = a.items;
  const std::string g = c.s;
  if (g == "collections.OrderedDict") return orderedDict(items);
  if (attributeDict(g)) {  // NEWOBJ AttributeDict(): an empty dict that SETITEMS fills
    if (!items.empty()) fail("AttributeDict with constructor arguments");
    return makeKind(PickleValue::Dict);
  }
  if (g == "torch._utils._rebuild_tensor_v2" || g == "torch._utils._rebuild_tensor")
    return rebuildTensor(items);
  if (g == "torch._utils._rebuild_parameter" || g == "torch._utils._rebuild_parameter_with_state") {
    if (items.empty() || val(items[0]).kind != PickleValue::Tensor)
      fail("parameter without a tensor");
    return items[0];
  }
  if (g == "torch.Size") {
    if (items.size() != 1) fail("torch.Size with wrong arguments");
    return items[0];
  }
  if (g == "_codecs.encode") return latin1Bytes(items);
  if (g == "builtins.set" || g == "__builtin__.set") {
    PickleValue v;
    v.kind = PickleValue::List;
    if (!items.empty()) v.items = val(items[0]).items;
    return make(std::move(v));
  }
  fail("refusing to call pickled global '" + g + "'");
}

int Unpickler::orderedDict(const std::vector<int>& args) {
  PickleValue d;
  d.kind = PickleValue::Dict;
  if (!args.empty()) {  // OrderedDict([(k, v), ...])
    const PickleValue& pairs = val(args[0]);
    if (pairs.kind != PickleValue::List && pairs.kind != PickleValue::Tuple)
      fail("OrderedDict of a non-list");
    for (int p : pairs.items) {
      const PickleValue& kv = val(p);
      if (kv.kind != PickleValue::Tuple || kv.items.size() != 2)
        fail("OrderedDict item is not a pair");
      d.items.push_back(kv.items[0]);
      d.items.push_back(kv.items[1]);
    }
  }
  return make(std::move(d));
}

// Python 3 pickles bytes at protocol 2 as _codecs.encode(latin-1 text): each code point (one or
// two bytes of UTF-8 below 0x100) is one byte.
int Unpickler::latin1Bytes(const std::vector<int>& args) {
  if (args.empty() || val(args[0]).kind != PickleValue::String)
    fail("_codecs.encode of a non-string");
  const std::string& u = val(args[0]).s;
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
  return makeStr(PickleValue::Bytes, out);
}

// (storage, offset, size, stride, ...): the later arguments (requires_grad, hooks) do not matter
// to the values.
int Unpickler::rebuildTensor(const std::vector<int>& args) {
  if (args.size() < 4) fail("tensor with too few arguments");
  const PickleValue& storage = val(args[0]);
  if (storage.kind != PickleValue::Storage)
    fail(std::string("tensor over a ") + kindName(storage.kind) + ", not a storage");
  StoredTensor t;
  t.type = storage.type;
  t.offset = intOf(args[1], "tensor offset");
  t.shape = intsOf(args[2], "tensor size");
  t.stride = intsOf(args[3], "tensor stride");
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
  t.storage = args[0];  // the arena index; the reader renumbers it when it reads the storages
  m_tensors.push_back(std::move(t));
  PickleValue v;
  v.kind = PickleValue::Tensor;
  v.tensor = static_cast<int>(m_tensors.size() - 1);
  return make(std::move(v));
}

}  // namespace foveal::core
