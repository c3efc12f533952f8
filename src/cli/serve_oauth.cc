#include "cli/serve_oauth.h"

#include <ctime>

#include "cli/serve_token.h"
#include "resource_auth/fetch.h"

namespace udon::cli {
namespace {

constexpr std::chrono::seconds kIssuerTimeout{10};

// What a host without a usable token is told beside the challenge.
constexpr const char* kOAuthUnauthorizedMessage =
    "this udon-mcp gateway accepts OAuth access tokens from its configured issuer; the host discovers the issuer "
    "through the resource_metadata of WWW-Authenticate and logs in there";

// SCOPE=TOOL[,TOOL...]. Errors: usage.invalid.
Status AddGrant(const std::string& text, std::map<std::string, std::vector<std::string>>& grants) {
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    return MakeError("usage.invalid", "--scope-tools must be SCOPE=TOOL[,TOOL...] (* for every tool)");
  }
  std::vector<std::string>& tools = grants[text.substr(0, equals)];
  std::size_t start = equals + 1;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) tools.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return OkStatus();
}

}  // namespace

void AddServeOAuthOptions(CLI::App* command, ServeOAuthOptions& o) {
  command->add_option("--issuer", o.issuer, "--auth oauth: the authorization server's issuer URL");
  command->add_option("--audience", o.audience,
                      "--auth oauth: this gateway's MCP URL as hosts reach it (the tokens' aud, RFC 9728 resource)");
  command->add_option("--scope-tools", o.scope_tools,
                      "--auth oauth: SCOPE=TOOL[,TOOL...]: a grant and the tools it lets a caller see and call "
                      "(* every tool; repeatable)");
  command->add_option("--grants-claim", o.grants_claim,
                      "--auth oauth: the token claim holding the caller's grants (default scope)");
  command->add_option("--clock-skew", o.clock_skew_seconds,
                      "--auth oauth: seconds of clock difference allowed on exp and nbf (default 60, at most 300)");
  command->add_option("--introspection-client-id", o.introspection_client_id,
                      "--auth oauth: the issuer issues opaque tokens; introspect them (RFC 7662) as this client");
  command->add_option("--introspection-secret-file", o.introspection_secret_file,
                      "--auth oauth: file holding that client's secret");
}

Result<std::shared_ptr<resource_auth::ResourceGuard>> StartResourceGuard(const ServeOAuthOptions& o) {
  resource_auth::ResourceGuardOptions options;
  options.issuer = o.issuer;
  options.audience = o.audience;
  options.grants_claim = o.grants_claim;
  options.skew = std::chrono::seconds(o.clock_skew_seconds);
  for (const std::string& grant : o.scope_tools) UDON_RETURN_IF_ERROR(AddGrant(grant, options.grant_tools));
  if (o.introspection_client_id.empty() != o.introspection_secret_file.empty()) {
    return MakeError("usage.invalid", "give both --introspection-client-id and --introspection-secret-file, or neither");
  }
  if (!o.introspection_secret_file.empty()) {
    UDON_ASSIGN_OR_RETURN(options.introspection_client_secret, ReadTokenFile(o.introspection_secret_file));
    options.introspection_client_id = o.introspection_client_id;
  }
  UDON_ASSIGN_OR_RETURN(std::unique_ptr<resource_auth::ResourceGuard> guard,
                        resource_auth::ResourceGuard::Create(std::move(options),
                                                             resource_auth::HttpFetcher(kIssuerTimeout)));
  UDON_RETURN_IF_ERROR(guard->Discover(static_cast<std::int64_t>(std::time(nullptr))));
  return std::shared_ptr<resource_auth::ResourceGuard>(std::move(guard));
}

void ProtectWithOAuth(const std::shared_ptr<resource_auth::ResourceGuard>& guard, const ServeOAuthOptions& o,
                      mcp::HttpServerOptions& http) {
  http.bearer_token.clear();
  http.unauthorized_message = kOAuthUnauthorizedMessage;
  for (const std::string& path : guard->MetadataPaths()) http.public_documents[path] = guard->MetadataJson();
  const std::string host = resource_auth::HostOf(o.audience);
  if (!host.empty() && !mcp::IsLoopbackName(host)) http.allowed_hosts.push_back(host);
  http.authenticate = [guard](const std::string& authorization) {
    auto caller = guard->Authenticate(authorization, static_cast<std::int64_t>(std::time(nullptr)));
    mcp::AuthVerdict verdict;
    if (caller.ok()) {
      auto admitted = std::make_shared<mcp::Caller>();
      admitted->subject = std::move(caller->subject);
      admitted->all_tools = caller->all_tools;
      admitted->tools = std::move(caller->tools);
      verdict.caller = std::move(admitted);
      return verdict;
    }
    const resource_auth::Challenge challenge = guard->ChallengeFor(caller.error());
    verdict.status = challenge.status;
    verdict.www_authenticate = challenge.www_authenticate;
    verdict.message = challenge.message;
    return verdict;
  };
}

}  // namespace udon::cli
