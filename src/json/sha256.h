// SHA-256 digests (OpenSSL EVP), in the lowercase hex form manifests pin.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "json/json.h"
#include "json/result.h"

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace udon::json {

std::array<std::uint8_t, 32> Sha256(std::string_view bytes);
std::string Sha256Hex(std::string_view bytes);

// SHA-256 of bytes that arrive in pieces, so they need not be gathered into one string.
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(std::string_view bytes);
  // Lowercase hex digest of everything passed to Update; call once.
  std::string FinishHex();

 private:
  evp_md_ctx_st* context_;
};

// Lowercase hex SHA-256 of the RFC 8785 canonical form.
Result<std::string> CanonicalSha256(const Value& value);

// CanonicalSha256 straight from bytes: the strict parse of CanonicalizeText, with the
// canonical bytes streamed into the hash instead of returned. Same errors as
// CanonicalizeText. Defined in canonical.cc beside the writer it drives.
Result<std::string> CanonicalSha256Text(std::string_view text, const ParseOptions& options = {});

// True for exactly 64 lowercase hex digits.
bool IsSha256Hex(std::string_view text);

}  // namespace udon::json
