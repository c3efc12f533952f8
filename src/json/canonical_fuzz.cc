// Fuzz target: RFC 8785 canonicalization. Oracles: the fast path (CanonicalizeText, no DOM)
// and the DOM path (Parse, then Canonicalize) agree on every input, byte for byte or on
// the error code; the canonical form is a fixed point (it parses, and canonicalizes to
// itself); canonical equality is insensitive to the input's formatting; and the digest-only
// path (CanonicalSha256Text) hashes exactly the fast path's bytes, or refuses alike.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "json/canonical.h"
#include "json/json.h"
#include "base/sha256.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto fast = udon::json::CanonicalizeText(text);
  auto digest = udon::json::CanonicalSha256Text(text);
  UDON_FUZZ_CHECK(digest.ok() == fast.ok(), "the digest path accepts what the fast path does");
  if (fast.ok()) {
    UDON_FUZZ_CHECK(*digest == udon::base::Sha256Hex(*fast),
                    "the digest path hashes the fast path's bytes");
  } else {
    UDON_FUZZ_CHECK(digest.error().code == fast.error().code &&
                        digest.error().pointer == fast.error().pointer,
                    "the digest path refuses with the fast path's code and pointer");
  }
  auto parsed = udon::json::Parse(text);
  if (!parsed.ok()) {
    UDON_FUZZ_CHECK(!fast.ok(), "the fast path refuses what the parser refuses");
    UDON_FUZZ_CHECK(fast.error().code == parsed.error().code,
                    "the fast path refuses with the parser's code");
    return 0;
  }
  auto slow = udon::json::Canonicalize(*parsed);
  UDON_FUZZ_CHECK(fast.ok() == slow.ok(), "both paths accept the same inputs");
  if (!slow.ok()) {
    UDON_FUZZ_CHECK(fast.error().code == slow.error().code, "both paths refuse with one code");
    return 0;
  }
  UDON_FUZZ_CHECK(*fast == *slow, "both paths produce the same bytes");

  auto reparsed = udon::json::Parse(*slow);
  UDON_FUZZ_CHECK(reparsed.ok(), "the canonical form parses");
  auto twice = udon::json::Canonicalize(*reparsed);
  UDON_FUZZ_CHECK(twice.ok() && *twice == *slow, "the canonical form is its own canonical form");
  auto twice_fast = udon::json::CanonicalizeText(*slow);
  UDON_FUZZ_CHECK(twice_fast.ok() && *twice_fast == *slow,
                  "the fast path maps the canonical form to itself");

  // Reformatting (nlohmann's pretty printer) never changes the canonical bytes.
  auto pretty = udon::json::CanonicalizeText(parsed->dump(2));
  UDON_FUZZ_CHECK(pretty.ok() && *pretty == *slow, "formatting does not change the canonical form");
  return 0;
}
