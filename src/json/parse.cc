#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "json/internal/parser.h"
#include "json/json.h"

namespace udon::json {
namespace internal {

SourceLocation LocateOffset(std::string_view text, std::size_t offset) {
  SourceLocation location;
  location.offset = offset;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++location.line;
      line_start = i + 1;
    }
  }
  location.column = offset - line_start + 1;
  return location;
}

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out.push_back(c);
  }
  return out;
}

}  // namespace internal

namespace {

// Builds a Value; refuses duplicate member names as it inserts.
class DomBuilder {
 public:
  bool OnBeginObject() { return Open(Value::object()); }
  bool OnBeginArray() { return Open(Value::array()); }
  bool OnEndObject() { return Close(); }
  bool OnEndArray() { return Close(); }

  bool OnKey(const internal::StringToken& name) {
    if (stack_.back()->contains(name.text)) {
      failure_ = {"json.duplicate_key", "duplicate member name"};
      return false;
    }
    key_.assign(name.text);
    return true;
  }

  bool OnString(const internal::StringToken& token) {
    return Put(Value(std::string(token.text))) != nullptr;
  }
  bool OnBool(bool flag) { return Put(Value(flag)) != nullptr; }
  bool OnNull() { return Put(Value(nullptr)) != nullptr; }

  bool OnNumber(const internal::NumberToken& token) {
    if (token.has_magnitude) {
      constexpr std::uint64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
      if (!token.negative) {
        if (token.magnitude <= kInt64Max) {
          return Put(Value(static_cast<std::int64_t>(token.magnitude))) != nullptr;
        }
        return Put(Value(token.magnitude)) != nullptr;
      }
      // Down to -2^63; two's complement wraps 2^63 to INT64_MIN exactly.
      if (token.magnitude <= kInt64Max + 1) {
        return Put(Value(static_cast<std::int64_t>(0 - token.magnitude))) != nullptr;
      }
      return Put(Value(token.value)) != nullptr;
    }
    if (token.is_integer) {
      const char* first = token.text.data();
      const char* last = first + token.text.size();
      std::int64_t signed_value;
      if (auto r = std::from_chars(first, last, signed_value); r.ec == std::errc() && r.ptr == last) {
        return Put(Value(signed_value)) != nullptr;
      }
      std::uint64_t unsigned_value;
      if (auto r = std::from_chars(first, last, unsigned_value);
          r.ec == std::errc() && r.ptr == last) {
        return Put(Value(unsigned_value)) != nullptr;
      }
    }
    return Put(Value(token.value)) != nullptr;
  }

  std::pair<const char*, const char*> failure() const { return failure_; }
  Value TakeRoot() { return std::move(root_); }

 private:
  Value* Put(Value&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Value& parent = *stack_.back();
    if (parent.is_array()) {
      parent.get_ref<Value::array_t&>().push_back(std::move(value));
      return &parent.get_ref<Value::array_t&>().back();
    }
    auto& members = parent.get_ref<Value::object_t&>();
    return &members.emplace(std::move(key_), std::move(value)).first->second;
  }

  bool Open(Value&& container) {
    stack_.push_back(Put(std::move(container)));
    return true;
  }

  bool Close() {
    stack_.pop_back();
    return true;
  }

  Value root_;
  std::vector<Value*> stack_;
  std::string key_;
  std::pair<const char*, const char*> failure_{"json.syntax", "invalid JSON"};
};

}  // namespace

Result<Value> Parse(std::string_view text, const ParseOptions& options) {
  DomBuilder builder;
  internal::Parser<DomBuilder> parser(text, options, builder);
  UDON_RETURN_IF_ERROR(parser.Run());
  return builder.TakeRoot();
}

}  // namespace udon::json
