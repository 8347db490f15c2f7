#pragma once
// Reading a `torch.save(state_dict)` file without Python and without LibTorch's own parser (which
// aborted the process on fuzzed input): both formats, the zip archive of PyTorch >= 1.6
// (`<name>/data.pkl` + `<name>/data/<key>` storages, zip_reader.h) and the legacy stream of older
// versions (magic, protocol, system info, the pickled object, the storage keys, then each storage
// as an int64 element count and its bytes). The pickles run on a restricted machine
// (pickle_machine.h): like `torch.load(weights_only=True)` it accepts only dictionaries, tensors,
// storages and plain values, and refuses any other pickled global by name.
// Torch-free: the importer (dtrb_import.h) turns the result into tensors.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace foveal::core {

enum class StoredType {
  Float32,
  Float64,
  Float16,
  BFloat16,
  Int64,
  Int32,
  Int16,
  Int8,
  UInt8,
  Bool
};
std::string toString(StoredType t);
int elementSize(StoredType t);

/// One tensor of the state dict, as the file describes it: a strided view of a storage.
struct StoredTensor {
  std::string key;
  StoredType type = StoredType::Float32;
  std::vector<int64_t> shape, stride;
  int64_t offset = 0;  ///< in elements, into the storage
  int storage = -1;    ///< index into StoredStateDict::storages
};

struct StoredStateDict {
  std::string format;                                                 ///< "zip" or "legacy"
  std::vector<StoredTensor> tensors;                                  ///< in file order
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> storages;  ///< raw little-endian bytes
  std::vector<std::string> otherKeys;  ///< entries that are plain values, not tensors
  /// Where the tensors were found: "" for the top-level dict, else the key of the nested dict
  /// ("state_dict", "model", ...).
  std::string nestedIn;
  /// A Lightning checkpoint's "hyper_parameters" beside its "state_dict": each value as JSON text
  /// ("[32, 128]", "\"0123...\"", "true"); empty when the file has none.
  std::map<std::string, std::string> hyperParameters;
  bool hasHyperParameters = false;
  /// What "hyper_parameters" holds when it is not a dictionary ("list", "str", "None"): such a
  /// file has no usable hyper-parameters, and a reader that needs them says so (not "absent").
  std::string hyperParametersKind;

  const StoredTensor* find(const std::string& key) const;
  /// Copies tensor `t` out of its storage as contiguous float32 values (row-major).
  std::vector<float> floats(const StoredTensor& t) const;
};

/// Parses the bytes of a torch.save file. `origin` names it in errors. Throws Error for anything
/// it cannot read or will not accept (naming the global, the record or the entry).
StoredStateDict parseTorchFile(const uint8_t* data, size_t size, const std::string& origin);
inline StoredStateDict parseTorchFile(const std::vector<uint8_t>& bytes,
                                      const std::string& origin) {
  return parseTorchFile(bytes.data(), bytes.size(), origin);
}
/// Reads the file (safe_read limits) and parses it.
StoredStateDict readTorchFile(const std::string& path);
/// True when the bytes start like a torch.save file (a zip or the legacy pickle magic).
bool looksLikeTorchFile(const std::string& head);

}  // namespace foveal::core
