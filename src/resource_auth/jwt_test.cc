// JWT access-token verification from the attacker's side: every way a forged, replayed,
// misdirected or malformed token could pass is refused, with keys made here by OpenSSL.
#include "resource_auth/jwt.h"

#include <openssl/hmac.h>

#include <gtest/gtest.h>

#include "resource_auth/base64url.h"
#include "resource_auth/jwks.h"
#include "resource_auth/test_tokens.h"

namespace udon::resource_auth {
namespace {

using testing::Base64Url;
using testing::Generate;
using testing::SignedToken;
using testing::Token;

using testing::kAudience;
using testing::kIssuer;
using testing::kNow;

json::Value Claims() {
  return {{"iss", kIssuer}, {"aud", kAudience}, {"sub", "alice"}, {"exp", kNow + 600},
          {"iat", kNow - 5}, {"scope", "tools.read tools.write"}};
}

TokenExpectations Expected() { return {kIssuer, kAudience, std::chrono::seconds(60), kNow, "scope"}; }

JwkSet SetOf(const json::Value& jwks) {
  auto set = JwkSet::Parse(jwks.dump());
  EXPECT_TRUE(set.ok());
  return std::move(set).value();
}

struct Signer {
  explicit Signer(std::string a) : alg(std::move(a)), key(Generate(alg)), set(SetOf({{"keys", {testing::Jwk(key.get(), "k1")}}})) {}
  std::string Sign(const json::Value& claims) const { return Token(alg, key.get(), "k1", claims); }
  const Jwk& jwk() const { return *set.Find("k1"); }
  std::string alg;
  testing::Pkey key;
  JwkSet set;
};

std::string CodeOf(const Result<TokenClaims>& result) { return result.ok() ? "ok" : result.error().code; }

TEST(JwtTest, EachAllowedAlgorithmVerifiesWithItsOwnKeyType) {
  for (const char* alg : {"RS256", "PS256", "ES256", "EdDSA"}) {
    Signer signer(alg);
    auto claims = VerifyToken(signer.Sign(Claims()), signer.jwk(), Expected());
    ASSERT_TRUE(claims.ok()) << alg << ": " << claims.error().message;
    EXPECT_EQ(claims->subject, "alice");
    EXPECT_EQ(claims->grants, (std::vector<std::string>{"tools.read", "tools.write"}));
  }
}

TEST(JwtTest, AlgNoneIsRefusedWhateverTheSignature) {
  Signer rsa("RS256");
  const std::string unsigned_token =
      Base64Url(R"({"alg":"none","kid":"k1"})") + "." + Base64Url(Claims().dump()) + ".";
  EXPECT_EQ(CodeOf(VerifyToken(unsigned_token, rsa.jwk(), Expected())), "auth.token_invalid");
  for (const char* alg : {"none", "None", "NONE", ""}) {
    const json::Value header = {{"alg", alg}, {"kid", "k1"}};
    EXPECT_FALSE(ReadTokenHeader(Base64Url(header.dump()) + "." + Base64Url(Claims().dump()) + ".").ok()) << alg;
  }
}

// The classic confusion: HS256 with the issuer's public key as the HMAC secret.
TEST(JwtTest, HmacWithThePublicKeyAsSecretIsRefused) {
  Signer rsa("RS256");
  const std::string secret = testing::Jwk(rsa.key.get(), "k1").dump();
  for (const char* alg : {"HS256", "HS384", "HS512"}) {
    const std::string input = Base64Url(json::Value({{"alg", alg}, {"kid", "k1"}}).dump()) + "." + Base64Url(Claims().dump());
    unsigned char mac[64];
    unsigned int size = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(input.data()),
         input.size(), mac, &size);
    const std::string token = input + "." + Base64Url(std::string(reinterpret_cast<char*>(mac), size));
    EXPECT_EQ(CodeOf(VerifyToken(token, rsa.jwk(), Expected())), "auth.token_invalid") << alg;
  }
}

TEST(JwtTest, AnAlgorithmThatDoesNotFitTheKeyIsRefused) {
  Signer rsa("RS256");
  Signer ec("ES256");
  Signer ed("EdDSA");
  // A token signed by an EC key, presented against the RSA key the kid names, and so on.
  EXPECT_EQ(CodeOf(VerifyToken(ec.Sign(Claims()), rsa.jwk(), Expected())), "auth.token_invalid");
  EXPECT_EQ(CodeOf(VerifyToken(rsa.Sign(Claims()), ec.jwk(), Expected())), "auth.token_invalid");
  EXPECT_EQ(CodeOf(VerifyToken(ed.Sign(Claims()), ec.jwk(), Expected())), "auth.token_invalid");
  // An RS256 signature relabelled PS256 (same key type, other padding) does not verify.
  const std::string rs = rsa.Sign(Claims());
  const std::string relabelled = Base64Url(R"({"alg":"PS256","kid":"k1"})") + rs.substr(rs.find('.'));
  EXPECT_EQ(CodeOf(VerifyToken(relabelled, rsa.jwk(), Expected())), "auth.token_invalid");
  // A JWK that states its algorithm verifies that one alone.
  json::Value pinned = testing::Jwk(rsa.key.get(), "k1");
  pinned["alg"] = "PS256";
  const JwkSet set = SetOf({{"keys", {pinned}}});
  EXPECT_EQ(CodeOf(VerifyToken(rs, *set.Find("k1"), Expected())), "auth.token_invalid");
}

TEST(JwtTest, AKeyOfAnotherIssuerDoesNotVerify) {
  Signer ours("ES256");
  Signer theirs("ES256");
  EXPECT_EQ(CodeOf(VerifyToken(theirs.Sign(Claims()), ours.jwk(), Expected())), "auth.token_invalid");
  EXPECT_EQ(ours.set.Find("k2"), nullptr);  // an unknown kid finds no key
}

TEST(JwtTest, ExpiryAndNotBeforeHoldWithABoundedSkew) {
  Signer signer("EdDSA");
  json::Value claims = Claims();
  claims["exp"] = kNow - 61;
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_expired");
  claims["exp"] = kNow - 30;  // within the skew
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "ok");
  claims.erase("exp");
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_expired");
  claims["exp"] = "later";
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_expired");
  claims = Claims();
  claims["nbf"] = kNow + 120;
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_invalid");
  claims["nbf"] = 1e300;
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_invalid");
  claims = Claims();
  claims["iat"] = kNow + 3600;
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_invalid");
  // A configured skew above the bound is held to it.
  claims = Claims();
  claims["exp"] = kNow - 301;
  TokenExpectations lax = Expected();
  lax.skew = std::chrono::hours(24);
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), lax)), "auth.token_expired");
}

TEST(JwtTest, AnotherIssuerOrAudienceIsRefused) {
  Signer signer("RS256");
  json::Value claims = Claims();
  claims["iss"] = kIssuer + "/";
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_invalid");
  claims.erase("iss");
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_invalid");
  claims = Claims();
  claims["aud"] = "https://other.example/mcp";
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_invalid");
  claims["aud"] = json::Value::array({"https://other.example/mcp", kAudience});
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "ok");
  claims.erase("aud");
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_invalid");
  claims = Claims();
  claims.erase("sub");
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(claims), signer.jwk(), Expected())), "auth.token_invalid");
}

TEST(JwtTest, ATamperedPayloadOrHeaderIsRefused) {
  Signer signer("ES256");
  const std::string token = signer.Sign(Claims());
  const std::size_t first = token.find('.');
  const std::size_t second = token.find('.', first + 1);
  json::Value widened = Claims();
  widened["scope"] = "admin";
  const std::string swapped = token.substr(0, first + 1) + Base64Url(widened.dump()) + token.substr(second);
  EXPECT_EQ(CodeOf(VerifyToken(swapped, signer.jwk(), Expected())), "auth.token_invalid");
  std::string flipped = token;
  flipped[second - 2] = flipped[second - 2] == 'A' ? 'B' : 'A';
  EXPECT_EQ(CodeOf(VerifyToken(flipped, signer.jwk(), Expected())), "auth.token_invalid");
  const std::string reheadered = Base64Url(R"({"alg":"ES256","kid":"k1","x":1})") + token.substr(first);
  EXPECT_EQ(CodeOf(VerifyToken(reheadered, signer.jwk(), Expected())), "auth.token_invalid");
}

TEST(JwtTest, AHugeTokenIsRefusedBeforeAnyParsing) {
  Signer signer("EdDSA");
  json::Value claims = Claims();
  claims["pad"] = std::string(kMaxTokenBytes, 'a');
  auto result = VerifyToken(signer.Sign(claims), signer.jwk(), Expected());
  EXPECT_EQ(CodeOf(result), "auth.token_invalid");
  EXPECT_EQ(result.error().message.find("aaaa"), std::string::npos);
}

TEST(JwtTest, OnlyCanonicalBase64UrlIsRead) {
  EXPECT_EQ(Base64UrlDecode("YWJj"), "abc");
  EXPECT_EQ(Base64UrlDecode("YWI"), "ab");
  EXPECT_FALSE(Base64UrlDecode("YWI=").has_value());   // padding
  EXPECT_FALSE(Base64UrlDecode("YW+j").has_value());   // the other alphabet
  EXPECT_FALSE(Base64UrlDecode("YWJ").has_value());    // unused bits set: a second spelling of "ab"
  EXPECT_FALSE(Base64UrlDecode("YWJjZ").has_value());  // no byte string is 4n+1 long
  Signer signer("RS256");
  const std::string token = signer.Sign(Claims());
  EXPECT_EQ(CodeOf(VerifyToken(token + "=", signer.jwk(), Expected())), "auth.token_invalid");
  std::string header_plus = token;
  header_plus[0] = '+';
  EXPECT_EQ(CodeOf(VerifyToken(header_plus, signer.jwk(), Expected())), "auth.token_invalid");
  EXPECT_EQ(CodeOf(VerifyToken("a.b", signer.jwk(), Expected())), "auth.token_invalid");
  EXPECT_EQ(CodeOf(VerifyToken(token + ".x", signer.jwk(), Expected())), "auth.token_invalid");
}

TEST(JwtTest, DuplicateMemberNamesAreRefusedInHeaderAndPayload) {
  Signer signer("EdDSA");
  // A second alg (or sub) that a lenient parser would take instead of the first.
  const std::string dup_header = SignedToken("EdDSA", signer.key.get(), R"({"alg":"EdDSA","kid":"k1","alg":"none"})",
                                             Claims().dump());
  EXPECT_EQ(CodeOf(VerifyToken(dup_header, signer.jwk(), Expected())), "auth.token_invalid");
  std::string payload = Claims().dump();
  payload.insert(payload.size() - 1, R"(,"sub":"root")");
  const std::string dup_payload =
      SignedToken("EdDSA", signer.key.get(), R"({"alg":"EdDSA","kid":"k1"})", payload);
  EXPECT_EQ(CodeOf(VerifyToken(dup_payload, signer.jwk(), Expected())), "auth.token_invalid");
}

TEST(JwtTest, CriticalHeaderExtensionsAreRefused) {
  Signer signer("EdDSA");
  const std::string token = SignedToken("EdDSA", signer.key.get(), R"({"alg":"EdDSA","kid":"k1","crit":["exp"]})",
                                        Claims().dump());
  EXPECT_EQ(CodeOf(VerifyToken(token, signer.jwk(), Expected())), "auth.token_invalid");
}

// A token bound to a key of its holder (DPoP, RFC 9449; mTLS, RFC 8705: the cnf claim) is
// only safe with the holder's proof, which this gateway does not check: a thief of such a
// token must not be able to spend it as a plain bearer token here.
TEST(JwtTest, ASenderConstrainedTokenIsRefusedAsABearerToken) {
  Signer signer("ES256");
  json::Value bound = Claims();
  bound["cnf"] = {{"jkt", "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}};
  EXPECT_EQ(CodeOf(VerifyToken(signer.Sign(bound), signer.jwk(), Expected())), "auth.token_invalid");
}

// Other JWTs an issuer signs (OpenID back-channel logout tokens, security events) are no
// access tokens, whatever their aud: a typ that says so is refused. Access tokens typed
// "at+jwt" (RFC 9068) or, as many providers still type them, "JWT" or not at all pass.
TEST(JwtTest, AJwtTypedAsAnotherKindOfTokenIsRefused) {
  Signer signer("EdDSA");
  for (const char* typ : {"logout+jwt", "secevent+jwt", "dpop+jwt", "application/logout+jwt"}) {
    const std::string header = json::Value({{"alg", "EdDSA"}, {"kid", "k1"}, {"typ", typ}}).dump();
    EXPECT_EQ(CodeOf(VerifyToken(SignedToken("EdDSA", signer.key.get(), header, Claims().dump()), signer.jwk(), Expected())),
              "auth.token_invalid")
        << typ;
  }
  for (const char* typ : {"at+jwt", "application/at+jwt", "AT+JWT", "JWT", ""}) {
    json::Value header = {{"alg", "EdDSA"}, {"kid", "k1"}};
    if (*typ != '\0') header["typ"] = typ;
    EXPECT_EQ(CodeOf(VerifyToken(SignedToken("EdDSA", signer.key.get(), header.dump(), Claims().dump()), signer.jwk(),
                                 Expected())),
              "ok")
        << typ;
  }
}

TEST(JwksTest, WeakOrMalformedKeysAreLeftOut) {
  auto small = testing::Pkey(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(1024)), EVP_PKEY_free);
  json::Value off_curve = testing::Jwk(Generate("ES256").get(), "bad");
  off_curve["y"] = Base64Url(std::string(32, '\x01'));
  json::Value encryption = testing::Jwk(Generate("RS256").get(), "enc");
  encryption["use"] = "enc";
  const json::Value secret = {{"kty", "oct"}, {"kid", "sym"}, {"k", Base64Url("secret")}};
  const JwkSet set = SetOf({{"keys", {testing::Jwk(small.get(), "small"), off_curve, encryption, secret}}});
  EXPECT_EQ(set.size(), 0U);
  EXPECT_FALSE(JwkSet::Parse(R"({"keys":[],"keys":[]})").ok());
  EXPECT_FALSE(JwkSet::Parse(R"([])").ok());
}

}  // namespace
}  // namespace udon::resource_auth
