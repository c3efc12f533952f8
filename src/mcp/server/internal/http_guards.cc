#include "mcp/server/internal/http_guards.h"

#include <openssl/crypto.h>

#include "base/sha256.h"
#include "mcp/server/http_server.h"
#include "mcp/server/internal/http_common.h"

namespace udon::mcp {

bool HasBearerToken(const std::string& authorization, const std::array<std::uint8_t, 32>& expected) {
  constexpr std::string_view kScheme = "bearer ";
  std::string_view value = authorization;
  if (value.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    const char c = value[i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != kScheme[i]) return false;
  }
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  const std::array<std::uint8_t, 32> given = base::Sha256(value);
  return CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0;
}

bool IsNamed(std::string_view name, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& allowed) {
    return allowed.size() == name.size() &&
           std::equal(allowed.begin(), allowed.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
           });
  });
}

bool IsNamedOrigin(const std::string& origin, const std::vector<std::string>& names) {
  const std::optional<std::string> host = OriginHost(origin);
  return host && IsNamed(*host, names);
}

bool IsLoopbackName(std::string_view host) {
  return host == "localhost" || host == "127.0.0.1" || host == "[::1]" || host == "::1";
}

bool IsAllowedOrigin(const std::string& origin) {
  if (origin.empty()) return true;
  const std::optional<std::string> host = OriginHost(origin);
  return host && IsLoopbackName(*host);
}

bool IsAllowedHost(const std::string& host) {
  return host.empty() || IsLoopbackName(HostName(host));
}

}  // namespace udon::mcp
