#include "state_pg/uri.h"

namespace udon::state_pg {
namespace {

// Whether a query parameter's name names a secret: libpq's password and sslpassword (the
// client key's passphrase).
bool IsSecretParameter(std::string_view name) {
  constexpr std::string_view kSuffix = "password";
  return name.size() >= kSuffix.size() && name.substr(name.size() - kSuffix.size()) == kSuffix;
}

// "password=SECRET" and "sslpassword=SECRET" parameters of the query string, whatever
// their position.
std::string RedactQuery(std::string_view query) {
  std::string out;
  std::size_t start = 0;
  while (start <= query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    std::string_view parameter = query.substr(start, end - start);
    if (!out.empty()) out += '&';
    const std::size_t equals = parameter.find('=');
    if (equals != std::string_view::npos && IsSecretParameter(parameter.substr(0, equals))) {
      out += std::string(parameter.substr(0, equals)) + "=***";
    } else {
      out += parameter;
    }
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string RedactUri(std::string_view uri) {
  const std::size_t scheme_end = uri.find("://");
  if (scheme_end == std::string_view::npos) return "(a connection string)";
  const std::size_t authority_start = scheme_end + 3;
  std::size_t authority_end = uri.find_first_of("/?", authority_start);
  if (authority_end == std::string_view::npos) authority_end = uri.size();
  std::string out(uri.substr(0, authority_start));
  std::string_view authority = uri.substr(authority_start, authority_end - authority_start);
  // The last '@' ends the userinfo (a password may itself hold an unescaped '@').
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    const std::size_t colon = userinfo.find(':');
    out += colon == std::string_view::npos ? std::string(userinfo) : std::string(userinfo.substr(0, colon)) + ":***";
    out += '@';
    authority = authority.substr(at + 1);
  }
  out += authority;
  std::string_view rest = uri.substr(authority_end);
  const std::size_t question = rest.find('?');
  if (question == std::string_view::npos) return out + std::string(rest);
  return out + std::string(rest.substr(0, question + 1)) + RedactQuery(rest.substr(question + 1));
}

}  // namespace udon::state_pg
