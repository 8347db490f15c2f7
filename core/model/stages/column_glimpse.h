#pragma once
// What the soft and hard glimpses share: c_t is a fixed mixture of the columns x_i (weighted by
// alpha_t, or the selected one), so the glimpse is its mixColumns() applied to x, and the
// decoder's latency path can apply the same mixture to the columns' gate contributions.
#include "model/stages/stage.h"

namespace foveal::core {

class ColumnGlimpse : public Glimpse {
 public:
  explicit ColumnGlimpse(int64_t dim) : m_dim(dim) {}
  GlimpseOutput glimpse(const GlimpseInput& in) override {
    return {mixColumns(in.x, in.alpha, in.selected)};
  }
  int64_t contextDim() const override { return m_dim; }
  bool mixesColumns() const override { return true; }

 private:
  int64_t m_dim;
};

}  // namespace foveal::core
