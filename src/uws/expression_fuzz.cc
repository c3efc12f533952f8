// Fuzz target: UWS runtime expressions, parsed and evaluated against a fixed scope.
// Oracles: a comparison and its negation never both hold (== / !=, < / >=, > / <=); for
// ordered values exactly one of <, ==, > holds, and swapping two sources mirrors the
// operator; evaluation is deterministic and a comparison yields a boolean. Input that is
// JSON is also evaluated as a template: every expression string the walk reports sits at
// its pointer and evaluates on its own exactly when the whole template does.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "json/json.h"
#include "json/pointer.h"
#include "uws/expression.h"

namespace {

using udon::json::Value;
using udon::uws::Comparison;
using udon::uws::Expression;

const Value& ScopeData() {
  static const Value data = *udon::json::Parse(R"({
    "inputs": {"a": 1, "b": "x", "c": [0, 1.5, -2, "y", null, true], "d": {"e~/%": {"f": 18446744073709551615}},
               "big": -9223372036854775808, "float": 1e300, "empty": ""},
    "variables": {"v": {"w": [false, 0]}, "n": null, "s": "x"},
    "outputs": {"o": 1.0, "p": {"0": "zero", "01": "one"}},
    "body": {"items": [{"id": 7}, {"id": "7"}], "a/b": {"~": 2}, "%2F": 3},
    "item": {"k": 1, "l": [1, 2, 3]},
    "step": {"out": {"x": 1, "y": "1"}}
  })");
  return data;
}

udon::uws::Scope MakeScope() {
  const Value& data = ScopeData();
  udon::uws::Scope scope;
  scope.inputs = &data["inputs"];
  scope.variables = &data["variables"];
  scope.outputs = &data["outputs"];
  scope.response_body = &data["body"];
  scope.item = &data["item"];
  scope.index = 3;
  scope.step_outputs = [&data](const std::string& step) -> const Value* {
    return step == "s1" ? &data["step"] : nullptr;
  };
  return scope;
}

std::optional<bool> Holds(Expression expression, Comparison op, const udon::uws::Scope& scope) {
  expression.op = op;
  auto result = udon::uws::Evaluate(expression, scope);
  if (!result.ok()) return std::nullopt;
  UDON_FUZZ_CHECK(result->is_boolean(), "a comparison yields a boolean");
  return result->get<bool>();
}

void CheckNegation(const Expression& expression, Comparison op, Comparison negated,
                   const udon::uws::Scope& scope) {
  const auto a = Holds(expression, op, scope);
  const auto b = Holds(expression, negated, scope);
  if (a && b) UDON_FUZZ_CHECK(*a != *b, "a comparison and its negation differ");
}

void CheckComparisons(const Expression& expression, const udon::uws::Scope& scope) {
  CheckNegation(expression, Comparison::kEq, Comparison::kNe, scope);
  CheckNegation(expression, Comparison::kLt, Comparison::kGe, scope);
  CheckNegation(expression, Comparison::kGt, Comparison::kLe, scope);
  const auto lt = Holds(expression, Comparison::kLt, scope);
  const auto eq = Holds(expression, Comparison::kEq, scope);
  const auto gt = Holds(expression, Comparison::kGt, scope);
  if (lt && eq && gt) UDON_FUZZ_CHECK(*lt + *eq + *gt == 1, "exactly one of <, ==, > holds");
  if (expression.right.source) {
    Expression swapped = expression;
    swapped.left = *expression.right.source;
    swapped.right.source = expression.left;
    const auto mirrored = Holds(swapped, Comparison::kGt, scope);
    UDON_FUZZ_CHECK(lt.has_value() == mirrored.has_value(), "swapping sources keeps evaluability");
    if (lt) UDON_FUZZ_CHECK(*lt == *mirrored, "a < b exactly when b > a");
  }
}

void CheckExpression(std::string_view text, const udon::uws::Scope& scope) {
  auto expression = udon::uws::ParseExpression(text);
  if (!expression.ok()) {
    UDON_FUZZ_CHECK(expression.error().code == "uws.expression_invalid", "a parse error's code");
    return;
  }
  const auto sources = expression->Sources();
  UDON_FUZZ_CHECK(sources.front() == &expression->left, "the left source comes first");
  UDON_FUZZ_CHECK(sources.size() == (expression->op && expression->right.source ? 2u : 1u),
                  "Sources lists every source");
  auto first = udon::uws::Evaluate(*expression, scope);
  auto second = udon::uws::Evaluate(*expression, scope);
  UDON_FUZZ_CHECK(first.ok() == second.ok(), "evaluation is deterministic");
  if (first.ok()) UDON_FUZZ_CHECK(*first == *second, "evaluation is deterministic");
  if (!first.ok()) {
    UDON_FUZZ_CHECK(first.error().code == "uws.expression_failed", "an evaluation error's code");
  }
  if (expression->op) CheckComparisons(*expression, scope);
}

void CheckTemplate(const Value& value, const udon::uws::Scope& scope) {
  bool all_evaluate = true;
  std::size_t visited = 0;
  udon::uws::ForEachExpression(value, "", [&](const std::string& text, const std::string& pointer) {
    ++visited;
    auto location = udon::json::Pointer::Parse(pointer);
    UDON_FUZZ_CHECK(location.ok(), "a template pointer is valid");
    const Value* at = location->Resolve(value);
    UDON_FUZZ_CHECK(at != nullptr && at->is_string() && *at == text,
                    "a template pointer locates its expression");
    if (!udon::uws::EvaluateText(text, scope).ok()) all_evaluate = false;
  });
  auto evaluated = udon::uws::EvaluateTemplate(value, scope);
  UDON_FUZZ_CHECK(evaluated.ok() == all_evaluate,
                  "a template evaluates exactly when each of its expressions does");
  if (evaluated.ok() && visited == 0) {
    UDON_FUZZ_CHECK(*evaluated == value, "a template without expressions is itself");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const udon::uws::Scope scope = MakeScope();
  CheckExpression(text, scope);
  if (auto value = udon::json::Parse(text); value.ok()) CheckTemplate(*value, scope);
  return 0;
}
