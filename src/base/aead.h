// Authenticated encryption for secrets kept at rest (the OAuth tokens of the PostgreSQL
// store, issue 39): AES-256-GCM, Nettle's, never our own. A fresh random 96-bit nonce per
// message; the associated data binds a ciphertext to where it belongs (a row's key), so a
// ciphertext moved elsewhere does not open.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace udon::base {

inline constexpr std::size_t kAeadKeyBytes = 32;    // AES-256
inline constexpr std::size_t kAeadNonceBytes = 12;  // GCM's 96-bit IV
inline constexpr std::size_t kAeadTagBytes = 16;

struct Sealed {
  std::string nonce;       // kAeadNonceBytes
  std::string ciphertext;  // the plaintext's length, then the tag (kAeadTagBytes)
};

// Encrypts `plaintext` under `key` (kAeadKeyBytes) with a fresh random nonce.
// Errors: random.unavailable; internal.error (a key of the wrong size).
Result<Sealed> AeadSeal(std::string_view key, std::string_view associated, std::string_view plaintext);

// The plaintext, or nullopt when the tag does not verify (another key, other associated
// data, or altered bytes): never a partial or garbage plaintext.
// Errors: internal.error (a key or nonce of the wrong size).
Result<std::optional<std::string>> AeadOpen(std::string_view key, std::string_view associated, const Sealed& sealed);

}  // namespace udon::base
