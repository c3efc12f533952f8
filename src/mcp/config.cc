#include "mcp/config.h"

#include <cstdlib>
#include <filesystem>

#include "json/file.h"
#include "json/json.h"
#include "mcp/least_privilege.h"

namespace udon::mcp {
namespace {

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

bool IsNameChar(char c, bool first) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
         (!first && c >= '0' && c <= '9');
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

Error Invalid(std::string message, std::string pointer) {
  return udon::MakeError("config.invalid", std::move(message), std::move(pointer));
}

Result<std::string> ExpandAt(const json::Value& value, const EnvLookup& env,
                             const std::string& pointer) {
  if (!value.is_string()) return Invalid("expected a string", pointer);
  auto expanded = ExpandEnv(value.get<std::string>(), env);
  if (!expanded.ok()) return std::move(expanded).error().AtPrefix(pointer);
  return expanded;
}

Result<std::vector<std::pair<std::string, std::string>>> ExpandMap(const json::Value& value,
                                                                   const EnvLookup& env,
                                                                   const std::string& pointer) {
  if (!value.is_object()) return Invalid("expected an object of strings", pointer);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, item] : value.items()) {
    UDON_ASSIGN_OR_RETURN(std::string expanded,
                          ExpandAt(item, env, pointer + "/" + PointerToken(name)));
    out.emplace_back(name, std::move(expanded));
  }
  return out;
}

Result<ServerConfig> ParseServer(const std::string& key, const json::Value& entry,
                                 bool typed_root, const EnvLookup& env,
                                 const std::string& base_dir, const std::string& pointer) {
  if (!IsValidKey(key)) return Invalid("server keys must match ^[A-Za-z0-9_.-]{1,64}$", pointer);
  if (!entry.is_object()) return Invalid("a server entry must be an object", pointer);
  ServerConfig server;
  server.key = key;
  server.pointer = pointer;
  const bool has_command = entry.contains("command");
  const bool has_url = entry.contains("url");
  if (has_command == has_url) {
    return Invalid("a server needs exactly one of command or url", pointer);
  }
  server.type = has_command ? ServerType::kStdio : ServerType::kHttp;
  if (entry.contains("type")) {
    const json::Value& type = entry["type"];
    const ServerType wanted = server.type;
    if (!type.is_string() ||
        (type != "stdio" && type != "http") ||
        (type == "stdio") != (wanted == ServerType::kStdio)) {
      return Invalid("type must be \"stdio\" (with command) or \"http\" (with url)",
                     pointer + "/type");
    }
  } else if (typed_root) {
    return Invalid("entries under \"servers\" need a type", pointer + "/type");
  }
  if (server.type == ServerType::kStdio) {
    if (entry.contains("url") || entry.contains("headers")) {
      return Invalid("a stdio server takes no url or headers", pointer);
    }
    if (!entry["command"].is_string() || entry["command"].get<std::string>().empty()) {
      return Invalid("command must be a non-empty string", pointer + "/command");
    }
    server.command = entry["command"].get<std::string>();
    if (entry.contains("args")) {
      const json::Value& args = entry["args"];
      if (!args.is_array()) return Invalid("args must be an array of strings", pointer + "/args");
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
      return Invalid("an http server takes no args, env, cwd, inheritEnv or sandbox", pointer);
    }
    UDON_ASSIGN_OR_RETURN(server.url, ExpandAt(entry["url"], env, pointer + "/url"));
    if (server.url.rfind("http://", 0) != 0 && server.url.rfind("https://", 0) != 0) {
      return Invalid("url must be http:// or https://", pointer + "/url");
    }
    if (entry.contains("headers")) {
      UDON_ASSIGN_OR_RETURN(server.headers, ExpandMap(entry["headers"], env, pointer + "/headers"));
      for (const auto& [name, value] : server.headers) {
        const bool bad = name.empty() || name.find_first_of(":\r\n ") != std::string::npos ||
                         value.find_first_of("\r\n") != std::string::npos;
        if (bad) return Invalid("a header name or value is not allowed", pointer + "/headers");
      }
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
             std::to_string(sandbox->writable.size()) + " writable)";
    }
  } else {
    out = "http server '" + key + "': " + UrlAuthority(url) + ", headers " + names(headers);
  }
  return out;
}

Result<ServerConfig> RuntimeConfig::Find(std::string_view key) const {
  auto it = servers.find(std::string(key));
  if (it == servers.end()) {
    return udon::MakeError("config.server_unknown", "the server key is not in the runtime configuration");
  }
  UDON_RETURN_IF_ERROR(CheckRunnable(it->second, ProcessEnv()));
  return it->second;
}

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

Result<std::string> ExpandEnv(std::string_view text, const EnvLookup& env) {
  static constexpr std::string_view kOpen = "${env:";
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t start = text.find(kOpen, pos);
    if (start == std::string_view::npos) {
      out.append(text.substr(pos));
      return out;
    }
    out.append(text.substr(pos, start - pos));
    const std::size_t name_start = start + kOpen.size();
    const std::size_t close = text.find('}', name_start);
    if (close == std::string_view::npos) {
      return udon::MakeError("config.invalid", "an ${env:NAME} reference is not closed");
    }
    const std::string name(text.substr(name_start, close - name_start));
    bool valid = !name.empty();
    for (std::size_t i = 0; i < name.size() && valid; ++i) valid = IsNameChar(name[i], i == 0);
    if (!valid) return udon::MakeError("config.invalid", "an ${env:NAME} reference has a bad name");
    if (IsReservedVariable(name)) {
      // Copied under another name, udon-mcp's own secrets would reach a server after all.
      Error error = udon::MakeError(
          "config.invalid", "environment variable " + name + " belongs to udon-mcp (UDON_MCP_*, PG*) and cannot be passed on");
      error.details["variable"] = name;
      return error;
    }
    auto value = env(name);
    if (!value) {
      Error error = udon::MakeError("config.invalid", "environment variable " + name + " is not set");
      error.details["variable"] = name;
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
  if (!root.is_object()) return Invalid("the configuration must be an object", "");
  const bool has_mcp = root.contains("mcpServers");
  const bool has_servers = root.contains("servers");
  if (has_mcp == has_servers) {
    return Invalid("exactly one of mcpServers or servers is required", "");
  }
  const std::string root_key = has_mcp ? "mcpServers" : "servers";
  const json::Value& entries = root[root_key];
  if (!entries.is_object()) return Invalid("the server map must be an object", "/" + root_key);
  RuntimeConfig config;
  for (const auto& [key, entry] : entries.items()) {
    UDON_ASSIGN_OR_RETURN(ServerConfig server,
                          ParseServer(key, entry, has_servers, env, base_dir,
                                      "/" + root_key + "/" + PointerToken(key)));
    if (server.inherit_env_all) {
      config.warnings.push_back("server '" + key +
                                "' has inheritEnv: true: it receives udon-mcp's whole environment "
                                "(except UDON_MCP_* and PG*), unsafe for third-party code");
    }
    config.servers.emplace(key, std::move(server));
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
  auto text = json::ReadFile(path, kMaxConfigBytes);
  if (!text.ok()) return std::move(text).error().WithCode("config.unreadable");
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  UDON_ASSIGN_OR_RETURN(RuntimeConfig config, ParseRuntimeConfig(text.value(), env, base_dir));
  config.path = path;
  return config;
}

}  // namespace udon::mcp
