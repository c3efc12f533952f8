// login SERVER, logout SERVER, auth status: the stored OAuth logins (contract 7.23).
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/ascii.h"
#include "cli/commands.h"
#include "cli/logins.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "gate/state.h"
#include "mcp/protocol/protocol.h"
#include "oauth/login.h"
#include "oauth/token_store.h"

namespace udon::cli {
namespace {

struct LoginCommandOptions {
  std::string server;
  std::optional<std::string> config;
  std::optional<std::string> state_dir;
  std::optional<std::string> scope;
  std::optional<std::string> protocol_version;
  double timeout_seconds = 300;
  bool no_browser = false;
  bool json = false;
};

void AddStoreOptions(CLI::App* command, std::optional<std::string>& config, std::optional<std::string>& state_dir) {
  command->add_option("--config", config, "Runtime configuration (default: $UDON_MCP_CONFIG, then ./mcp.json)");
  command->add_option("--state-dir", state_dir,
                      "State directory (default: $UDON_MCP_STATE_DIR, $XDG_STATE_HOME/udon-mcp)");
}

// The http entry of the command's server, as the file writes it (no stored token attached),
// and the state directory that holds its login.
struct Target {
  mcp::ServerConfig server;
  std::string state_dir;
};

Result<Target> ResolveTarget(const LoginCommandOptions& options) {
  CommonOptions common;
  common.config = options.config;
  UDON_ASSIGN_OR_RETURN(mcp::RuntimeConfig config, LoadConfig(common));
  config.authorize_http = nullptr;  // login must not need the login it is about to make
  Target target;
  UDON_ASSIGN_OR_RETURN(target.server, config.Find(options.server));
  if (target.server.type != mcp::ServerType::kHttp) {
    return MakeError("usage.invalid", "login is for remote (http) servers; a stdio server keeps its environment");
  }
  UDON_ASSIGN_OR_RETURN(target.state_dir, gate::ResolveStateDir(options.state_dir));
  return target;
}

json::Value Describe(const oauth::StoredLogin& login, std::int64_t now) {
  json::Value out = {{"issuer", login.key.issuer},
                     {"resource", login.key.resource},
                     {"client", std::string(oauth::ClientKindName(login.client.kind))},
                     {"scopes", login.scopes},
                     {"expiresAt", login.expires_at_unix},
                     {"refreshable", login.refresh_token.has_value()}};
  out["expired"] = login.expires_at_unix != 0 && login.expires_at_unix <= now;
  return out;
}

int RunLogin(const LoginCommandOptions& options) {
  Result<Target> target = ResolveTarget(options);
  if (!target.ok()) return ReportError(target.error(), options.json);
  const mcp::ServerConfig& server = target->server;
  oauth::FileTokenStore store(target->state_dir);
  oauth::LoginOptions login;
  login.server_key = options.server;
  login.server_url = server.url;
  login.settings = server.oauth.value_or(mcp::OAuthSettings{});
  login.scope = options.scope;
  login.protocol_version = options.protocol_version;
  login.open_browser = !options.no_browser;
  login.timeout = std::chrono::seconds(static_cast<long long>(options.timeout_seconds));
  login.show = [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  };
  Result<oauth::StoredLogin> done = oauth::Login(login, store);
  if (!done.ok()) return ReportError(done.error(), options.json, options.server);
  const json::Value described = Describe(*done, std::time(nullptr));
  if (options.json) {
    json::Value fields = described;
    fields["server"] = options.server;
    PrintJsonResult(fields);
  } else {
    std::printf("logged in: %s at %s (client %s)\n", options.server.c_str(), done->key.issuer.c_str(),
                std::string(oauth::ClientKindName(done->client.kind)).c_str());
  }
  return kExitOk;
}

int RunLogout(const LoginCommandOptions& options) {
  Result<Target> target = ResolveTarget(options);
  if (!target.ok()) return ReportError(target.error(), options.json);
  const mcp::ServerConfig& server = target->server;
  oauth::FileTokenStore store(target->state_dir);
  Result<std::optional<oauth::StoredLogin>> found = oauth::FindLogin(store, server.url);
  if (!found.ok()) return ReportError(found.error(), options.json);
  const bool removed = found->has_value();
  if (removed) {
    Status status = store.Remove((*found)->key);
    if (!status.ok()) return ReportError(status.error(), options.json);
  }
  if (options.json) {
    PrintJsonResult({{"server", options.server}, {"removed", removed}});
  } else {
    std::printf(removed ? "logged out: %s\n" : "no login stored for %s\n", options.server.c_str());
  }
  return kExitOk;
}

struct StatusOptions {
  std::optional<std::string> config;
  std::optional<std::string> state_dir;
  bool json = false;
};

int RunStatus(const StatusOptions& options) {
  Result<std::string> state_dir = gate::ResolveStateDir(options.state_dir);
  if (!state_dir.ok()) return ReportError(state_dir.error(), options.json);
  oauth::FileTokenStore store(*state_dir);
  Result<std::vector<oauth::StoredLogin>> logins = store.List();
  if (!logins.ok()) return ReportError(logins.error(), options.json);
  // Which configured servers each login serves, when there is a configuration.
  Result<mcp::RuntimeConfig> config = mcp::LoadRuntimeConfig(options.config, mcp::ProcessEnv());
  const std::int64_t now = std::time(nullptr);
  json::Value rows = json::Value::array();
  for (const oauth::StoredLogin& login : *logins) {
    json::Value row = Describe(login, now);
    row["servers"] = json::Value::array();
    if (config.ok()) {
      for (const auto& [key, server] : config->servers) {
        Result<std::string> resource = oauth::CanonicalResource(server.url);
        if (server.type == mcp::ServerType::kHttp && resource.ok() && *resource == login.key.resource) {
          row["servers"].push_back(key);
        }
      }
    }
    rows.push_back(std::move(row));
  }
  if (options.json) {
    PrintJsonResult({{"logins", rows}});
    return kExitOk;
  }
  if (rows.empty()) std::printf("no stored logins\n");
  for (const json::Value& row : rows) {
    std::string servers;
    for (const auto& key : row["servers"]) servers += (servers.empty() ? "" : ",") + key.get<std::string>();
    std::string scopes;
    for (const auto& scope : row["scopes"]) scopes += (scopes.empty() ? "" : " ") + scope.get<std::string>();
    PrintForPeople(stdout,
                   row["resource"].get<std::string>() + " [" + (servers.empty() ? "-" : servers) + "] issuer " +
                       row["issuer"].get<std::string>() + ", client " + row["client"].get<std::string>() + ", scopes '" +
                       scopes + "', " + (row["expired"].get<bool>() ? "expired" : "valid") +
                       (row["refreshable"].get<bool>() ? ", refreshable" : ""),
                   "a stored login");
  }
  return kExitOk;
}

}  // namespace

static bool HasAuthorizationHeader(const mcp::ServerConfig& server) {
  for (const auto& [name, value] : server.headers) {
    if (base::AsciiLower(name) == "authorization") return true;
  }
  return false;
}

void AttachStoredLogins(mcp::RuntimeConfig& config, const std::string& state_dir) {
  config.authorize_http = [state_dir](mcp::ServerConfig& server) -> Status {
    if (HasAuthorizationHeader(server)) return OkStatus();  // the entry's own credential
    oauth::FileTokenStore store(state_dir);
    UDON_ASSIGN_OR_RETURN(std::optional<oauth::StoredLogin> found, oauth::FindLogin(store, server.url));
    if (!found && !server.oauth) return OkStatus();
    oauth::BearerOptions options;
    options.server_key = server.key;
    options.server_url = server.url;
    options.send_resource = !server.oauth || server.oauth->send_resource;
    UDON_ASSIGN_OR_RETURN(std::string token, oauth::BearerFor(store, options));
    server.headers.emplace_back("Authorization", "Bearer " + token);
    return OkStatus();
  };
  const std::map<std::string, mcp::ServerConfig> entries = config.servers;
  config.reauthorize_http = [state_dir, entries](const mcp::ServerConfig& server) -> Result<bool> {
    const auto entry = entries.find(server.key);
    if (entry == entries.end() || HasAuthorizationHeader(entry->second)) return false;  // not the login's token
    std::optional<std::string> sent;
    for (const auto& [name, value] : server.headers) {
      if (base::AsciiLower(name) == "authorization" && value.rfind("Bearer ", 0) == 0) sent = value.substr(7);
    }
    if (!sent) return false;
    oauth::FileTokenStore store(state_dir);
    oauth::BearerOptions options;
    options.server_key = server.key;
    options.server_url = server.url;
    options.send_resource = !server.oauth || server.oauth->send_resource;
    options.rejected_token = sent;  // refreshed unless another process already has
    Result<std::string> refreshed = oauth::BearerFor(store, options);
    if (!refreshed.ok()) return std::move(refreshed).error();
    return true;
  };
}

void RegisterLoginCommand(CLI::App& app) {
  auto options = std::make_shared<LoginCommandOptions>();
  CLI::App* command = app.add_subcommand("login", "Log in to a remote MCP server behind OAuth and store the login");
  command->add_option("SERVER", options->server, "Server key in the runtime configuration (an http entry)")->required();
  AddStoreOptions(command, options->config, options->state_dir);
  command->add_option("--scope", options->scope, "Ask for this scope (space-separated) instead of the discovered one");
  command->add_option("--protocol-version", options->protocol_version,
                      "The MCP revision the login is for; 2026-07-28 requires RFC 9207's iss in the redirect")
      ->check(CLI::IsMember({std::string(mcp::kLatestLegacyProtocolVersion), std::string(mcp::kModernProtocolVersion)}));
  command->add_option("--timeout", options->timeout_seconds, "Seconds to wait for the browser's redirect (default 300)")
      ->check(CLI::PositiveNumber);
  command->add_flag("--no-browser", options->no_browser, "Only print the URL to open (on stderr), never start a browser");
  command->add_flag("--json", options->json, "Machine output on stdout (no token values)");
  SetAction(command, &options->json, [options] { return RunLogin(*options); });
}

void RegisterLogoutCommand(CLI::App& app) {
  auto options = std::make_shared<LoginCommandOptions>();
  CLI::App* command = app.add_subcommand("logout", "Remove the stored login of a remote MCP server");
  command->add_option("SERVER", options->server, "Server key in the runtime configuration")->required();
  AddStoreOptions(command, options->config, options->state_dir);
  command->add_flag("--json", options->json, "Machine output on stdout");
  SetAction(command, &options->json, [options] { return RunLogout(*options); });
}

void RegisterAuthCommand(CLI::App& app) {
  auto options = std::make_shared<StatusOptions>();
  CLI::App* command = app.add_subcommand("auth", "Stored OAuth logins");
  command->require_subcommand(1);
  CLI::App* status = command->add_subcommand("status", "Per login: issuer, servers, client kind, scopes, expiry (no token values)");
  AddStoreOptions(status, options->config, options->state_dir);
  status->add_flag("--json", options->json, "Machine output on stdout");
  SetAction(status, &options->json, [options] { return RunStatus(*options); });
}

}  // namespace udon::cli
