#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace udon::base {

// The bytes of `text` as the unsigned bytes that nettle's digest and cipher functions take.
inline const std::uint8_t* UnsignedBytes(std::string_view text) {
  return reinterpret_cast<const std::uint8_t*>(text.data());
}
inline std::uint8_t* UnsignedBytes(std::string& text) { return reinterpret_cast<std::uint8_t*>(text.data()); }

}  // namespace udon::base
