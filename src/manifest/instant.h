// Instants as manifests write them: RFC 3339 UTC with 'Z' and whole seconds
// (YYYY-MM-DDTHH:MM:SSZ). One spelling per instant keeps digests stable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace udon::manifest {

using Seconds = std::int64_t;  // since the Unix epoch, UTC

// Errors: time.invalid (not that exact shape, or not a real calendar instant).
Result<Seconds> ParseInstant(std::string_view text);
std::string FormatInstant(Seconds instant);
Seconds NowSeconds();

inline constexpr Seconds kSecondsPerDay = 86'400;

}  // namespace udon::manifest
