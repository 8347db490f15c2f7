#pragma once
// Foveal's environment switches (FOVEAL_PLAIN_CONV, FOVEAL_PLAIN_LSTM, ...): a variable counts as
// set when it is present, not empty and not "0", so that VAR=0 and VAR= both mean "not set".
#include <cstdlib>
#include <cstring>

namespace foveal::core {

inline bool envSwitchSet(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

}  // namespace foveal::core
