#include "uws/document.h"

#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>

#include "base/file.h"
#include "json/pointer.h"
#include "json/yaml.h"
#include "schema/schema.h"
#include "uws/internal/uws_schema.h"
#include "json/access.h"

namespace udon::uws {
namespace {

constexpr std::size_t kMaxDocumentBytes = 16u << 20;

Error Invalid(std::string rule, std::string message, std::string pointer) {
  Error error = MakeError("uws.invalid", std::move(message), std::move(pointer));
  error.details["rule"] = std::move(rule);
  return error;
}

using json::Child;
using json::Member;
using json::StringMember;

const schema::CompiledSchema* Uws19Schema() {
  static std::once_flag once;
  static std::optional<schema::CompiledSchema> compiled;
  std::call_once(once, [] {
    auto text = json::Parse(internal::kUws190SchemaText);
    if (!text.ok()) return;
    auto result = schema::CompiledSchema::Compile(*text);
    if (result.ok()) compiled = std::move(result).value();
  });
  return compiled ? &*compiled : nullptr;
}

// The structural layer. contentTrust (1.9.1) postdates the schema and is checked here.
void CheckStructure(const Document& document, std::vector<Error>& errors) {
  const schema::CompiledSchema* compiled = Uws19Schema();
  if (compiled == nullptr) {
    errors.push_back(Invalid("schema", "the bundled UWS schema failed to compile", ""));
    return;
  }
  json::Value copy = document.root;
  if (document.AtLeast(9, 1)) copy.erase("contentTrust");
  // Documents written by the Go core carry "type": "" on operation steps (an empty Go
  // string); like the Go core, treat it as absent.
  for (const auto& visit : AllSteps(document.root)) {
    auto type = visit.step->find("type");
    if (type == visit.step->end() || *type != "") continue;
    auto pointer = json::Pointer::Parse(visit.pointer);
    if (!pointer.ok()) continue;
    if (json::Value* step = pointer->Resolve(copy)) step->erase("type");
  }
  schema::ValidationResult result = compiled->Validate(copy);
  if (result.limit_error) {
    errors.push_back(Invalid("schema", "the document exceeds a validation limit", ""));
    return;
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& unit : result.errors) {
    if (!seen.insert({unit.instance_location, unit.error}).second) continue;
    Error error = Invalid("schema", "violates the UWS 1.9 schema: " + unit.error, unit.instance_location);
    error.details["keywordLocation"] = unit.keyword_location;
    errors.push_back(std::move(error));
  }
}

// Names in the one namespace shared by operations, workflows, steps and parallelGroups.
struct Names {
  std::map<std::string, std::string> operations;  // id -> pointer
  std::map<std::string, std::string> workflows;
  std::map<std::string, std::string> steps;
  std::map<std::string, std::vector<std::string>> groups;  // group -> member names
  std::map<std::string, std::string> sources;              // name -> type

  bool Known(const std::string& name) const {
    return operations.count(name) || workflows.count(name) || steps.count(name) || groups.count(name);
  }
};

void CollectIds(const json::Value& root, const std::vector<StepVisit>& steps, Names& names,
                std::vector<Error>& errors) {
  auto unique = [&](std::map<std::string, std::string>& into, const std::string& id, const std::string& pointer,
                    const char* what) {
    if (!into.emplace(id, pointer).second) {
      errors.push_back(Invalid(std::string("duplicate_") + what, std::string("duplicate ") + what + " id", pointer));
    }
  };
  if (const json::Value* sources = Member(root, "sourceDescriptions"); sources && sources->is_array()) {
    std::map<std::string, std::string> seen;
    for (std::size_t i = 0; i < sources->size(); ++i) {
      const auto& source = (*sources)[i];
      std::string name = StringMember(source, "name");
      unique(seen, name, Child(Child("/sourceDescriptions", i), "name"), "source_description");
      std::string type = StringMember(source, "type");
      names.sources.emplace(name, type.empty() ? "openapi" : type);
    }
  }
  if (const json::Value* operations = Member(root, "operations"); operations && operations->is_array()) {
    for (std::size_t i = 0; i < operations->size(); ++i) {
      const auto& operation = (*operations)[i];
      std::string pointer = Child("/operations", i);
      unique(names.operations, StringMember(operation, "operationId"), Child(pointer, "operationId"), "operation");
      if (std::string group = StringMember(operation, "parallelGroup"); !group.empty()) {
        names.groups[group].push_back(StringMember(operation, "operationId"));
      }
    }
  }
  if (const json::Value* workflows = Member(root, "workflows"); workflows && workflows->is_array()) {
    for (std::size_t i = 0; i < workflows->size(); ++i) {
      unique(names.workflows, StringMember((*workflows)[i], "workflowId"),
             Child(Child("/workflows", i), "workflowId"), "workflow");
    }
  }
  for (const auto& visit : steps) {
    unique(names.steps, StringMember(*visit.step, "stepId"), Child(visit.pointer, "stepId"), "step");
    if (std::string group = StringMember(*visit.step, "parallelGroup"); !group.empty()) {
      names.groups[group].push_back(StringMember(*visit.step, "stepId"));
    }
  }
  if (const json::Value* triggers = Member(root, "triggers"); triggers && triggers->is_array()) {
    std::map<std::string, std::string> seen;
    for (std::size_t i = 0; i < triggers->size(); ++i) {
      unique(seen, StringMember((*triggers)[i], "triggerId"), Child(Child("/triggers", i), "triggerId"), "trigger");
    }
  }
}

// Operations, workflows, steps and groups share one namespace; a clash is ambiguous,
// except a step named after its own operationRef.
void CheckNamespace(const std::vector<StepVisit>& steps, const Names& names, std::vector<Error>& errors) {
  for (const auto& [id, pointer] : names.workflows) {
    if (names.operations.count(id)) errors.push_back(Invalid("ambiguous_name", "a workflow shares a name with an operation", pointer));
  }
  for (const auto& visit : steps) {
    std::string id = StringMember(*visit.step, "stepId");
    std::string pointer = Child(visit.pointer, "stepId");
    if (names.workflows.count(id)) errors.push_back(Invalid("ambiguous_name", "a step shares a name with a workflow", pointer));
    if (names.operations.count(id) && StringMember(*visit.step, "operationRef") != id) {
      errors.push_back(Invalid("ambiguous_name", "a step shares a name with an operation", pointer));
    }
  }
  for (const auto& [group, members] : names.groups) {
    if (names.operations.count(group) || names.workflows.count(group) || names.steps.count(group)) {
      errors.push_back(Invalid("ambiguous_name", "a parallelGroup shares a name with another id", ""));
    }
  }
}

bool NonBlank(const std::string& text) { return text.find_first_not_of(" \t\r\n") != std::string::npos; }

void CheckDocumentOperation(const Document& document, const json::Value& operation, const std::string& pointer,
                    const Names& names, std::vector<Error>& errors) {
  const bool has_source = Member(operation, "sourceDescription") != nullptr;
  const bool has_source_id = Member(operation, "sourceOperationId") != nullptr;
  const bool has_source_ref = Member(operation, "sourceOperationRef") != nullptr;
  const bool has_openapi_id = Member(operation, "openapiOperationId") != nullptr;
  const bool has_openapi_ref = Member(operation, "openapiOperationRef") != nullptr;
  const int selectors = has_source_id + has_source_ref + has_openapi_id + has_openapi_ref;
  const std::string profile = StringMember(operation, "x-uws-operation-profile");
  if (has_source) {
    std::string source = StringMember(operation, "sourceDescription");
    auto it = names.sources.find(source);
    if (it == names.sources.end()) {
      errors.push_back(Invalid("unknown_source_description", "sourceDescription names no source description",
                               Child(pointer, "sourceDescription")));
    }
    if (selectors == 0) {
      errors.push_back(Invalid("missing_operation_binding",
                               "a source-bound operation needs exactly one operation selector", pointer));
    } else if (selectors > 1) {
      errors.push_back(Invalid("mixed_operation_binding", "an operation has more than one operation selector", pointer));
    } else if ((has_openapi_id || has_openapi_ref) && it != names.sources.end() && it->second != "openapi") {
      errors.push_back(Invalid("openapi_selector_on_non_openapi_source",
                               "openapiOperation* selectors need an openapi source", pointer));
    }
  } else if (selectors > 0) {
    errors.push_back(Invalid("missing_source_description", "an operation selector needs a sourceDescription", pointer));
  } else if (!NonBlank(profile)) {
    errors.push_back(Invalid("missing_operation_binding",
                             "requires a source binding or x-uws-operation-profile for extension-owned operations",
                             pointer));
  }
  if (const json::Value* timeout = Member(operation, "timeout"); timeout && !document.AtLeast(1)) {
    errors.push_back(Invalid("version_gate", "timeout needs UWS 1.1 or later", Child(pointer, "timeout")));
  }
  if (const json::Value* request = Member(operation, "request"); request && request->is_object()) {
    for (const auto& [key, value] : request->items()) {
      if (IsExtensionKey(key) || key == "body") continue;
      if (key == "path" || key == "query" || key == "header" || key == "cookie") {
        if (!value.is_object()) errors.push_back(Invalid("request_key", "request locations must be objects", Child(Child(pointer, "request"), key)));
      } else {
        errors.push_back(Invalid("request_key", "unknown request key", Child(Child(pointer, "request"), key)));
      }
    }
  }
}

void CheckTimeout(const Document& document, const json::Value& object, const std::string& pointer,
                  std::vector<Error>& errors) {
  const json::Value* timeout = Member(object, "timeout");
  if (timeout == nullptr) return;
  if (!document.AtLeast(1)) {
    errors.push_back(Invalid("version_gate", "timeout needs UWS 1.1 or later", Child(pointer, "timeout")));
  }
  if (!timeout->is_number() || timeout->get<double>() <= 0) {
    errors.push_back(Invalid("timeout", "timeout must be a number above 0", Child(pointer, "timeout")));
  }
}

void CheckTypeRules(const json::Value& object, const std::string& pointer, std::vector<Error>& errors) {
  const std::string type = StringMember(object, "type");
  if (type.empty()) return;
  auto has = [&](const char* name) { return Member(object, name) != nullptr; };
  if (type == "loop") {
    if (!has("items")) errors.push_back(Invalid("loop_without_items", "a loop needs items", pointer));
    if (has("cases") || has("default")) errors.push_back(Invalid("loop_with_cases", "a loop has no cases or default", pointer));
  } else if (type == "await") {
    if (!has("wait")) errors.push_back(Invalid("await_without_wait", "an await needs wait", pointer));
    if (has("items") || has("cases") || has("default")) {
      errors.push_back(Invalid("await_with_children", "an await has no items, cases or default", pointer));
    }
  } else if (has("items")) {
    errors.push_back(Invalid("items_outside_loop", "only a loop has items", Child(pointer, "items")));
  }
  if (type == "merge") {
    const json::Value* depends = Member(object, "dependsOn");
    if (depends == nullptr || !depends->is_array() || depends->empty()) {
      errors.push_back(Invalid("merge_without_dependson", "a merge needs a non-empty dependsOn", pointer));
    }
  }
}

void CheckDependsOn(const json::Value& object, const std::string& pointer, const Names& names,
                    std::vector<Error>& errors) {
  const json::Value* depends = Member(object, "dependsOn");
  if (depends == nullptr || !depends->is_array()) return;
  for (std::size_t i = 0; i < depends->size(); ++i) {
    const auto& name = (*depends)[i];
    if (!name.is_string() || !names.Known(name.get<std::string>())) {
      errors.push_back(Invalid("unknown_dependency", "dependsOn names nothing in the document",
                               Child(Child(pointer, "dependsOn"), i)));
    }
  }
}

void CheckCriteria(const json::Value* criteria, const std::string& pointer, std::vector<Error>& errors) {
  if (criteria == nullptr || !criteria->is_array()) return;
  for (std::size_t i = 0; i < criteria->size(); ++i) {
    const auto& criterion = (*criteria)[i];
    std::string type = StringMember(criterion, "type");
    std::string at = Child(pointer, i);
    if (!type.empty() && type != "simple" && type != "regex" && type != "jsonpath" && type != "xpath") {
      errors.push_back(Invalid("criterion_type", "unknown criterion type", Child(at, "type")));
    } else if (!type.empty() && type != "simple" && Member(criterion, "context") == nullptr) {
      errors.push_back(Invalid("criterion_without_context", "a non-simple criterion needs a context", at));
    }
  }
}

void CheckActions(const json::Value& object, const std::string& pointer, const Names& names,
                  std::vector<Error>& errors) {
  for (const char* list : {"onFailure", "onSuccess"}) {
    const json::Value* actions = Member(object, list);
    if (actions == nullptr || !actions->is_array()) continue;
    const bool failure = std::string_view(list) == "onFailure";
    for (std::size_t i = 0; i < actions->size(); ++i) {
      const auto& action = (*actions)[i];
      std::string at = Child(Child(pointer, list), i);
      std::string type = StringMember(action, "type");
      if (type == "retry" && failure) {
        const json::Value* limit = Member(action, "retryLimit");
        if (limit == nullptr || !limit->is_number_integer() || limit->get<long long>() < 1) {
          errors.push_back(Invalid("retry_without_limit", "a retry needs an integer retryLimit of at least 1", at));
        }
        const json::Value* after = Member(action, "retryAfter");
        if (after != nullptr && (!after->is_number() || after->get<double>() < 0)) {
          errors.push_back(Invalid("retry_after", "retryAfter must be a number of at least 0", Child(at, "retryAfter")));
        }
      } else if (type == "goto") {
        const bool workflow = Member(action, "workflowId") != nullptr;
        const bool step = Member(action, "stepId") != nullptr;
        if (workflow == step) {
          errors.push_back(Invalid("goto_target", "a goto needs exactly one of workflowId and stepId", at));
        } else if (workflow && !names.workflows.count(StringMember(action, "workflowId"))) {
          errors.push_back(Invalid("unknown_goto_target", "the goto target does not exist", Child(at, "workflowId")));
        } else if (step && !names.steps.count(StringMember(action, "stepId"))) {
          errors.push_back(Invalid("unknown_goto_target", "the goto target does not exist", Child(at, "stepId")));
        }
      } else if (type != "end") {
        errors.push_back(Invalid("action_type", "unknown action type", Child(at, "type")));
      }
      CheckCriteria(Member(action, "criteria"), Child(at, "criteria"), errors);
    }
  }
}

// Depth-first search for a cycle in a name graph; reports each cycle once, at its entry.
void FindCycles(const std::map<std::string, std::vector<std::string>>& edges,
                const std::map<std::string, std::string>& pointers, const char* rule, const char* message,
                std::vector<Error>& errors) {
  std::map<std::string, int> state;  // 0 new, 1 on stack, 2 done
  std::function<void(const std::string&)> visit = [&](const std::string& node) {
    state[node] = 1;
    if (auto it = edges.find(node); it != edges.end()) {
      for (const auto& next : it->second) {
        if (state[next] == 1) {
          auto at = pointers.find(node);
          errors.push_back(Invalid(rule, message, at == pointers.end() ? "" : at->second));
        } else if (state[next] == 0) {
          visit(next);
        }
      }
    }
    state[node] = 2;
  };
  for (const auto& [node, unused] : edges) {
    if (state[node] == 0) visit(node);
  }
}

void AddDependsEdges(const json::Value& object, const std::string& name, const Names& names,
                     std::map<std::string, std::vector<std::string>>& edges) {
  const json::Value* depends = Member(object, "dependsOn");
  auto& out = edges[name];
  if (depends == nullptr || !depends->is_array()) return;
  for (const auto& target : *depends) {
    if (!target.is_string()) continue;
    std::string id = target.get<std::string>();
    if (auto group = names.groups.find(id); group != names.groups.end() && !names.operations.count(id) &&
                                             !names.workflows.count(id) && !names.steps.count(id)) {
      out.insert(out.end(), group->second.begin(), group->second.end());
    } else {
      out.push_back(id);
    }
  }
}

void CheckContentTrust(const Document& document, const Names& names, std::vector<Error>& errors) {
  const json::Value* trust = Member(document.root, "contentTrust");
  if (trust == nullptr) return;
  if (!document.AtLeast(9, 1)) {
    errors.push_back(Invalid("version_gate", "contentTrust needs UWS 1.9.1 or later", "/contentTrust"));
    return;
  }
  auto level = [&](const json::Value& value, const std::string& at) {
    if (!value.is_string() || (value != "unknown" && value != "trusted" && value != "untrusted")) {
      errors.push_back(Invalid("content_trust", "a trust level is unknown, trusted or untrusted", at));
    }
  };
  if (!trust->is_object() || trust->empty()) {
    errors.push_back(Invalid("content_trust", "contentTrust must be a non-empty object", "/contentTrust"));
    return;
  }
  for (const auto& [key, value] : trust->items()) {
    std::string at = Child("/contentTrust", key);
    if (IsExtensionKey(key)) continue;
    if (!value.is_object() || value.empty()) {
      errors.push_back(Invalid("content_trust", "a contentTrust map needs at least one entry", at));
      continue;
    }
    const bool simple = key == "sourceDescriptions" || key == "triggers";
    if (!simple && key != "operations" && key != "workflows") {
      errors.push_back(Invalid("content_trust", "unknown contentTrust member", at));
      continue;
    }
    for (const auto& [name, entry] : value.items()) {
      std::string entry_at = Child(at, name);
      if (IsExtensionKey(name)) continue;
      bool known = key == "operations"  ? names.operations.count(name) > 0
                   : key == "workflows" ? names.workflows.count(name) > 0
                   : key == "sourceDescriptions" ? names.sources.count(name) > 0
                                                 : true;
      if (!known) errors.push_back(Invalid("content_trust", "a contentTrust key names nothing declared", entry_at));
      if (simple) {
        level(entry, entry_at);
        continue;
      }
      if (!entry.is_object() || entry.empty()) {
        errors.push_back(Invalid("content_trust", "a contentTrust entry needs default, an override or x-*", entry_at));
        continue;
      }
      const char* overrides = key == "operations" ? "outputs" : "inputs";
      for (const auto& [field, field_value] : entry.items()) {
        if (IsExtensionKey(field)) continue;
        if (field == "default") {
          level(field_value, Child(entry_at, field));
        } else if (field == overrides && field_value.is_object() && !field_value.empty()) {
          for (const auto& [override_name, override_level] : field_value.items()) {
            if (!IsExtensionKey(override_name)) level(override_level, Child(Child(entry_at, field), override_name));
          }
        } else {
          errors.push_back(Invalid("content_trust", "unknown or empty contentTrust entry member", Child(entry_at, field)));
        }
      }
    }
  }
}

void CheckResults(const json::Value& root, std::vector<Error>& errors) {
  const json::Value* results = Member(root, "results");
  if (results == nullptr || !results->is_array()) return;
  std::set<std::string> seen;
  std::map<std::string, std::string> step_types;
  for (const auto& visit : AllSteps(root)) {
    step_types[StringMember(*visit.step, "stepId")] = StringMember(*visit.step, "type");
  }
  std::map<std::string, std::string> workflow_types;
  if (const json::Value* workflows = Member(root, "workflows"); workflows && workflows->is_array()) {
    for (const auto& workflow : *workflows) workflow_types[StringMember(workflow, "workflowId")] = StringMember(workflow, "type");
  }
  for (std::size_t i = 0; i < results->size(); ++i) {
    const auto& result = (*results)[i];
    std::string at = Child("/results", i);
    if (!seen.insert(StringMember(result, "name")).second) errors.push_back(Invalid("duplicate_result", "duplicate result name", Child(at, "name")));
    std::string from = StringMember(result, "from");
    std::string kind = StringMember(result, "kind");
    std::string target_type;
    if (auto dot = from.find('.'); dot == std::string::npos) {
      auto it = workflow_types.find(from);
      if (it == workflow_types.end()) {
        errors.push_back(Invalid("unknown_result_source", "a result's from names no workflow", Child(at, "from")));
        continue;
      }
      target_type = it->second;
    } else {
      auto it = step_types.find(from.substr(dot + 1));
      if (!workflow_types.count(from.substr(0, dot)) || it == step_types.end()) {
        errors.push_back(Invalid("unknown_result_source", "a result's from names no step", Child(at, "from")));
        continue;
      }
      target_type = it->second;
    }
    if (target_type != kind) errors.push_back(Invalid("result_kind", "a result's kind differs from its source's type", Child(at, "kind")));
  }
}

void CheckSemantics(const Document& document, std::vector<Error>& errors) {
  const json::Value& root = document.root;
  std::vector<StepVisit> steps = AllSteps(root);
  Names names;
  CollectIds(root, steps, names, errors);
  CheckNamespace(steps, names, errors);

  std::map<std::string, std::vector<std::string>> depends_edges;
  std::map<std::string, std::string> pointers;
  bool uses_source = false;
  if (const json::Value* operations = Member(root, "operations"); operations && operations->is_array()) {
    for (std::size_t i = 0; i < operations->size(); ++i) {
      const auto& operation = (*operations)[i];
      std::string pointer = Child("/operations", i);
      uses_source |= Member(operation, "sourceDescription") != nullptr;
      CheckDocumentOperation(document, operation, pointer, names, errors);
      CheckTimeout(document, operation, pointer, errors);
      CheckDependsOn(operation, pointer, names, errors);
      CheckCriteria(Member(operation, "successCriteria"), Child(pointer, "successCriteria"), errors);
      CheckActions(operation, pointer, names, errors);
      std::string id = StringMember(operation, "operationId");
      AddDependsEdges(operation, id, names, depends_edges);
      pointers.emplace(id, pointer);
    }
  }
  if (uses_source && Member(root, "sourceDescriptions") == nullptr) {
    errors.push_back(Invalid("missing_source_descriptions", "source-bound operations need sourceDescriptions", ""));
  }
  std::map<std::string, std::vector<std::string>> call_edges;
  std::map<std::string, std::string> workflow_pointers;
  if (const json::Value* workflows = Member(root, "workflows"); workflows && workflows->is_array()) {
    for (std::size_t i = 0; i < workflows->size(); ++i) {
      const auto& workflow = (*workflows)[i];
      std::string pointer = Child("/workflows", i);
      CheckTypeRules(workflow, pointer, errors);
      CheckTimeout(document, workflow, pointer, errors);
      CheckDependsOn(workflow, pointer, names, errors);
      if (Member(workflow, "idempotency") != nullptr && !document.AtLeast(1)) {
        errors.push_back(Invalid("version_gate", "idempotency needs UWS 1.1 or later", Child(pointer, "idempotency")));
      }
      std::string id = StringMember(workflow, "workflowId");
      AddDependsEdges(workflow, id, names, depends_edges);
      pointers.emplace(id, pointer);
      workflow_pointers.emplace(id, pointer);
      call_edges[id];
    }
  }
  for (const auto& visit : steps) {
    const json::Value& step = *visit.step;
    CheckTypeRules(step, visit.pointer, errors);
    CheckTimeout(document, step, visit.pointer, errors);
    CheckDependsOn(step, visit.pointer, names, errors);
    std::string id = StringMember(step, "stepId");
    if (const json::Value* ref = Member(step, "operationRef"); ref && !names.operations.count(StringMember(step, "operationRef"))) {
      errors.push_back(Invalid("unknown_operation_ref", "operationRef names no operation", Child(visit.pointer, "operationRef")));
    }
    if (const json::Value* workflow = Member(step, "workflow"); workflow) {
      std::string target = StringMember(step, "workflow");
      if (!names.workflows.count(target)) {
        errors.push_back(Invalid("unknown_workflow_ref", "workflow names no workflow", Child(visit.pointer, "workflow")));
      } else {
        call_edges[visit.workflow_id].push_back(target);
      }
    }
    if (const json::Value* cases = Member(step, "cases"); cases && cases->is_array()) {
      for (std::size_t i = 0; i < cases->size(); ++i) {
        CheckDependsOn((*cases)[i], Child(Child(visit.pointer, "cases"), i), names, errors);
      }
    }
    AddDependsEdges(step, id, names, depends_edges);
    pointers.emplace(id, visit.pointer);
  }
  FindCycles(depends_edges, pointers, "dependency_cycle", "dependsOn forms a cycle", errors);
  FindCycles(call_edges, workflow_pointers, "workflow_call_cycle", "workflow calls form a cycle", errors);
  CheckContentTrust(document, names, errors);
  CheckResults(root, errors);
}

// Recursion depth is bounded by the parser's nesting limit (json::kDefaultMaxDepth).
void CollectSteps(const json::Value& list, const std::string& pointer, const std::string& workflow_id,
                  std::vector<StepVisit>& out);

void CollectChildren(const json::Value& object, const std::string& pointer, const std::string& workflow_id,
                     std::vector<StepVisit>& out) {
  if (const json::Value* steps = Member(object, "steps")) CollectSteps(*steps, Child(pointer, "steps"), workflow_id, out);
  if (const json::Value* cases = Member(object, "cases"); cases && cases->is_array()) {
    for (std::size_t i = 0; i < cases->size(); ++i) {
      if (const json::Value* steps = Member((*cases)[i], "steps")) {
        CollectSteps(*steps, Child(Child(Child(pointer, "cases"), i), "steps"), workflow_id, out);
      }
    }
  }
  if (const json::Value* steps = Member(object, "default")) CollectSteps(*steps, Child(pointer, "default"), workflow_id, out);
}

void CollectSteps(const json::Value& list, const std::string& pointer, const std::string& workflow_id,
                  std::vector<StepVisit>& out) {
  if (!list.is_array()) return;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string at = Child(pointer, i);
    if (!list[i].is_object()) continue;
    out.push_back({&list[i], at, workflow_id});
    CollectChildren(list[i], at, workflow_id, out);
  }
}

Result<Document> VersionGate(json::Value root, std::string directory) {
  if (!root.is_object()) return Invalid("document_shape", "a UWS document is a JSON object", "");
  const json::Value* version = Member(root, "uws");
  static const std::regex kVersion(R"(^1\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})(-.+)?$)");
  std::smatch match;
  std::string text = version != nullptr && version->is_string() ? version->get<std::string>() : "";
  if (!std::regex_match(text, match, kVersion)) {
    return Invalid("bad_uws_version", "uws must be a version 1.0.0 to 1.9.x", "/uws");
  }
  Document document;
  document.minor = std::stoi(match[1].str());
  document.patch = std::stoi(match[2].str());
  if (document.minor > 9) return Invalid("bad_uws_version", "uws must be a version 1.0.0 to 1.9.x", "/uws");
  document.root = std::move(root);
  document.directory = std::move(directory);
  return document;
}

}  // namespace

bool IsExtensionKey(std::string_view key) { return key.size() > 2 && key.substr(0, 2) == "x-"; }

std::vector<StepVisit> AllSteps(const json::Value& root) {
  std::vector<StepVisit> out;
  if (const json::Value* workflows = Member(root, "workflows"); workflows && workflows->is_array()) {
    for (std::size_t i = 0; i < workflows->size(); ++i) {
      CollectChildren((*workflows)[i], Child("/workflows", i), StringMember((*workflows)[i], "workflowId"), out);
    }
  }
  return out;
}

Result<Document> ParseDocument(std::string_view text, std::string directory) {
  auto value = json::ParseJsonOrYaml(text);
  if (!value.ok()) {
    Error error = value.error().WithCode("uws.invalid");
    error.details["rule"] = "syntax";
    return error;
  }
  return VersionGate(std::move(value).value(), std::move(directory));
}

Result<Document> LoadDocument(const std::string& path) {
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path, kMaxDocumentBytes));
  std::string directory = path == "-" ? std::filesystem::current_path().string()
                                      : std::filesystem::absolute(path).parent_path().string();
  return ParseDocument(text, std::move(directory));
}

std::vector<Error> Validate(const Document& document) {
  std::vector<Error> errors;
  CheckStructure(document, errors);
  CheckSemantics(document, errors);
  return errors;
}

Error InvalidDocument(const std::vector<Error>& errors) {
  Error error = MakeError("uws.invalid", "the UWS document is invalid", errors.empty() ? "" : errors.front().pointer);
  error.details["errors"] = ErrorsToJson(errors);
  return error;
}

json::Value ErrorsToJson(const std::vector<Error>& errors) {
  json::Value list = json::Value::array();
  for (const auto& error : errors) {
    json::Value entry = {{"code", error.code}, {"message", error.message}, {"pointer", error.pointer}};
    for (const auto& [key, value] : error.details.items()) entry[key] = value;
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace udon::uws
