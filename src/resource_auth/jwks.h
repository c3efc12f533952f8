// An authorization server's signing keys (RFC 7517 JWK Set) as OpenSSL public keys: RSA
// (at least 2048 bits), EC on P-256 and Ed25519. Keys of other types, of use other than
// "sig", or that OpenSSL does not accept as valid public keys are left out, not fatal: an
// issuer may publish keys for other purposes beside the ones its access tokens use.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace udon::resource_auth {

enum class KeyType { kRsa, kEcP256, kEd25519 };

struct Jwk {
  std::string kid;  // may be empty
  std::string alg;  // the JWK's own "alg" when it names one: the only algorithm it may verify
  KeyType type = KeyType::kRsa;
  std::shared_ptr<EVP_PKEY> key;
};

class JwkSet {
 public:
  // The set's usable keys. Errors: auth.jwks_invalid (not a JSON object with a "keys" array,
  // duplicate member names included).
  static Result<JwkSet> Parse(std::string_view text);

  // The key a token's header names: by kid when the token gives one, else the set's only
  // usable key; nullptr when there is none (or several without a kid).
  const Jwk* Find(std::string_view kid) const;
  std::size_t size() const { return keys_.size(); }

 private:
  std::vector<Jwk> keys_;
};

}  // namespace udon::resource_auth
