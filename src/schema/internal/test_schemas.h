// Test helpers the schema tests share: JSON text to a value, and a schema that must compile.
// Each failure is a test failure that names the text, not an exception.
#pragma once

#include <gtest/gtest.h>

#include <string_view>
#include <utility>

#include "json/json.h"
#include "schema/schema.h"

namespace udon::schema::testing {

inline json::Value J(std::string_view text) {
  auto parsed = json::Parse(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? std::move(parsed).value() : json::Value();
}

inline CompiledSchema MustCompile(std::string_view text, const CompileOptions& options = {}) {
  auto compiled = CompiledSchema::Compile(J(text), options);
  EXPECT_TRUE(compiled.ok()) << (compiled.ok() ? "" : compiled.error().Describe());
  if (!compiled.ok()) return std::move(CompiledSchema::Compile(json::Value(true)).value());
  return std::move(compiled).value();
}

}  // namespace udon::schema::testing
