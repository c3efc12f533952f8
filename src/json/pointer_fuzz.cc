// Fuzz target: RFC 6901 pointers. Input: a pointer text, a newline, then a JSON document.
// Oracles: a parsed pointer prints back to exactly its text (the escaping is a bijection);
// every token survives EscapeToken and a re-parse; Child/Parent/IsPrefixOf agree; and every
// value of the document is reached by the pointer built from its path, and by that
// pointer's text, at the very same address.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/check.h"
#include "json/json.h"
#include "json/pointer.h"

namespace {

using udon::json::Pointer;
using udon::json::Value;

// Visits at most this many values per document, to keep each run fast.
constexpr std::size_t kMaxVisits = 2000;

void CheckEveryPath(const Value& root, const Value& value, const Pointer& path,
                    std::size_t& visits) {
  if (++visits > kMaxVisits) return;
  UDON_FUZZ_CHECK(path.Resolve(root) == &value, "a value's path resolves to that value");
  auto reparsed = Pointer::Parse(path.ToString());
  UDON_FUZZ_CHECK(reparsed.ok() && *reparsed == path, "a path's text parses back to the path");
  UDON_FUZZ_CHECK(reparsed->Resolve(root) == &value, "a path's text resolves to the value");
  if (value.is_object()) {
    for (const auto& [name, member] : value.items()) {
      CheckEveryPath(root, member, path.Child(name), visits);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      CheckEveryPath(root, value[i], path.Child(i), visits);
    }
  }
}

void CheckPointer(std::string_view text, const Value* document) {
  auto pointer = Pointer::Parse(text);
  if (!pointer.ok()) {
    UDON_FUZZ_CHECK(pointer.error().code == "json.pointer_invalid", "an invalid pointer's code");
    return;
  }
  UDON_FUZZ_CHECK(pointer->ToString() == text, "a valid pointer prints back to its own text");
  for (const std::string& token : pointer->tokens()) {
    auto single = Pointer::Parse("/" + Pointer::EscapeToken(token));
    UDON_FUZZ_CHECK(single.ok() && single->tokens().size() == 1 && single->tokens()[0] == token,
                    "an escaped token parses back to the token");
  }
  UDON_FUZZ_CHECK(pointer->Parent().IsPrefixOf(*pointer), "the parent is a prefix");
  UDON_FUZZ_CHECK(pointer->IsPrefixOf(pointer->Child("x")), "a pointer prefixes its child");
  UDON_FUZZ_CHECK(pointer->Child("x").Parent() == *pointer, "a child's parent is the pointer");
  if (document == nullptr) return;
  const Value* target = pointer->Resolve(*document);
  if (target != nullptr && !pointer->empty()) {
    const Value* parent = pointer->Parent().Resolve(*document);
    UDON_FUZZ_CHECK(parent != nullptr && parent->is_structured(),
                    "the parent of a resolved pointer resolves to a container");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string_view pointer_text = input.substr(0, newline);
  auto document = newline == std::string_view::npos
                      ? udon::Result<Value>(udon::MakeError("none", "no document"))
                      : udon::json::Parse(input.substr(newline + 1));
  CheckPointer(pointer_text, document.ok() ? &*document : nullptr);
  if (document.ok()) {
    std::size_t visits = 0;
    CheckEveryPath(*document, *document, Pointer(), visits);
  }
  return 0;
}
