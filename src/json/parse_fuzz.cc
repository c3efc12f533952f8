// Fuzz target: the strict parser. Oracle: whatever it accepts serializes to JSON that it
// accepts again as an equal value (nothing it lets in is lost or changed by a round trip),
// and a depth limit it passed at the default also holds when set to the exact depth.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "json/json.h"

namespace {

std::size_t Depth(const udon::json::Value& value) {
  std::size_t deepest = 0;
  if (value.is_structured()) {
    for (const auto& child : value) deepest = std::max(deepest, Depth(child));
    return deepest + 1;
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = udon::json::Parse(text);
  if (!parsed.ok()) {
    UDON_FUZZ_CHECK(!parsed.error().code.empty(), "a parse error has a code");
    UDON_FUZZ_CHECK(parsed.error().location.has_value(), "a parse error has a location");
    UDON_FUZZ_CHECK(parsed.error().location->offset <= size, "the error offset is inside the input");
    return 0;
  }
  const std::string compact = parsed->dump();
  auto again = udon::json::Parse(compact);
  UDON_FUZZ_CHECK(again.ok(), "the serialized form of an accepted value parses");
  UDON_FUZZ_CHECK(*again == *parsed, "the serialized form parses to an equal value");
  UDON_FUZZ_CHECK(again->dump() == compact, "serialization is stable across a round trip");

  const std::size_t depth = Depth(*parsed);
  if (depth > 0) {
    udon::json::ParseOptions exact;
    exact.max_depth = depth;
    UDON_FUZZ_CHECK(udon::json::Parse(text, exact).ok(), "the input's own depth is within the limit");
    udon::json::ParseOptions shallower;
    shallower.max_depth = depth - 1;
    auto refused = udon::json::Parse(text, shallower);
    UDON_FUZZ_CHECK(!refused.ok() && refused.error().code == "json.too_deep",
                    "one level less than the input's depth is refused as too deep");
  }
  return 0;
}
