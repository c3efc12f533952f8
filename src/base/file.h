// Reading inputs and writing outputs without ever leaving a half-written file.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace udon::base {

// The whole file, or stdin for "-". Errors: io.unreadable (the message names the path,
// never the contents). max_bytes 0 means no limit (io.too_large above it).
Result<std::string> ReadFile(const std::string& path, std::size_t max_bytes = 0);

// Writes to a temporary file in the same directory, fsyncs it, renames it over path and
// fsyncs the directory. Errors: io.write_failed.
Status WriteFileAtomic(const std::string& path, std::string_view bytes);
// The same for a secret (a token): the file is created 0600 and stays so, whatever the
// file it replaces allowed. Errors: io.write_failed.
Status WriteSecretFileAtomic(const std::string& path, std::string_view bytes);

}  // namespace udon::base
