// SHA-256 digests (OpenSSL EVP), in the lowercase hex form manifests pin.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "json/json.h"
#include "json/result.h"

namespace udon::json {

std::array<std::uint8_t, 32> Sha256(std::string_view bytes);
std::string Sha256Hex(std::string_view bytes);

// Lowercase hex SHA-256 of the RFC 8785 canonical form.
Result<std::string> CanonicalSha256(const Value& value);

// True for exactly 64 lowercase hex digits.
bool IsSha256Hex(std::string_view text);

}  // namespace udon::json
