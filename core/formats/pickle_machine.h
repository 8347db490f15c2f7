#pragma once
// The restricted pickle machine behind the torch.save reader (torch_file.h). It runs the opcodes
// of protocols 0-5 over one arena of values that refer to each other by index, so a pickle that
// makes a list contain itself leaks nothing and nothing walks it recursively. It is a security
// boundary, fuzzed (tests/fuzz/fuzz_torch_pickle): like `torch.load(weights_only=True)` it calls
// only the globals a state dict needs (dictionaries, tensors, storages, plain values) and refuses
// every other by name, and every tensor it rebuilds lies inside its storage. What a persistent id
// stands for belongs to the file format, so the caller says it through a callback.
// Torch-free; included by the format readers and their tests, nothing else.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats/torch_file.h"

namespace foveal::core {

/// One value the pickle built. Values live in the Unpickler's arena and name each other by index.
struct PickleValue {
  enum Kind { None, Bool, Int, Float, String, Bytes, Tuple, List, Dict, Global, Storage, Tensor };
  Kind kind = None;
  int64_t i = 0;
  double f = 0;
  std::string s;                          ///< String, Bytes, Global ("module.name"), Storage key
  std::vector<int> items;                 ///< Tuple, List; Dict: key, value, key, value...
  int tensor = -1;                        ///< Tensor: index into Unpickler::tensors()
  StoredType type = StoredType::Float32;  ///< Storage
  int64_t numel = 0;                      ///< Storage
};

/// The kind's name as errors spell it ("dict", "tensor").
const char* kindName(PickleValue::Kind k);

/// The element type of a storage global ("torch.FloatStorage"); false for any other name.
bool storageType(const std::string& global, StoredType& t);

/// Runs one pickle: `load()` reads from the first byte to STOP and returns the object's index.
class Unpickler {
 public:
  /// Turns the persistent id at arena index `id` into the value it stands for and returns that
  /// value's index; it refuses what it does not know through `fail()`.
  using PersistentLoad = std::function<int(Unpickler&, int id)>;

  /// `origin` names the pickle in errors; `data` must outlive the Unpickler.
  Unpickler(const uint8_t* data, size_t size, std::string origin, PersistentLoad persistentLoad);

  int load();

  const PickleValue& at(int i) const { return m_values[static_cast<size_t>(i)]; }
  /// Bytes read so far: in a legacy file the next pickle or the storages start there.
  size_t consumed() const { return static_cast<size_t>(m_p - m_begin); }
  /// Every tensor the pickle rebuilt, in order; a Tensor value indexes them. Their `storage` is
  /// the storage value's arena index, and their key is still empty.
  const std::vector<StoredTensor>& tensors() const { return m_tensors; }

  // For the persistent-id callback.
  /// Throws Error naming the origin and the byte reached.
  [[noreturn]] void fail(const std::string& what) const;
  /// Adds a value to the arena and returns its index (every reference into the arena may move).
  int make(PickleValue v);
  int64_t intOf(int i, const char* what);

 private:
  using Handler = void (Unpickler::*)(uint8_t op);
  static Handler handler(uint8_t op);

  // Reading the pickle's bytes.
  void need(size_t n) const;
  uint8_t byte();
  template <typename T>
  T le();
  std::string bytes(uint64_t n);
  std::string line();

  // The stack, its marks and the arena.
  void push(int v);
  int pop();
  int top();
  std::vector<int> popMark();
  PickleValue& val(int i) { return m_values[static_cast<size_t>(i)]; }
  int makeKind(PickleValue::Kind k);
  int makeInt(int64_t i);
  int makeBool(bool b);
  int makeFloat(double f);
  int makeStr(PickleValue::Kind k, std::string s);
  int makeLong(const std::string& b);
  int tuple(std::vector<int> items);
  std::vector<int64_t> intsOf(int i, const char* what);
  void setItem(int dict, int key, int value);

  // One member per opcode family; handler() says which runs an opcode.
  int stop();
  void framing(uint8_t op);
  void stackOp(uint8_t op);
  void constant(uint8_t op);
  void binaryNumber(uint8_t op);
  void textNumber(uint8_t op);
  void binaryString(uint8_t op);
  void textString(uint8_t op);
  void listOp(uint8_t op);
  void tupleOp(uint8_t op);
  void dictOp(uint8_t op);
  void memoPut(uint8_t op);
  void memoGet(uint8_t op);
  void global(uint8_t op);
  void call(uint8_t op);
  void persistentId(uint8_t op);
  [[noreturn]] void unsupported(uint8_t op) const;

  // The globals a REDUCE may call.
  int reduce(int callable, int args);
  int orderedDict(const std::vector<int>& args);
  int latin1Bytes(const std::vector<int>& args);
  int rebuildTensor(const std::vector<int>& args);

  const uint8_t* m_p;
  const uint8_t* m_end;
  const uint8_t* m_begin;
  std::string m_origin;
  PersistentLoad m_persistentLoad;
  std::vector<PickleValue> m_values;
  std::vector<int> m_stack;
  std::vector<size_t> m_marks;
  std::unordered_map<int64_t, int> m_memo;
  std::vector<StoredTensor> m_tensors;
};

}  // namespace foveal::core
