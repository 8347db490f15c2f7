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
