#include "oauth/tokens.h"

#include "base/ascii.h"
#include "json/json.h"
#include "oauth/authorization.h"

namespace udon::oauth {
namespace {

constexpr std::size_t kMaxAnswerBytes = 64 * 1024;
constexpr std::size_t kMaxTokenBytes = 16 * 1024;

Result<json::Value> ParseAnswer(std::string_view body) {
  json::ParseOptions options;
  options.max_bytes = kMaxAnswerBytes;
  options.max_depth = 16;
  Result<json::Value> parsed = json::Parse(body, options);
  if (!parsed.ok() || !parsed->is_object()) return MakeError("auth.answer_invalid", "not a JSON object");
  return parsed;
}

// An OAuth error code kept only when it is what RFC 6749 allows (%x20-21 / %x23-5B / %x5D-7E)
// and short: it goes into details, which are shown.
std::string ErrorCodeOf(const json::Value& answer) {
  auto it = answer.find("error");
  if (it == answer.end() || !it->is_string()) return "none";
  const std::string code = it->get<std::string>();
  if (code.empty() || code.size() > 64) return "invalid";
  for (char c : code) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return "invalid";
  }
  return code;
}

Error TokenFailed(long status, const std::string& oauth_error) {
  Error error = MakeError("auth.token_failed", oauth_error == "invalid_grant"
                                                   ? "the authorization server no longer accepts this login (invalid_grant)"
                                                   : "the authorization server did not issue tokens");
  error.details["status"] = status;
  error.details["error"] = oauth_error;
  return error;
}

Result<std::optional<std::string>> OptionalText(const json::Value& answer, const char* name, bool required) {
  auto it = answer.find(name);
  if (it == answer.end()) {
    if (required) return MakeError("auth.answer_invalid", name);
    return std::optional<std::string>();
  }
  if (!it->is_string() || it->get_ref<const std::string&>().empty() ||
      it->get_ref<const std::string&>().size() > kMaxTokenBytes) {
    return MakeError("auth.answer_invalid", name);
  }
  return std::optional<std::string>(it->get<std::string>());
}

Result<TokenResponse> TokensOf(const json::Value& answer) {
  TokenResponse tokens;
  UDON_ASSIGN_OR_RETURN(std::optional<std::string> access, OptionalText(answer, "access_token", true));
  tokens.access_token = *access;
  UDON_ASSIGN_OR_RETURN(std::optional<std::string> type, OptionalText(answer, "token_type", true));
  // Only bearer tokens: a DPoP or MAC token sent as a bearer would be refused, or worse.
  if (base::AsciiLower(*type) != "bearer") return MakeError("auth.answer_invalid", "token_type");
  tokens.token_type = "Bearer";
  UDON_ASSIGN_OR_RETURN(tokens.refresh_token, OptionalText(answer, "refresh_token", false));
  UDON_ASSIGN_OR_RETURN(tokens.scope, OptionalText(answer, "scope", false));
  if (auto it = answer.find("expires_in"); it != answer.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() <= 0 || it->get<std::int64_t>() > 10LL * 365 * 86400) {
      return MakeError("auth.answer_invalid", "expires_in");
    }
    tokens.expires_in = it->get<std::int64_t>();
  }
  return tokens;
}

}  // namespace

Result<TokenResponse> ParseTokenResponse(long status, std::string_view body) {
  Result<json::Value> answer = ParseAnswer(body);
  if (status != 200) return TokenFailed(status, answer.ok() ? ErrorCodeOf(*answer) : "none");
  if (!answer.ok()) return TokenFailed(status, "not_json");
  Result<TokenResponse> tokens = TokensOf(*answer);
  if (!tokens.ok()) return TokenFailed(status, "malformed_response");
  return tokens;
}

Result<ClientIdentity> ParseRegistrationResponse(long status, std::string_view body) {
  Result<json::Value> answer = ParseAnswer(body);
  if (status != 200 && status != 201) {
    Error error = MakeError("auth.registration_failed", "the authorization server refused udon-mcp's dynamic registration");
    error.details["status"] = status;
    error.details["error"] = answer.ok() ? ErrorCodeOf(*answer) : "none";
    return error;
  }
  const Error malformed =
      MakeError("auth.registration_failed", "the authorization server's registration answer is not RFC 7591's");
  if (!answer.ok()) return malformed;
  ClientIdentity client;
  client.kind = ClientKind::kDynamic;
  Result<std::optional<std::string>> id = OptionalText(*answer, "client_id", true);
  Result<std::optional<std::string>> secret = OptionalText(*answer, "client_secret", false);
  Result<std::optional<std::string>> uri = OptionalText(*answer, "registration_client_uri", false);
  Result<std::optional<std::string>> access = OptionalText(*answer, "registration_access_token", false);
  Result<std::optional<std::string>> method = OptionalText(*answer, "token_endpoint_auth_method", false);
  if (!id.ok() || !secret.ok() || !uri.ok() || !access.ok() || !method.ok()) return malformed;
  client.client_id = **id;
  client.client_secret = *secret;
  client.registration_client_uri = *uri;
  client.registration_access_token = *access;
  client.token_endpoint_auth_method = method->value_or(client.client_secret ? "client_secret_basic" : "none");
  if (client.token_endpoint_auth_method != "none" && client.token_endpoint_auth_method != "client_secret_basic" &&
      client.token_endpoint_auth_method != "client_secret_post") {
    return malformed;
  }
  if (client.token_endpoint_auth_method != "none" && !client.client_secret) return malformed;
  if (auto it = answer->find("client_secret_expires_at"); it != answer->end()) {
    if (!it->is_number_integer()) return malformed;
    client.client_secret_expires_at = it->get<std::int64_t>();
  }
  return client;
}

std::string RegistrationRequestBody(const std::string& redirect_uri, const std::optional<std::string>& scope) {
  json::Value body = {{"client_name", "udon-mcp"},
                      {"redirect_uris", {redirect_uri}},
                      {"grant_types", {"authorization_code", "refresh_token"}},
                      {"response_types", {"code"}},
                      {"token_endpoint_auth_method", "none"},
                      {"application_type", "native"}};
  if (scope) body["scope"] = *scope;
  return body.dump();
}

Result<TokenResponse> RequestTokens(const std::string& token_endpoint, const ClientIdentity& client,
                                    std::vector<std::pair<std::string, std::string>> form, const HttpLimits& limits) {
  HttpExchange exchange;
  exchange.method = "POST";
  exchange.url = token_endpoint;
  exchange.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
  if (client.token_endpoint_auth_method == "client_secret_basic" && client.client_secret) {
    // RFC 6749 section 2.3.1: both form-encoded before they are joined.
    exchange.headers.emplace_back(
        "Authorization", "Basic " + Base64(FormEncode(client.client_id) + ":" + FormEncode(*client.client_secret)));
  } else {
    form.emplace_back("client_id", client.client_id);
    if (client.token_endpoint_auth_method == "client_secret_post" && client.client_secret) {
      form.emplace_back("client_secret", *client.client_secret);
    }
  }
  exchange.body = JoinForm(form);
  UDON_ASSIGN_OR_RETURN(HttpReply reply, HttpFetch(exchange, limits));
  return ParseTokenResponse(reply.status, reply.body);
}

void ApplyTokens(const TokenResponse& tokens, std::int64_t now, StoredLogin& login) {
  login.access_token = tokens.access_token;
  login.token_type = tokens.token_type;
  if (tokens.refresh_token) login.refresh_token = tokens.refresh_token;
  login.expires_at_unix = tokens.expires_in ? now + *tokens.expires_in : 0;
  login.obtained_at_unix = now;
  if (tokens.scope) {
    login.scopes.clear();
    std::string_view rest = *tokens.scope;
    while (!rest.empty()) {
      const std::size_t space = rest.find(' ');
      if (space != 0) login.scopes.emplace_back(rest.substr(0, space));
      rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
  }
}

}  // namespace udon::oauth
