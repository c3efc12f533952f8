#include "resource_auth/jwt.h"

#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <algorithm>
#include <array>
#include <memory>
#include <optional>

#include "base/ascii.h"
#include "resource_auth/base64url.h"

namespace udon::resource_auth {
namespace {

constexpr std::array<std::string_view, 4> kAllowedAlgorithms = {"RS256", "PS256", "ES256", "EdDSA"};

Error Invalid(const char* why) { return MakeError("auth.token_invalid", std::string("access token refused: ") + why); }

struct Parts {
  std::string_view header;
  std::string_view payload;
  std::string_view signature;
};

std::optional<Parts> SplitJwt(std::string_view token) {
  const std::size_t first = token.find('.');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t second = token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) return std::nullopt;
  return Parts{token.substr(0, first), token.substr(first + 1, second - first - 1), token.substr(second + 1)};
}

// A base64url part that decodes to a strict JSON object (duplicate names refused).
std::optional<json::Value> ObjectPart(std::string_view part) {
  auto bytes = Base64UrlDecode(part);
  if (!bytes) return std::nullopt;
  json::ParseOptions options;
  options.max_bytes = kMaxTokenBytes;
  auto parsed = json::Parse(*bytes, options);
  if (!parsed.ok() || !parsed->is_object()) return std::nullopt;
  return std::move(parsed).value();
}

// RFC 9068 types access tokens "at+jwt"; many providers still write "JWT" or nothing. Any
// other type (a logout token, a security event, a DPoP proof) says the JWT is no access token.
bool TypeFitsAnAccessToken(const json::Value& header) {
  auto typ = header.find("typ");
  if (typ == header.end()) return true;
  if (!typ->is_string()) return false;
  const std::string type = base::AsciiLower(typ->get<std::string>());
  return type == "at+jwt" || type == "application/at+jwt" || type == "jwt" || type == "application/jwt";
}

bool KeyFits(const Jwk& key, std::string_view alg) {
  if (!key.alg.empty() && key.alg != alg) return false;
  if (alg == "RS256" || alg == "PS256") return key.type == KeyType::kRsa;
  if (alg == "ES256") return key.type == KeyType::kEcP256;
  return alg == "EdDSA" && key.type == KeyType::kEd25519;
}

// JWS ES256 signatures are R || S, 32 bytes each (RFC 7518 3.4); OpenSSL verifies DER.
std::optional<std::string> EcdsaDer(std::string_view raw) {
  if (raw.size() != 64) return std::nullopt;
  std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> sig(ECDSA_SIG_new(), ECDSA_SIG_free);
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  BIGNUM* r = BN_bin2bn(bytes, 32, nullptr);
  BIGNUM* s = BN_bin2bn(bytes + 32, 32, nullptr);
  if (!sig || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return std::nullopt;
  }
  unsigned char* der = nullptr;
  const int length = i2d_ECDSA_SIG(sig.get(), &der);
  if (length <= 0) return std::nullopt;
  std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(length));
  OPENSSL_free(der);
  return out;
}

bool SignatureHolds(std::string_view alg, EVP_PKEY* key, std::string_view signed_part, std::string signature) {
  if (alg == "ES256") {
    auto der = EcdsaDer(signature);
    if (!der) return false;
    signature = std::move(*der);
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  EVP_PKEY_CTX* pkey_ctx = nullptr;
  const EVP_MD* digest = alg == "EdDSA" ? nullptr : EVP_sha256();
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), &pkey_ctx, digest, nullptr, key) != 1) return false;
  if (alg == "PS256" && (EVP_PKEY_CTX_set_rsa_padding(pkey_ctx, RSA_PKCS1_PSS_PADDING) != 1 ||
                         EVP_PKEY_CTX_set_rsa_pss_saltlen(pkey_ctx, RSA_PSS_SALTLEN_DIGEST) != 1 ||
                         EVP_PKEY_CTX_set_rsa_mgf1_md(pkey_ctx, EVP_sha256()) != 1)) {
    return false;
  }
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                          reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size()) == 1;
}

bool AudienceHolds(const json::Value& claims, const std::string& audience) {
  auto it = claims.find("aud");
  if (it == claims.end()) return false;
  if (it->is_string()) return *it == audience;
  if (!it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [&](const json::Value& one) { return one.is_string() && one == audience; });
}

std::optional<std::int64_t> Instant(const json::Value& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_number()) return std::nullopt;
  const double seconds = it->get<double>();
  // Beyond any instant a token means (year 5000): refused rather than overflowed.
  if (!(seconds > -1e11 && seconds < 1e11)) return std::nullopt;
  return static_cast<std::int64_t>(seconds);
}

std::vector<std::string> Grants(const json::Value& claims, const std::string& claim) {
  std::vector<std::string> scopes;
  auto it = claims.find(claim);
  if (it == claims.end() && claim == "scope") it = claims.find("scp");
  if (it == claims.end()) return scopes;
  if (it->is_string()) {
    const std::string text = it->get<std::string>();
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find(' ', start);
      if (end == std::string::npos) end = text.size();
      if (end > start) scopes.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  } else if (it->is_array()) {
    for (const json::Value& one : *it) {
      if (one.is_string()) scopes.push_back(one.get<std::string>());
    }
  }
  return scopes;
}

}  // namespace

Result<TokenHeader> ReadTokenHeader(std::string_view token) {
  if (token.size() > kMaxTokenBytes) return Invalid("it is larger than any access token this gateway accepts");
  auto parts = SplitJwt(token);
  if (!parts) return Invalid("it is not a JWS in compact form");
  auto header = ObjectPart(parts->header);
  if (!header) return Invalid("its header is not a base64url JSON object");
  auto alg = header->find("alg");
  if (alg == header->end() || !alg->is_string()) return Invalid("its header names no algorithm");
  TokenHeader out;
  out.alg = alg->get<std::string>();
  if (std::find(kAllowedAlgorithms.begin(), kAllowedAlgorithms.end(), out.alg) == kAllowedAlgorithms.end()) {
    return Invalid("its algorithm is not one of RS256, PS256, ES256, EdDSA");
  }
  if (header->contains("crit")) return Invalid("its header has critical extensions this gateway does not implement");
  if (!TypeFitsAnAccessToken(*header)) return Invalid("its typ says it is another kind of token than an access token");
  if (auto kid = header->find("kid"); kid != header->end()) {
    if (!kid->is_string()) return Invalid("its header's kid is not a string");
    out.kid = kid->get<std::string>();
  }
  return out;
}

Result<TokenClaims> CheckClaims(const json::Value& claims, const TokenExpectations& expected) {
  const std::int64_t skew = std::min(expected.skew, kMaxClockSkew).count();
  if (!claims.contains("iss") || claims["iss"] != expected.issuer) return Invalid("it was issued by another issuer");
  if (!AudienceHolds(claims, expected.audience)) return Invalid("it is meant for another audience");
  auto exp = Instant(claims, "exp");
  if (!exp || expected.now >= *exp + skew) {
    return MakeError("auth.token_expired", "access token refused: it has expired (or states no expiry)");
  }
  for (const char* name : {"nbf", "iat"}) {
    if (!claims.contains(name)) continue;
    auto instant = Instant(claims, name);
    if (!instant) return Invalid("it carries a time that is not one");
    if (expected.now + skew < *instant) return Invalid("it is not valid yet");
  }
  // A token bound to its holder's key (DPoP, mTLS) is only good with the holder's proof,
  // which a bearer request does not bring.
  if (claims.contains("cnf")) return Invalid("it is bound to a key of its holder (cnf), and this gateway takes bearer tokens only");
  auto sub = claims.find("sub");
  if (sub == claims.end() || !sub->is_string() || sub->get<std::string>().empty()) {
    return Invalid("it names no subject");
  }
  return TokenClaims{sub->get<std::string>(), Grants(claims, expected.grants_claim), *exp};
}

Result<TokenClaims> VerifyToken(std::string_view token, const Jwk& key, const TokenExpectations& expected) {
  auto header = ReadTokenHeader(token);
  if (!header.ok()) return header.error();
  if (!KeyFits(key, header->alg)) return Invalid("its algorithm does not fit the issuer's key");
  const Parts parts = *SplitJwt(token);
  auto signature = Base64UrlDecode(parts.signature);
  if (!signature) return Invalid("its signature is not base64url");
  const std::string_view signed_part = token.substr(0, parts.header.size() + 1 + parts.payload.size());
  if (!SignatureHolds(header->alg, key.key.get(), signed_part, std::move(*signature))) {
    return Invalid("its signature does not verify with the issuer's key");
  }
  auto claims = ObjectPart(parts.payload);
  if (!claims) return Invalid("its payload is not a base64url JSON object");
  return CheckClaims(*claims, expected);
}

}  // namespace udon::resource_auth
