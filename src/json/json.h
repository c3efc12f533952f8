// The project's JSON value type and its strict parser.
//
// Every JSON text that crosses a trust boundary (manifests, UWS documents, MCP messages,
// schemas) is read with Parse, never with nlohmann::json::parse: duplicate member names
// must fail closed, because two readers of the same bytes must never see different values.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "json/result.h"

namespace udon::json {

using Value = nlohmann::json;

// Nesting deeper than this is refused. 256 levels is far beyond any real tool schema or
// manifest and keeps every recursive consumer (canonicalizer, validator) stack-safe.
inline constexpr std::size_t kDefaultMaxDepth = 256;

struct ParseOptions {
  std::size_t max_depth = kDefaultMaxDepth;
  std::size_t max_bytes = 0;  // 0: no limit
};

// Error codes of the parser (component-internal; callers map them to contract codes):
//   json.syntax          malformed JSON
//   json.duplicate_key   an object has the same member name twice (compared after unescaping)
//   json.invalid_utf8    the bytes are not well-formed UTF-8
//   json.lone_surrogate  a \uD800-\uDFFF escape that is not part of a valid pair
//   json.number_overflow a number whose magnitude overflows IEEE-754 double
//   json.too_deep        nesting beyond ParseOptions::max_depth
//   json.trailing_bytes  anything but whitespace after the value
//   json.too_large       input above ParseOptions::max_bytes
// Every error carries the byte offset, line and column, and the pointer of the enclosing
// value. Integers that fit int64/uint64 become integers; all other numbers become doubles.
Result<Value> Parse(std::string_view text, const ParseOptions& options = {});

}  // namespace udon::json
