#include "uws/binding.h"

#include <optional>

#include "json/pointer.h"
#include "manifest/review.h"
#include "schema/schema.h"
#include "uws/expression.h"
#include "json/access.h"

namespace udon::uws {
namespace {

using json::Child;

Error At(Error error, const std::string& pointer) {
  if (!error.pointer.empty()) error.details["manifestPointer"] = error.pointer;
  error.pointer = pointer;
  return error;
}

Error Shape(const char* message, const std::string& pointer) {
  Error error = MakeError("uws.invalid", message, pointer);
  error.details["rule"] = "mcp_binding";
  return error;
}

// Can the pointer tokens select a value in instances of the schema? False only when the
// schema rules it out for certain; anything the check cannot decide counts as possible.
bool CanExist(const json::Value& schema, const json::Value& root, const std::vector<std::string>& tokens,
              std::size_t at, int depth) {
  if (depth > 64) return true;
  if (schema.is_boolean()) return schema.get<bool>();
  if (!schema.is_object()) return true;
  if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
    const std::string& text = ref->get_ref<const std::string&>();
    if (text.rfind("#", 0) == 0) {
      auto pointer = json::Pointer::Parse(text.substr(1));
      const json::Value* target = pointer.ok() ? pointer->Resolve(root) : nullptr;
      if (target != nullptr && !CanExist(*target, root, tokens, at, depth + 1)) return false;
    }
  }
  if (auto all = schema.find("allOf"); all != schema.end() && all->is_array()) {
    for (const auto& part : *all) {
      if (!CanExist(part, root, tokens, at, depth + 1)) return false;
    }
  }
  for (const char* keyword : {"anyOf", "oneOf"}) {
    auto some = schema.find(keyword);
    if (some == schema.end() || !some->is_array() || some->empty()) continue;
    bool any = false;
    for (const auto& part : *some) any = any || CanExist(part, root, tokens, at, depth + 1);
    if (!any) return false;
  }
  if (at == tokens.size()) return true;
  const std::string& token = tokens[at];
  bool object_allowed = true;
  bool array_allowed = true;
  if (auto type = schema.find("type"); type != schema.end()) {
    auto allows = [&](const char* name) {
      if (type->is_string()) return *type == name;
      if (type->is_array()) {
        for (const auto& entry : *type) {
          if (entry == name) return true;
        }
        return false;
      }
      return true;
    };
    object_allowed = allows("object");
    array_allowed = allows("array");
  }
  bool possible = false;
  if (object_allowed) {
    auto properties = schema.find("properties");
    if (properties != schema.end() && properties->is_object() && properties->contains(token)) {
      possible = CanExist((*properties)[token], root, tokens, at + 1, depth + 1);
    } else if (schema.contains("patternProperties")) {
      possible = true;
    } else if (auto additional = schema.find("additionalProperties"); additional != schema.end()) {
      possible = CanExist(*additional, root, tokens, at + 1, depth + 1);
    } else {
      possible = true;
    }
  }
  if (!possible && array_allowed) {
    const bool canonical = !token.empty() && token.size() <= 18 && (token == "0" || token[0] != '0') &&
                           token.find_first_not_of("0123456789") == std::string::npos;
    if (canonical) {
      std::size_t index = std::stoull(token);
      auto prefix = schema.find("prefixItems");
      if (prefix != schema.end() && prefix->is_array() && index < prefix->size()) {
        possible = CanExist((*prefix)[index], root, tokens, at + 1, depth + 1);
      } else if (auto items = schema.find("items"); items != schema.end()) {
        possible = CanExist(*items, root, tokens, at + 1, depth + 1);
      } else {
        possible = true;
      }
    }
  }
  return possible;
}

void CheckBindingOutputs(const json::Value& operation, const json::Value& tool, const std::string& pointer,
                  std::vector<Error>& errors) {
  const json::Value* outputs = operation.contains("outputs") ? &operation["outputs"] : nullptr;
  if (outputs == nullptr || !outputs->is_object() || !tool.contains("outputSchema")) return;
  const json::Value& output_schema = tool["outputSchema"];
  for (const auto& [name, text] : outputs->items()) {
    if (!text.is_string()) continue;
    auto expression = ParseExpression(text.get<std::string>());
    if (!expression.ok()) continue;  // the plan refuses what is outside the grammar
    for (const Source* source : expression->Sources()) {
      if (source->root != Root::kResponseBody) continue;
      if (!CanExist(output_schema, output_schema, source->path, 0, 0)) {
        Error error = MakeError("uws.invalid", "the output pointer cannot exist in the reviewed outputSchema",
                                Child(Child(pointer, "outputs"), name));
        error.details["rule"] = "output_pointer";
        errors.push_back(std::move(error));
      }
    }
  }
}

// The pointer of the first expression in value (ForEachExpression's rule) that reads
// $response.body, if any. Expressions outside the grammar are the plan's to refuse.
std::optional<std::string> FirstResponseBodyRead(const json::Value& value, const std::string& pointer) {
  std::optional<std::string> found;
  ForEachExpression(value, pointer, [&](const std::string& text, const std::string& at) {
    if (found) return;
    auto expression = ParseExpression(text);
    if (!expression.ok()) return;
    for (const Source* source : expression->Sources()) {
      if (source->root == Root::kResponseBody) found = at;
    }
  });
  return found;
}

// Where the runner evaluates $response.body against this operation's result: its own
// outputs, successCriteria and actions, and the outputs (and criteria) of every step that
// calls it. Any such read depends on structuredContent as much as declared outputs do, so
// it counts as declared outputs: without this, a missing structuredContent reads as null.
std::optional<std::string> ResponseBodyRead(const Document& document, const json::Value& operation,
                                            const std::string& pointer) {
  static constexpr const char* kEvaluated[] = {"outputs", "successCriteria", "onSuccess", "onFailure"};
  for (const char* member : kEvaluated) {
    if (auto it = operation.find(member); it != operation.end()) {
      if (auto at = FirstResponseBodyRead(*it, Child(pointer, member))) return at;
    }
  }
  const std::string id = operation.value("operationId", "");
  for (const StepVisit& visit : AllSteps(document.root)) {
    const json::Value& step = *visit.step;
    if (!step.contains("operationRef") || step["operationRef"] != id) continue;
    for (const char* member : kEvaluated) {
      if (auto it = step.find(member); it != step.end()) {
        if (auto at = FirstResponseBodyRead(*it, Child(visit.pointer, member))) return at;
      }
    }
  }
  return std::nullopt;
}

// The request: only body (and x-*); the body is an object of literals and expressions, or
// absent. Collects the bound paths.
bool CheckRequest(const json::Value& operation, const std::string& pointer, McpOperation& bound,
                  std::vector<Error>& errors) {
  if (!operation.contains("request")) return true;
  const json::Value& request = operation["request"];
  bool ok = true;
  if (request.is_object()) {
    for (const auto& [key, unused] : request.items()) {
      if (key == "body" || IsExtensionKey(key)) continue;
      Error error = MakeError("uws.unsupported", "an MCP operation maps only request.body",
                              Child(Child(pointer, "request"), key));
      error.details["construct"] = "request." + key;
      errors.push_back(std::move(error));
      ok = false;
    }
  }
  if (!request.is_object() || !request.contains("body")) return ok;
  const json::Value& body = request["body"];
  const std::string body_pointer = Child(Child(pointer, "request"), "body");
  if (body.is_string() && !body.get<std::string>().empty() && body.get<std::string>().front() == '$') {
    errors.push_back(MakeError("review.unclassified_channel",
                               "a dynamic body binds argument paths no review can classify", body_pointer));
    return false;
  }
  if (!body.is_object()) {
    errors.push_back(MakeError("input.schema_violation", "tools/call arguments must be a JSON object", body_pointer));
    return false;
  }
  ForEachExpression(body, "", [&](const std::string&, const std::string& path) { bound.bound_paths.push_back(path); });
  return ok;
}

// Job 1: decode the block (manifest::ParseBinding), its problems placed in the document.
std::optional<manifest::Binding> DecodeBinding(const Document& document, const json::Value& operation,
                                               const std::string& binding_pointer, std::vector<Error>& errors) {
  static const json::Value kAbsent;
  auto it = operation.find("x-openudon-mcp");
  std::vector<Error> problems;
  auto binding = manifest::ParseBinding(it == operation.end() ? kAbsent : *it, document.directory, &problems);
  if (binding.ok()) return std::move(binding).value();
  for (Error& problem : problems) {
    problem.pointer = binding_pointer + problem.pointer;
    errors.push_back(std::move(problem));
  }
  return std::nullopt;
}

// Job 2: the manifest, pin, tool and review (manifest::ResolveBinding). Manifest-side
// problems point at the binding member they concern; details.manifestPointer keeps where
// in the manifest.
std::optional<manifest::BoundTool> ResolveOperationBinding(const manifest::Binding& binding,
                                                           const std::string& binding_pointer,
                                                           const manifest::Policy& policy,
                                                           manifest::ManifestCache& manifests,
                                                           std::vector<Error>& errors) {
  auto bound = manifest::ResolveBinding(binding, policy, manifests);
  if (bound.ok()) return std::move(bound).value();
  const std::string& code = bound.error().code;
  std::string at = binding_pointer;
  if (code == "manifest.unreadable" || code == "manifest.invalid") at = Child(binding_pointer, "manifest");
  if (code == "manifest.digest_mismatch") at = Child(binding_pointer, "manifestSha256");
  errors.push_back(At(std::move(bound).error(), at));
  return std::nullopt;
}

// Job 3: whatever reads $response.body needs an outputSchema to read from.
void CheckOutputSchema(const Document& document, const json::Value& operation, const std::string& pointer,
                       const json::Value& tool, McpOperation& bound, std::vector<Error>& errors) {
  const bool declares_outputs =
      operation.contains("outputs") && operation["outputs"].is_object() && !operation["outputs"].empty();
  const std::optional<std::string> body_read = ResponseBodyRead(document, operation, pointer);
  bound.expects_output = declares_outputs || body_read.has_value();
  if (bound.expects_output && !tool.contains("outputSchema")) {
    errors.push_back(MakeError("binding.output_schema_required",
                               declares_outputs ? "outputs are declared but the reviewed Tool has no outputSchema"
                                                : "$response.body is read but the reviewed Tool has no outputSchema",
                               declares_outputs ? Child(pointer, "outputs") : *body_read));
  }
}

// Job 4: the body against the review and the Tool: every bound path on a reviewed
// channel; a body of literals only must already satisfy the inputSchema.
void CheckBody(const json::Value& operation, const std::string& pointer, const manifest::BoundTool& target,
               const McpOperation& bound, std::vector<Error>& errors) {
  const std::string body_pointer = Child(Child(pointer, "request"), "body");
  for (const auto& bound_path : bound.bound_paths) {
    if (!manifest::ChannelCovers(target.review, bound_path)) {
      errors.push_back(MakeError("review.unclassified_channel", "a bound argument path has no reviewed input channel",
                                 body_pointer + bound_path));
    }
  }
  const json::Value& tool = target.tool();
  if (!bound.bound_paths.empty() || !tool.contains("inputSchema") || !tool["inputSchema"].is_object()) return;
  json::Value arguments = json::Value::object();
  if (operation.contains("request") && operation["request"].contains("body")) arguments = operation["request"]["body"];
  auto compiled = schema::CompiledSchema::Compile(tool["inputSchema"]);
  if (compiled.ok() && !compiled->IsValid(arguments)) {
    errors.push_back(MakeError("input.schema_violation",
                               "the literal body does not validate against the reviewed inputSchema", body_pointer));
  }
}

void CheckOperationBinding(const Document& document, const json::Value& operation, const std::string& pointer,
                    const manifest::Policy& policy, manifest::ManifestCache& manifests, BindingCheck& out) {
  const std::string binding_pointer = Child(pointer, "x-openudon-mcp");
  std::optional<manifest::Binding> binding = DecodeBinding(document, operation, binding_pointer, out.errors);
  if (!binding) return;
  std::optional<manifest::BoundTool> target =
      ResolveOperationBinding(*binding, binding_pointer, policy, manifests, out.errors);
  if (!target) return;
  McpOperation bound;
  bound.operation_id = operation.value("operationId", "");
  bound.pointer = pointer;
  bound.binding = std::move(*binding);
  const std::size_t errors_before = out.errors.size();
  CheckOutputSchema(document, operation, pointer, target->tool(), bound, out.errors);
  if (CheckRequest(operation, pointer, bound, out.errors)) CheckBody(operation, pointer, *target, bound, out.errors);
  CheckBindingOutputs(operation, target->tool(), pointer, out.errors);
  if (out.errors.size() == errors_before) out.operations.emplace(bound.operation_id, std::move(bound));
}

}  // namespace

bool IsMcpOperation(const json::Value& operation) {
  return operation.is_object() && operation.contains("x-uws-operation-profile") &&
         operation["x-uws-operation-profile"] == kMcpProfile;
}

BindingCheck CheckBindings(const Document& document, const manifest::Policy& policy) {
  manifest::ManifestCache manifests;
  return CheckBindings(document, policy, manifests);
}

BindingCheck CheckBindings(const Document& document, const manifest::Policy& policy,
                           manifest::ManifestCache& manifests) {
  BindingCheck out;
  const json::Value& operations = document.root.contains("operations") ? document.root["operations"] : json::Value();
  if (!operations.is_array()) return out;
  for (std::size_t i = 0; i < operations.size(); ++i) {
    const json::Value& operation = operations[i];
    const std::string pointer = "/operations/" + std::to_string(i);
    if (IsMcpOperation(operation)) {
      CheckOperationBinding(document, operation, pointer, policy, manifests, out);
    } else if (operation.is_object() && operation.contains("x-openudon-mcp")) {
      out.errors.push_back(Shape("x-openudon-mcp needs x-uws-operation-profile openudon.mcp-tool-call.0.1", pointer));
    }
  }
  return out;
}

}  // namespace udon::uws
