#pragma once
// Foveal's environment switches (FOVEAL_PLAIN_CONV, FOVEAL_PLAIN_LSTM, ...): a variable counts as
// set when it is present, not empty and not "0", so that VAR=0 and VAR= both mean "not set".
// The switches of paths that are on by default (FOVEAL_WINOGRAD, FOVEAL_CHANNELS_LAST, ...) turn
// them off with VAR=0 alone.
#include <cstdlib>
#include <cstring>

namespace foveal::core {

inline bool envSwitchSet(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

/// Whether `name` is "0": a default-on path switched off.
inline bool envSwitchOff(const char* name) {
  const char* v = std::getenv(name);
  return v && std::strcmp(v, "0") == 0;
}

}  // namespace foveal::core
