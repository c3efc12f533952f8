// RFC 6901 JSON Pointer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::json {

class Pointer {
 public:
  Pointer() = default;
  explicit Pointer(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}

  // "" is the whole document; otherwise "/"-separated tokens with ~0 and ~1 escapes.
  // Errors: json.pointer_invalid.
  static Result<Pointer> Parse(std::string_view text);
  static std::string EscapeToken(std::string_view token);

  const std::vector<std::string>& tokens() const { return tokens_; }
  bool empty() const { return tokens_.empty(); }
  std::string ToString() const;

  Pointer Child(std::string_view token) const;
  Pointer Child(std::size_t index) const;
  Pointer Parent() const;  // the whole document stays the whole document
  bool IsPrefixOf(const Pointer& other) const;

  // The value the pointer selects, or nullptr. Array tokens must be canonical decimal
  // indices ("0" or no leading zero); "-" never resolves.
  const Value* Resolve(const Value& document) const;
  Value* Resolve(Value& document) const;

  friend bool operator==(const Pointer&, const Pointer&) = default;
  friend auto operator<=>(const Pointer&, const Pointer&) = default;

 private:
  std::vector<std::string> tokens_;
};

}  // namespace udon::json
