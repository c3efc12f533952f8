#include "base/aead.h"

#include <nettle/gcm.h>
#include <nettle/memops.h>

#include <cstdint>

#include "base/bytes.h"
#include "base/random.h"

namespace udon::base {
namespace {


gcm_aes256_ctx Started(std::string_view key, std::string_view nonce, std::string_view associated) {
  gcm_aes256_ctx context;
  gcm_aes256_set_key(&context, UnsignedBytes(key));
  gcm_aes256_set_iv(&context, nonce.size(), UnsignedBytes(nonce));
  gcm_aes256_update(&context, associated.size(), UnsignedBytes(associated));
  return context;
}

}  // namespace

Result<Sealed> AeadSeal(std::string_view key, std::string_view associated, std::string_view plaintext) {
  if (key.size() != kAeadKeyBytes) return MakeError("internal.error", "an encryption key of the wrong size");
  Sealed sealed;
  sealed.nonce.resize(kAeadNonceBytes);
  UDON_RETURN_IF_ERROR(RandomBytes(UnsignedBytes(sealed.nonce), sealed.nonce.size()));
  gcm_aes256_ctx context = Started(key, sealed.nonce, associated);
  sealed.ciphertext.resize(plaintext.size() + kAeadTagBytes);
  gcm_aes256_encrypt(&context, plaintext.size(), UnsignedBytes(sealed.ciphertext), UnsignedBytes(plaintext));
  gcm_aes256_digest(&context, kAeadTagBytes, UnsignedBytes(sealed.ciphertext) + plaintext.size());
  return sealed;
}

Result<std::optional<std::string>> AeadOpen(std::string_view key, std::string_view associated, const Sealed& sealed) {
  if (key.size() != kAeadKeyBytes || sealed.nonce.size() != kAeadNonceBytes) {
    return MakeError("internal.error", "an encryption key or nonce of the wrong size");
  }
  if (sealed.ciphertext.size() < kAeadTagBytes) return std::optional<std::string>();
  const std::size_t length = sealed.ciphertext.size() - kAeadTagBytes;
  gcm_aes256_ctx context = Started(key, sealed.nonce, associated);
  std::string plaintext(length, '\0');
  gcm_aes256_decrypt(&context, length, UnsignedBytes(plaintext), UnsignedBytes(sealed.ciphertext));
  std::uint8_t tag[kAeadTagBytes];
  gcm_aes256_digest(&context, sizeof tag, tag);
  // Constant time: how much of a forged tag matched must not show.
  if (memeql_sec(tag, UnsignedBytes(sealed.ciphertext) + length, sizeof tag) == 0) return std::optional<std::string>();
  return std::optional<std::string>(std::move(plaintext));
}

}  // namespace udon::base
