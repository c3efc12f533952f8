// The oracle of a fuzz target: a broken property aborts with a fixed description, which
// libFuzzer (and the replay driver, through the abort) reports as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>

#define UDON_FUZZ_CHECK(condition, what)                                            \
  do {                                                                              \
    if (!(condition)) {                                                             \
      std::fprintf(stderr, "fuzz oracle failed: %s (%s:%d)\n", what, __FILE__, __LINE__); \
      std::abort();                                                                 \
    }                                                                               \
  } while (false)
