// Evaluation of a compiled node graph against an instance.
//
// One Evaluator per Validate/IsValid call holds all mutable state, so a Graph is shared
// read-only between threads. Locations are only built when errors are collected; the
// evaluated-property/item bookkeeping only exists below a node with unevaluated*.
#include "schema/internal/validate.h"

#include "json/pointer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>

namespace udon::schema::internal {
namespace {

template <class View>
bool IsIntegral(const View& instance) {
  if (!instance.IsFloat()) return true;
  double d = instance.Number();
  return std::isfinite(d) && std::trunc(d) == d;
}

template <class View>
bool TypeMatches(std::uint8_t mask, std::uint8_t bit, const View& instance) {
  if ((mask & bit) != 0) return true;
  return bit == kNumber && (mask & kInteger) != 0 && IsIntegral(instance);
}

// std::string::compare order (unsigned bytes), inline: member names are short and this
// runs for every member of every object, where a call to memcmp costs more than the loop.
inline int CompareNames(std::string_view a, std::string_view b) {
  const std::size_t n = a.size() < b.size() ? a.size() : b.size();
  const auto* p = reinterpret_cast<const unsigned char*>(a.data());
  const auto* q = reinterpret_cast<const unsigned char*>(b.data());
  for (std::size_t i = 0; i < n; ++i) {
    if (p[i] != q[i]) return p[i] < q[i] ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

bool ContainsName(const std::vector<std::string>& sorted, std::string_view name) {
  if (sorted.size() <= 16) {
    for (const std::string& option : sorted) {
      if (option.size() == name.size() && CompareNames(option, name) == 0) return true;
    }
    return false;
  }
  std::size_t low = 0, high = sorted.size();
  while (low < high) {
    std::size_t middle = (low + high) / 2;
    int order = CompareNames(sorted[middle], name);
    if (order == 0) return true;
    if (order < 0) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return false;
}

// Code points of well-formed UTF-8: the bytes minus the continuation bytes (10xxxxxx),
// counted eight at a time.
std::size_t CodePoints(std::string_view text) {
  const std::size_t n = text.size();
  const char* p = text.data();
  std::size_t continuation = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    // Bit 7 set and bit 6 clear in a byte; the shift never carries into another bit 7.
    std::uint64_t marks = word & ~(word << 1) & 0x8080808080808080ULL;
    // Most text is ASCII, and without -mpopcnt the count is a library call.
    if (marks != 0) continuation += static_cast<std::size_t>(__builtin_popcountll(marks));
  }
  for (; i < n; ++i) continuation += (static_cast<unsigned char>(p[i]) & 0xC0) == 0x80;
  return n - continuation;
}

// Sign of instance - limit, exactly for integers, otherwise in double precision.
template <class View>
int Compare(const View& instance, const Keyword& keyword) {
  if (keyword.is_integer) {
    if (instance.IsInteger()) {
      std::int64_t value = instance.Integer();
      return value < keyword.integer ? -1 : (value > keyword.integer ? 1 : 0);
    }
    if (instance.IsUnsigned()) {
      if (keyword.integer < 0) return 1;
      std::uint64_t value = instance.Unsigned();
      auto limit = static_cast<std::uint64_t>(keyword.integer);
      return value < limit ? -1 : (value > limit ? 1 : 0);
    }
  }
  double value = instance.Number();
  return value < keyword.number ? -1 : (value > keyword.number ? 1 : 0);
}

template <class View>
bool IsMultiple(const View& instance, const Keyword& keyword) {
  if (keyword.is_integer) {
    if (instance.IsInteger()) return instance.Integer() % keyword.integer == 0;
    if (instance.IsUnsigned()) {
      return instance.Unsigned() % static_cast<std::uint64_t>(keyword.integer) == 0;
    }
  }
  double value = instance.Number();
  if (!std::isfinite(value)) return false;
  double quotient = value / keyword.number;
  if (!std::isfinite(quotient)) return std::fmod(value, keyword.number) == 0;
  // Decimal multiples (0.0075 of 0.0001) are not exact in binary: allow rounding noise.
  return std::fabs(quotient - std::round(quotient)) < 1e-9;
}

// JSON equality (const, enum, uniqueItems) between any two views: numbers by value (1 and
// 1.0 are equal; an int64 and a uint64 only when both are the same non-negative integer),
// objects by their sorted members.
template <class A, class B>
bool NumbersEqual(const A& a, const B& b) {
  if (a.IsFloat() || b.IsFloat()) return a.Number() == b.Number();
  if (a.IsInteger() && b.IsInteger()) return a.Integer() == b.Integer();
  if (a.IsUnsigned() && b.IsUnsigned()) return a.Unsigned() == b.Unsigned();
  const std::int64_t signed_value = a.IsInteger() ? a.Integer() : b.Integer();
  const std::uint64_t unsigned_value = a.IsUnsigned() ? a.Unsigned() : b.Unsigned();
  return signed_value >= 0 && static_cast<std::uint64_t>(signed_value) == unsigned_value;
}

template <class A, class B>
bool Equal(const A& a, const B& b) {
  const std::uint8_t bit = a.Bit();
  if (bit != b.Bit()) return false;
  switch (bit) {
    case kNull: return true;
    case kBoolean: return a.Bool() == b.Bool();
    case kNumber: return NumbersEqual(a, b);
    case kString: return a.String() == b.String();
    case kArray: {
      const std::size_t size = a.Size();
      if (size != b.Size()) return false;
      for (std::size_t i = 0; i < size; ++i) {
        if (!Equal(a.Item(i), b.Item(i))) return false;
      }
      return true;
    }
    case kObject: {
      if (a.Size() != b.Size()) return false;
      auto x = a.FirstMember();
      auto y = b.FirstMember();
      for (; !x.Done(); x.Next(), y.Next()) {
        if (x.Name() != y.Name() || !Equal(x.Value(), y.Value())) return false;
      }
      return true;
    }
    default: return false;
  }
}

// A hash consistent with Equal (1 and 1.0 hash alike).
template <class View>
std::size_t HashValue(const View& value) {
  const std::uint8_t bit = value.Bit();
  std::size_t seed = static_cast<std::size_t>(bit) * 0x9E3779B97F4A7C15ULL;
  auto mix = [&seed](std::size_t h) { seed ^= h + 0x9E3779B97F4A7C15ULL + (seed << 6) + (seed >> 2); };
  switch (bit) {
    case kBoolean: mix(value.Bool()); break;
    case kString: mix(std::hash<std::string_view>()(value.String())); break;
    case kNumber: {
      double d = value.Number();
      mix(std::hash<double>()(d == 0 ? 0.0 : d));
      break;
    }
    case kArray:
      for (std::size_t i = 0; i < value.Size(); ++i) mix(HashValue(value.Item(i)));
      break;
    case kObject:
      for (auto member = value.FirstMember(); !member.Done(); member.Next()) {
        mix(std::hash<std::string_view>()(member.Name()));
        mix(HashValue(member.Value()));
      }
      break;
    default: break;
  }
  return seed;
}

template <class View>
bool AllUnique(const View& array) {
  std::size_t size = array.Size();
  if (size < 2) return true;
  if (size <= 16) {
    for (std::size_t i = 0; i < size; ++i) {
      for (std::size_t j = i + 1; j < size; ++j) {
        if (Equal(array.Item(i), array.Item(j))) return false;
      }
    }
    return true;
  }
  std::vector<std::pair<std::size_t, std::size_t>> hashes;
  hashes.reserve(size);
  for (std::size_t i = 0; i < size; ++i) hashes.emplace_back(HashValue(array.Item(i)), i);
  std::sort(hashes.begin(), hashes.end());
  for (std::size_t i = 0; i < size; ++i) {
    for (std::size_t j = i + 1; j < size && hashes[j].first == hashes[i].first; ++j) {
      if (Equal(array.Item(hashes[i].second), array.Item(hashes[j].second))) return false;
    }
  }
  return true;
}

}  // namespace

void Annotations::MarkProperty(std::size_t index, std::size_t size) {
  if (properties.size() < size) properties.resize(size, false);
  properties[index] = true;
}

void Annotations::MarkItem(std::size_t index, std::size_t size) {
  if (items.size() < size) items.resize(size, false);
  items[index] = true;
}

void Annotations::MergeFrom(const Annotations& other) {
  if (properties.size() < other.properties.size()) properties.resize(other.properties.size());
  for (std::size_t i = 0; i < other.properties.size(); ++i) {
    if (other.properties[i]) properties[i] = true;
  }
  if (items.size() < other.items.size()) items.resize(other.items.size());
  for (std::size_t i = 0; i < other.items.size(); ++i) {
    if (other.items[i]) items[i] = true;
  }
}

template <class View>
Evaluator<View>::Evaluator(const Graph& graph, ValidationResult* result)
    : graph_(graph), result_(result), collect_(result != nullptr) {}

template <class View>
bool Evaluator<View>::Run(View instance) {
  bool valid = Eval(*graph_.root, instance, nullptr);
  if (limit_ && result_ != nullptr) {
    result_->limit_error = MakeError("schema.limit_exceeded", limit_message_);
  }
  return valid && !limit_;
}

template <class View>
void Evaluator<View>::HitLimit(const char* message) {
  if (!limit_) limit_message_ = message;
  limit_ = true;
}

template <class View>
void Evaluator<View>::Fail(const Node& node, std::string_view keyword_path, const char* message) {
  if (!collect_) return;
  OutputUnit unit;
  unit.keyword_location = keyword_path_;
  unit.absolute_keyword_location = node.location;
  if (!keyword_path.empty()) {
    unit.keyword_location += "/";
    unit.keyword_location += keyword_path;
    unit.absolute_keyword_location += "/";
    unit.absolute_keyword_location += keyword_path;
  }
  unit.instance_location = instance_path_;
  unit.error = message;
  result_->errors.push_back(std::move(unit));
}

template <class View>
std::size_t Evaluator<View>::ErrorMark() const { return collect_ ? result_->errors.size() : 0; }

template <class View>
void Evaluator<View>::DropErrors(std::size_t mark) {
  if (collect_) result_->errors.resize(mark);
}

template <class View>
bool Evaluator<View>::EvalChild(const Node& node, View instance, Annotations* annotations,
                          std::string_view keyword_path, std::string_view instance_token) {
  if (!collect_) return Eval(node, instance, annotations);
  std::size_t keyword_size = keyword_path_.size();
  std::size_t instance_size = instance_path_.size();
  keyword_path_ += "/";
  keyword_path_ += keyword_path;
  if (instance_token.data() != nullptr) {  // a default string_view: same instance
    instance_path_ += "/";
    instance_path_ += json::Pointer::EscapeToken(instance_token);
  }
  bool valid = Eval(node, instance, annotations);
  keyword_path_.resize(keyword_size);
  instance_path_.resize(instance_size);
  return valid;
}

template <class View>
bool Evaluator<View>::EvalLeaf(const Node& node, View instance) {
  std::uint8_t bit = instance.Bit();
  if (node.type_mask != 0 && !TypeMatches(node.type_mask, bit, instance)) return false;
  for (const Keyword& keyword : node.keywords) {
    if (keyword.applies_to != 0 && (keyword.applies_to & bit) == 0) continue;
    // The commonest scalar checks inline; everything else through EvalKeyword.
    bool ok;
    switch (keyword.kind) {
      case KeywordKind::kLength: {
        std::size_t length = CodePoints(instance.String());
        ok = length >= keyword.count && (!keyword.has_max || length <= keyword.max_count);
        break;
      }
      case KeywordKind::kMinimum: ok = Compare(instance, keyword) >= 0; break;
      case KeywordKind::kMaximum: ok = Compare(instance, keyword) <= 0; break;
      case KeywordKind::kEnum:
        ok = keyword.flag ? instance.IsString() &&
                                ContainsName(keyword.strings, instance.String())
                          : EvalKeyword(node, keyword, instance, nullptr);
        break;
      default: ok = EvalKeyword(node, keyword, instance, nullptr); break;
    }
    if (!ok) return false;
  }
  return !limit_;
}

template <class View>
bool Evaluator<View>::EvalNode(const Node& node, View instance, Annotations* annotations) {
  if (limit_) return false;
  if (node.trivial == Node::Trivial::kTrue) return true;
  if (node.trivial == Node::Trivial::kFalse) {
    Fail(node, "", "the false schema rejects every instance");
    return false;
  }
  if (++depth_ > graph_.max_depth) {
    --depth_;
    HitLimit("evaluation nested deeper than the limit");
    return false;
  }
  bool pushed_scope = false;
  if (graph_.uses_dynamic_scope && (dynamic_scope_.empty() || dynamic_scope_.back() != node.resource)) {
    dynamic_scope_.push_back(node.resource);
    pushed_scope = true;
  }
  std::uint8_t bit = instance.Bit();
  bool valid = true;
  if (node.type_mask != 0 && !TypeMatches(node.type_mask, bit, instance)) {
    Fail(node, "type", "the instance has a type the schema does not allow");
    valid = false;
  }
  if (valid || collect_) {
    std::optional<Annotations> local;
    Annotations* used = annotations;
    if ((node.collects_properties && bit == kObject) || (node.collects_items && bit == kArray)) {
      used = &local.emplace();
    }
    for (const Keyword& keyword : node.keywords) {
      if (keyword.applies_to != 0 && (keyword.applies_to & bit) == 0) continue;
      if (!EvalKeyword(node, keyword, instance, used)) {
        valid = false;
        if (!collect_ || limit_) break;
      }
    }
    if (valid && local && annotations != nullptr) annotations->MergeFrom(*local);
  }
  if (pushed_scope) dynamic_scope_.pop_back();
  --depth_;
  return valid && !limit_;
}

template <class View>
bool Evaluator<View>::FollowRef(const Node& target, View instance,
                          Annotations* annotations, std::string_view keyword) {
  // The same target on the same instance further up the stack: a cycle that makes no
  // progress and would never end.
  for (auto it = ref_stack_.rbegin(); it != ref_stack_.rend() && it->second == instance.Identity(); ++it) {
    if (it->first == &target) {
      HitLimit("a reference cycle makes no progress through the instance");
      return false;
    }
  }
  ref_stack_.emplace_back(&target, instance.Identity());
  bool valid = EvalChild(target, instance, annotations, keyword, std::string_view());
  ref_stack_.pop_back();
  return valid;
}

template <class View>
bool Evaluator<View>::EvalKeyword(const Node& node, const Keyword& keyword, View instance,
                            Annotations* annotations) {
  switch (keyword.kind) {
    case KeywordKind::kConst:
      if (Equal(instance, ValueView(keyword.value))) return true;
      Fail(node, "const", "the instance differs from the constant");
      return false;
    case KeywordKind::kEnum:
      if (keyword.flag) {
        if (instance.IsString() &&
            ContainsName(keyword.strings, instance.String())) {
          return true;
        }
      } else {
        for (const auto& option : keyword.value) {
          if (Equal(instance, ValueView(option))) return true;
        }
      }
      Fail(node, "enum", "the instance is not one of the enumerated values");
      return false;
    case KeywordKind::kLength: {
      std::size_t length = CodePoints(instance.String());
      if (length < keyword.count) {
        Fail(node, "minLength", "the string is shorter than the minimum length");
        return false;
      }
      if (keyword.has_max && length > keyword.max_count) {
        Fail(node, "maxLength", "the string is longer than the maximum length");
        return false;
      }
      return true;
    }
    case KeywordKind::kPattern:
      switch (keyword.regex->Search(instance.String())) {
        case RegexOutcome::kMatch: return true;
        case RegexOutcome::kNoMatch:
          Fail(node, "pattern", "the string does not match the pattern");
          return false;
        case RegexOutcome::kLimit:
          HitLimit("a pattern exceeded the regular expression match limit");
          return false;
      }
      return false;
    case KeywordKind::kFormat:
      if (keyword.format(instance.String())) return true;
      Fail(node, "format", "the string is not in the required format");
      return false;
    case KeywordKind::kMinimum:
      if (Compare(instance, keyword) >= 0) return true;
      Fail(node, "minimum", "the number is less than the minimum");
      return false;
    case KeywordKind::kMaximum:
      if (Compare(instance, keyword) <= 0) return true;
      Fail(node, "maximum", "the number is greater than the maximum");
      return false;
    case KeywordKind::kExclusiveMinimum:
      if (Compare(instance, keyword) > 0) return true;
      Fail(node, "exclusiveMinimum", "the number is not greater than the exclusive minimum");
      return false;
    case KeywordKind::kExclusiveMaximum:
      if (Compare(instance, keyword) < 0) return true;
      Fail(node, "exclusiveMaximum", "the number is not less than the exclusive maximum");
      return false;
    case KeywordKind::kMultipleOf:
      if (IsMultiple(instance, keyword)) return true;
      Fail(node, "multipleOf", "the number is not a multiple of the divisor");
      return false;
    case KeywordKind::kMinItems:
      if (instance.Size() >= keyword.count) return true;
      Fail(node, "minItems", "the array has fewer items than the minimum");
      return false;
    case KeywordKind::kMaxItems:
      if (instance.Size() <= keyword.count) return true;
      Fail(node, "maxItems", "the array has more items than the maximum");
      return false;
    case KeywordKind::kUniqueItems:
      if (AllUnique(instance)) return true;
      Fail(node, "uniqueItems", "the array has duplicate items");
      return false;
    case KeywordKind::kMinProperties:
      if (instance.Size() >= keyword.count) return true;
      Fail(node, "minProperties", "the object has fewer properties than the minimum");
      return false;
    case KeywordKind::kMaxProperties:
      if (instance.Size() <= keyword.count) return true;
      Fail(node, "maxProperties", "the object has more properties than the maximum");
      return false;
    case KeywordKind::kRequired: {
      if (keyword.flag && !collect_) return true;  // counted by the properties pass
      // Both sorted: one merge over the members instead of a lookup per name.
      bool valid = true;
      auto member = instance.FirstMember();
      for (const std::string& name : keyword.strings) {
        int order = 1;
        while (!member.Done() && (order = CompareNames(member.Name(), name)) < 0) member.Next();
        if (!member.Done() && order == 0) continue;
        Fail(node, "required", "a required property is missing");
        valid = false;
        if (!collect_) break;
      }
      return valid;
    }
    case KeywordKind::kDependentRequired: {
      bool valid = true;
      for (const auto& [name, required] : keyword.dependencies) {
        if (!instance.Contains(name)) continue;
        for (const std::string& other : required) {
          if (instance.Contains(other)) continue;
          Fail(node, keyword.name, "a property required by another property is missing");
          valid = false;
          if (!collect_) return false;
        }
      }
      return valid;
    }
    default:
      return EvalApplicator(node, keyword, instance, annotations);
  }
  return false;
}

template <class View>
bool Evaluator<View>::EvalApplicator(const Node& node, const Keyword& keyword,
                               View instance, Annotations* annotations) {
  switch (keyword.kind) {
    case KeywordKind::kProperties: return EvalProperties(keyword, instance, annotations);
    case KeywordKind::kPropertyNames: {
      bool valid = true;
      for (auto member = instance.FirstMember(); !member.Done(); member.Next()) {
        const typename View::Key key(instance, member.Name());
        if (!EvalChild(*keyword.sub, key.View(), nullptr, "propertyNames", std::string_view())) {
          valid = false;
          if (!collect_) break;
        }
      }
      return valid;
    }
    case KeywordKind::kDependentSchemas: {
      bool valid = true;
      for (const NamedNode& dependency : keyword.named) {
        if (!instance.Contains(dependency.name)) continue;
        std::string path = keyword.name + "/" + json::Pointer::EscapeToken(dependency.name);
        if (!EvalChild(*dependency.node, instance, annotations, path, std::string_view())) {
          valid = false;
          if (!collect_) break;
        }
      }
      return valid;
    }
    case KeywordKind::kItems: return EvalItems(keyword, instance, annotations);
    case KeywordKind::kContains: return EvalContains(node, keyword, instance, annotations);
    case KeywordKind::kRef:
      return FollowRef(*keyword.sub, instance, annotations, "$ref");
    case KeywordKind::kDynamicRef: {
      const Node* target = keyword.sub;
      if (!keyword.dynamic_name.empty()) {
        for (const ResourceNodes* resource : dynamic_scope_) {
          auto it = resource->dynamic_anchors.find(keyword.dynamic_name);
          if (it != resource->dynamic_anchors.end()) {
            target = it->second;
            break;
          }
        }
      }
      return FollowRef(*target, instance, annotations, "$dynamicRef");
    }
    case KeywordKind::kAllOf: {
      bool valid = true;
      for (std::size_t i = 0; i < keyword.subs.size(); ++i) {
        if (!EvalChild(*keyword.subs[i], instance, annotations,
                       collect_ ? "allOf/" + std::to_string(i) : std::string(),
                       std::string_view())) {
          valid = false;
          if (!collect_) break;
        }
      }
      return valid;
    }
    case KeywordKind::kAnyOf: {
      std::size_t mark = ErrorMark();
      bool any = false;
      for (std::size_t i = 0; i < keyword.subs.size(); ++i) {
        Annotations branch;
        if (EvalChild(*keyword.subs[i], instance, annotations != nullptr ? &branch : nullptr,
                      collect_ ? "anyOf/" + std::to_string(i) : std::string(),
                      std::string_view())) {
          any = true;
          if (annotations == nullptr) break;
          annotations->MergeFrom(branch);
        }
        if (limit_) return false;
      }
      if (any) {
        DropErrors(mark);
        return true;
      }
      Fail(node, "anyOf", "the instance matches none of the subschemas");
      return false;
    }
    case KeywordKind::kOneOf: {
      std::size_t mark = ErrorMark();
      std::size_t matches = 0;
      Annotations matched;
      for (std::size_t i = 0; i < keyword.subs.size() && matches < 2; ++i) {
        Annotations branch;
        if (EvalChild(*keyword.subs[i], instance, annotations != nullptr ? &branch : nullptr,
                      collect_ ? "oneOf/" + std::to_string(i) : std::string(),
                      std::string_view())) {
          ++matches;
          matched = std::move(branch);
        }
        if (limit_) return false;
      }
      if (matches == 1) {
        DropErrors(mark);
        if (annotations != nullptr) annotations->MergeFrom(matched);
        return true;
      }
      if (matches > 1) {
        DropErrors(mark);
        Fail(node, "oneOf", "the instance matches more than one subschema");
      } else {
        Fail(node, "oneOf", "the instance matches none of the subschemas");
      }
      return false;
    }
    case KeywordKind::kNot: {
      std::size_t mark = ErrorMark();
      bool matched = EvalChild(*keyword.sub, instance, nullptr, "not", std::string_view());
      DropErrors(mark);
      if (limit_) return false;
      if (!matched) return true;
      Fail(node, "not", "the instance matches a schema it must not match");
      return false;
    }
    case KeywordKind::kIf: {
      std::size_t mark = ErrorMark();
      Annotations condition;
      bool holds = EvalChild(*keyword.sub, instance, annotations != nullptr ? &condition : nullptr,
                             "if", std::string_view());
      DropErrors(mark);
      if (limit_) return false;
      if (holds) {
        if (annotations != nullptr) annotations->MergeFrom(condition);
        return keyword.then_node == nullptr ||
               EvalChild(*keyword.then_node, instance, annotations, "then", std::string_view());
      }
      return keyword.else_node == nullptr ||
             EvalChild(*keyword.else_node, instance, annotations, "else", std::string_view());
    }
    case KeywordKind::kUnevaluatedItems: {
      bool valid = true;
      for (std::size_t i = 0; i < instance.Size(); ++i) {
        if (i < annotations->items.size() && annotations->items[i]) continue;
        if (!EvalChild(*keyword.sub, instance.Item(i), nullptr, "unevaluatedItems",
                       collect_ ? std::to_string(i) : std::string())) {
          valid = false;
          if (!collect_) break;
        }
        annotations->MarkItem(i, instance.Size());
      }
      return valid;
    }
    case KeywordKind::kUnevaluatedProperties: {
      bool valid = true;
      std::size_t index = 0;
      for (auto member = instance.FirstMember(); !member.Done(); member.Next(), ++index) {
        if (index < annotations->properties.size() && annotations->properties[index]) continue;
        if (!EvalChild(*keyword.sub, member.Value(), nullptr, "unevaluatedProperties",
                       member.Name())) {
          valid = false;
          if (!collect_) break;
        }
        annotations->MarkProperty(index, instance.Size());
      }
      return valid;
    }
    default:
      break;
  }
  return false;
}

template <class View>
bool Evaluator<View>::EvalProperties(const Keyword& keyword, View instance,
                               Annotations* annotations) {
  bool valid = true;
  std::size_t index = 0;
  std::size_t next_named = 0;
  std::size_t required_seen = 0;
  const std::size_t size = instance.Size();
  // Both the instance members and keyword.named are sorted by name: one merge.
  for (auto member = instance.FirstMember(); !member.Done(); member.Next(), ++index) {
    const std::string_view name = member.Name();
    const View value = member.Value();
    bool evaluated = false;
    int order = 1;
    while (next_named < keyword.named.size() &&
           (order = CompareNames(keyword.named[next_named].name, name)) < 0) {
      ++next_named;
    }
    if (next_named < keyword.named.size() && order == 0) {
      evaluated = true;
      required_seen += keyword.named[next_named].required ? 1 : 0;
      bool ok = collect_ ? EvalChild(*keyword.named[next_named].node, value, nullptr,
                                     "properties/" + json::Pointer::EscapeToken(name), name)
                         : Eval(*keyword.named[next_named].node, value, nullptr);
      if (!ok) {
        valid = false;
        if (!collect_) return false;
      }
    }
    for (const PatternNode& pattern : keyword.patterns) {
      RegexOutcome outcome = pattern.regex->Search(name);
      if (outcome == RegexOutcome::kLimit) {
        HitLimit("a pattern exceeded the regular expression match limit");
        return false;
      }
      if (outcome == RegexOutcome::kNoMatch) continue;
      evaluated = true;
      if (!EvalChild(*pattern.node, value, nullptr,
                     collect_ ? "patternProperties/" + json::Pointer::EscapeToken(pattern.pattern) : std::string(),
                     name)) {
        valid = false;
        if (!collect_) return false;
      }
    }
    if (!evaluated && keyword.sub != nullptr) {
      evaluated = true;
      if (!EvalChild(*keyword.sub, value, nullptr, "additionalProperties", name)) {
        valid = false;
        if (!collect_) return false;
      }
    }
    if (evaluated && annotations != nullptr) annotations->MarkProperty(index, size);
  }
  if (!collect_ && required_seen < keyword.count) return false;
  return valid;
}

template <class View>
bool Evaluator<View>::EvalItems(const Keyword& keyword, View instance,
                          Annotations* annotations) {
  bool valid = true;
  const std::size_t size = instance.Size();
  const bool draft07 = keyword.flag;
  std::size_t prefix = std::min(keyword.subs.size(), size);
  for (std::size_t i = 0; i < prefix; ++i) {
    bool ok = collect_ ? EvalChild(*keyword.subs[i], instance.Item(i), nullptr,
                                   (draft07 ? "items/" : "prefixItems/") + std::to_string(i),
                                   std::to_string(i))
                       : Eval(*keyword.subs[i], instance.Item(i), nullptr);
    if (!ok) {
      valid = false;
      if (!collect_) return false;
    }
    if (annotations != nullptr) annotations->MarkItem(i, size);
  }
  if (keyword.sub == nullptr) return valid;
  const char* rest_name = draft07 && !keyword.subs.empty() ? "additionalItems" : "items";
  for (std::size_t i = prefix; i < size; ++i) {
    bool ok = collect_ ? EvalChild(*keyword.sub, instance.Item(i), nullptr, rest_name, std::to_string(i))
                       : Eval(*keyword.sub, instance.Item(i), nullptr);
    if (!ok) {
      valid = false;
      if (!collect_) return false;
    }
    if (annotations != nullptr) annotations->MarkItem(i, size);
  }
  return valid;
}

template <class View>
bool Evaluator<View>::EvalContains(const Node& node, const Keyword& keyword, View instance,
                             Annotations* annotations) {
  std::size_t mark = ErrorMark();
  std::size_t matches = 0;
  const std::size_t size = instance.Size();
  for (std::size_t i = 0; i < size; ++i) {
    if (EvalChild(*keyword.sub, instance.Item(i), nullptr, "contains",
                  collect_ ? std::to_string(i) : std::string())) {
      ++matches;
      if (annotations != nullptr) annotations->MarkItem(i, size);
      // Enough evidence: no upper bound to check and nobody needs the annotations.
      if (!keyword.has_max && annotations == nullptr && !collect_ && matches >= keyword.count) {
        break;
      }
    }
    if (limit_) return false;
  }
  DropErrors(mark);
  if (matches < keyword.count) {
    Fail(node, keyword.count == 1 ? "contains" : "minContains",
         "too few items match the contains schema");
    return false;
  }
  if (keyword.has_max && matches > keyword.max_count) {
    Fail(node, "maxContains", "too many items match the contains schema");
    return false;
  }
  return true;
}

template class Evaluator<ValueView>;
template class Evaluator<DocumentView>;

}  // namespace udon::schema::internal
