// The pinned @modelcontextprotocol/conformance harness in server mode, for the tests that
// run its scenarios against an HTTP endpoint (the demo server, `udon-mcp serve`).
#pragma once

#include <string>

#include "test_support.h"

namespace udon::testing {

// Runs with the pinned Node first on PATH (npm peers that start `node` get that one).
RunOptions PinnedNodeOptions();

// `conformance server --url URL --scenario SCENARIO -o RESULTS_DIR`, with
// `--spec-version SPEC_VERSION` unless it is empty (the harness default, 2025-11-25).
ProcessResult RunConformanceScenario(const std::string& url, const std::string& scenario,
                                     const std::string& spec_version, const std::string& results_dir);

}  // namespace udon::testing
