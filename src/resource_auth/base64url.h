// Base64url without padding (RFC 4648 section 5), as JWS compact serialization uses it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace udon::resource_auth {

// The decoded bytes, or nullopt for anything but the one canonical encoding: a character
// outside the URL alphabet, padding, a length that no byte string has (4n+1), or unused
// low bits that are not zero (so one token has exactly one spelling).
std::optional<std::string> Base64UrlDecode(std::string_view text);

}  // namespace udon::resource_auth
