// Test helper the adopt tests share: a host configuration file of tests/data/adopt/.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "base/file.h"

namespace udon::adopt::testing {

inline std::string Fixture(const std::string& name) {
  auto text = base::ReadFile(std::string(UDON_SOURCE_DIR) + "/tests/data/adopt/" + name);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

}  // namespace udon::adopt::testing
