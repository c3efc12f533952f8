#include "cli/serve_settings.h"

#include "base/file.h"
#include "json/pointer.h"
#include "json/yaml.h"

namespace udon::cli {
namespace {

Error Invalid(const std::string& pointer, const std::string& message) {
  return MakeError("serve.settings_invalid", "serve settings: " + message, pointer);
}

Result<std::string> Text(const json::Value& value, const std::string& pointer) {
  if (!value.is_string() || value.get<std::string>().empty()) return Invalid(pointer, "a member that must be a non-empty string");
  return value.get<std::string>();
}

Result<int> Integer(const json::Value& value, const std::string& pointer, int minimum, int maximum) {
  if (!value.is_number_integer() || value.get<long long>() < minimum || value.get<long long>() > maximum) {
    return Invalid(pointer, "a member that must be an integer from " + std::to_string(minimum) + " to " +
                                std::to_string(maximum));
  }
  return static_cast<int>(value.get<long long>());
}

// scopeTools: {"SCOPE": ["TOOL", ...]} as --scope-tools SCOPE=TOOL,... gives it.
Result<std::vector<std::string>> ScopeTools(const json::Value& value, const std::string& pointer) {
  if (!value.is_object() || value.empty()) return Invalid(pointer, "a member that must map scopes to arrays of tool names");
  std::vector<std::string> mappings;
  for (const auto& [scope, tools] : value.items()) {
    const std::string at = pointer + "/" + json::Pointer::EscapeToken(scope);
    if (!tools.is_array() || tools.empty()) return Invalid(at, "a member that must be a non-empty array of tool names");
    std::string mapping = scope + "=";
    for (std::size_t i = 0; i < tools.size(); ++i) {
      UDON_ASSIGN_OR_RETURN(std::string tool, Text(tools[i], at + "/" + std::to_string(i)));
      mapping += (i == 0 ? "" : ",") + tool;
    }
    mappings.push_back(std::move(mapping));
  }
  return mappings;
}

Status ReadIntrospection(const json::Value& value, ServeOAuthOptions& auth) {
  const std::string pointer = "/auth/introspection";
  if (!value.is_object()) return Invalid(pointer, "a member that must be an object");
  for (const auto& [member, item] : value.items()) {
    const std::string at = pointer + "/" + json::Pointer::EscapeToken(member);
    if (member == "clientId") {
      UDON_ASSIGN_OR_RETURN(auth.introspection_client_id, Text(item, at));
    } else if (member == "secretFile") {
      UDON_ASSIGN_OR_RETURN(auth.introspection_secret_file, Text(item, at));
    } else {
      return Invalid(at, "an unknown member");
    }
  }
  if (auth.introspection_client_id.empty() || auth.introspection_secret_file.empty()) {
    return Invalid(pointer, "introspection needs clientId and secretFile");
  }
  return OkStatus();
}

Result<ServeOAuthOptions> ReadAuth(const json::Value& value) {
  if (!value.is_object()) return Invalid("/auth", "a member that must be an object");
  ServeOAuthOptions auth;
  for (const auto& [member, item] : value.items()) {
    const std::string at = "/auth/" + json::Pointer::EscapeToken(member);
    if (member == "issuer") {
      UDON_ASSIGN_OR_RETURN(auth.issuer, Text(item, at));
    } else if (member == "audience") {
      UDON_ASSIGN_OR_RETURN(auth.audience, Text(item, at));
    } else if (member == "scopeTools") {
      UDON_ASSIGN_OR_RETURN(auth.scope_tools, ScopeTools(item, at));
    } else if (member == "grantsClaim") {
      UDON_ASSIGN_OR_RETURN(auth.grants_claim, Text(item, at));
    } else if (member == "clockSkewSeconds") {
      UDON_ASSIGN_OR_RETURN(auth.clock_skew_seconds, Integer(item, at, 0, 300));
    } else if (member == "introspection") {
      UDON_RETURN_IF_ERROR(ReadIntrospection(item, auth));
    } else {
      return Invalid(at, "an unknown member");
    }
  }
  for (const char* required : {"issuer", "audience", "scopeTools"}) {
    if (!value.contains(required)) return Invalid(std::string("/auth/") + required, "a required member is missing");
  }
  return auth;
}

Status ReadMember(const std::string& member, const json::Value& value, ServeSettings& settings) {
  const std::string at = "/" + json::Pointer::EscapeToken(member);
  if (member == "listen") {
    UDON_ASSIGN_OR_RETURN(settings.listen, Text(value, at));
  } else if (member == "metricsListen") {
    UDON_ASSIGN_OR_RETURN(settings.metrics_listen, Text(value, at));
  } else if (member == "otlpEndpoint") {
    UDON_ASSIGN_OR_RETURN(settings.otlp_endpoint, Text(value, at));
  } else if (member == "state") {
    UDON_ASSIGN_OR_RETURN(settings.state, Text(value, at));
  } else if (member == "drainSeconds") {
    UDON_ASSIGN_OR_RETURN(settings.drain_seconds, Integer(value, at, 0, 3600));
  } else if (member == "auth") {
    UDON_ASSIGN_OR_RETURN(settings.auth, ReadAuth(value));
  } else {
    return Invalid(at, "an unknown member");
  }
  return OkStatus();
}

}  // namespace

Result<ServeSettings> ParseServeSettings(std::string_view text) {
  auto document = json::ParseJsonOrYaml(text);
  if (!document.ok()) return document.error().WithCode("serve.settings_invalid");
  if (!document->is_object()) return Invalid("", "the settings must be an object");
  ServeSettings settings;
  for (const auto& [member, value] : document->items()) UDON_RETURN_IF_ERROR(ReadMember(member, value, settings));
  return settings;
}

Result<ServeSettings> ReadServeSettings(const std::string& path) {
  UDON_ASSIGN_OR_RETURN(std::string text, base::ReadFile(path, 1u << 20));
  return ParseServeSettings(text);
}

}  // namespace udon::cli
