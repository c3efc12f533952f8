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
  std::size_t array_begin = 0;  // found: the array's bytes are text[array_begin, array_end)
  std::size_t array_end = 0;
};

class ElementsMemo;

// Parse with every rule and error code of Parse, except that the elements of the array at
// /<outer>/<inner> (a member of the root object's member `outer`) are checked and not
// built: `value` holds that array empty, `elements` says where each one is. Why: of a
// tools/list page the gate needs every Tool's name and one Tool's bytes; building all of
// them costs thousands of allocations per page, and their release slows the next call.
// With `memo` (optional), an array whose bytes equal the memo's is not checked again (see
// ElementsMemo), and the memo then holds this text's array.
Result<PartialValue> ParseLeavingElements(std::string_view text, const ParseOptions& options,
                                          std::string_view outer, std::string_view inner,
                                          ElementsMemo* memo = nullptr);

// The array the last ParseLeavingElements through it left unbuilt, for the next one: a
// text that holds exactly those bytes where that array was (at the same offset, or as far
// from the end) needs only the rest of it checked. Bytes an array once passed every check
// with pass them again the same way, at the same place in the same options; the rest is
// parsed with the array as `[]` and must put the array exactly there, else (and on any
// error, any other bytes) the whole text is parsed as without a memo. The verdict, value
// and elements are the same either way. Not thread-safe: one per reader (a connection).
class ElementsMemo {
 public:
  std::size_t reused() const { return reused_; }  // texts whose array was not checked again

 private:
  friend Result<PartialValue> ParseLeavingElements(std::string_view, const ParseOptions&, std::string_view,
                                                   std::string_view, ElementsMemo*);
  bool Fits(const ParseOptions& options, std::string_view outer, std::string_view inner) const;
  // The text parsed with the remembered array as `[]`, when it holds that array where it
  // was; nullopt: parse the whole text.
  std::optional<PartialValue> Reuse(std::string_view text, const ParseOptions& options);
  void Remember(std::string_view text, const ParseOptions& options, std::string_view outer, std::string_view inner,
                const PartialValue& parsed);
  std::string outer_;
  std::string inner_;
  std::size_t max_depth_ = 0;
  std::string array_;                // its bytes; empty: nothing remembered
  std::vector<RawElement> elements_;  // offsets from the array's first byte
  std::size_t begin_ = 0;            // where it began in the last text
  std::size_t after_ = 0;            // the bytes after it in the last text
  std::size_t reused_ = 0;
};

}  // namespace udon::json
