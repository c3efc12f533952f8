// The evidence key: argument and result digests in evidence and probe reports are
// HMAC-SHA-256 under a per-state-directory key, so that a shared evidence file does not
// let anyone confirm a guessed low-entropy value (a yes/no, a small number, an account
// number of known shape) by hashing candidates. Equal values still compare equal within
// one deployment. Manifest and Tool digests stay plain SHA-256: they are public.
//
// The key is 32 random bytes in <state>/evidence.key, created 0600 on first use and never
// printed. Its id, a digest of the key, is recorded beside every keyed digest so reports
// made under different keys are never compared.
#pragma once

#include <string>

#include "json/json.h"
#include "base/result.h"

namespace udon::gate {

class EvidenceKey {
 public:
  // Reads <state_dir>/evidence.key, creating it (and the directory) when absent. Two
  // processes creating it at once agree on one key (O_EXCL; the loser reads the winner's).
  // Errors: state.unavailable (unreadable, wrong size, or cannot be created).
  static Result<EvidenceKey> LoadOrCreate(const std::string& state_dir);

  // Lowercase hex HMAC-SHA-256 of the value's RFC 8785 bytes; empty when the value cannot
  // be canonicalized (evidence then carries no digest for it).
  std::string Digest(const json::Value& value) const;
  // "k1:" and the first 16 hex digits of SHA-256 over a fixed label and the key.
  const std::string& id() const { return id_; }

 private:
  explicit EvidenceKey(std::string key);
  std::string key_;
  std::string id_;
};

}  // namespace udon::gate
