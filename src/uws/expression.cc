#include "uws/expression.h"

#include <map>

#include "json/pointer.h"

namespace udon::uws {
namespace {

Error Syntax(const char* message) { return MakeError("uws.expression_invalid", message); }
Error Failed(const char* message) { return MakeError("uws.expression_failed", message); }

bool IsSegmentChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// Splits "a.b.c" into segments of [A-Za-z0-9_-]+; empty text gives no segments.
Result<std::vector<std::string>> Segments(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = text.find('.', start);
    std::string_view segment = text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (segment.empty()) return Syntax("an empty path segment");
    for (char c : segment) {
      if (!IsSegmentChar(c)) return Syntax("a path segment has a character outside [A-Za-z0-9_-]");
    }
    out.emplace_back(segment);
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsPointerChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '~';
}

// "#" *("/" token): %HH decoded first, then ~1 and ~0.
Result<std::vector<std::string>> PointerTokens(std::string_view text) {
  std::vector<std::string> tokens;
  if (text.empty() || text[0] != '#') return Syntax("a body pointer starts with #");
  std::string_view rest = text.substr(1);
  if (rest.empty()) return tokens;
  if (rest[0] != '/') return Syntax("a body pointer token starts with /");
  std::size_t i = 0;
  while (i < rest.size()) {
    ++i;  // the '/'
    std::string decoded;
    while (i < rest.size() && rest[i] != '/') {
      char c = rest[i];
      if (c == '%') {
        if (i + 2 >= rest.size()) return Syntax("a %HH escape is incomplete");
        int high = HexValue(rest[i + 1]);
        int low = HexValue(rest[i + 2]);
        if (high < 0 || low < 0) return Syntax("a %HH escape is malformed");
        decoded.push_back(static_cast<char>(high * 16 + low));
        i += 3;
        continue;
      }
      if (!IsPointerChar(c)) return Syntax("a body pointer has a character outside the token set");
      if (c == '~' && (i + 1 >= rest.size() || (rest[i + 1] != '0' && rest[i + 1] != '1'))) {
        return Syntax("a body pointer has ~ not followed by 0 or 1");
      }
      decoded.push_back(c);
      ++i;
    }
    std::string token;
    for (std::size_t k = 0; k < decoded.size(); ++k) {
      if (decoded[k] == '~' && k + 1 < decoded.size() && (decoded[k + 1] == '0' || decoded[k + 1] == '1')) {
        token.push_back(decoded[k + 1] == '1' ? '/' : '~');
        ++k;
      } else {
        token.push_back(decoded[k]);
      }
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

bool StartsWith(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// After a root name: "" or "." segments.
Result<std::vector<std::string>> OptionalPath(std::string_view rest) {
  if (rest.empty()) return std::vector<std::string>{};
  if (rest[0] != '.') return Syntax("an unknown source");
  return Segments(rest.substr(1));
}

// "<name>[.path]" after a root with a required name.
Status NamedPath(std::string_view rest, Source& source) {
  if (rest.empty() || rest[0] != '.') return Syntax("the source needs a name");
  UDON_ASSIGN_OR_RETURN(auto segments, Segments(rest.substr(1)));
  source.name = segments.front();
  source.path.assign(segments.begin() + 1, segments.end());
  return OkStatus();
}

Result<Source> ParseSource(std::string_view text) {
  Source source;
  if (text == "$response.statusCode") {
    source.root = Root::kResponseStatusCode;
    return source;
  }
  if (text == "$index") {
    source.root = Root::kIndex;
    return source;
  }
  if (StartsWith(text, "$response.body")) {
    source.root = Root::kResponseBody;
    std::string_view rest = text.substr(14);
    if (rest.empty()) return source;
    UDON_ASSIGN_OR_RETURN(source.path, PointerTokens(rest));
    return source;
  }
  if (StartsWith(text, "$response.headers.")) {
    source.root = Root::kResponseHeader;
    UDON_ASSIGN_OR_RETURN(auto segments, Segments(text.substr(18)));
    if (segments.size() != 1) return Syntax("a header source names one header");
    source.name = segments.front();
    return source;
  }
  if (StartsWith(text, "$outputs")) {
    source.root = Root::kOutputs;
    UDON_RETURN_IF_ERROR(NamedPath(text.substr(8), source));
    return source;
  }
  if (StartsWith(text, "$variables")) {
    source.root = Root::kVariables;
    UDON_RETURN_IF_ERROR(NamedPath(text.substr(10), source));
    return source;
  }
  if (StartsWith(text, "$steps.")) {
    source.root = Root::kSteps;
    UDON_ASSIGN_OR_RETURN(auto segments, Segments(text.substr(7)));
    if (segments.size() < 3 || segments[1] != "outputs") return Syntax("a steps source is $steps.<id>.outputs.<name>");
    source.step = segments[0];
    source.name = segments[2];
    source.path.assign(segments.begin() + 3, segments.end());
    return source;
  }
  static const std::pair<std::string_view, Root> kPathRoots[] = {
      {"$trigger", Root::kTrigger}, {"$inputs", Root::kInputs}, {"$item", Root::kItem}};
  for (const auto& [prefix, root] : kPathRoots) {
    if (!StartsWith(text, prefix)) continue;
    source.root = root;
    UDON_ASSIGN_OR_RETURN(source.path, OptionalPath(text.substr(prefix.size())));
    return source;
  }
  return Syntax("an unknown source");
}

Result<Comparison> ParseOperator(std::string_view text) {
  static const std::pair<std::string_view, Comparison> kOperators[] = {
      {"==", Comparison::kEq}, {"!=", Comparison::kNe}, {"<=", Comparison::kLe},
      {">=", Comparison::kGe}, {"<", Comparison::kLt},  {">", Comparison::kGt}};
  for (const auto& [symbol, op] : kOperators) {
    if (text == symbol) return op;
  }
  return Syntax("an unknown comparison operator");
}

const json::Value* WalkSegment(const json::Value& value, const std::string& segment) {
  if (value.is_object()) {
    auto it = value.find(segment);
    return it == value.end() ? nullptr : &*it;
  }
  if (value.is_array()) {
    if (segment.empty() || segment.size() > 18) return nullptr;
    if (segment.size() > 1 && segment[0] == '0') return nullptr;
    for (char c : segment) {
      if (c < '0' || c > '9') return nullptr;
    }
    std::size_t index = std::stoull(segment);
    return index < value.size() ? &value[index] : nullptr;
  }
  return nullptr;
}

json::Value Walk(const json::Value& start, const std::vector<std::string>& path, std::size_t from = 0) {
  const json::Value* current = &start;
  for (std::size_t i = from; i < path.size(); ++i) {
    current = WalkSegment(*current, path[i]);
    if (current == nullptr) return nullptr;
  }
  return *current;
}

// A named member that must exist, then a null-walk.
Result<json::Value> Named(const json::Value* container, const Source& source, const char* unknown) {
  if (container == nullptr || !container->is_object()) return Failed(unknown);
  auto it = container->find(source.name);
  if (it == container->end()) return Failed(unknown);
  return Walk(*it, source.path);
}

Result<json::Value> Read(const Source& source, const Scope& scope) {
  switch (source.root) {
    case Root::kResponseStatusCode:
    case Root::kResponseHeader:
      return Failed("$response.statusCode and $response.headers do not exist for MCP operations");
    case Root::kResponseBody:
      if (scope.response_body == nullptr) return Failed("$response is not available here");
      return Walk(*scope.response_body, source.path);
    case Root::kOutputs:
      return Named(scope.outputs, source, "$outputs names no resolved output");
    case Root::kVariables:
      return Named(scope.variables, source, "$variables names no variable");
    case Root::kSteps: {
      const json::Value* outputs = scope.step_outputs ? scope.step_outputs(source.step) : nullptr;
      if (outputs == nullptr) return Failed("$steps names a step without a success record");
      return Named(outputs, source, "$steps names an output the step does not have");
    }
    case Root::kTrigger:
      return Failed("$trigger is not available: run dispatches no triggers");
    case Root::kInputs: {
      if (scope.inputs == nullptr) return Failed("$inputs is not available here");
      if (source.path.empty()) return *scope.inputs;
      if (!scope.inputs->is_object() || !scope.inputs->contains(source.path.front())) {
        return Failed("$inputs names no input");
      }
      return Walk(*scope.inputs, source.path);
    }
    case Root::kItem:
      if (scope.item == nullptr) return Failed("$item is only available inside a loop");
      return Walk(*scope.item, source.path);
    case Root::kIndex:
      if (!scope.index) return Failed("$index is only available inside a loop");
      return json::Value(*scope.index);
  }
  return Failed("an unknown source");
}

enum class Kind { kNull, kBool, kNumber, kString, kOther };
Kind KindOf(const json::Value& value) {
  if (value.is_null()) return Kind::kNull;
  if (value.is_boolean()) return Kind::kBool;
  if (value.is_number()) return Kind::kNumber;
  if (value.is_string()) return Kind::kString;
  return Kind::kOther;
}

// -1, 0, 1. Integers compare exactly; long double holds every int64 and double exactly.
int CompareNumbers(const json::Value& a, const json::Value& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    const bool a_negative = a.is_number_unsigned() ? false : a.get<std::int64_t>() < 0;
    const bool b_negative = b.is_number_unsigned() ? false : b.get<std::int64_t>() < 0;
    if (a_negative != b_negative) return a_negative ? -1 : 1;
    if (a_negative) {
      auto x = a.get<std::int64_t>(), y = b.get<std::int64_t>();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    auto x = a.get<std::uint64_t>(), y = b.get<std::uint64_t>();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  auto as_long_double = [](const json::Value& v) -> long double {
    if (v.is_number_unsigned()) return static_cast<long double>(v.get<std::uint64_t>());
    if (v.is_number_integer()) return static_cast<long double>(v.get<std::int64_t>());
    return static_cast<long double>(v.get<double>());
  };
  long double x = as_long_double(a), y = as_long_double(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

Result<bool> Compare(const json::Value& left, Comparison op, const json::Value& right) {
  Kind kind = KindOf(left);
  if (kind == Kind::kOther || KindOf(right) == Kind::kOther) return Failed("objects and arrays are not comparable");
  if (kind != KindOf(right)) return Failed("compared values have different types");
  int order = 0;
  if (kind == Kind::kNumber) {
    order = CompareNumbers(left, right);
  } else if (kind == Kind::kString) {
    const auto& a = left.get_ref<const std::string&>();
    const auto& b = right.get_ref<const std::string&>();
    order = a < b ? -1 : a > b ? 1 : 0;
  } else if (op != Comparison::kEq && op != Comparison::kNe) {
    return Failed("only strings and numbers are ordered");
  } else {
    order = left == right ? 0 : 1;
  }
  switch (op) {
    case Comparison::kEq: return order == 0;
    case Comparison::kNe: return order != 0;
    case Comparison::kLe: return order <= 0;
    case Comparison::kGe: return order >= 0;
    case Comparison::kLt: return order < 0;
    case Comparison::kGt: return order > 0;
  }
  return false;
}

}  // namespace

std::vector<const Source*> Expression::Sources() const {
  std::vector<const Source*> out{&left};
  if (op && right.source) out.push_back(&*right.source);
  return out;
}

Result<Expression> ParseExpression(std::string_view text) {
  Expression expression;
  std::size_t space = text.find(' ');
  UDON_ASSIGN_OR_RETURN(expression.left, ParseSource(text.substr(0, space)));
  if (space == std::string_view::npos) return expression;
  std::string_view rest = text.substr(space + 1);
  std::size_t second = rest.find(' ');
  if (second == std::string_view::npos) return Syntax("a comparison needs an operand");
  UDON_ASSIGN_OR_RETURN(expression.op, ParseOperator(rest.substr(0, second)));
  std::string_view operand = rest.substr(second + 1);
  if (operand.empty() || operand.front() == ' ' || operand.back() == ' ' || operand.front() == '\t' ||
      operand.back() == '\t' || operand.back() == '\n' || operand.back() == '\r') {
    return Syntax("a comparison has exactly one space around its operator");
  }
  if (operand.front() == '$') {
    UDON_ASSIGN_OR_RETURN(expression.right.source, ParseSource(operand));
    return expression;
  }
  auto literal = json::Parse(operand);
  if (!literal.ok()) return Syntax("the operand is neither a source nor a JSON scalar");
  if (literal->is_object() || literal->is_array()) return Syntax("the operand is neither a source nor a JSON scalar");
  expression.right.literal = std::move(literal).value();
  return expression;
}

Result<json::Value> Evaluate(const Expression& expression, const Scope& scope) {
  UDON_ASSIGN_OR_RETURN(json::Value left, Read(expression.left, scope));
  if (!expression.op) return left;
  json::Value right = expression.right.literal;
  if (expression.right.source) {
    UDON_ASSIGN_OR_RETURN(right, Read(*expression.right.source, scope));
  }
  UDON_ASSIGN_OR_RETURN(bool result, Compare(left, *expression.op, right));
  return json::Value(result);
}

Result<json::Value> EvaluateText(std::string_view text, const Scope& scope) {
  UDON_ASSIGN_OR_RETURN(Expression expression, ParseExpression(text));
  return Evaluate(expression, scope);
}

bool Truthy(const json::Value& value) {
  if (value.is_null()) return false;
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number_unsigned()) return value.get<std::uint64_t>() != 0;
  if (value.is_number_integer()) return value.get<std::int64_t>() != 0;
  if (value.is_number_float()) return value.get<double>() != 0.0;
  if (value.is_string()) return !value.get_ref<const std::string&>().empty();
  return !value.empty();  // arrays and objects
}

void ForEachExpression(const json::Value& value, const std::string& pointer,
                       const std::function<void(const std::string& text, const std::string& pointer)>& visit) {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (!text.empty() && text.front() == '$') visit(text, pointer);
  } else if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      ForEachExpression(member, pointer + "/" + json::Pointer::EscapeToken(key), visit);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) ForEachExpression(value[i], pointer + "/" + std::to_string(i), visit);
  }
}

Result<json::Value> EvaluateTemplate(const json::Value& value, const Scope& scope) {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (!text.empty() && text.front() == '$') return EvaluateText(text, scope);
    return value;
  }
  if (value.is_object()) {
    json::Value out = json::Value::object();
    for (const auto& [key, member] : value.items()) {
      UDON_ASSIGN_OR_RETURN(out[key], EvaluateTemplate(member, scope));
    }
    return out;
  }
  if (value.is_array()) {
    json::Value out = json::Value::array();
    for (const auto& member : value) {
      UDON_ASSIGN_OR_RETURN(json::Value evaluated, EvaluateTemplate(member, scope));
      out.push_back(std::move(evaluated));
    }
    return out;
  }
  return value;
}

}  // namespace udon::uws
