// The protected resource's own requests to its authorization server: its metadata, its JWK
// Set, and token introspection. HTTPS with the system's trust store, or plain HTTP to a
// loopback address (an issuer on the same machine, as in the tests); no redirects, bounded
// time and size.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "base/result.h"

namespace udon::resource_auth {

inline constexpr std::size_t kMaxFetchBytes = 256 * 1024;

struct FetchRequest {
  std::string url;
  std::string form;  // not empty: POST application/x-www-form-urlencoded
  std::string basic_user;  // HTTP Basic credentials for the POST (client_secret_basic)
  std::string basic_password;
};

// The answer's body when the status is 200. Errors: auth.issuer_unreachable.
using Fetcher = std::function<Result<std::string>(const FetchRequest&)>;

// Errors of the Fetcher it returns: auth.issuer_unreachable (a URL that is neither https
// nor http to a loopback address, no connection, a status other than 200, a body over
// kMaxFetchBytes); the message names no credential.
Fetcher HttpFetcher(std::chrono::seconds timeout);

// Whether `url` is https://..., or http:// to localhost, 127.0.0.1 or [::1].
bool IsAcceptableIssuerUrl(const std::string& url);

// The host of an http(s) URL (without brackets or port); empty when it is not one.
std::string HostOf(const std::string& url);

// application/x-www-form-urlencoded escaping of one value.
std::string FormEncode(const std::string& value);

}  // namespace udon::resource_auth
