#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "json/internal/number.h"
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

// Keeps the one string it is given (the parser's events for a lone string).
class NameDecoder {
 public:
  bool OnBeginObject() { return false; }
  bool OnKey(const StringToken&) { return false; }
  bool OnEndObject() { return false; }
  bool OnBeginArray() { return false; }
  bool OnEndArray() { return false; }
  bool OnString(const StringToken& token) {
    name_.assign(token.text);
    return true;
  }
  bool OnNumber(const NumberToken&) { return false; }
  bool OnBool(bool) { return false; }
  bool OnNull() { return false; }
  std::pair<const char*, const char*> failure() const {
    return {"json.syntax", "not a string"};
  }
  std::string& name() { return name_; }

 private:
  std::string name_;
};

std::string DecodeMemberName(std::string_view written) {
  std::string quoted;
  quoted.reserve(written.size() + 2);
  quoted.append(1, '"').append(written).append(1, '"');
  NameDecoder decoder;
  const ParseOptions options;
  Parser<NameDecoder> parser(quoted, options, decoder);
  // Accepted once already, so it parses; were it not to, the name is left empty.
  (void)parser.Run();
  return std::move(decoder.name());
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
    const internal::StoredNumber number = internal::StoreNumber(token);
    switch (number.kind) {
      case internal::StoredNumber::Kind::kInteger: return Put(Value(number.integer)) != nullptr;
      case internal::StoredNumber::Kind::kUnsigned:
        return Put(Value(number.unsigned_integer)) != nullptr;
      case internal::StoredNumber::Kind::kFloat: break;
    }
    return Put(Value(number.number)) != nullptr;
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

// Member names of the objects inside elements left unbuilt, one level per open container,
// so duplicates are still refused there. Levels and their vectors are reused across
// elements; an object with many members switches to a hash set (no quadratic scan).
class KeyLevels {
 public:
  void Open() {
    if (depth_ == levels_.size()) levels_.emplace_back();
    Level& level = levels_[depth_++];
    level.names.clear();
    level.many.clear();
  }
  void Close() { --depth_; }
  // False when the innermost object already has this member name.
  bool Insert(std::string_view name) {
    Level& level = levels_[depth_ - 1];
    if (!level.many.empty()) return level.many.emplace(name).second;
    for (const std::string& seen : level.names) {
      if (seen == name) return false;
    }
    if (level.names.size() < kLinearLimit) {
      level.names.emplace_back(name);
      return true;
    }
    level.many.insert(level.names.begin(), level.names.end());
    return level.many.emplace(name).second;
  }

 private:
  static constexpr std::size_t kLinearLimit = 16;
  struct Level {
    std::vector<std::string> names;
    std::unordered_set<std::string> many;
  };
  std::vector<Level> levels_;
  std::size_t depth_ = 0;
};

// A DomBuilder that leaves the elements of one array (/outer/inner) unbuilt: inside them it
// only checks member names and notes each element's byte range and "name".
class PartialBuilder {
 public:
  PartialBuilder(std::string_view outer, std::string_view inner) : outer_(outer), inner_(inner) {}
  void Attach(const internal::Parser<PartialBuilder>* parser) { parser_ = parser; }

  bool OnBeginObject() { return Begin(/*is_object=*/true); }
  bool OnBeginArray() { return Begin(/*is_object=*/false); }
  bool OnEndObject() { return End(); }
  bool OnEndArray() { return End(); }

  bool OnKey(const internal::StringToken& token) {
    const std::string_view name = token.text;
    if (skip_depth_ > 0) {
      if (!keys_.Insert(name)) {
        duplicate_ = true;
        return false;
      }
      name_next_ = skip_depth_ == 1 && name == "name";
      return true;
    }
    if (depth_ == 1) outer_next_ = name == outer_;
    if (depth_ == 2 && in_outer_) inner_next_ = name == inner_;
    return dom_.OnKey(token);
  }

  bool OnString(const internal::StringToken& token) {
    if (skip_depth_ > 0) {
      if (name_next_) elements_.back().name.emplace(token.text);
      name_next_ = false;
      return true;
    }
    if (InTargetArray()) return Scalar();
    return dom_.OnString(token);
  }
  bool OnNumber(const internal::NumberToken& token) { return Skipped() || dom_.OnNumber(token); }
  bool OnBool(bool flag) { return Skipped() || dom_.OnBool(flag); }
  bool OnNull() { return Skipped() || dom_.OnNull(); }

  std::pair<const char*, const char*> failure() const {
    return duplicate_ ? std::pair<const char*, const char*>{"json.duplicate_key", "duplicate member name"}
                      : dom_.failure();
  }
  PartialValue Take() {
    return PartialValue{dom_.TakeRoot(), found_, std::move(elements_), array_begin_, array_end_};
  }

 private:
  bool InTargetArray() const { return in_target_ && depth_ == 3 && skip_depth_ == 0; }

  // A scalar value inside an element, or a scalar element itself: nothing to build.
  bool Skipped() {
    if (skip_depth_ > 0) {
      name_next_ = false;
      return true;
    }
    return InTargetArray() && Scalar();
  }
  bool Scalar() {
    elements_.emplace_back();
    return true;
  }

  bool Begin(bool is_object) {
    if (skip_depth_ == 0 && InTargetArray()) {
      RawElement& element = elements_.emplace_back();
      element.is_object = is_object;
      element.begin = parser_->offset() - 1;
    }
    if (skip_depth_ > 0 || InTargetArray()) {
      ++skip_depth_;
      keys_.Open();
      name_next_ = false;
      return true;
    }
    if (depth_ == 1 && outer_next_ && is_object) in_outer_ = true;
    if (depth_ == 2 && in_outer_ && inner_next_ && !is_object && !found_) {
      in_target_ = true;
      found_ = true;
      array_begin_ = parser_->offset() - 1;
    }
    outer_next_ = inner_next_ = false;
    ++depth_;
    return is_object ? dom_.OnBeginObject() : dom_.OnBeginArray();
  }

  bool End() {
    if (skip_depth_ > 0) {
      keys_.Close();
      if (--skip_depth_ == 0) elements_.back().end = parser_->offset();
      return true;
    }
    --depth_;
    if (depth_ == 2 && in_target_) {
      in_target_ = false;
      array_end_ = parser_->offset();
    }
    if (depth_ == 1) in_outer_ = false;
    return dom_.OnEndObject();  // the DOM closes arrays and objects alike
  }

  const internal::Parser<PartialBuilder>* parser_ = nullptr;
  std::string_view outer_;
  std::string_view inner_;
  DomBuilder dom_;
  KeyLevels keys_;
  std::vector<RawElement> elements_;
  std::size_t depth_ = 0;       // containers built so far and still open
  std::size_t skip_depth_ = 0;  // containers open inside the current unbuilt element
  bool outer_next_ = false;     // the next value is the root's member `outer`
  bool inner_next_ = false;     // the next value is the member `inner` of that
  bool in_outer_ = false;
  bool in_target_ = false;
  bool found_ = false;
  std::size_t array_begin_ = 0;
  std::size_t array_end_ = 0;
  bool name_next_ = false;      // the next value is an element's member "name"
  bool duplicate_ = false;
};

Result<PartialValue> ParseWithoutMemo(std::string_view text, const ParseOptions& options, std::string_view outer,
                                      std::string_view inner) {
  PartialBuilder builder(outer, inner);
  internal::Parser<PartialBuilder> parser(text, options, builder);
  builder.Attach(&parser);
  UDON_RETURN_IF_ERROR(parser.Run());
  return builder.Take();
}

}  // namespace

bool ElementsMemo::Fits(const ParseOptions& options, std::string_view outer, std::string_view inner) const {
  return !array_.empty() && max_depth_ == options.max_depth && outer_ == outer && inner_ == inner;
}

// Why the result is the one the whole text gives: the text before the array is the same
// in both, so the parser reaches the array's first byte in the same state; from there the
// remembered bytes, which once passed every check from that same state (the array at
// /outer/inner, at the same depth, under the same max_depth), end where the array ends,
// and nothing of an element's checks reaches outside it; after the array both texts go on
// alike. `[]` in its place must be the array the builder leaves unbuilt, at that offset.
std::optional<PartialValue> ElementsMemo::Reuse(std::string_view text, const ParseOptions& options) {
  // A text over the size limit fails as a whole, though it would fit without its array.
  if (options.max_bytes != 0 && text.size() > options.max_bytes) return std::nullopt;
  const std::size_t size = array_.size();
  if (text.size() < size + after_) return std::nullopt;
  // Where it was: the same offset (a longer or shorter text after it), or as far from the
  // end (a request id of another length before it).
  const std::size_t places[2] = {begin_, text.size() - size - after_};
  for (std::size_t i = 0; i < (places[0] == places[1] ? 1u : 2u); ++i) {
    const std::size_t at = places[i];
    if (at + size > text.size() || text.compare(at, size, array_) != 0) continue;
    std::string rest;
    rest.reserve(text.size() - size + 2);
    rest.append(text.substr(0, at)).append("[]").append(text.substr(at + size));
    auto parsed = ParseWithoutMemo(rest, options, outer_, inner_);
    if (!parsed.ok() || !parsed->found || parsed->array_begin != at || !parsed->elements.empty()) return std::nullopt;
    parsed->elements = elements_;
    for (RawElement& element : parsed->elements) {
      element.begin += at;
      element.end += at;
    }
    parsed->array_end = at + size;
    begin_ = at;
    after_ = text.size() - at - size;
    ++reused_;
    return std::move(parsed).value();
  }
  return std::nullopt;
}

void ElementsMemo::Remember(std::string_view text, const ParseOptions& options, std::string_view outer,
                            std::string_view inner, const PartialValue& parsed) {
  array_.clear();
  if (!parsed.found) return;
  outer_ = outer;
  inner_ = inner;
  max_depth_ = options.max_depth;
  array_ = text.substr(parsed.array_begin, parsed.array_end - parsed.array_begin);
  elements_ = parsed.elements;
  for (RawElement& element : elements_) {
    element.begin -= parsed.array_begin;
    element.end -= parsed.array_begin;
  }
  begin_ = parsed.array_begin;
  after_ = text.size() - parsed.array_end;
}

Result<PartialValue> ParseLeavingElements(std::string_view text, const ParseOptions& options,
                                          std::string_view outer, std::string_view inner, ElementsMemo* memo) {
  if (memo != nullptr && memo->Fits(options, outer, inner)) {
    if (auto reused = memo->Reuse(text, options)) return std::move(reused).value();
  }
  auto parsed = ParseWithoutMemo(text, options, outer, inner);
  if (memo != nullptr && parsed.ok()) memo->Remember(text, options, outer, inner, *parsed);
  return parsed;
}

Result<Value> Parse(std::string_view text, const ParseOptions& options) {
  DomBuilder builder;
  internal::Parser<DomBuilder> parser(text, options, builder);
  UDON_RETURN_IF_ERROR(parser.Run());
  return builder.TakeRoot();
}

}  // namespace udon::json
