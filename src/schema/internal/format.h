// Checks for the "format" values the validator can assert. Each takes a string instance.
#pragma once

#include <string_view>

namespace udon::schema::internal {

using FormatCheck = bool (*)(std::string_view);

// nullptr for formats without a check (they stay annotations).
FormatCheck FindFormatCheck(std::string_view name);

}  // namespace udon::schema::internal
