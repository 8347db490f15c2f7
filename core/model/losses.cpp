#include "model/losses.h"

namespace foveal::core {

double MovingBaseline::update(double r) {
  m_value = m_initialised ? m_momentum * m_value + (1.0 - m_momentum) * r : r;
  m_initialised = true;
  return m_value;
}

}  // namespace foveal::core
