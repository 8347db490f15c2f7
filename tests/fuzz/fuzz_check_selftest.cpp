// The fuzz-check machinery checking itself: a harness with one invariant, "the input is not the
// three bytes `bad`". Run through replay_main by tests/fuzz/check_selftest.cmake, a good input must
// pass and `bad` must abort with the invariant's message; a missing input must be an error.
#include <cstdint>
#include <string>

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  FUZZ_CHECK(input != "bad", "the self-test input is never \"bad\"");
  return 0;
}
