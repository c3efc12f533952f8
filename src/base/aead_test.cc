#include "base/aead.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <string>

namespace udon::base {
namespace {

const std::string kKey(kAeadKeyBytes, '\x42');

// OpenSSL's AES-256-GCM as the reference: what AeadSeal wrote opens there too.
std::optional<std::string> OpenWithOpenSsl(const std::string& key, const std::string& associated, const Sealed& sealed) {
  EVP_CIPHER_CTX* context = EVP_CIPHER_CTX_new();
  const auto bytes = [](const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); };
  const std::size_t length = sealed.ciphertext.size() - kAeadTagBytes;
  std::string plaintext(length, '\0');
  int written = 0;
  std::string tag = sealed.ciphertext.substr(length);
  bool ok = EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(sealed.nonce.size()), nullptr) == 1 &&
            EVP_DecryptInit_ex(context, nullptr, nullptr, bytes(key), bytes(sealed.nonce)) == 1 &&
            EVP_DecryptUpdate(context, nullptr, &written, bytes(associated), static_cast<int>(associated.size())) == 1 &&
            EVP_DecryptUpdate(context, reinterpret_cast<unsigned char*>(plaintext.data()), &written,
                              bytes(sealed.ciphertext), static_cast<int>(length)) == 1 &&
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, static_cast<int>(tag.size()), tag.data()) == 1 &&
            EVP_DecryptFinal_ex(context, nullptr, &written) == 1;
  EVP_CIPHER_CTX_free(context);
  if (!ok) return std::nullopt;
  return plaintext;
}

TEST(Aead, RoundTripsAndOpensWithTheReference) {
  auto sealed = AeadSeal(kKey, "row a", "refresh-token-value");
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(sealed->nonce.size(), kAeadNonceBytes);
  EXPECT_EQ(sealed->ciphertext.size(), std::string("refresh-token-value").size() + kAeadTagBytes);
  EXPECT_EQ(sealed->ciphertext.find("refresh-token-value"), std::string::npos);
  auto opened = AeadOpen(kKey, "row a", *sealed);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(*opened, std::optional<std::string>("refresh-token-value"));
  EXPECT_EQ(OpenWithOpenSsl(kKey, "row a", *sealed), std::optional<std::string>("refresh-token-value"));
}

TEST(Aead, EveryMessageHasItsOwnNonce) {
  auto first = AeadSeal(kKey, "", "same");
  auto second = AeadSeal(kKey, "", "same");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->nonce, second->nonce);
  EXPECT_NE(first->ciphertext, second->ciphertext);
}

// An attacker with the database but not the key: another key, a row moved under another
// key's associated data, or one flipped bit never opens, and never yields garbage.
TEST(Aead, RefusesAnotherKeyOtherAssociatedDataAndAlteredBytes) {
  auto sealed = AeadSeal(kKey, "issuer a\nresource a", "secret");
  ASSERT_TRUE(sealed.ok());
  EXPECT_EQ(*AeadOpen(std::string(kAeadKeyBytes, '\x43'), "issuer a\nresource a", *sealed), std::nullopt);
  EXPECT_EQ(*AeadOpen(kKey, "issuer b\nresource a", *sealed), std::nullopt);
  for (std::size_t i = 0; i < sealed->ciphertext.size(); ++i) {
    Sealed altered = *sealed;
    altered.ciphertext[i] = static_cast<char>(altered.ciphertext[i] ^ 1);
    EXPECT_EQ(*AeadOpen(kKey, "issuer a\nresource a", altered), std::nullopt) << i;
  }
  Sealed short_one = *sealed;
  short_one.ciphertext.resize(kAeadTagBytes - 1);
  EXPECT_EQ(*AeadOpen(kKey, "issuer a\nresource a", short_one), std::nullopt);
}

TEST(Aead, RefusesKeysOfTheWrongSize) {
  EXPECT_EQ(AeadSeal("short", "", "x").error().code, "internal.error");
  Sealed sealed{std::string(kAeadNonceBytes, '\0'), std::string(kAeadTagBytes, '\0')};
  EXPECT_EQ(AeadOpen("short", "", sealed).error().code, "internal.error");
}

}  // namespace
}  // namespace udon::base
