// The project's JSON value type and its strict parser.
//
// Every JSON text that crosses a trust boundary (manifests, UWS documents, MCP messages,
// schemas) is read with Parse, never with nlohmann::json::parse: duplicate member names
// must fail closed, because two readers of the same bytes must never see different values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

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

// One element of an array that ParseLeavingElements checked but did not build.
struct RawElement {
  bool is_object = false;
  std::size_t begin = 0;  // objects: the element's bytes are text[begin, end)
  std::size_t end = 0;
  std::optional<std::string> name;  // objects: the member "name", when it is a string
};

struct PartialValue {
  Value value;
  bool found = false;  // the array was there (and `value` holds it empty)
  std::vector<RawElement> elements;
};

// Parse with every rule and error code of Parse, except that the elements of the array at
// /<outer>/<inner> (a member of the root object's member `outer`) are checked and not
// built: `value` holds that array empty, `elements` says where each one is. Why: of a
// tools/list page the gate needs every Tool's name and one Tool's bytes; building all of
// them costs thousands of allocations per page, and their release slows the next call.
Result<PartialValue> ParseLeavingElements(std::string_view text, const ParseOptions& options,
                                          std::string_view outer, std::string_view inner);

}  // namespace udon::json
