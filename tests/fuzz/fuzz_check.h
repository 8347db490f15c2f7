#pragma once
// FUZZ_CHECK(condition, what): an invariant of a harness. When it does not hold, the harness says
// which one, where and why it matters, then aborts; libFuzzer reports the abort as a crash and
// saves the input that caused it. A thrown core::Error is not a failure: rejecting bad input with
// a clear message is what the readers must do.
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                                           \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: invariant failed: %s\n  (%s)\n", __FILE__, __LINE__, what, \
                   #condition);                                                               \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)
