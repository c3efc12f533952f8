#include "mcp/client/config.h"

#include <cstdlib>
#include <filesystem>

#include "base/file.h"
#include "json/canonical.h"
#include "json/json.h"
#include "mcp/client/least_privilege.h"
#include "mcp/client/internal/config_names.h"

namespace udon::mcp {
namespace {

using internal::ConfigInvalid;
using internal::IsVariableName;

constexpr std::size_t kMaxConfigBytes = 4u * 1024u * 1024u;

bool IsValidKey(std::string_view key) {
  if (key.empty() || key.size() > 64) return false;
  for (char c : key) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string PointerToken(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

// One ${...} reference: ${env:NAME} (VS Code, Cursor), ${NAME} and ${NAME:-default}
// (Claude Code: the default when NAME is unset or empty). ${input:ID} is a value VS Code
// would prompt for: nobody answers prompts in front of a gate.
struct Reference {
  std::string name;
  std::optional<std::string> fallback;
};

Result<Reference> ParseReference(std::string_view body) {
  if (body.rfind("input:", 0) == 0) {
    return udon::MakeError("config.invalid",
                           "${input:...} asks the user for a value when the server starts; udon-mcp runs headless "
                           "and never prompts: put the value in the environment and write ${env:NAME}");
  }
  Reference ref;
  if (body.rfind("env:", 0) == 0) {
    ref.name = std::string(body.substr(4));
  } else if (const std::size_t dash = body.find(":-"); dash != std::string_view::npos) {
    ref.name = std::string(body.substr(0, dash));
    ref.fallback = std::string(body.substr(dash + 2));
  } else {
    ref.name = std::string(body);
  }
  if (!IsVariableName(ref.name)) {
    return udon::MakeError("config.invalid",
                           "a ${...} reference must be ${env:NAME}, ${NAME} or ${NAME:-default}");
  }
  return ref;
}

Result<std::string> ExpandAt(const json::Value& value, const EnvLookup& env,
                             const std::string& pointer) {
  if (!value.is_string()) return ConfigInvalid("expected a string", pointer);
  auto expanded = ExpandEnv(value.get<std::string>(), env);
  if (!expanded.ok()) return std::move(expanded).error().AtPrefix(pointer);
  return expanded;
}

Result<std::vector<std::pair<std::string, std::string>>> ExpandMap(const json::Value& value,
                                                                   const EnvLookup& env,
                                                                   const std::string& pointer) {
  if (!value.is_object()) return ConfigInvalid("expected an object of strings", pointer);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, item] : value.items()) {
    UDON_ASSIGN_OR_RETURN(std::string expanded,
                          ExpandAt(item, env, pointer + "/" + PointerToken(name)));
    out.emplace_back(name, std::move(expanded));
  }
  return out;
}

// "type" as clients write it: stdio, http or streamable-http (the same transport). "sse" is
// the HTTP+SSE transport of 2024-11-05, which udon-mcp does not speak.
Status CheckType(const json::Value& type, ServerType wanted, const std::string& pointer) {
  if (type == "sse") {
    return ConfigInvalid("type \"sse\" is the old HTTP+SSE transport, which udon-mcp does not speak; point url at the "
                   "server's Streamable HTTP endpoint and write \"type\": \"http\"",
                   pointer);
  }
  const bool stdio = type == "stdio";
  const bool http = type == "http" || type == "streamable-http";
  if (!type.is_string() || (!stdio && !http) || stdio != (wanted == ServerType::kStdio)) {
    return ConfigInvalid("type must be \"stdio\" (with command) or \"http\" or \"streamable-http\" (with url)", pointer);
  }
  return OkStatus();
}

Result<std::optional<std::string>> OptionalExpanded(const json::Value& object, const char* name, const EnvLookup& env,
                                                   const std::string& pointer) {
  if (!object.contains(name)) return std::optional<std::string>();
  UDON_ASSIGN_OR_RETURN(std::string value, ExpandAt(object[name], env, pointer + "/" + name));
  if (value.empty()) return ConfigInvalid("an oauth member must not be empty", pointer + "/" + name);
  return std::optional<std::string>(std::move(value));
}

Result<OAuthSettings> ParseOAuth(const json::Value& object, const EnvLookup& env, const std::string& pointer) {
  if (!object.is_object()) return ConfigInvalid("oauth must be an object", pointer);
  for (const auto& [name, value] : object.items()) {
    if (name != "clientId" && name != "clientSecret" && name != "redirectPort" && name != "clientMetadataUrl" &&
        name != "resource") {
      return ConfigInvalid("oauth takes clientId, clientSecret, redirectPort, clientMetadataUrl and resource", pointer);
    }
  }
  OAuthSettings oauth;
  UDON_ASSIGN_OR_RETURN(oauth.client_id, OptionalExpanded(object, "clientId", env, pointer));
  UDON_ASSIGN_OR_RETURN(oauth.client_secret, OptionalExpanded(object, "clientSecret", env, pointer));
  UDON_ASSIGN_OR_RETURN(oauth.client_metadata_url, OptionalExpanded(object, "clientMetadataUrl", env, pointer));
  if (oauth.client_secret && !oauth.client_id) return ConfigInvalid("oauth clientSecret needs clientId", pointer);
  if (object.contains("redirectPort")) {
    const json::Value& port = object["redirectPort"];
    if (!port.is_number_integer() || port.get<long long>() < 1 || port.get<long long>() > 65535) {
      return ConfigInvalid("oauth redirectPort must be a port number", pointer + "/redirectPort");
    }
    oauth.redirect_port = static_cast<int>(port.get<long long>());
  }
  if (object.contains("resource")) {
    if (!object["resource"].is_boolean()) return ConfigInvalid("oauth resource must be a boolean", pointer + "/resource");
    oauth.send_resource = object["resource"].get<bool>();
  }
  return oauth;
}

Result<ServerConfig> ParseServer(const std::string& key, const json::Value& entry,
                                 bool typed_root, const EnvLookup& env,
                                 const std::string& base_dir, const std::string& pointer) {
  if (!IsValidKey(key)) return ConfigInvalid("server keys must match ^[A-Za-z0-9_.-]{1,64}$", pointer);
  if (!entry.is_object()) return ConfigInvalid("a server entry must be an object", pointer);
  ServerConfig server;
  server.key = key;
  server.pointer = pointer;
  // Windsurf names the URL serverUrl; everyone else, url.
  const bool has_server_url = entry.contains("serverUrl");
  if (has_server_url && entry.contains("url")) return ConfigInvalid("a server takes url or serverUrl, not both", pointer);
  const char* url_member = has_server_url ? "serverUrl" : "url";
  const bool has_command = entry.contains("command");
  const bool has_url = entry.contains(url_member);
  if (has_command == has_url) {
    return ConfigInvalid("a server needs exactly one of command or url", pointer);
  }
  server.type = has_command ? ServerType::kStdio : ServerType::kHttp;
  if (entry.contains("type")) {
    UDON_RETURN_IF_ERROR(CheckType(entry["type"], server.type, pointer + "/type"));
  } else if (typed_root) {
    return ConfigInvalid("entries under \"servers\" need a type", pointer + "/type");
  }
  if (entry.contains("disabled") && !entry["disabled"].is_boolean()) {
    return ConfigInvalid("disabled must be a boolean", pointer + "/disabled");
  }
  if (entry.contains("timeout")) {
    const json::Value& timeout = entry["timeout"];
    if (!timeout.is_number_integer() || timeout.get<long long>() <= 0) {
      return ConfigInvalid("timeout must be a positive number of milliseconds", pointer + "/timeout");
    }
    server.timeout_ms = timeout.get<long long>();
  }
  if (server.type == ServerType::kStdio) {
    if (entry.contains("url") || entry.contains("serverUrl") || entry.contains("headers") || entry.contains("oauth")) {
      return ConfigInvalid("a stdio server takes no url, headers or oauth", pointer);
    }
    // Claude Code expands variables in command too (a path under ${HOME}, say).
    if (!entry["command"].is_string()) return ConfigInvalid("command must be a non-empty string", pointer + "/command");
    UDON_ASSIGN_OR_RETURN(server.command, ExpandAt(entry["command"], env, pointer + "/command"));
    if (server.command.empty()) return ConfigInvalid("command must be a non-empty string", pointer + "/command");
    if (entry.contains("args")) {
      const json::Value& args = entry["args"];
      if (!args.is_array()) return ConfigInvalid("args must be an array of strings", pointer + "/args");
      for (std::size_t i = 0; i < args.size(); ++i) {
        UDON_ASSIGN_OR_RETURN(std::string arg,
                              ExpandAt(args[i], env, pointer + "/args/" + std::to_string(i)));
        server.args.push_back(std::move(arg));
      }
    }
    if (entry.contains("env")) {
      UDON_ASSIGN_OR_RETURN(server.env, ExpandMap(entry["env"], env, pointer + "/env"));
    }
    if (entry.contains("cwd")) {
      UDON_ASSIGN_OR_RETURN(std::string cwd, ExpandAt(entry["cwd"], env, pointer + "/cwd"));
      std::filesystem::path path(cwd);
      if (path.is_relative()) path = std::filesystem::path(base_dir) / path;
      server.cwd = path.lexically_normal().string();
    }
    if (entry.contains("inheritEnv")) {
      UDON_RETURN_IF_ERROR(ParseInheritEnv(entry["inheritEnv"], pointer + "/inheritEnv", server));
    }
    if (entry.contains("sandbox")) {
      UDON_ASSIGN_OR_RETURN(server.sandbox,
                            ParseSandbox(entry["sandbox"], env, base_dir, pointer + "/sandbox"));
    }
  } else {
    if (entry.contains("args") || entry.contains("env") || entry.contains("cwd") ||
        entry.contains("inheritEnv") || entry.contains("sandbox")) {
      return ConfigInvalid("an http server takes no args, env, cwd, inheritEnv or sandbox", pointer);
    }
    const std::string url_pointer = pointer + "/" + url_member;
    UDON_ASSIGN_OR_RETURN(server.url, ExpandAt(entry[url_member], env, url_pointer));
    if (server.url.rfind("http://", 0) != 0 && server.url.rfind("https://", 0) != 0) {
      return ConfigInvalid("url must be http:// or https://", url_pointer);
    }
    if (entry.contains("headers")) {
      UDON_ASSIGN_OR_RETURN(server.headers, ExpandMap(entry["headers"], env, pointer + "/headers"));
      for (const auto& [name, value] : server.headers) {
        const bool bad = name.empty() || name.find_first_of(":\r\n ") != std::string::npos ||
                         value.find_first_of("\r\n") != std::string::npos;
        if (bad) return ConfigInvalid("a header name or value is not allowed", pointer + "/headers");
      }
    }
    if (entry.contains("oauth")) {
      UDON_ASSIGN_OR_RETURN(server.oauth, ParseOAuth(entry["oauth"], env, pointer + "/oauth"));
    }
  }
  return server;
}

// Host and port of a URL, without userinfo, path or query (which may carry secrets).
std::string UrlAuthority(const std::string& url) {
  auto start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  auto end = url.find_first_of("/?#", start);
  std::string authority = url.substr(start, end == std::string::npos ? end : end - start);
  auto at = authority.rfind('@');
  if (at != std::string::npos) authority = authority.substr(at + 1);
  return url.substr(0, start) + authority;
}

// The reserved-variable rule of least_privilege.h for one entry, wherever it names them:
// in any ${...} reference or in inheritEnv. Other problems wait until the entry is used.
Status RefuseReservedVariables(const json::Value& value, const std::string& pointer) {
  const auto reserved = [](const Error& error) {
    return error.details.contains("variable") && IsReservedVariable(error.details["variable"].get<std::string>());
  };
  if (value.is_string()) {
    const EnvLookup anything = [](const std::string&) { return std::optional<std::string>(""); };
    auto expanded = ExpandEnv(value.get<std::string>(), anything);
    if (!expanded.ok() && reserved(expanded.error())) return std::move(expanded).error().AtPrefix(pointer);
    return OkStatus();
  }
  if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      UDON_RETURN_IF_ERROR(RefuseReservedVariables(value[i], pointer + "/" + std::to_string(i)));
    }
  }
  if (value.is_object()) {
    for (const auto& [name, item] : value.items()) {
      UDON_RETURN_IF_ERROR(RefuseReservedVariables(item, pointer + "/" + PointerToken(name)));
    }
    if (value.contains("inheritEnv")) {
      ServerConfig scratch;
      Status inherited = ParseInheritEnv(value["inheritEnv"], pointer + "/inheritEnv", scratch);
      if (!inherited.ok() && reserved(inherited.error())) return inherited;
    }
  }
  return OkStatus();
}

}  // namespace

std::string ServerConfig::Describe() const {
  std::string out;
  auto names = [](const std::vector<std::pair<std::string, std::string>>& pairs) {
    std::string joined;
    for (const auto& [name, value] : pairs) joined += (joined.empty() ? "" : ",") + name;
    return joined.empty() ? std::string("none") : joined;
  };
  if (type == ServerType::kStdio) {
    out = "stdio server '" + key + "': command " + command + ", " + std::to_string(args.size()) +
          " args, env " + names(env);
    if (inherit_env_all) out += ", inherits the whole environment";
    if (sandbox) {
      out += std::string(", sandboxed (network ") + (sandbox->network ? "host" : "none") + ", " +
             std::to_string(sandbox->readable.size()) + " readable, " + std::to_string(sandbox->writable.size()) +
             " writable)";
    }
  } else {
    out = "http server '" + key + "': " + UrlAuthority(url) + ", headers " + names(headers);
  }
  return out;
}

Result<ServerConfig> RuntimeConfig::Find(std::string_view key) const {
  const std::string name(key);
  if (disabled.count(name) > 0) {
    Error error = udon::MakeError("config.server_unknown", "the server is disabled in the runtime configuration");
    error.details["server"] = name;
    return error;
  }
  if (auto bad = unusable.find(name); bad != unusable.end()) {
    Error error = bad->second;
    error.message = "server '" + name + "': " + error.message;
    error.details["server"] = name;
    return error;
  }
  auto it = servers.find(name);
  if (it == servers.end()) {
    return udon::MakeError("config.server_unknown", "the server key is not in the runtime configuration");
  }
  UDON_RETURN_IF_ERROR(CheckRunnable(it->second, ProcessEnv()));
  if (it->second.type != ServerType::kHttp || !authorize_http) return it->second;
  ServerConfig server = it->second;
  UDON_RETURN_IF_ERROR(authorize_http(server));
  return server;
}

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

Result<std::string> ExpandEnv(std::string_view text, const EnvLookup& env) {
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t start = text.find("${", pos);
    if (start == std::string_view::npos) {
      out.append(text.substr(pos));
      return out;
    }
    out.append(text.substr(pos, start - pos));
    const std::size_t close = text.find('}', start + 2);
    if (close == std::string_view::npos) {
      return udon::MakeError("config.invalid", "a ${...} reference is not closed");
    }
    UDON_ASSIGN_OR_RETURN(Reference ref, ParseReference(text.substr(start + 2, close - start - 2)));
    if (IsReservedVariable(ref.name)) {
      // Copied under another name, udon-mcp's own secrets would reach a server after all.
      Error error = udon::MakeError(
          "config.invalid", "environment variable " + ref.name + " belongs to udon-mcp (UDON_MCP_*, PG*) and cannot be passed on");
      error.details["variable"] = ref.name;
      return error;
    }
    auto value = env(ref.name);
    if (ref.fallback && (!value || value->empty())) value = ref.fallback;
    if (!value) {
      Error error = udon::MakeError("config.invalid", "environment variable " + ref.name + " is not set");
      error.details["variable"] = ref.name;
      return error;
    }
    out.append(*value);
    pos = close + 1;
  }
}

Result<RuntimeConfig> ParseRuntimeConfig(std::string_view text, const EnvLookup& env,
                                         const std::string& base_dir) {
  auto parsed = json::Parse(text);
  if (!parsed.ok()) return std::move(parsed).error().WithCode("config.invalid");
  const json::Value& root = parsed.value();
  if (!root.is_object()) return ConfigInvalid("the configuration must be an object", "");
  const bool has_mcp = root.contains("mcpServers");
  const bool has_servers = root.contains("servers");
  if (has_mcp == has_servers) {
    return ConfigInvalid("exactly one of mcpServers or servers is required", "");
  }
  const std::string root_key = has_mcp ? "mcpServers" : "servers";
  const json::Value& entries = root[root_key];
  if (!entries.is_object()) return ConfigInvalid("the server map must be an object", "/" + root_key);
  RuntimeConfig config;
  for (const auto& [key, entry] : entries.items()) {
    const std::string pointer = "/" + root_key + "/" + PointerToken(key);
    // udon-mcp's own variables are refused whichever server a command uses.
    UDON_RETURN_IF_ERROR(RefuseReservedVariables(entry, pointer));
    if (entry.is_object() && entry.contains("disabled") && entry["disabled"] == true) {
      config.disabled.insert(key);
      continue;
    }
    auto server = ParseServer(key, entry, has_servers, env, base_dir, pointer);
    if (!server.ok()) {
      // Desktop configs hold servers whose tokens this shell lacks: only a command that
      // uses this server hears of it (Find).
      config.unusable.emplace(key, std::move(server).error());
      continue;
    }
    if (server->inherit_env_all) {
      config.warnings.push_back("server '" + key +
                                "' has inheritEnv: true: it receives udon-mcp's whole environment "
                                "(except UDON_MCP_* and PG*), unsafe for third-party code");
    }
    if (auto digest = json::CanonicalSha256(entry); digest.ok()) server->entry_sha256 = *digest;
    config.servers.emplace(key, std::move(server).value());
  }
  return config;
}

std::string ResolveConfigPath(const std::optional<std::string>& flag_path, const EnvLookup& env) {
  if (flag_path && !flag_path->empty()) return *flag_path;
  if (auto from_env = env("UDON_MCP_CONFIG"); from_env && !from_env->empty()) return *from_env;
  return "mcp.json";
}

Result<RuntimeConfig> LoadRuntimeConfig(const std::optional<std::string>& flag_path,
                                        const EnvLookup& env) {
  const std::string path = ResolveConfigPath(flag_path, env);
  auto text = base::ReadFile(path, kMaxConfigBytes);
  if (!text.ok()) return std::move(text).error().WithCode("config.unreadable");
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  UDON_ASSIGN_OR_RETURN(RuntimeConfig config, ParseRuntimeConfig(text.value(), env, base_dir));
  config.path = path;
  return config;
}

}  // namespace udon::mcp
