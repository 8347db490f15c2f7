#pragma once
// Reading kraken's recognition models (github mittagessen/kraken) without Python and without
// LibTorch: both containers kraken writes, turned into one Torch-free structure that a VGSL
// network builder loads.
// - kraken 7 safetensors: an 8-byte little-endian header length, a JSON header (each tensor's
//   dtype, shape and byte range; `__metadata__` holding `kraken_meta`, a JSON object of one
//   metadata object per model, keyed by the model's uuid), then the tensor bytes. Tensor names
//   are `<uuid>.<torch state-dict name>`.
// - the CoreML protobuf (.mlmodel) of kraken <= 6 and eScriptorium: `description.metadata.
//   userDefined` holds "vgsl", "codec" and "kraken_meta" (JSON texts), and the "neuralNetwork"
//   layers hold the weights, mapped to torch state-dict names as kraken's loader does
//   (kraken/models/_coreml.py): `C_0_conv` -> `nn.C_0.co.{weight,bias}`, `O_1_lin` ->
//   `nn.O_1.lin.*`, an LSTM's four gates in the order i, f, z (torch's g), o with its one bias
//   vector as `bias_hh_l0` and a zero `bias_ih_l0`, a custom `groupnorm` -> `nn.Gn_1.layer.*`.
// Every failure is an Error naming the file and the record or field at fault.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace foveal::core {

/// One weight tensor, as float32 whatever the file stored.
struct KrakenTensor {
  std::vector<int64_t> shape;  ///< row-major, as torch has it
  std::vector<float> values;   ///< product(shape) values
  std::string storedAs;        ///< "F32", "F16", "BF16", "F64" (safetensors) or "coreml"
};

struct KrakenFile {
  std::string container;  ///< "safetensors" or "coreml"
  std::string vgsl;       ///< the VGSL spec string, e.g. "[1,48,0,1 Cr{C_0}3,3,32 ...]"
  /// kraken's metadata object for the model as JSON text, with the same keys for both
  /// containers: whatever the file holds (accuracy, metrics, seg_type, one_channel_mode,
  /// hyper_params, legacy_polygons, ...; safetensors adds _kraken_min_version, _tasks, _model),
  /// and always "vgsl" (a string), "codec" (an object: label string -> list of integer codes)
  /// and "model_type" (a list of strings, as kraken's loader makes it: safetensors from
  /// "_tasks", CoreML from kraken 6's single string). A CoreML file's "aux_layers" is added as
  /// an object when present. NaN and Infinity, which Python's json writes, read as null.
  std::string metaJson;
  /// By kraken's torch state-dict name without the uuid: "nn.C_0.co.weight".
  std::map<std::string, KrakenTensor> weights;
};

/// True when the first bytes (FileProbe::head(), 64 bytes) look like a kraken safetensors file:
/// a plausible header length, then a JSON object whose `__metadata__` holds `kraken_meta`
/// (the safetensors library writes `__metadata__` first). Cheap: looks at `head` only.
bool looksLikeSafetensors(const std::string& head);
/// True when the first bytes look like a CoreML model protobuf: an optional specification
/// version, then the model description with its inputs, outputs or metadata.
bool looksLikeCoreml(const std::string& head);

/// Reads either container (safe_read limits). Throws Error naming the file and the problem.
KrakenFile readKrakenFile(const std::string& path);
/// Parses the bytes of a kraken model file; `origin` names it in errors (the fuzzer's entry).
KrakenFile parseKrakenFile(const std::string& bytes, const std::string& origin);

}  // namespace foveal::core
