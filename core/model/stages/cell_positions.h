#pragma once
// The optional 2-D positional encoding of the regions (ModelConfig::positions "sine2d"): for a
// grid of R x M cells and D dimensions, the first D/2 dimensions carry sines and cosines of the
// cell's row, the last D/2 those of its column (DETR's 2-D sines, frequencies 1 /
// 10000^(2k/(D/2))). The encoding is added to the encoded regions times a learned gain that starts
// at 0: a model warm-started from one without positions begins exactly as that model.
#include <torch/nn/cloneable.h>

namespace foveal::core {

/// The encoding itself, [R * M, D] row by row (D divisible by 4).
torch::Tensor sineGrid2d(int64_t rows, int64_t columns, int64_t dim);

class CellPositionsImpl : public torch::nn::Cloneable<CellPositionsImpl> {
 public:
  explicit CellPositionsImpl(int64_t dim) : m_dim(dim) { reset(); }
  void reset() override;
  /// x [B, R * M, D] -> x + gain * encoding.
  torch::Tensor forward(const torch::Tensor& x, int64_t rows, int64_t columns);

  torch::Tensor gain;  ///< [1]

 private:
  int64_t m_dim;
};
TORCH_MODULE(CellPositions);

}  // namespace foveal::core
