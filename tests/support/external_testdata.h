// Where the external test suites lie: scripts/testdata.sh puts them, checked against their
// pinned SHA-256, in the build tree (CTest runs it first, as the fixture `testdata`).
// Header-only, so the component tests use it without the process helpers.
#pragma once

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace udon::testing {

// The folder of SUITE ("jcs", "json-schema-test-suite") in the build tree.
inline std::string ExternalSuiteDir(const std::string& suite) {
  return std::string(UDON_BINARY_DIR) + "/testdata/" + suite;
}

// Success when SUITE is in place; otherwise one line that says how to get it. Use as
// ASSERT_TRUE(HaveExternalSuite("jcs")) before reading the suite.
inline ::testing::AssertionResult HaveExternalSuite(const std::string& suite) {
  if (std::filesystem::exists(ExternalSuiteDir(suite) + "/.verified")) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "the external test data '" << suite << "' is not in " << std::string(UDON_BINARY_DIR)
         << "/testdata: run scripts/testdata.sh --out " << std::string(UDON_BINARY_DIR)
         << "/testdata (it names the URL it downloads from, or use -DUDON_TESTDATA_DIR=DIR)";
}

}  // namespace udon::testing
