#include "model/stages/cell_positions.h"

#include <cmath>

#include "base/error.h"

namespace foveal::core {

torch::Tensor sineGrid2d(int64_t rows, int64_t columns, int64_t dim) {
  if (dim % 4 != 0 || rows < 1 || columns < 1)
    throw Error("sine2d positions need a size divisible by 4 and a non-empty grid");
  const int64_t half = dim / 2;  // per axis: half / 2 frequencies, a sine and a cosine each
  auto k = torch::arange(half / 2, torch::kDouble);
  auto freq = torch::exp(-std::log(10000.0) * 2.0 * k / static_cast<double>(half));  // [half/2]
  auto axis = [&](int64_t n) {
    auto pos = torch::arange(n, torch::kDouble).unsqueeze(1) * freq.unsqueeze(0);  // [n, half/2]
    return torch::stack({pos.sin(), pos.cos()}, 2).reshape({n, half});  // sin, cos interleaved
  };
  auto r = axis(rows).unsqueeze(1).expand({rows, columns, half});
  auto c = axis(columns).unsqueeze(0).expand({rows, columns, half});
  return torch::cat({r, c}, 2).reshape({rows * columns, dim}).to(torch::kFloat);
}

void CellPositionsImpl::reset() { gain = register_parameter("gain", torch::zeros({1})); }

torch::Tensor CellPositionsImpl::forward(const torch::Tensor& x, int64_t rows, int64_t columns) {
  if (x.size(1) != rows * columns || x.size(2) != m_dim)
    throw Error("positions: regions [" + std::to_string(x.size(1)) + ", " +
                std::to_string(x.size(2)) + "] for a grid of " + std::to_string(rows) + " x " +
                std::to_string(columns) + " cells of size " + std::to_string(m_dim));
  auto e = sineGrid2d(rows, columns, m_dim).to(x.device(), x.scalar_type());
  return x + gain.to(x.scalar_type()) * e.unsqueeze(0);
}

}  // namespace foveal::core
