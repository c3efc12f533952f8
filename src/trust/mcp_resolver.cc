#include "trust/mcp_resolver.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "json/pointer.h"
#include "manifest/review.h"
#include "uws/binding.h"
#include "uws/expression.h"
#include "json/access.h"

namespace udon::trust {
namespace {

constexpr int kMaxRefHops = 32;

Resolution Fail(const char* code, const char* message, std::size_t index) {
  Resolution resolution;
  resolution.owned = true;
  resolution.error = MakeError(code, message, "/operations/" + std::to_string(index));
  return resolution;
}

using json::Member;

// manifest::ResolveBinding's refusal in the resolver's terms: one code per stage, and the
// digest mismatch in its one spelling.
Resolution FailResolving(const Error& error, std::size_t index) {
  const std::string& code = error.code;
  if (code == "manifest.unreadable" || code == "manifest.invalid") {
    return Fail("manifest.invalid", "the manifest cannot be loaded", index);
  }
  if (code == "manifest.digest_mismatch") {
    Resolution resolution = Fail("manifest.digest_mismatch", "", index);
    resolution.error->message = error.message;
    return resolution;
  }
  if (code == "review.missing") return Fail("review.missing", "the bound tool has no review", index);
  if (code == "catalog.task_required" || code.rfind("review.", 0) == 0) {
    return Fail("review.rejected", "the bound tool's review is not acceptable", index);
  }
  return Fail("catalog.tool_missing", "the bound tool cannot be selected", index);
}

// Follows local $refs ("#/..."); nullptr for a remote or dangling one, or a cycle.
const json::Value* Dereference(const json::Value* schema, const json::Value& root) {
  for (int hops = 0; schema != nullptr && hops < kMaxRefHops; ++hops) {
    const json::Value* ref = Member(schema, "$ref");
    if (ref == nullptr) return schema;
    if (!ref->is_string()) return nullptr;
    const std::string& text = ref->get_ref<const std::string&>();
    if (text.rfind('#', 0) != 0) return nullptr;
    auto pointer = json::Pointer::Parse(text.substr(1));
    if (!pointer.ok()) return nullptr;
    // Sibling keywords next to $ref would make the node a combination: ambiguous.
    if (schema->size() > 1) return nullptr;
    schema = pointer->Resolve(root);
  }
  return nullptr;
}

bool IsDecimalIndex(const std::string& token) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return false;
  return std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool HasCombinator(const json::Value& schema) {
  for (const char* keyword : {"allOf", "anyOf", "oneOf", "not", "if", "then", "else"}) {
    if (schema.contains(keyword)) return true;
  }
  return false;
}

}  // namespace

const json::Value* SelectSchemaNode(const json::Value& schema, const std::vector<std::string>& tokens) {
  const json::Value* node = Dereference(&schema, schema);
  for (const std::string& token : tokens) {
    if (node == nullptr || !node->is_object() || HasCombinator(*node)) return nullptr;
    const json::Value* next = nullptr;
    if (const json::Value* properties = Member(node, "properties"); properties && properties->contains(token)) {
      next = &(*properties)[token];
    } else if (IsDecimalIndex(token) && token.size() <= 18 &&
               (node->contains("items") || node->contains("prefixItems"))) {
      const std::size_t index = std::stoull(token);
      const json::Value* prefix = Member(node, "prefixItems");
      if (prefix != nullptr && prefix->is_array() && index < prefix->size()) {
        next = &(*prefix)[index];
      } else if (const json::Value* items = Member(node, "items"); items && items->is_object()) {
        next = items;
      }
    } else if (node->contains("patternProperties")) {
      return nullptr;  // which pattern applies is not decided here: ambiguous
    } else if (const json::Value* extra = Member(node, "additionalProperties"); extra && extra->is_object()) {
      next = extra;
    }
    node = Dereference(next, schema);
  }
  return node;
}

std::string CapabilityOfSchema(const json::Value* schema, const json::Value& root) {
  schema = Dereference(schema, root);
  if (schema == nullptr || !schema->is_object() || HasCombinator(*schema)) return "unknown";
  auto scalar = [](const json::Value& value) { return !value.is_object() && !value.is_array(); };
  if (const json::Value* constant = Member(schema, "const")) {
    return scalar(*constant) ? "constrained_scalar" : "composite";
  }
  if (const json::Value* choices = Member(schema, "enum"); choices && choices->is_array() && !choices->empty()) {
    if (std::all_of(choices->begin(), choices->end(), scalar)) return "constrained_scalar";
    if (std::none_of(choices->begin(), choices->end(), scalar)) return "composite";
    return "unknown";
  }
  const json::Value* type = Member(schema, "type");
  if (type == nullptr || !type->is_string()) return "unknown";  // absent or a union: ambiguous
  const std::string& name = type->get_ref<const std::string&>();
  if (name == "string") return "free_text";
  if (name == "boolean" || name == "number" || name == "integer" || name == "null") return "constrained_scalar";
  if (name == "object" || name == "array") return "composite";
  return "unknown";
}

McpResolver::McpResolver(manifest::Policy policy, std::shared_ptr<manifest::ManifestCache> manifests)
    : policy_(std::move(policy)),
      manifests_(manifests ? std::move(manifests) : std::make_shared<manifest::ManifestCache>()) {}

Resolution McpResolver::ResolveOperation(const uws::Document& document, std::size_t index,
                                         const json::Value& operation) const {
  if (!uws::IsMcpOperation(operation)) return {};
  const json::Value* block = Member(&operation, "x-openudon-mcp");
  auto binding = manifest::ParseBinding(block != nullptr ? *block : json::Value(), document.directory);
  if (!binding.ok()) {
    if (binding.error().code == "manifest.unreadable") {
      return Fail("manifest.unreadable", "the manifest cannot be resolved", index);
    }
    return Fail("uws.invalid", "the MCP binding is incomplete or malformed", index);
  }
  auto bound = manifest::ResolveBinding(*binding, policy_, *manifests_);
  if (!bound.ok()) return FailResolving(bound.error(), index);
  const manifest::Review& review = bound->review;
  const json::Value* tool = &bound->tool();

  const json::Value empty_body = json::Value::object();
  const json::Value* body = Member(Member(&operation, "request"), "body");
  if (body == nullptr) body = &empty_body;
  if (!body->is_object()) return Fail("review.unclassified_channel", "the request body is dynamic", index);
  bool covered = true;
  uws::ForEachExpression(*body, "", [&](const std::string&, const std::string& pointer) {
    covered = covered && manifest::ChannelCovers(review, pointer);
  });
  if (!covered) return Fail("review.unclassified_channel", "a bound argument path has no reviewed channel", index);

  Resolution resolution;
  resolution.owned = true;
  OperationContract& contract = resolution.contract;
  contract.default_trust = "untrusted";
  contract.inherits_input_provenance = true;
  std::vector<std::pair<std::string, manifest::ChannelClass>> channels = review.input_channels;
  std::sort(channels.begin(), channels.end());
  for (const auto& [pointer, channel_class] : channels) {
    auto parsed = json::Pointer::Parse(pointer);
    // Only channels the document binds: an absent optional argument carries nothing.
    if (!parsed.ok() || parsed->Resolve(*body) == nullptr) continue;
    contract.inputs.push_back({"/request/body" + pointer, manifest::ChannelClassName(channel_class), {}});
  }
  const json::Value* output_schema = Member(tool, "outputSchema");
  if (const json::Value* outputs = Member(&operation, "outputs"); outputs && outputs->is_object()) {
    for (const auto& [name, expression] : outputs->items()) {
      if (!expression.is_string()) continue;
      auto parsed = uws::ParseExpression(expression.get<std::string>());
      if (!parsed.ok() || parsed->op.has_value() || parsed->left.root != uws::Root::kResponseBody) continue;
      const json::Value* node = output_schema ? SelectSchemaNode(*output_schema, parsed->left.path) : nullptr;
      contract.outputs[name].capability = output_schema ? CapabilityOfSchema(node, *output_schema) : "unknown";
    }
  }
  return resolution;
}

}  // namespace udon::trust
