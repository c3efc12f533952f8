#include "resource_auth/jwks.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <optional>

#include "json/json.h"
#include "resource_auth/base64url.h"

namespace udon::resource_auth {
namespace {

constexpr std::size_t kMaxJwksBytes = 256 * 1024;
constexpr int kMinRsaBits = 2048;

using PkeyPtr = std::shared_ptr<EVP_PKEY>;

std::optional<std::string> Member(const json::Value& jwk, const char* name) {
  auto it = jwk.find(name);
  if (it == jwk.end() || !it->is_string()) return std::nullopt;
  return Base64UrlDecode(it->get<std::string>());
}

// OpenSSL's own check that a public key is well formed (an EC point on its curve, an RSA
// modulus that is odd and large enough to be one).
PkeyPtr Checked(EVP_PKEY* raw) {
  if (raw == nullptr) return nullptr;
  PkeyPtr key(raw, EVP_PKEY_free);
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, raw, nullptr),
                                                                  EVP_PKEY_CTX_free);
  if (!ctx || EVP_PKEY_public_check(ctx.get()) != 1) return nullptr;
  return key;
}

PkeyPtr FromParams(const char* type, OSSL_PARAM_BLD* builder) {
  std::unique_ptr<OSSL_PARAM, decltype(&OSSL_PARAM_free)> params(OSSL_PARAM_BLD_to_param(builder), OSSL_PARAM_free);
  std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr),
                                                                  EVP_PKEY_CTX_free);
  EVP_PKEY* raw = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    return nullptr;
  }
  return Checked(raw);
}

PkeyPtr RsaKey(const json::Value& jwk) {
  auto n = Member(jwk, "n");
  auto e = Member(jwk, "e");
  if (!n || !e || n->empty() || e->empty()) return nullptr;
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn_n(
      BN_bin2bn(reinterpret_cast<const unsigned char*>(n->data()), static_cast<int>(n->size()), nullptr), BN_free);
  std::unique_ptr<BIGNUM, decltype(&BN_free)> bn_e(
      BN_bin2bn(reinterpret_cast<const unsigned char*>(e->data()), static_cast<int>(e->size()), nullptr), BN_free);
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> builder(OSSL_PARAM_BLD_new(), OSSL_PARAM_BLD_free);
  if (!bn_n || !bn_e || !builder || BN_num_bits(bn_n.get()) < kMinRsaBits ||
      OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
    return nullptr;
  }
  return FromParams("RSA", builder.get());
}

PkeyPtr EcP256Key(const json::Value& jwk) {
  if (jwk.value("crv", std::string()) != "P-256") return nullptr;
  auto x = Member(jwk, "x");
  auto y = Member(jwk, "y");
  if (!x || !y || x->size() != 32 || y->size() != 32) return nullptr;
  const std::string point = std::string(1, '\x04') + *x + *y;  // SEC 1 uncompressed
  std::unique_ptr<OSSL_PARAM_BLD, decltype(&OSSL_PARAM_BLD_free)> builder(OSSL_PARAM_BLD_new(), OSSL_PARAM_BLD_free);
  if (!builder || OSSL_PARAM_BLD_push_utf8_string(builder.get(), OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(builder.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) != 1) {
    return nullptr;
  }
  return FromParams("EC", builder.get());
}

PkeyPtr Ed25519Key(const json::Value& jwk) {
  if (jwk.value("crv", std::string()) != "Ed25519") return nullptr;
  auto x = Member(jwk, "x");
  if (!x || x->size() != 32) return nullptr;
  return Checked(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                             reinterpret_cast<const unsigned char*>(x->data()), x->size()));
}

std::optional<Jwk> ReadKey(const json::Value& jwk) {
  if (!jwk.is_object()) return std::nullopt;
  if (jwk.contains("use") && jwk["use"] != "sig") return std::nullopt;
  Jwk out;
  if (jwk.contains("kid")) {
    if (!jwk["kid"].is_string()) return std::nullopt;
    out.kid = jwk["kid"].get<std::string>();
  }
  if (jwk.contains("alg")) {
    if (!jwk["alg"].is_string()) return std::nullopt;
    out.alg = jwk["alg"].get<std::string>();
  }
  const std::string kty = jwk.value("kty", std::string());
  if (kty == "RSA") {
    out.type = KeyType::kRsa;
    out.key = RsaKey(jwk);
  } else if (kty == "EC") {
    out.type = KeyType::kEcP256;
    out.key = EcP256Key(jwk);
  } else if (kty == "OKP") {
    out.type = KeyType::kEd25519;
    out.key = Ed25519Key(jwk);
  }
  if (!out.key) return std::nullopt;
  return out;
}

}  // namespace

Result<JwkSet> JwkSet::Parse(std::string_view text) {
  json::ParseOptions options;
  options.max_bytes = kMaxJwksBytes;
  auto parsed = json::Parse(text, options);
  if (!parsed.ok() || !parsed->is_object() || !parsed->contains("keys") || !(*parsed)["keys"].is_array()) {
    return MakeError("auth.jwks_invalid", "the issuer's JWK Set is not a JSON object with a keys array");
  }
  JwkSet set;
  for (const json::Value& jwk : (*parsed)["keys"]) {
    if (auto key = ReadKey(jwk)) set.keys_.push_back(std::move(*key));
  }
  return set;
}

const Jwk* JwkSet::Find(std::string_view kid) const {
  if (kid.empty()) return keys_.size() == 1 ? &keys_.front() : nullptr;
  for (const Jwk& key : keys_) {
    if (key.kid == kid) return &key;
  }
  return nullptr;
}

}  // namespace udon::resource_auth
