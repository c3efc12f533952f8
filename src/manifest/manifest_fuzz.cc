// Fuzz target: loading and checking a tool manifest from bytes. Oracles: a refusal is
// manifest.invalid with a valid pointer (to a value, or to where a missing member belongs); an accepted manifest's digest is the SHA-256 of
// the RFC 8785 form of the input (whatever its formatting), survives the pretty printer
// unchanged, and every tool the manifest lists is found at a pointer that resolves to it;
// the completeness and freshness checks return documented codes with valid pointers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "fuzz/pointer_check.h"
#include "json/canonical.h"
#include "json/pointer.h"
#include "base/sha256.h"
#include "manifest/instant.h"
#include "manifest/manifest.h"
#include "manifest/policy.h"

namespace {

using udon::manifest::Manifest;

void CheckErrorPointer(const udon::Error& error, const udon::json::Value* document) {
  auto pointer = udon::json::Pointer::Parse(error.pointer);
  UDON_FUZZ_CHECK(pointer.ok(), "an error pointer is a valid JSON pointer");
  if (document == nullptr) return;
  // A required member that is absent (a profile, a tools array) is named where it belongs.
  if (error.code == "manifest.invalid") {
    UDON_FUZZ_CHECK(udon::fuzz::NamesValueOrMissingMember(*pointer, *document),
                    "an invalid manifest's pointer names a value of the document or a missing member");
  }
  // An instant out of order always exists: the pointer is the instant itself.
  if (error.code == "manifest.invalid_instant") {
    UDON_FUZZ_CHECK(pointer->Resolve(*document) != nullptr && pointer->Resolve(*document)->is_string(),
                    "an invalid instant's pointer names the instant");
  }
}

void CheckTools(const Manifest& manifest) {
  const udon::json::Value& document = manifest.document();
  for (const std::string& server : manifest.server_keys()) {
    UDON_FUZZ_CHECK(manifest.has_server(server) && manifest.server(server) != nullptr,
                    "a listed server exists");
    for (const auto& [name, count] : manifest.ToolNames(server)) {
      const auto locations = manifest.FindTool(server, name);
      UDON_FUZZ_CHECK(locations.size() == count, "FindTool finds every occurrence ToolNames counts");
      for (const auto& location : locations) {
        auto pointer = udon::json::Pointer::Parse(location.Pointer(server));
        UDON_FUZZ_CHECK(pointer.ok(), "a tool pointer is valid");
        UDON_FUZZ_CHECK(pointer->Resolve(document) == location.tool, "a tool pointer resolves to it");
      }
      (void)manifest.review(server, name);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto manifest = Manifest::FromText(text);
  if (!manifest.ok()) {
    UDON_FUZZ_CHECK(manifest.error().code == "manifest.invalid", "a refusal is manifest.invalid");
    auto document = udon::json::Parse(text);
    CheckErrorPointer(manifest.error(), document.ok() ? &*document : nullptr);
    return 0;
  }
  auto canonical = udon::json::CanonicalizeText(text);
  UDON_FUZZ_CHECK(canonical.ok(), "an accepted manifest canonicalizes");
  UDON_FUZZ_CHECK(manifest->sha256() == udon::base::Sha256Hex(*canonical),
                  "the digest is the SHA-256 of the canonical form");

  auto pretty = Manifest::FromText(manifest->ToPrettyJson());
  UDON_FUZZ_CHECK(pretty.ok(), "the pretty-printed manifest loads");
  UDON_FUZZ_CHECK(pretty->sha256() == manifest->sha256(), "pretty printing keeps the digest");
  UDON_FUZZ_CHECK(pretty->document() == manifest->document(), "pretty printing keeps the document");

  CheckTools(*manifest);
  const udon::json::Value& document = manifest->document();
  // Missing capture data is incomplete; malformed data (an instant's shape, a page
  // before the last without nextCursor) is invalid and points at what is wrong.
  if (auto complete = manifest->CheckCaptureComplete(); !complete.ok()) {
    const std::string& code = complete.error().code;
    UDON_FUZZ_CHECK(code == "manifest.incomplete" || code == "manifest.invalid",
                    "a completeness failure's code");
    CheckErrorPointer(complete.error(), &document);
  }
  const udon::manifest::Policy policy;
  for (udon::manifest::Seconds now : {udon::manifest::Seconds{0}, udon::manifest::Seconds{1'788'000'000}}) {
    if (auto fresh = manifest->CheckFreshness(now, policy); !fresh.ok()) {
      const std::string& code = fresh.error().code;
      UDON_FUZZ_CHECK(code == "manifest.expired" || code == "manifest.window_exceeds_policy" ||
                          code == "manifest.invalid" || code == "manifest.incomplete" ||
                          code == "manifest.invalid_instant",
                      "a freshness failure's code");
      CheckErrorPointer(fresh.error(), &document);
    }
  }
  return 0;
}
