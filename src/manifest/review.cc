#include "manifest/review.h"

#include <algorithm>
#include <set>

#include "json/pointer.h"

namespace udon::manifest {
namespace {

Error ReviewIncomplete(const char* message, std::string pointer) {
  return MakeError("review.incomplete", message, std::move(pointer));
}

Error Rejected(const char* message, std::string pointer) {
  return MakeError("review.rejected", message, std::move(pointer));
}

// headless, independentCalls and referenceBasedIO: present, boolean, and true.
Status RequireTrue(const json::Value& assertions, const char* name) {
  const std::string pointer = std::string("/assertions/") + name;
  auto it = assertions.find(name);
  if (it == assertions.end() || !it->is_boolean()) {
    return ReviewIncomplete("assertion must be stated as true or false", pointer);
  }
  if (!it->get<bool>()) return Rejected("Stage 1 requires this assertion to be true", pointer);
  return OkStatus();
}

Status ReadSideEffects(const json::Value& assertions, const Policy& policy, Review& review) {
  auto it = assertions.find("sideEffects");
  if (it == assertions.end() || !it->is_array()) {
    return ReviewIncomplete("sideEffects must enumerate classes (an explicit [] for none)",
                      "/assertions/sideEffects");
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json::Value& item = (*it)[i];
    const std::string pointer = "/assertions/sideEffects/" + std::to_string(i);
    if (!item.is_string() || item.get<std::string>().empty()) {
      return ReviewIncomplete("a side-effect class must be a non-empty string", pointer);
    }
    if (!seen.insert(item.get<std::string>()).second) {
      return Rejected("a side-effect class is listed twice", pointer);
    }
    if (policy.allowed_side_effects &&
        std::find(policy.allowed_side_effects->begin(), policy.allowed_side_effects->end(),
                  item.get<std::string>()) == policy.allowed_side_effects->end()) {
      return Rejected("local policy does not allow this side-effect class", pointer);
    }
    review.side_effects.push_back(item.get<std::string>());
  }
  return OkStatus();
}

Status ReadConcurrency(const json::Value& assertions, Review& review) {
  auto it = assertions.find("concurrency");
  if (it == assertions.end() || !it->is_string()) {
    return ReviewIncomplete("concurrency must be \"safe\" or \"serialize\"", "/assertions/concurrency");
  }
  if (*it == "safe") review.concurrency = Concurrency::kSafe;
  else if (*it == "serialize") review.concurrency = Concurrency::kSerialize;
  else return Rejected("concurrency must be \"safe\" or \"serialize\"", "/assertions/concurrency");

  auto scope = assertions.find("serializeScope");
  if (scope == assertions.end()) return OkStatus();
  if (review.concurrency != Concurrency::kSerialize) {
    return Rejected("serializeScope applies only to concurrency \"serialize\"",
                    "/assertions/serializeScope");
  }
  if (*scope == "tool") review.serialize_scope = SerializeScope::kTool;
  else if (*scope == "server") review.serialize_scope = SerializeScope::kServer;
  else return Rejected("serializeScope must be \"tool\" or \"server\"", "/assertions/serializeScope");
  return OkStatus();
}

Status ReadChannels(const json::Value& review_json, Review& review) {
  auto it = review_json.find("inputChannels");
  if (it == review_json.end() || !it->is_object()) {
    return ReviewIncomplete("inputChannels must map argument pointers to channel classes",
                      "/inputChannels");
  }
  for (const auto& [pointer, value] : it->items()) {
    const std::string where = "/inputChannels/" + json::Pointer::EscapeToken(pointer);
    if (!json::Pointer::Parse(pointer).ok()) {
      return Rejected("a channel key must be an RFC 6901 pointer", where);
    }
    if (!value.is_string()) return ReviewIncomplete("a channel class must be a string", where);
    ChannelClass channel;
    if (value == "data") channel = ChannelClass::kData;
    else if (value == "instruction") channel = ChannelClass::kInstruction;
    else if (value == "authority") channel = ChannelClass::kAuthority;
    else return Rejected("a channel class must be data, instruction or authority", where);
    review.input_channels.emplace_back(pointer, channel);
  }
  return OkStatus();
}

// Follows a local "$ref" ("#/..." only) a bounded number of times.
const json::Value* Deref(const json::Value& root, const json::Value* node) {
  for (int hops = 0; hops < 32 && node != nullptr && node->is_object(); ++hops) {
    auto ref = node->find("$ref");
    if (ref == node->end() || !ref->is_string()) return node;
    const std::string target = ref->get<std::string>();
    if (target.empty() || target[0] != '#') return nullptr;
    auto pointer = json::Pointer::Parse(target.substr(1));
    if (!pointer.ok()) return nullptr;
    node = pointer->Resolve(root);
  }
  return node;
}

bool IsIndexToken(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return false;
  return std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Where an argument path token leads inside a schema node; nullptr when nowhere.
const json::Value* StepInto(const json::Value& root, const json::Value* node,
                            const std::string& token, int depth) {
  node = Deref(root, node);
  if (node == nullptr || !node->is_object() || depth > 16) return nullptr;
  if (auto props = node->find("properties"); props != node->end() && props->contains(token)) {
    return &(*props)[token];
  }
  if (IsIndexToken(token)) {
    const std::size_t index = std::stoul(token);
    if (auto prefix = node->find("prefixItems");
        prefix != node->end() && prefix->is_array() && index < prefix->size()) {
      return &(*prefix)[index];
    }
    if (auto items = node->find("items"); items != node->end()) {
      if (items->is_object()) return &*items;
      if (items->is_array() && index < items->size()) return &(*items)[index];  // draft-07
    }
  }
  if (auto extra = node->find("additionalProperties"); extra != node->end() && extra->is_object()) {
    return &*extra;
  }
  for (const char* combinator : {"allOf", "anyOf", "oneOf"}) {
    auto branches = node->find(combinator);
    if (branches == node->end() || !branches->is_array()) continue;
    for (const json::Value& branch : *branches) {
      if (const json::Value* found = StepInto(root, &branch, token, depth + 1)) return found;
    }
  }
  return nullptr;
}

bool ResolvesInSchema(const json::Value& schema, const json::Pointer& pointer) {
  const json::Value* node = &schema;
  for (const std::string& token : pointer.tokens()) {
    node = StepInto(schema, node, token, 0);
    if (node == nullptr) return false;
  }
  return true;
}

}  // namespace

const char* ChannelClassName(ChannelClass channel) {
  switch (channel) {
    case ChannelClass::kData: return "data";
    case ChannelClass::kInstruction: return "instruction";
    case ChannelClass::kAuthority: return "authority";
  }
  return "data";
}

Result<Review> ValidateReview(const json::Value& review_json, const Policy& policy) {
  if (!review_json.is_object()) return ReviewIncomplete("a review must be an object", "");
  Review review;
  auto reviewer = review_json.find("reviewer");
  if (reviewer == review_json.end() || !reviewer->is_string() ||
      reviewer->get<std::string>().empty()) {
    return ReviewIncomplete("reviewer identity is missing", "/reviewer");
  }
  review.reviewer = reviewer->get<std::string>();
  auto reviewed_at = review_json.find("reviewedAt");
  if (reviewed_at == review_json.end() || !reviewed_at->is_string() ||
      !ParseInstant(reviewed_at->get<std::string>()).ok()) {
    return ReviewIncomplete("reviewedAt must be YYYY-MM-DDTHH:MM:SSZ", "/reviewedAt");
  }
  review.reviewed_at = *ParseInstant(reviewed_at->get<std::string>());
  if (auto notes = review_json.find("notes"); notes != review_json.end() && !notes->is_string()) {
    return ReviewIncomplete("notes must be a string", "/notes");
  }

  auto assertions = review_json.find("assertions");
  if (assertions == review_json.end() || !assertions->is_object()) {
    return ReviewIncomplete("assertions are missing", "/assertions");
  }
  UDON_RETURN_IF_ERROR(RequireTrue(*assertions, "headless"));
  UDON_RETURN_IF_ERROR(RequireTrue(*assertions, "independentCalls"));
  auto model_backed = assertions->find("modelBacked");
  if (model_backed == assertions->end() || !model_backed->is_boolean()) {
    return ReviewIncomplete("modelBacked must be stated as true or false", "/assertions/modelBacked");
  }
  review.model_backed = model_backed->get<bool>();
  if (review.model_backed && !policy.allow_model_backed) {
    return Rejected("local policy does not allow model-backed tools", "/assertions/modelBacked");
  }
  UDON_RETURN_IF_ERROR(ReadSideEffects(*assertions, policy, review));
  UDON_RETURN_IF_ERROR(ReadConcurrency(*assertions, review));
  UDON_RETURN_IF_ERROR(RequireTrue(*assertions, "referenceBasedIO"));
  UDON_RETURN_IF_ERROR(ReadChannels(review_json, review));
  return review;
}

Status ValidateReviewAgainstTool(const Review& review, const json::Value& tool) {
  if (auto execution = tool.find("execution"); execution != tool.end() && execution->is_object()) {
    if (auto support = execution->find("taskSupport");
        support != execution->end() && *support == "required") {
      return MakeError("catalog.task_required",
                       "the tool requires task-augmented calls, which Stage 1 excludes",
                       "/execution/taskSupport");
    }
  }
  auto schema = tool.find("inputSchema");
  for (const auto& [pointer_text, channel] : review.input_channels) {
    const std::string where = "/inputChannels/" + json::Pointer::EscapeToken(pointer_text);
    auto pointer = json::Pointer::Parse(pointer_text);
    if (!pointer.ok()) return Rejected("a channel key must be an RFC 6901 pointer", where);
    if (schema == tool.end() || !ResolvesInSchema(*schema, *pointer)) {
      return Rejected("a channel pointer does not resolve in the tool's inputSchema", where);
    }
  }
  return OkStatus();
}

Result<Review> ApplyReview(Manifest& manifest, std::string_view server, std::string_view tool,
                           const json::Value& review_json, const Policy& policy, Seconds now) {
  UDON_ASSIGN_OR_RETURN(ToolLocation selected, SelectTool(manifest, server, tool));
  UDON_ASSIGN_OR_RETURN(Review review, ValidateReview(review_json, policy));
  UDON_RETURN_IF_ERROR(ValidateReviewAgainstTool(review, *selected.tool));
  // Set on a copy: a review dated from the future (or before its capture) must leave the
  // caller's manifest as it was.
  Manifest updated = manifest;
  UDON_RETURN_IF_ERROR(updated.SetReview(server, tool, review_json));
  UDON_RETURN_IF_ERROR(updated.CheckInstants(now, policy));
  manifest = std::move(updated);
  return review;
}

namespace {

void CollectArgumentPointers(const json::Value& schema, const json::Value* node, const std::string& prefix,
                             int depth, int max_depth, std::vector<std::string>& out) {
  node = Deref(schema, node);
  if (node == nullptr || !node->is_object() || depth >= max_depth) return;
  auto props = node->find("properties");
  if (props == node->end() || !props->is_object()) return;
  for (const auto& [name, child] : props->items()) {
    const std::string pointer = prefix + "/" + json::Pointer::EscapeToken(name);
    out.push_back(pointer);
    CollectArgumentPointers(schema, &child, pointer, depth + 1, max_depth, out);
  }
}

}  // namespace

std::vector<std::string> ArgumentPointers(const json::Value& tool, int max_depth) {
  std::vector<std::string> pointers;
  auto schema = tool.find("inputSchema");
  if (schema == tool.end() || !schema->is_object()) return pointers;
  CollectArgumentPointers(*schema, &*schema, "", 0, max_depth, pointers);
  return pointers;
}

Result<ToolLocation> SelectTool(const Manifest& manifest, std::string_view server,
                                std::string_view tool) {
  if (!manifest.has_server(server)) {
    return MakeError("manifest.server_unknown", "the server is not in the manifest", "/servers");
  }
  std::vector<ToolLocation> found = manifest.FindTool(server, tool);
  if (found.empty()) {
    return MakeError("catalog.tool_missing", "the selected tool is not in the captured catalog");
  }
  if (found.size() > 1) {
    Error error = MakeError("catalog.tool_duplicate",
                            "the selected tool name occurs more than once in the captured catalog",
                            found[1].Pointer(server));
    error.details["occurrences"] = found.size();
    return error;
  }
  return found.front();
}

bool ChannelCovers(const Review& review, std::string_view argument_pointer) {
  for (const auto& [pointer, channel] : review.input_channels) {
    if (argument_pointer == pointer) return true;
    if (argument_pointer.size() > pointer.size() && argument_pointer.substr(0, pointer.size()) == pointer &&
        argument_pointer[pointer.size()] == '/') {
      return true;
    }
  }
  return false;
}

std::vector<std::string> UnclassifiedTopLevelArguments(const Review& review,
                                                       const json::Value& tool) {
  std::vector<std::string> left;
  auto schema = tool.find("inputSchema");
  if (schema == tool.end() || !schema->is_object()) return left;
  const json::Value* root = Deref(*schema, &*schema);
  if (root == nullptr || !root->is_object()) return left;
  auto props = root->find("properties");
  if (props == root->end() || !props->is_object()) return left;
  for (const auto& [name, value] : props->items()) {
    if (!ChannelCovers(review, "/" + json::Pointer::EscapeToken(name))) left.push_back(name);
  }
  return left;
}

json::DisplayText RenderToolForReview(const json::Value& tool) {
  json::DisplayText out;
  // Descriptions are read on their own lines and keep their line breaks; names, titles
  // and member names are one-line values. Pretty JSON escapes breaks inside its strings.
  auto add = [&out](std::string_view text, json::LineBreaks breaks) {
    json::DisplayText shown = json::ForDisplay(text, breaks);
    out.text += shown.text;
    out.hidden.Add(shown.hidden);
  };
  auto text_field = [&](const char* label, const json::Value* value, json::LineBreaks breaks) {
    if (value == nullptr) return;
    out.text += label;
    out.text += ": ";
    if (value->is_string()) {
      add(value->get<std::string>(), breaks);
    } else {
      add(value->dump(), json::LineBreaks::kEscape);
    }
    out.text += "\n";
  };
  auto json_field = [&](const char* label, const char* member) {
    auto it = tool.find(member);
    if (it == tool.end()) return;
    out.text += label;
    out.text += ":\n";
    add(it->dump(2, ' ', false), json::LineBreaks::kKeep);
    out.text += "\n";
  };
  auto find = [&](const char* member) -> const json::Value* {
    auto it = tool.find(member);
    return it == tool.end() ? nullptr : &*it;
  };
  text_field("name", find("name"), json::LineBreaks::kEscape);
  text_field("title", find("title"), json::LineBreaks::kEscape);
  text_field("description", find("description"), json::LineBreaks::kKeep);
  json_field("annotations", "annotations");
  json_field("execution", "execution");
  json_field("inputSchema", "inputSchema");
  json_field("outputSchema", "outputSchema");
  for (const auto& [member, value] : tool.items()) {
    if (member == "name" || member == "title" || member == "description" ||
        member == "annotations" || member == "execution" || member == "inputSchema" ||
        member == "outputSchema") {
      continue;
    }
    add(member, json::LineBreaks::kEscape);
    out.text += ":\n";
    add(value.dump(2, ' ', false), json::LineBreaks::kKeep);
    out.text += "\n";
  }
  return out;
}

}  // namespace udon::manifest
