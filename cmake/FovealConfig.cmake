# One INTERFACE target carries the language standard, warnings and Qt defines; every target links it.
add_library(foveal_config INTERFACE)
target_compile_features(foveal_config INTERFACE cxx_std_17)
set(CMAKE_CXX_EXTENSIONS OFF)
target_compile_options(foveal_config INTERFACE
  $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra -Wno-unused-parameter>)
# Torch uses `slots` as an identifier: Qt code spells Q_SLOTS / Q_SIGNALS / Q_EMIT.
target_compile_definitions(foveal_config INTERFACE
  QT_NO_KEYWORDS
  FOVEAL_VERSION="${PROJECT_VERSION}")
if(FOVEAL_WITH_OPENCV)
  target_compile_definitions(foveal_config INTERFACE FOVEAL_WITH_OPENCV=1)
endif()

# Sanitizers for the whole build (e.g. -DFOVEAL_SANITIZERS=address,undefined; see CMakePresets.json).
set(FOVEAL_SANITIZERS "" CACHE STRING "Comma-separated -fsanitize= list applied to every target")
# libFuzzer harnesses: needs clang; instruments core and data for coverage.
option(FOVEAL_FUZZ "Build the libFuzzer harnesses in tests/fuzz (clang only)" OFF)
set(_foveal_sanitize "${FOVEAL_SANITIZERS}")
if(FOVEAL_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "FOVEAL_FUZZ needs clang (use the 'fuzz' preset)")
  endif()
  set(_foveal_sanitize "fuzzer-no-link,address,undefined")
endif()
if(_foveal_sanitize)
  target_compile_options(foveal_config INTERFACE -fsanitize=${_foveal_sanitize}
    -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  string(REPLACE "fuzzer-no-link," "" _foveal_link_sanitize "${_foveal_sanitize}")
  target_link_options(foveal_config INTERFACE -fsanitize=${_foveal_link_sanitize})
endif()
