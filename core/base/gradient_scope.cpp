#include "base/gradient_scope.h"

namespace foveal::core {

namespace {
thread_local bool t_inputGradientsOnly = false;
}

bool inputGradientsOnly() { return t_inputGradientsOnly; }

InputGradientsOnly::InputGradientsOnly() : previous_(t_inputGradientsOnly) {
  t_inputGradientsOnly = true;
}

InputGradientsOnly::~InputGradientsOnly() { t_inputGradientsOnly = previous_; }

}  // namespace foveal::core
