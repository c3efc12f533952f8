// Random keys kept in files of their own (the evidence key, the PostgreSQL token store's
// key): `size` random bytes, 0600, created once and then only read. Errors carry the code
// and the name of the key the caller gives (`what`, "the evidence key"), never its bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace udon::base {

struct KeyFile {
  std::string path;
  std::size_t size = 32;
  std::string code;  // the error code of every failure
  std::string what;  // how messages name the key
};

// The key's bytes. Errors (key.code): it cannot be opened (missing, a link), or has another
// size than key.size.
Result<std::string> ReadKeyFile(const KeyFile& key);

// Creates the key in `dir` (its directory) when absent, then reads it. Two processes
// creating it at once agree on one key (written whole under a temporary name, then linked
// into place with O_EXCL semantics: the loser reads the winner's). Errors (key.code): no
// randomness, or the file cannot be created, written or read.
Result<std::string> LoadOrCreateKeyFile(const KeyFile& key, const std::string& dir);

}  // namespace udon::base
