#pragma once
// Receptive-field arithmetic over a list of layer specs. The backbone builds its layers from the
// same list, so the region boxes drawn in traces are derived from the network, not hard-coded.
#include <vector>

namespace foveal::core {

struct Box {
  double x = 0, y = 0, w = 0, h = 0;
  bool operator==(const Box& o) const { return x == o.x && y == o.y && w == o.w && h == o.h; }
};

struct PointF {
  double x = 0, y = 0;
};

struct LayerSpec {
  enum class Kind { Conv, Pool };
  Kind kind = Kind::Conv;
  int kh = 3, kw = 3;      ///< kernel
  int sh = 1, sw = 1;      ///< stride
  int ph = 0, pw = 0;      ///< padding
  int outChannels = 0;     ///< Conv only
  bool batchNorm = false;  ///< Conv only: conv without bias + BN + ReLU
};

/// docs/DESIGN.md's VGG variant (CRNN / deep-text-recognition-benchmark), channels times `width`.
std::vector<LayerSpec> vggLayers(double width = 1.0);

/// The same VGG stopped before its last height collapse (the (2,1) pool and the 2x2 convolution
/// that take 4 rows to 1 at input height 32): the grid stage "vgg2d", 4 x 25 cells at 100x32, each
/// cell 8 px below the one above, as SAR's 1/8-height map (docs/ARCHITECTURE.md says why).
std::vector<LayerSpec> vggGridLayers(double width = 1.0);

/// Output channels of the last conv of vggLayers(width).
int vggOutChannels(double width);

/// DTRB's ResNet feature extractor's longest path (receptive fields), channels times `width`.
std::vector<LayerSpec> resnetLayers(double width = 1.0);
int resnetOutChannels(double width);

/// A channel count times `width`, even and at least 4: how every stage scales its layers.
int scaledChannels(int channels, double width);

struct ReceptiveField {
  int columns = 0;                ///< output width
  int rows = 0;                   ///< output height
  double sizeX = 0;               ///< receptive field width in input pixels
  double sizeY = 0;               ///< receptive field height in input pixels
  double jumpX = 0, jumpY = 0;    ///< input pixels between neighbouring outputs
  double startX = 0, startY = 0;  ///< centre of output (0,0), in pixel-index coordinates
  int inputW = 0, inputH = 0;
  /// True when the feature stage keeps its rows (a grid of rows x columns cells, the attention
  /// regions row by row); false when it averages them into one vector per column.
  bool grid = false;

  /// Box of column i (all its rows), pixel-edge coordinates, not clipped: [x, x+w) x [y, y+h).
  Box box(int column) const;
  /// The same box with its rows clipped to the image (the paper's "height clipped to 32").
  Box clippedBox(int column) const;
  std::vector<Box> clippedBoxes() const;

  // The attention regions: the columns (grid = false), or the cells row by row (region
  // r * columns + c is row r, column c). A grid with one row has the columns' regions.
  int regionRows() const { return grid ? rows : 1; }
  int regionCount() const { return regionRows() * columns; }
  /// Box of region i, not clipped.
  Box regionBox(int region) const;
  /// Region i's box with its rows clipped to the image.
  Box clippedRegionBox(int region) const;
  std::vector<Box> regionBoxes() const;
  /// Centre of region i's receptive field (pixel-edge coordinates, not clipped: a grid's rows
  /// have their own centres even where every cell's box, clipped, spans the whole height).
  PointF regionCentre(int region) const;
  std::vector<PointF> regionCentres() const;
  /// The tallest clipped region (the height region crops are sampled at).
  double regionHeight() const;
};

/// Walks the layers; throws Error when the input is too small to give at least one output.
ReceptiveField receptiveField(const std::vector<LayerSpec>& layers, int inputW, int inputH);

}  // namespace foveal::core
