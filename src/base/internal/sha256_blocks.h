// SHA-256's compression function (FIPS 180-4, 6.2.2) over whole 64-byte blocks: a portable
// version and one with the x86 SHA extensions, chosen once at run time by the CPU's
// features. base/sha256.h is the interface; this is exposed for tests and benchmarks,
// which run both versions against each other and against known digests.
#pragma once

#include <cstddef>
#include <cstdint>

namespace udon::base::internal {

using Sha256BlocksFunction = void (*)(std::uint32_t state[8], const unsigned char* data,
                                      std::size_t blocks);

void Sha256BlocksPortable(std::uint32_t state[8], const unsigned char* data, std::size_t blocks);

// True when this CPU has the SHA extensions (and the SSSE3 and SSE4.1 they are used with);
// always false off x86.
bool CpuHasShaExtensions();

// Only where CpuHasShaExtensions(); null on builds for other architectures.
extern const Sha256BlocksFunction kSha256BlocksShaExtensions;

// The version every digest uses: the SHA extensions where the CPU has them.
Sha256BlocksFunction Sha256Blocks();

}  // namespace udon::base::internal
