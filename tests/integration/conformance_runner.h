// The pinned @modelcontextprotocol/conformance harness in server mode, for the tests that
// run its scenarios against an HTTP endpoint (the demo server, `udon-mcp serve`).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "test_support.h"

namespace udon::testing {

// Runs with the pinned Node first on PATH (npm peers that start `node` get that one).
RunOptions PinnedNodeOptions();

// The Inspector CLI and the real hosts came after the other peers: a checkout whose
// tests/node_modules predates them skips the tests that need one (`path` missing), CI
// fails them.
#define UDON_REQUIRE_INSTALLED(path, what)                                   \
  do {                                                                       \
    if (access(std::string(path).c_str(), R_OK) != 0) {                      \
      if (std::getenv("CI") != nullptr) FAIL() << what << " is missing";     \
      GTEST_SKIP() << what << " is not installed (npm ci in tests/)";        \
    }                                                                        \
  } while (0)

// `conformance server --url URL --scenario SCENARIO -o RESULTS_DIR`, with
// `--spec-version SPEC_VERSION` unless it is empty (the harness default, 2025-11-25).
ProcessResult RunConformanceScenario(const std::string& url, const std::string& scenario,
                                     const std::string& spec_version, const std::string& results_dir);

}  // namespace udon::testing
