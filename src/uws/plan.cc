#include "uws/plan.h"

#include <cmath>
#include <deque>
#include <set>

#include "json/pointer.h"
#include "uws/expression.h"
#include "json/access.h"

namespace udon::uws {
namespace {

using json::Child;
using json::StringMember;

Error Unsupported(std::string construct, std::string pointer) {
  Error error = MakeError("uws.unsupported", "the runner does not execute this construct", std::move(pointer));
  error.details["construct"] = std::move(construct);
  return error;
}

enum class Place { kGeneral, kCriterion, kOperationOutput };

// One expression string: inside the grammar, and no source the runner cannot provide.
Status CheckExpression(const std::string& text, const std::string& pointer, Place place) {
  auto expression = ParseExpression(text);
  if (!expression.ok()) return Unsupported("expression outside the UWS 1.9 core grammar", pointer);
  for (const Source* source : expression->Sources()) {
    switch (source->root) {
      case Root::kResponseStatusCode:
        return Unsupported("$response.statusCode", pointer);
      case Root::kResponseHeader:
        return Unsupported("$response.headers", pointer);
      case Root::kTrigger:
        return Unsupported("$trigger", pointer);
      case Root::kOutputs:
        if (place == Place::kCriterion) return Unsupported("$outputs in criteria", pointer);
        break;
      default:
        break;
    }
  }
  return OkStatus();
}

Status CheckTemplate(const json::Value& value, const std::string& pointer) {
  Status status;
  ForEachExpression(value, "", [&](const std::string& text, const std::string& at) {
    if (status.ok()) status = CheckExpression(text, pointer + at, Place::kGeneral);
  });
  return status;
}

Status CheckOutputs(const json::Value& object, const std::string& pointer, Place place) {
  auto outputs = object.find("outputs");
  if (outputs == object.end() || !outputs->is_object()) return OkStatus();
  for (const auto& [name, value] : outputs->items()) {
    const std::string at = Child(Child(pointer, "outputs"), name);
    if (!value.is_string()) return Unsupported("a non-string output expression", at);
    UDON_RETURN_IF_ERROR(CheckExpression(value.get<std::string>(), at, place));
  }
  return OkStatus();
}

Status CheckStringField(const json::Value& object, const char* field, const std::string& pointer) {
  auto value = object.find(field);
  if (value == object.end() || !value->is_string()) return OkStatus();
  return CheckExpression(value->get<std::string>(), Child(pointer, field), Place::kGeneral);
}

// Members every runnable (workflow, step, operation) may not use.
Status CheckCommon(const json::Value& object, const std::string& pointer) {
  const std::string type = StringMember(object, "type");
  if (type == "merge" || type == "await") return Unsupported(type, Child(pointer, "type"));
  for (const char* field : {"forEach", "wait", "mode", "idempotency", "onSuccess", "body"}) {
    if (object.contains(field)) return Unsupported(field, Child(pointer, field));
  }
  UDON_RETURN_IF_ERROR(CheckStringField(object, "when", pointer));
  UDON_RETURN_IF_ERROR(CheckStringField(object, "items", pointer));
  UDON_RETURN_IF_ERROR(CheckStringField(object, "batchSize", pointer));
  return OkStatus();
}

Status CheckOperation(const json::Value& operation, const std::string& pointer, const BindingCheck& bindings) {
  if (operation.contains("sourceDescription")) return Unsupported("source-bound operation", pointer);
  if (!IsMcpOperation(operation)) return Unsupported("operation profile other than openudon.mcp-tool-call.0.1", pointer);
  if (!bindings.operations.count(StringMember(operation, "operationId"))) {
    return Unsupported("operation without a valid MCP binding", Child(pointer, "x-openudon-mcp"));
  }
  UDON_RETURN_IF_ERROR(CheckCommon(operation, pointer));
  if (auto criteria = operation.find("successCriteria"); criteria != operation.end() && criteria->is_array()) {
    for (std::size_t i = 0; i < criteria->size(); ++i) {
      const json::Value& criterion = (*criteria)[i];
      const std::string at = Child(Child(pointer, "successCriteria"), std::to_string(i));
      const std::string type = StringMember(criterion, "type");
      if (!type.empty() && type != "simple") return Unsupported(type + " criterion", at);
      UDON_RETURN_IF_ERROR(CheckExpression(StringMember(criterion, "condition"), Child(at, "condition"), Place::kCriterion));
    }
  }
  if (auto actions = operation.find("onFailure"); actions != operation.end() && actions->is_array()) {
    for (std::size_t i = 0; i < actions->size(); ++i) {
      const json::Value& action = (*actions)[i];
      const std::string at = Child(Child(pointer, "onFailure"), std::to_string(i));
      const std::string type = StringMember(action, "type");
      if (type != "retry" && type != "end") return Unsupported(type, Child(at, "type"));
      if (auto criteria = action.find("criteria"); criteria != action.end() && criteria->is_array()) {
        for (std::size_t k = 0; k < criteria->size(); ++k) {
          const std::string criterion_at = Child(Child(at, "criteria"), std::to_string(k));
          const std::string criterion_type = StringMember((*criteria)[k], "type");
          if (!criterion_type.empty() && criterion_type != "simple") return Unsupported(criterion_type + " criterion", criterion_at);
          UDON_RETURN_IF_ERROR(CheckExpression(StringMember((*criteria)[k], "condition"), Child(criterion_at, "condition"),
                                               Place::kCriterion));
        }
      }
    }
  }
  if (auto request = operation.find("request"); request != operation.end() && request->is_object() &&
                                                  request->contains("body")) {
    UDON_RETURN_IF_ERROR(CheckTemplate((*request)["body"], Child(Child(pointer, "request"), "body")));
  }
  return CheckOutputs(operation, pointer, Place::kOperationOutput);
}

struct Walker {
  const Plan& plan;
  const BindingCheck& bindings;
  std::deque<std::string> pending;  // names to visit
  std::set<std::string> seen;

  void Queue(const std::string& name) {
    if (seen.insert(name).second) pending.push_back(name);
  }

  Status QueueDepends(const json::Value& object) {
    auto depends = object.find("dependsOn");
    if (depends == object.end() || !depends->is_array()) return OkStatus();
    for (const auto& name : *depends) {
      if (name.is_string()) Queue(name.get<std::string>());
    }
    return OkStatus();
  }

  Status Steps(const json::Value& container, const std::string& pointer) {
    for (const char* list : {"steps", "default"}) {
      auto steps = container.find(list);
      if (steps == container.end() || !steps->is_array()) continue;
      for (std::size_t i = 0; i < steps->size(); ++i) {
        UDON_RETURN_IF_ERROR(Step((*steps)[i], Child(Child(pointer, list), std::to_string(i))));
      }
    }
    if (auto cases = container.find("cases"); cases != container.end() && cases->is_array()) {
      for (std::size_t i = 0; i < cases->size(); ++i) {
        const json::Value& item = (*cases)[i];
        const std::string at = Child(Child(pointer, "cases"), std::to_string(i));
        if (item.contains("body")) return Unsupported("body", Child(at, "body"));
        UDON_RETURN_IF_ERROR(CheckStringField(item, "when", at));
        UDON_RETURN_IF_ERROR(Steps(item, at));
      }
    }
    return OkStatus();
  }

  Status Step(const json::Value& step, const std::string& pointer) {
    seen.insert(StringMember(step, "stepId"));
    UDON_RETURN_IF_ERROR(CheckCommon(step, pointer));
    UDON_RETURN_IF_ERROR(CheckOutputs(step, pointer, Place::kGeneral));
    if (auto inputs = step.find("inputs"); inputs != step.end()) {
      UDON_RETURN_IF_ERROR(CheckTemplate(*inputs, Child(pointer, "inputs")));
    }
    const bool call = step.contains("operationRef") || step.contains("workflow");
    if (call && (step.contains("steps") || step.contains("cases") || step.contains("default"))) {
      return Unsupported("child blocks on an operationRef or workflow step", pointer);
    }
    if (step.contains("operationRef")) Queue(StringMember(step, "operationRef"));
    if (step.contains("workflow")) Queue(StringMember(step, "workflow"));
    UDON_RETURN_IF_ERROR(QueueDepends(step));
    return Steps(step, pointer);
  }

  Status Workflow(const json::Value& workflow, const std::string& pointer) {
    UDON_RETURN_IF_ERROR(CheckCommon(workflow, pointer));
    UDON_RETURN_IF_ERROR(CheckOutputs(workflow, pointer, Place::kGeneral));
    UDON_RETURN_IF_ERROR(QueueDepends(workflow));
    return Steps(workflow, pointer);
  }

  Status Run() {
    Queue(plan.entry);
    while (!pending.empty()) {
      std::string name = pending.front();
      pending.pop_front();
      if (auto it = plan.workflows.find(name); it != plan.workflows.end()) {
        UDON_RETURN_IF_ERROR(Workflow(*it->second, PointerOf("/workflows", "workflowId", name)));
      } else if (auto op = plan.operations.find(name); op != plan.operations.end()) {
        const std::string pointer = PointerOf("/operations", "operationId", name);
        UDON_RETURN_IF_ERROR(CheckOperation(*op->second, pointer, bindings));
        UDON_RETURN_IF_ERROR(QueueDepends(*op->second));
      } else if (auto step = plan.steps.find(name); step != plan.steps.end()) {
        UDON_RETURN_IF_ERROR(Step(*step->second, plan.step_pointers.at(name)));
      } else if (auto group = plan.groups.find(name); group != plan.groups.end()) {
        for (const auto& member : group->second) Queue(member);
      }
    }
    return OkStatus();
  }

  std::string PointerOf(const char* list, const char* id_field, const std::string& id) const {
    const json::Value& items = plan.document->root[list + 1];
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (StringMember(items[i], id_field) == id) return std::string(list) + "/" + std::to_string(i);
    }
    return list;
  }
};

bool TypeMatches(const json::Value& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    return value.is_number_integer() ||
           (value.is_number_float() && std::isfinite(value.get<double>()) && std::floor(value.get<double>()) == value.get<double>());
  }
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "null") return value.is_null();
  return true;
}

}  // namespace

Result<Plan> MakePlan(const Document& document, const BindingCheck& bindings,
                      const std::optional<std::string>& workflow) {
  Plan plan;
  plan.document = &document;
  plan.bindings = bindings.operations;
  const json::Value& root = document.root;
  for (const char* field : {"triggers", "results"}) {
    if (root.contains(field)) return Unsupported(field, std::string("/") + field);
  }
  if (auto workflows = root.find("workflows"); workflows != root.end() && workflows->is_array()) {
    for (const auto& item : *workflows) plan.workflows.emplace(StringMember(item, "workflowId"), &item);
  }
  if (auto operations = root.find("operations"); operations != root.end() && operations->is_array()) {
    for (const auto& item : *operations) {
      plan.operations.emplace(StringMember(item, "operationId"), &item);
      if (std::string group = StringMember(item, "parallelGroup"); !group.empty()) {
        plan.groups[group].push_back(StringMember(item, "operationId"));
      }
    }
  }
  for (const auto& visit : AllSteps(root)) {
    const std::string id = StringMember(*visit.step, "stepId");
    plan.steps.emplace(id, visit.step);
    plan.step_pointers.emplace(id, visit.pointer);
    if (std::string group = StringMember(*visit.step, "parallelGroup"); !group.empty()) plan.groups[group].push_back(id);
  }
  if (auto components = root.find("components"); components != root.end() && components->contains("variables") &&
                                                   (*components)["variables"].is_object()) {
    plan.variables = (*components)["variables"];
  }
  if (auto variables = root.find("variables"); variables != root.end() && variables->is_object()) {
    for (const auto& [name, value] : variables->items()) plan.variables[name] = value;
  }
  if (workflow) {
    if (!plan.workflows.count(*workflow)) {
      Error error = MakeError("usage.invalid", "--workflow names no workflow of the document");
      return error;
    }
    plan.entry = *workflow;
  } else if (plan.workflows.size() == 1) {
    plan.entry = plan.workflows.begin()->first;
  } else if (plan.workflows.empty()) {
    Error error = MakeError("uws.invalid", "the document has no workflow to run", "/workflows");
    error.details["rule"] = "no_entry_workflow";
    return error;
  } else if (plan.workflows.count("main")) {
    plan.entry = "main";
  } else {
    Error error = MakeError("uws.invalid", "several workflows and none is main; choose one with --workflow", "/workflows");
    error.details["rule"] = "no_entry_workflow";
    return error;
  }
  Walker walker{plan, bindings, {}, {}};
  UDON_RETURN_IF_ERROR(walker.Run());
  return plan;
}

Status CheckEntryInputs(const Plan& plan, const json::Value& inputs) {
  if (!inputs.is_object()) return MakeError("usage.invalid", "the workflow inputs must be a JSON object");
  const json::Value& workflow = *plan.workflows.at(plan.entry);
  auto schema = workflow.find("inputs");
  if (schema == workflow.end() || !schema->is_object()) return OkStatus();
  if (auto required = schema->find("required"); required != schema->end() && required->is_array()) {
    for (const auto& name : *required) {
      if (name.is_string() && !inputs.contains(name.get<std::string>())) {
        return MakeError("usage.invalid", "a required workflow input is missing", "/" + json::Pointer::EscapeToken(name.get<std::string>()));
      }
    }
  }
  if (auto properties = schema->find("properties"); properties != schema->end() && properties->is_object()) {
    for (const auto& [name, property] : properties->items()) {
      if (!inputs.contains(name) || !property.is_object() || !property.contains("type")) continue;
      const json::Value& type = property["type"];
      bool matches = false;
      if (type.is_string()) {
        matches = TypeMatches(inputs[name], type.get<std::string>());
      } else if (type.is_array()) {
        for (const auto& entry : type) matches = matches || (entry.is_string() && TypeMatches(inputs[name], entry.get<std::string>()));
      } else {
        matches = true;
      }
      if (!matches) return MakeError("usage.invalid", "a workflow input has the wrong type", "/" + json::Pointer::EscapeToken(name));
    }
  }
  return OkStatus();
}

}  // namespace udon::uws
