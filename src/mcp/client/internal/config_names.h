// What the server configuration (config.cc) and the least-privilege settings
// (least_privilege.cc) both check: environment variable names, and the one refusal code of
// a malformed entry.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"

namespace udon::mcp::internal {

// An environment variable name: a letter or underscore, then letters, digits, underscores.
inline bool IsVariableName(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// config.invalid, at POINTER.
inline Error ConfigInvalid(std::string message, std::string pointer) {
  return udon::MakeError("config.invalid", std::move(message), std::move(pointer));
}

}  // namespace udon::mcp::internal
