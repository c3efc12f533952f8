// ECMA-262 regular expressions (the dialect JSON Schema names) on top of PCRE2.
//
// Patterns are translated where the two differ: "." excludes every ECMA line terminator,
// \s is the ECMA white-space set, \uXXXX and \u{...} escapes become code points, and PCRE
// extensions that ECMA lacks (possessive quantifiers, atomic groups, inline flags, \A, \Z,
// \Q...\E and friends) are refused. \d, \w and \b stay ASCII, as in ECMA. Matching is a
// search (unanchored) under match, depth and heap limits, so catastrophic backtracking ends
// as RegexOutcome::kLimit instead of a hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace udon::schema::internal {

enum class RegexOutcome { kMatch, kNoMatch, kLimit };

struct RegexLimits {
  std::size_t max_pattern_bytes = 16 * 1024;
  std::uint32_t match_limit = 1'000'000;
  std::uint32_t depth_limit = 10'000;
};

class Regex {
 public:
  // nullptr when the pattern is not a valid ECMA-262 regular expression (or too long; then
  // *too_long is set).
  static std::shared_ptr<const Regex> Compile(std::string_view pattern, const RegexLimits& limits,
                                              bool* too_long = nullptr);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  RegexOutcome Search(std::string_view subject) const;

 private:
  Regex() = default;
  void* code_ = nullptr;  // pcre2_code_8
  RegexLimits limits_;
  bool jit_ = false;
};

// The PCRE2 form of an ECMA-262 pattern, or false if the pattern is not ECMA-262.
bool TranslateEcmaPattern(std::string_view pattern, std::string* out);

}  // namespace udon::schema::internal
