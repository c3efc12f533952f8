// Case folding of protocol words (header names, media types, host names, option names):
// ASCII letters only, whatever the process's locale, bytes above 0x7F unchanged.
#pragma once

#include <string>
#include <string_view>

namespace udon::base {

std::string AsciiLower(std::string_view text);
std::string AsciiUpper(std::string_view text);

}  // namespace udon::base
