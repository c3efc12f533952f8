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
#include "mcp/protocol/protocol.h"
#include "oauth/login.h"
#include "oauth/token_store.h"

namespace udon::cli {
namespace {

struct LoginCommandOptions {
  std::string server;
  CommonOptions store;  // --config, --state-dir, --state, --token-key
  std::optional<std::string> scope;
  std::optional<std::string> protocol_version;
  double timeout_seconds = 300;
  bool no_browser = false;
  bool json = false;
};

void AddStoreOptions(CLI::App* command, CommonOptions& store) {
  command->add_option("--config", store.config, "Runtime configuration (default: $UDON_MCP_CONFIG, then ./mcp.json)");
  command->add_option("--state-dir", store.state_dir,
                      "State directory (default: $UDON_MCP_STATE_DIR, $XDG_STATE_HOME/udon-mcp)");
  command->add_option("--state", store.state,
                      "Where logins live: a postgres:// URI (default: $UDON_MCP_STATE; else the state directory)");
  AddTokenKeyOption(command, store);
}

// The http entry of the command's server, as the file writes it (no stored token attached),
// and the store that holds its login.
struct Target {
  mcp::ServerConfig server;
  std::shared_ptr<oauth::TokenStore> store;
};

Result<Target> ResolveTarget(const LoginCommandOptions& options) {
  UDON_ASSIGN_OR_RETURN(mcp::RuntimeConfig config, LoadConfig(options.store));
  config.authorize_http = nullptr;  // login must not need the login it is about to make
  Target target;
  UDON_ASSIGN_OR_RETURN(target.server, config.Find(options.server));
  if (target.server.type != mcp::ServerType::kHttp) {
    return MakeError("usage.invalid", "login is for remote (http) servers; a stdio server keeps its environment");
  }
  UDON_ASSIGN_OR_RETURN(target.store, OpenLoginStore(options.store));
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
  InteractiveLogin how;
  how.scope = options.scope;
  how.timeout_seconds = options.timeout_seconds;
  how.no_browser = options.no_browser;
  how.protocol_version = options.protocol_version;
  Result<oauth::StoredLogin> done = LogIn(options.server, target->server, how, *target->store);
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
  oauth::TokenStore& store = *target->store;
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
  CommonOptions store;
  bool json = false;
};

int RunStatus(const StatusOptions& options) {
  Result<std::shared_ptr<oauth::TokenStore>> store = OpenLoginStore(options.store);
  if (!store.ok()) return ReportError(store.error(), options.json);
  Result<std::vector<oauth::StoredLogin>> logins = (*store)->List();
  if (!logins.ok()) return ReportError(logins.error(), options.json);
  // Which configured servers each login serves, when there is a configuration.
  Result<mcp::RuntimeConfig> config = mcp::LoadRuntimeConfig(options.store.config, mcp::ProcessEnv());
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

Result<oauth::StoredLogin> LogIn(const std::string& key, const mcp::ServerConfig& server, const InteractiveLogin& how,
                                 oauth::TokenStore& store) {
  oauth::LoginOptions login;
  login.server_key = key;
  login.server_url = server.url;
  login.settings = server.oauth.value_or(mcp::OAuthSettings{});
  login.scope = how.scope;
  login.protocol_version = how.protocol_version;
  login.open_browser = !how.no_browser;
  login.timeout = std::chrono::seconds(static_cast<long long>(how.timeout_seconds));
  login.show = [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  };
  return oauth::Login(login, store);
}

namespace {

bool HasAuthorizationHeader(const mcp::ServerConfig& server) {
  for (const auto& [name, value] : server.headers) {
    if (base::AsciiLower(name) == "authorization") return true;
  }
  return false;
}

oauth::BearerOptions BearerOptionsFor(const mcp::ServerConfig& server) {
  oauth::BearerOptions options;
  options.server_key = server.key;
  options.server_url = server.url;
  options.send_resource = !server.oauth || server.oauth->send_resource;
  return options;
}

}  // namespace

void AttachStoredLogins(mcp::RuntimeConfig& config, Result<std::shared_ptr<oauth::TokenStore>> opened) {
  config.authorize_http = [opened](mcp::ServerConfig& server) -> Status {
    if (HasAuthorizationHeader(server)) return OkStatus();  // the entry's own credential
    if (!opened.ok()) return server.oauth ? Status(opened.error()) : OkStatus();
    oauth::TokenStore& store = **opened;
    UDON_ASSIGN_OR_RETURN(std::optional<oauth::StoredLogin> found, oauth::FindLogin(store, server.url));
    if (!found && !server.oauth) return OkStatus();
    UDON_ASSIGN_OR_RETURN(std::string token, oauth::BearerFor(store, BearerOptionsFor(server)));
    server.headers.emplace_back("Authorization", "Bearer " + token);
    return OkStatus();
  };
  const std::map<std::string, mcp::ServerConfig> entries = config.servers;
  config.reauthorize_http = [opened, entries](const mcp::ServerConfig& server) -> Result<bool> {
    const auto entry = entries.find(server.key);
    if (entry == entries.end() || HasAuthorizationHeader(entry->second)) return false;  // not the login's token
    std::optional<std::string> sent;
    for (const auto& [name, value] : server.headers) {
      if (base::AsciiLower(name) == "authorization" && value.rfind("Bearer ", 0) == 0) sent = value.substr(7);
    }
    if (!sent || !opened.ok()) return false;
    oauth::BearerOptions options = BearerOptionsFor(server);
    options.rejected_token = sent;  // refreshed unless another process already has
    Result<std::string> refreshed = oauth::BearerFor(**opened, options);
    if (!refreshed.ok()) return std::move(refreshed).error();
    return true;
  };
}

void RegisterLoginCommand(CLI::App& app) {
  auto options = std::make_shared<LoginCommandOptions>();
  CLI::App* command = app.add_subcommand("login", "Log in to a remote MCP server behind OAuth and store the login");
  command->add_option("SERVER", options->server, "Server key in the runtime configuration (an http entry)")->required();
  AddStoreOptions(command, options->store);
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
  AddStoreOptions(command, options->store);
  command->add_flag("--json", options->json, "Machine output on stdout");
  SetAction(command, &options->json, [options] { return RunLogout(*options); });
}

void RegisterAuthCommand(CLI::App& app) {
  auto options = std::make_shared<StatusOptions>();
  CLI::App* command = app.add_subcommand("auth", "Stored OAuth logins");
  command->require_subcommand(1);
  CLI::App* status = command->add_subcommand("status", "Per login: issuer, servers, client kind, scopes, expiry (no token values)");
  AddStoreOptions(status, options->store);
  status->add_flag("--json", options->json, "Machine output on stdout");
  SetAction(status, &options->json, [options] { return RunStatus(*options); });
}

}  // namespace udon::cli
