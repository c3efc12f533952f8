// Fuzz target: the YAML loader (yaml-cpp plus the core-schema conversion). Oracles: what it
// accepts is a JSON value the strict parser accepts back unchanged (valid UTF-8, finite
// numbers, no duplicate names); loading is deterministic; and on JSON text, which YAML 1.2
// also reads, the loader either refuses or agrees with the strict parser.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "json/json.h"
#include "json/yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto loaded = udon::json::ParseYaml(text);
  if (!loaded.ok()) {
    const std::string& code = loaded.error().code;
    UDON_FUZZ_CHECK(code == "yaml.invalid" || code == "yaml.duplicate_key" ||
                        code == "yaml.unsupported",
                    "a refusal uses one of the documented codes");
    return 0;
  }
  auto reparsed = udon::json::Parse(loaded->dump());
  UDON_FUZZ_CHECK(reparsed.ok(), "a loaded document is valid JSON");
  UDON_FUZZ_CHECK(*reparsed == *loaded, "a loaded document survives the JSON round trip");

  auto again = udon::json::ParseYaml(text);
  UDON_FUZZ_CHECK(again.ok() && *again == *loaded, "loading is deterministic");

  auto as_json = udon::json::Parse(text);
  if (as_json.ok()) {
    UDON_FUZZ_CHECK(*as_json == *loaded, "YAML and JSON readings of JSON text agree");
  }
  return 0;
}
