// Secrets and unguessable names: every token, session id and key udon-mcp mints comes from
// here, the operating system's CSPRNG (getrandom(2)), never from a seeded generator whose
// state its outputs reveal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/result.h"

namespace udon::base {

// Fills `size` bytes at `out`. Errors: random.unavailable (the kernel's source failed).
Status RandomBytes(std::uint8_t* out, std::size_t size);

// `bytes` random bytes as lowercase hex (2 * bytes characters). Errors: random.unavailable.
Result<std::string> RandomHex(std::size_t bytes);

}  // namespace udon::base
