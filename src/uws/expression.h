// UWS 1.9 core runtime expressions (the ABNF of UWS section 5.6):
//   expression = source [SP op SP operand]      op: == != <= >= < >
//   source     = $response.statusCode | $response.body[#pointer] | $response.headers.<name>
//              | $outputs.<name>[.path] | $steps.<id>.outputs.<name>[.path]
//              | $variables.<name>[.path] | $trigger[.path] | $inputs[.path] | $item[.path]
//              | $index
// Dot-walks read an object member or a decimal array index; anything missing is null.
// Pointers decode %HH first, then ~1 and ~0; array tokens must be canonical.
// Comparisons are strict: no coercion, mismatched types fail.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json.h"
#include "base/result.h"

namespace udon::uws {

enum class Root {
  kResponseStatusCode,
  kResponseBody,
  kResponseHeader,
  kOutputs,
  kSteps,
  kVariables,
  kTrigger,
  kInputs,
  kItem,
  kIndex,
};

struct Source {
  Root root = Root::kInputs;
  std::string step;               // kSteps
  std::string name;               // kOutputs/kSteps/kVariables: the output or variable; kResponseHeader
  std::vector<std::string> path;  // dot segments after the name, or decoded pointer tokens (body)
};

enum class Comparison { kEq, kNe, kLe, kGe, kLt, kGt };

struct Operand {
  std::optional<Source> source;  // else literal
  json::Value literal;
};

struct Expression {
  Source left;
  std::optional<Comparison> op;
  Operand right;

  // Every source the expression reads.
  std::vector<const Source*> Sources() const;
};

// Errors: uws.expression_invalid with a fixed message (never the text itself).
Result<Expression> ParseExpression(std::string_view text);

// What an expression can read. Absent optionals are unavailable here: reading them fails.
struct Scope {
  const json::Value* inputs = nullptr;
  const json::Value* variables = nullptr;  // variables with components.variables merged in
  const json::Value* outputs = nullptr;    // $outputs: the resolved ones so far
  const json::Value* response_body = nullptr;
  const json::Value* item = nullptr;
  std::optional<std::size_t> index;
  // $steps.<id>: the outputs of the step's success record, or nullptr when it has none.
  std::function<const json::Value*(const std::string& step)> step_outputs;
};

// Errors: uws.expression_failed (unknown root name, missing success record, unavailable
// $response/$item/$trigger, mismatched or unordered comparison types).
Result<json::Value> Evaluate(const Expression& expression, const Scope& scope);
Result<json::Value> EvaluateText(std::string_view text, const Scope& scope);

// null, false, 0, "", [] and {} are false.
bool Truthy(const json::Value& value);

// The request/inputs rule: a string starting with '$' is one whole expression, any other
// string is a literal; objects and arrays are walked. `visit` sees each expression string
// with its pointer relative to value.
void ForEachExpression(const json::Value& value, const std::string& pointer,
                       const std::function<void(const std::string& text, const std::string& pointer)>& visit);
// Evaluates a request body or step inputs by that rule.
Result<json::Value> EvaluateTemplate(const json::Value& value, const Scope& scope);

}  // namespace udon::uws
