// The plan: entry selection and every refusal the runner makes before anything runs.
// Whatever is reachable from the entry workflow must be a construct the runner executes;
// anything else (merge, await, forEach, wait, mode, goto, onSuccess, idempotency, triggers,
// results, non-simple criteria, $outputs in criteria, inline bodies, $trigger,
// $response.statusCode/headers, non-MCP operations, expressions outside the UWS 1.9 core
// grammar) is uws.unsupported with details.construct and the pointer of the first place.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "json/json.h"
#include "base/result.h"
#include "uws/binding.h"
#include "uws/document.h"

namespace udon::uws {

struct Plan {
  const Document* document = nullptr;
  std::string entry;  // workflowId
  std::map<std::string, const json::Value*> workflows;
  std::map<std::string, const json::Value*> operations;
  std::map<std::string, const json::Value*> steps;
  std::map<std::string, std::string> step_pointers;
  std::map<std::string, std::vector<std::string>> groups;  // parallelGroup -> members in order
  std::map<std::string, McpOperation> bindings;
  json::Value variables = json::Value::object();  // components.variables, then variables
};

// `document` must outlive the plan. Errors: uws.unsupported, uws.invalid (no entry).
Result<Plan> MakePlan(const Document& document, const BindingCheck& bindings,
                      const std::optional<std::string>& workflow);

// The entry inputs against the entry workflow's ParamSchema: an object, required members
// present, declared types matched. Errors: usage.invalid with the member's pointer.
Status CheckEntryInputs(const Plan& plan, const json::Value& inputs);

}  // namespace udon::uws
