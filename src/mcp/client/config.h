// Runtime configuration (contract 1.3): where and how to reach each MCP server.
//
//   { "mcpServers": { "<key>": {"command", "args", "env", "cwd", "inheritEnv", "sandbox"} |
//                              {"url" | "serverUrl", "headers"} } }
//   { "servers":    { "<key>": {"type": "stdio"|"http"|"streamable-http", ...} },
//     "inputs": [...] }
//
// The shapes of Claude Desktop, Claude Code, Cursor, VS Code and Windsurf are accepted
// (docs/contract.md, "Client configuration shapes"): "type": "sse" is refused (the old
// HTTP+SSE transport is not spoken), "disabled": true hides a server, "timeout" is its call
// timeout in milliseconds, other client-only members (autoApprove, alwaysAllow) are ignored.
//
// ${env:NAME}, ${NAME} and ${NAME:-default} expand in command, args, env, cwd, url and headers;
// ${input:ID} (a VS Code prompt) is refused: udon-mcp is headless. Values from the
// environment and header values are secrets: no error, log or Describe() ever contains them.
//
// An entry that cannot be used (an unset variable, a bad shape) does not stop the others:
// its error is kept and returned by Find, naming the server (details.server) and the
// pointer, only to a command that uses it.
//
// A stdio server sees only a default environment plus what its entry grants, and may run in
// a sandbox (mcp/least_privilege.h). No entry can reference udon-mcp's own variables
// (UDON_MCP_*, PG*) through ${...} or inheritEnv: that refuses the whole configuration.
//
// Error codes: config.unreadable (the file cannot be read), config.invalid (not JSON, bad
// shape, unset or reserved variable: details.variable names it; from Find, an unusable
// entry or a sandbox this machine cannot provide), config.server_unknown (from Find: not
// in the file, or disabled).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace udon::mcp {

enum class ServerType { kStdio, kHttp };

// A stdio entry's "sandbox" member (true means the defaults: no network, nothing of the
// host's but the system directories and the command's trees; sandbox_layout.h).
struct SandboxSettings {
  bool network = false;                // keep the host's network namespace
  std::vector<std::string> writable;   // absolute directories bound read-write
  std::vector<std::string> readable;   // absolute paths bound read-only
  std::string etc;                     // a directory shown read-only at /etc ("": the host's /etc)
};

// An http entry's "oauth" member (issue 39, contract 7.23): how `login` identifies
// udon-mcp to the server's authorization server. Without it, dynamic registration.
struct OAuthSettings {
  std::optional<std::string> client_id;            // a client registered by hand
  std::optional<std::string> client_secret;        // secret; only with client_id
  std::optional<int> redirect_port;                // the port that client was registered with
  std::optional<std::string> client_metadata_url;  // udon-mcp's Client ID Metadata Document
  bool send_resource = true;                       // false: no RFC 8707 resource parameter
};

// Deliberately without operator<<: use Describe(), which never shows secret values.
struct ServerConfig {
  std::string key;
  ServerType type = ServerType::kStdio;
  // stdio
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to the default env
  std::string cwd;                                       // empty: inherit
  bool inherit_env_all = false;                          // "inheritEnv": true (unsafe)
  std::vector<std::string> inherit_env;                  // "inheritEnv": [NAME, ...]
  std::optional<SandboxSettings> sandbox;
  // http
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<OAuthSettings> oauth;
  std::string pointer;  // of the entry in its file ("/mcpServers/<key>")
  std::optional<long long> timeout_ms;  // "timeout": the call timeout clients configure
  // RFC 8785 SHA-256 of the entry as the file writes it (before expansion): what a pin
  // file binds (manifest/pin_file.h); "" when it cannot be canonicalized.
  std::string entry_sha256;

  // "stdio server 'k': command node, 2 args, env TOKEN" / "http server 'k': 127.0.0.1:8080,
  // headers Authorization" — names and shapes, never values.
  std::string Describe() const;
};

struct RuntimeConfig {
  std::string path;  // where it was loaded from ("" when parsed from text)
  std::map<std::string, ServerConfig> servers;  // the usable entries
  std::map<std::string, Error> unusable;         // entries that failed to parse or expand
  std::set<std::string> disabled;                // "disabled": true
  // Human warnings about unsafe but valid entries (inheritEnv: true); never values.
  std::vector<std::string> warnings;
  // Adds what a stored login gives an http entry (its bearer token) before Find returns it;
  // set by the command line from the token store (oauth, contract 7.23), which this
  // component cannot reach. Its error is Find's.
  std::function<Status(ServerConfig&)> authorize_http;
  // Refreshes the stored login whose token `server` (as Find gave it) carried, once the
  // server refused that token with HTTP 401; false: no stored login gave it (nothing to
  // refresh). Set with authorize_http; a command then starts its checks again, once.
  std::function<Result<bool>(const ServerConfig&)> reauthorize_http;

  // The entry of `key`, once it can run: a sandboxed server also needs a working
  // bubblewrap and its writable directories (CheckRunnable); an http entry gets its stored
  // login's token (authorize_http). An unusable entry's error
  // comes back here, its message prefixed with the server's key.
  Result<ServerConfig> Find(std::string_view key) const;
};

// Returns the value of an environment variable, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup ProcessEnv();

// Parses configuration text. Relative cwd values resolve against base_dir.
Result<RuntimeConfig> ParseRuntimeConfig(std::string_view text, const EnvLookup& env,
                                         const std::string& base_dir = ".");

// Lookup order: flag_path (--config), then $UDON_MCP_CONFIG, then ./mcp.json.
std::string ResolveConfigPath(const std::optional<std::string>& flag_path, const EnvLookup& env);
Result<RuntimeConfig> LoadRuntimeConfig(const std::optional<std::string>& flag_path,
                                        const EnvLookup& env);

// Expands every ${env:NAME}, ${NAME} and ${NAME:-default} in text (the default when NAME
// is unset or empty). Errors: config.invalid (details.variable when a variable is unset or
// reserved; ${input:ID}; a malformed reference).
Result<std::string> ExpandEnv(std::string_view text, const EnvLookup& env);

}  // namespace udon::mcp
