// serve --auth oauth: the gateway as an OAuth 2.1 protected resource (contract 7.16,
// docs/operations.md "Identity"). Its options, the resource guard started from them (the
// issuer's metadata and keys read before anything listens), and the HTTP server's hook.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "mcp/server/http_server.h"
#include "resource_auth/resource_guard.h"

namespace udon::cli {

struct ServeOAuthOptions {
  std::string issuer;
  std::string audience;
  std::vector<std::string> scope_tools;  // SCOPE=TOOL[,TOOL...]
  std::string grants_claim = "scope";
  int clock_skew_seconds = 60;
  std::string introspection_client_id;
  std::string introspection_secret_file;
};

void AddServeOAuthOptions(CLI::App* command, ServeOAuthOptions& options);

// The guard, its issuer's metadata and keys read. Errors: usage.invalid (options),
// io.unreadable (the secret file), auth.issuer_unreachable, auth.issuer_metadata_invalid,
// auth.jwks_invalid.
Result<std::shared_ptr<resource_auth::ResourceGuard>> StartResourceGuard(const ServeOAuthOptions& options);

// Every request to the endpoint judged by `guard`; its metadata served at the RFC 9728
// paths; the audience's host accepted in Host and Origin.
void ProtectWithOAuth(const std::shared_ptr<resource_auth::ResourceGuard>& guard, const ServeOAuthOptions& options,
                      mcp::HttpServerOptions& http);

}  // namespace udon::cli
