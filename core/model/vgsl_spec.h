#pragma once
// kraken's VGSL network description ("[1,48,0,1 Cr{C_0}3,3,32 Mp2,2 S1(1x0)1,3 Lbx100 O1c40]"),
// parsed into layers with the shapes kraken's TorchVGSLModel computes for them
// (kraken/lib/vgsl/model.py and layers.py: get_shape). Torch-free: the importer reads it, `info`
// prints it, and the feature stage "vgsl" builds its modules from it (vgsl_features.h). The layer
// kinds are those of kraken's recognition specs: convolution C (activations s t r l lr m),
// max pool Mp, reshape S, LSTM L (and G, which kraken builds as an LSTM too), dropout Do, group
// norm Gn and the 1-D output O1; any other kind (parallel blocks, transposed convolutions, the
// legacy clstm/ocropy LSTMs, addition, identity, wav2vec2, 2-D outputs) is refused by name.
#include <array>
#include <string>
#include <vector>

#include "model/geometry.h"

namespace foveal::core {

struct VgslLayer {
  enum class Kind { Conv, MaxPool, Reshape, Lstm, Dropout, GroupNorm, Output };
  Kind kind = Kind::Conv;
  std::string block;  ///< the spec's text of this layer ("Cr{C_0}3,3,32")
  std::string name;   ///< kraken's module name: "{name}" if given, else TYPE_INDEX ("C_0")
  // Conv: kernel (y, x), stride, dilation, out channels, activation ("s", "t", "r", "l", "lr",
  // "m"). MaxPool: kernel and stride.
  std::array<int, 2> kernel{1, 1}, stride{1, 1}, dilation{1, 1};
  int outChannels = 0;
  std::string activation;
  // Reshape (kraken's S<d>(<a>x<b>)<e>,<f>), in NCHW dimensions (kraken's dim_map applied).
  int srcDim = 0, partA = 0, partB = 0, high = 0, low = 0;
  // LSTM: hidden units per direction, bidirectional, along y (kraken's "transpose"), summarising.
  int hidden = 0;
  bool bidirectional = false, alongY = false, summarize = false;
  // Dropout: probability and dimensions (1 or 2). GroupNorm: groups.
  double p = 0.5;
  int dims = 1;
  int groups = 1;
  // Output: out classes, augmented input (a column of ones first), kraken's type letter.
  bool augmented = false;
  std::string outputType;
  /// NCHW shapes before and after the layer (0 = variable, as in kraken's spec).
  std::array<int, 4> inShape{}, outShape{};
  int inChannels() const { return inShape[1]; }
};

struct VgslSpec {
  std::string text;               ///< as given
  std::array<int, 4> input{};     ///< kraken's (batch, channels, height, width); 0 = variable
  std::vector<VgslLayer> layers;  ///< in order, the last one the output layer
  std::array<int, 4> output{};    ///< the network's NCHW output shape
  int inputHeight() const { return input[2]; }
  int inputChannels() const { return input[1]; }
  /// The last layer: the CTC projection (an O1 layer).
  const VgslLayer& outputLayer() const { return layers.back(); }
  /// Every layer but the last: what the feature stage "vgsl" runs.
  std::vector<VgslLayer> featureLayers() const { return {layers.begin(), layers.end() - 1}; }
  /// The channels of the feature stage's output (the output layer's input).
  int featureChannels() const { return layers.back().inChannels(); }
  /// The layer table of geometry.h for the receptive fields of the output columns (convolutions
  /// and pools; the reshape, LSTMs and outputs change no column's extent in x).
  std::vector<LayerSpec> geometryLayers() const;
  /// One line per layer, as `foveal-cli info` prints it.
  std::string describe() const;
};

/// Parses a VGSL spec. Throws Error naming `origin`, the layer and what is wrong: an unknown or
/// unsupported layer kind (by name), bad numbers, shapes that do not fit (a reshape that does not
/// divide, a convolution larger than its input), no output layer at the end, or an input of
/// variable height (kraken's recognition models fix it).
VgslSpec parseVgsl(const std::string& spec, const std::string& origin);

}  // namespace foveal::core
