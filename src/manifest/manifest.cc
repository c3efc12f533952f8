#include "manifest/manifest.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>
#include <unordered_map>

#include "json/canonical.h"
#include "base/file.h"
#include "json/pointer.h"

#include "json/access.h"

namespace udon::manifest {
namespace {

Error Invalid(const char* message, std::string pointer) {
  return MakeError("manifest.invalid", message, std::move(pointer));
}

Error Incomplete(const char* message, std::string pointer) {
  return MakeError("manifest.incomplete", message, std::move(pointer));
}

Error InvalidInstant(const char* message, std::string pointer) {
  return MakeError("manifest.invalid_instant", message, std::move(pointer));
}

using json::Child;

// Members outside `known` (and not x-*) make the document invalid: a closed set fails
// closed on a field some newer writer added that this reader would silently ignore.
Status CheckClosedMembers(const json::Value& object, std::initializer_list<std::string_view> known,
                          const std::string& pointer) {
  for (const auto& [name, value] : object.items()) {
    if (IsExtensionMember(name)) continue;
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return Invalid("unknown member", Child(pointer, name));
    }
  }
  return OkStatus();
}

Status CheckOptionalType(const json::Value& object, std::string_view member,
                         json::Value::value_t type, const char* message,
                         const std::string& pointer) {
  auto it = object.find(member);
  if (it == object.end()) return OkStatus();
  const bool matches = type == json::Value::value_t::string ? it->is_string()
                       : type == json::Value::value_t::object ? it->is_object()
                                                               : it->is_array();
  if (!matches) return Invalid(message, Child(pointer, member));
  return OkStatus();
}

Status CheckReviewShape(const json::Value& review, const std::string& pointer) {
  if (!review.is_object()) return Invalid("a review must be an object", pointer);
  UDON_RETURN_IF_ERROR(CheckClosedMembers(
      review, {"reviewer", "reviewedAt", "assertions", "inputChannels", "notes"}, pointer));
  if (auto assertions = review.find("assertions");
      assertions != review.end() && assertions->is_object()) {
    UDON_RETURN_IF_ERROR(CheckClosedMembers(
        *assertions,
        {"headless", "independentCalls", "modelBacked", "sideEffects", "concurrency",
         "serializeScope", "referenceBasedIO"},
        Child(pointer, "assertions")));
  }
  return OkStatus();
}

Status CheckServerShape(const json::Value& server, const std::string& pointer) {
  if (!server.is_object()) return Invalid("a server entry must be an object", pointer);
  UDON_RETURN_IF_ERROR(CheckClosedMembers(server, {"serverInfo", "toolPages", "reviews"}, pointer));
  UDON_RETURN_IF_ERROR(CheckOptionalType(server, "serverInfo", json::Value::value_t::object,
                                         "serverInfo must be an object", pointer));
  UDON_RETURN_IF_ERROR(CheckOptionalType(server, "toolPages", json::Value::value_t::array,
                                         "toolPages must be an array", pointer));
  UDON_RETURN_IF_ERROR(CheckOptionalType(server, "reviews", json::Value::value_t::object,
                                         "reviews must be an object", pointer));
  if (auto pages = server.find("toolPages"); pages != server.end()) {
    for (std::size_t p = 0; p < pages->size(); ++p) {
      const json::Value& page = (*pages)[p];
      const std::string page_pointer = pointer + "/toolPages/" + std::to_string(p);
      if (!page.is_object()) return Invalid("a tool page must be an object", page_pointer);
      auto tools = page.find("tools");
      if (tools == page.end() || !tools->is_array()) {
        return Invalid("a tool page needs a tools array", page_pointer);
      }
      for (std::size_t t = 0; t < tools->size(); ++t) {
        const json::Value& tool = (*tools)[t];
        const std::string tool_pointer = page_pointer + "/tools/" + std::to_string(t);
        if (!tool.is_object() || !tool.contains("name") || !tool["name"].is_string()) {
          return Invalid("a tool must be an object with a string name", tool_pointer);
        }
      }
      if (auto cursor = page.find("nextCursor"); cursor != page.end() && !cursor->is_string()) {
        return Invalid("nextCursor must be a string", page_pointer + "/nextCursor");
      }
    }
  }
  if (auto reviews = server.find("reviews"); reviews != server.end()) {
    for (const auto& [tool, review] : reviews->items()) {
      UDON_RETURN_IF_ERROR(CheckReviewShape(review, Child(pointer + "/reviews", tool)));
    }
  }
  return OkStatus();
}

Status CheckShape(const json::Value& document) {
  if (!document.is_object()) return Invalid("a manifest must be a JSON object", "");
  UDON_RETURN_IF_ERROR(CheckClosedMembers(
      document, {"profile", "protocolVersion", "capturedAt", "expiresAt", "servers"}, ""));
  auto profile = document.find("profile");
  if (profile == document.end() || *profile != kManifestProfile) {
    return Invalid("profile must be openudon.mcp-tool-manifest.0.1", "/profile");
  }
  for (const char* member : {"protocolVersion", "capturedAt", "expiresAt"}) {
    UDON_RETURN_IF_ERROR(CheckOptionalType(document, member, json::Value::value_t::string,
                                           "must be a string", ""));
  }
  UDON_RETURN_IF_ERROR(CheckOptionalType(document, "servers", json::Value::value_t::object,
                                         "servers must be an object", ""));
  if (auto servers = document.find("servers"); servers != document.end()) {
    for (const auto& [key, server] : servers->items()) {
      const std::string pointer = Child("/servers", key);
      if (!IsValidServerKey(key)) return Invalid("server key must match [A-Za-z0-9_.-]{1,64}", pointer);
      UDON_RETURN_IF_ERROR(CheckServerShape(server, pointer));
    }
  }
  return OkStatus();
}

// A carried-over review (kCarriedOverMember) whose reviewedAt is not earlier than the
// capture the reviewer read: the review still followed what it reviewed.
bool CarriedOverFromBefore(const json::Value& review, Seconds reviewed) {
  auto mark = review.find(kCarriedOverMember);
  if (mark == review.end() || !mark->is_object()) return false;
  auto from = mark->find("fromCapturedAt");
  if (from == mark->end() || !from->is_string()) return false;
  auto from_at = ParseInstant(from->get<std::string>());
  return from_at.ok() && *from_at <= reviewed;
}

}  // namespace

bool IsValidServerKey(std::string_view key) {
  if (key.empty() || key.size() > 64) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.' || c == '-';
  });
}

bool IsExtensionMember(std::string_view name) { return name.substr(0, 2) == "x-"; }

std::string ToolLocation::Pointer(std::string_view server) const {
  return "/servers/" + json::Pointer::EscapeToken(server) + "/toolPages/" + std::to_string(page) +
         "/tools/" + std::to_string(index);
}

Result<Manifest> Manifest::FromText(std::string_view text) {
  auto document = json::Parse(text);
  if (!document.ok()) {
    Error error = document.error().WithCode("manifest.invalid");
    error.details["jsonCode"] = document.error().code;
    return error;
  }
  return FromValue(std::move(document).value());
}

Result<Manifest> Manifest::FromValue(json::Value document) {
  UDON_RETURN_IF_ERROR(CheckShape(document));
  Manifest manifest(std::move(document));
  UDON_RETURN_IF_ERROR(manifest.Rehash());
  manifest.IndexTools();
  return manifest;
}

Result<Manifest> Manifest::Load(const std::string& path) {
  auto text = base::ReadFile(path);
  if (!text.ok()) return text.error().WithCode("manifest.unreadable");
  return FromText(*text);
}

Status Manifest::Rehash() {
  auto digest = json::CanonicalSha256(document_);
  if (!digest.ok()) return digest.error().WithCode("manifest.invalid");
  sha256_ = std::move(digest).value();
  return OkStatus();
}

std::optional<std::string> Manifest::protocol_version() const {
  auto it = document_.find("protocolVersion");
  if (it == document_.end()) return std::nullopt;
  return it->get<std::string>();
}

std::vector<std::string> Manifest::server_keys() const {
  std::vector<std::string> keys;
  if (auto servers = document_.find("servers"); servers != document_.end()) {
    for (const auto& [key, value] : servers->items()) keys.push_back(key);
  }
  return keys;
}

bool Manifest::has_server(std::string_view key) const { return server(key) != nullptr; }

const json::Value* Manifest::server(std::string_view key) const {
  auto servers = document_.find("servers");
  if (servers == document_.end()) return nullptr;
  auto it = servers->find(key);
  return it == servers->end() ? nullptr : &*it;
}

const json::Value* Manifest::server_info(std::string_view key) const {
  const json::Value* entry = server(key);
  if (entry == nullptr) return nullptr;
  auto it = entry->find("serverInfo");
  return it == entry->end() ? nullptr : &*it;
}

const json::Value* Manifest::tool_pages(std::string_view key) const {
  const json::Value* entry = server(key);
  if (entry == nullptr) return nullptr;
  auto it = entry->find("toolPages");
  return it == entry->end() ? nullptr : &*it;
}

namespace {

// The name of a Tool object, or null: a lookup that builds no key string and no JSON value
// for the comparison (it runs for every tool of the catalog on every gated call).
const std::string* NameOf(const json::Value& tool) {
  if (!tool.is_object()) return nullptr;
  auto it = tool.find(std::string_view("name"));
  return it != tool.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

const json::Value* ToolsOf(const json::Value& page) {
  if (!page.is_object()) return nullptr;
  auto it = page.find(std::string_view("tools"));
  return it != page.end() && it->is_array() ? &*it : nullptr;
}

}  // namespace

void Manifest::IndexTools() {
  tool_index_.clear();
  for (const std::string& key : server_keys()) {
    NameIndex& names = tool_index_[key];
    const json::Value* pages = tool_pages(key);
    if (pages == nullptr) continue;
    for (std::size_t p = 0; p < pages->size(); ++p) {
      const json::Value* tools = ToolsOf((*pages)[p]);
      if (tools == nullptr) continue;
      for (std::size_t t = 0; t < tools->size(); ++t) {
        if (const std::string* name = NameOf((*tools)[t])) names[*name].emplace_back(p, t);
      }
    }
  }
}

std::vector<ToolLocation> Manifest::FindTool(std::string_view key, std::string_view name) const {
  std::vector<ToolLocation> found;
  auto server_entry = tool_index_.find(key);
  if (server_entry == tool_index_.end()) return found;
  auto positions = server_entry->second.find(name);
  if (positions == server_entry->second.end()) return found;
  const json::Value& pages = *tool_pages(key);
  for (const auto& [p, t] : positions->second) {
    found.push_back({p, t, &(*ToolsOf(pages[p]))[t]});
  }
  return found;
}

std::vector<std::pair<std::string, std::size_t>> Manifest::ToolNames(std::string_view key) const {
  std::vector<std::pair<std::string, std::size_t>> names;
  std::unordered_map<std::string_view, std::size_t> index;  // name -> its entry in `names`
  const json::Value* pages = tool_pages(key);
  if (pages == nullptr) return names;
  for (const json::Value& page : *pages) {
    const json::Value* tools = ToolsOf(page);
    if (tools == nullptr) continue;
    for (const json::Value& tool : *tools) {
      const std::string* name = NameOf(tool);
      if (name == nullptr) continue;
      auto [it, inserted] = index.try_emplace(*name, names.size());
      if (inserted) {
        names.emplace_back(*name, 1);
      } else {
        ++names[it->second].second;
      }
    }
  }
  return names;
}

const json::Value* Manifest::review(std::string_view key, std::string_view tool) const {
  const json::Value* entry = server(key);
  if (entry == nullptr) return nullptr;
  auto reviews = entry->find("reviews");
  if (reviews == entry->end()) return nullptr;
  auto it = reviews->find(tool);
  return it == reviews->end() ? nullptr : &*it;
}

Status Manifest::CheckCaptureComplete() const {
  if (!document_.contains("protocolVersion")) {
    return Incomplete("protocolVersion is missing", "/protocolVersion");
  }
  for (const char* member : {"capturedAt", "expiresAt"}) {
    auto it = document_.find(member);
    if (it == document_.end()) return Incomplete("capture instant is missing", std::string("/") + member);
    if (!ParseInstant(it->get<std::string>()).ok()) {
      return Invalid("instant must be YYYY-MM-DDTHH:MM:SSZ", std::string("/") + member);
    }
  }
  auto servers = document_.find("servers");
  if (servers == document_.end() || servers->empty()) {
    return Incomplete("no servers were captured", "/servers");
  }
  for (const auto& [key, entry] : servers->items()) {
    const std::string pointer = Child("/servers", key);
    auto info = entry.find("serverInfo");
    if (info == entry.end()) return Incomplete("serverInfo is missing", pointer + "/serverInfo");
    auto pages = entry.find("toolPages");
    if (pages == entry.end() || pages->empty()) {
      return Incomplete("toolPages is missing or empty", pointer + "/toolPages");
    }
    for (std::size_t p = 0; p < pages->size(); ++p) {
      const bool last = p + 1 == pages->size();
      const bool has_cursor = (*pages)[p].contains("nextCursor");
      if (last && has_cursor) {
        return Incomplete("the last captured page still has a nextCursor: the listing was not exhausted",
                          pointer + "/toolPages/" + std::to_string(p) + "/nextCursor");
      }
      if (!last && !has_cursor) {
        return Invalid("a page before the last has no nextCursor",
                       pointer + "/toolPages/" + std::to_string(p));
      }
    }
  }
  return OkStatus();
}

Status Manifest::CheckFreshness(Seconds now, const Policy& policy) const {
  UDON_RETURN_IF_ERROR(CheckCaptureComplete());
  const Seconds captured = *ParseInstant(document_["capturedAt"].get<std::string>());
  const Seconds expires = *ParseInstant(document_["expiresAt"].get<std::string>());
  if (expires <= captured) {
    return Invalid("expiresAt must be after capturedAt", "/expiresAt");
  }
  if (expires - captured > static_cast<Seconds>(policy.max_review_window_days) * kSecondsPerDay) {
    Error error = MakeError("manifest.window_exceeds_policy",
                            "expiresAt - capturedAt exceeds the policy's maxReviewWindowDays",
                            "/expiresAt");
    error.details["maxReviewWindowDays"] = policy.max_review_window_days;
    return error;
  }
  UDON_RETURN_IF_ERROR(CheckInstants(now, policy));
  if (now >= expires) return MakeError("manifest.expired", "the manifest has expired", "/expiresAt");
  return OkStatus();
}

Status Manifest::CheckInstants(Seconds now, const Policy& policy) const {
  // An instant from the future would stretch the review window past the policy's limit
  // (expiry counts from capturedAt), so only clock skew between machines is tolerated.
  const Seconds latest = now + policy.clock_skew_seconds;
  auto captured_at = document_.find("capturedAt");
  if (captured_at == document_.end() || !captured_at->is_string()) return OkStatus();
  auto captured = ParseInstant(captured_at->get<std::string>());
  if (!captured.ok()) return OkStatus();  // CheckCaptureComplete names malformed instants
  if (*captured > latest) return InvalidInstant("capturedAt is later than now", "/capturedAt");
  auto servers = document_.find("servers");
  if (servers == document_.end()) return OkStatus();
  for (const auto& [key, entry] : servers->items()) {
    auto reviews = entry.find("reviews");
    if (reviews == entry.end()) continue;
    for (const auto& [tool, review] : reviews->items()) {
      auto reviewed_at = review.find("reviewedAt");
      if (reviewed_at == review.end() || !reviewed_at->is_string()) continue;
      auto reviewed = ParseInstant(reviewed_at->get<std::string>());
      if (!reviewed.ok()) continue;  // ValidateReview refuses it as review.incomplete
      const std::string pointer = Child(Child("/servers", key) + "/reviews", tool) + "/reviewedAt";
      if (*reviewed > latest) return InvalidInstant("reviewedAt is later than now", pointer);
      // A review of a capture that did not exist yet reviewed something else, unless it
      // was carried over from the earlier capture of an identical Tool it was made on.
      if (*reviewed < *captured && !CarriedOverFromBefore(review, *reviewed)) {
        return InvalidInstant("reviewedAt is earlier than capturedAt", pointer);
      }
    }
  }
  return OkStatus();
}

std::string Manifest::ToPrettyJson() const { return document_.dump(2) + "\n"; }

Status Manifest::SetReview(std::string_view key, std::string_view tool, json::Value review) {
  auto servers = document_.find("servers");
  if (servers == document_.end() || !servers->contains(key)) {
    return MakeError("manifest.server_unknown", "the server is not in the manifest");
  }
  json::Value& entry = (*servers)[std::string(key)];
  entry["reviews"][std::string(tool)] = std::move(review);
  UDON_RETURN_IF_ERROR(CheckShape(document_));
  return Rehash();
}

}  // namespace udon::manifest
