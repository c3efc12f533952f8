// JSON with comments (VS Code's JSONC, and the files of hosts that tolerate it): reading it
// with the strict parser, and finding where a member's value lies in the text so that an
// edit can replace exactly those bytes and leave everything else (comments, order,
// indentation, line ends) as it was.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::adopt {

// The text with every // and /* */ comment and every trailing comma (before } or ])
// replaced by spaces (line ends kept), so offsets and lines stay those of the original.
// Errors: adopt.file_invalid (a comment or string that does not end).
Result<std::string> BlankJsonc(std::string_view text);

// BlankJsonc, then the strict parse (duplicate names refused). Errors: adopt.file_invalid
// (details.jsonCode names the parser's code).
Result<json::Value> ParseJsonc(std::string_view text);

// Where a member's value lies: text[begin, end). `key_begin` is where its name starts and
// `indent` the whitespace that starts the name's line.
struct ValueSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t key_begin = 0;
  std::string indent;
};

// The span of the value reached from the root object through the member names of `path`
// (every step an object member). `blanked` is BlankJsonc's output for the file; the offsets
// hold in the original text too. Errors: adopt.entry_missing (a name is not there),
// adopt.file_invalid.
Result<ValueSpan> FindMember(std::string_view blanked, const std::vector<std::string>& path);

// The members of the object whose value spans `span`, with the span of each value, in
// file order. Errors: adopt.file_invalid (not an object).
Result<std::vector<std::pair<std::string, ValueSpan>>> ObjectMembers(std::string_view blanked,
                                                                   const ValueSpan& span);

}  // namespace udon::adopt
