// Where an error's pointer may point, for the oracles of the fuzz targets.
#pragma once

#include "json/json.h"
#include "json/pointer.h"

namespace udon::fuzz {

// A refusal names the offending value, or, for a required member that is absent, the place
// it belongs: a member of an object the document has (`{}` without "jsonrpc" is refused at
// /jsonrpc). Anything else (a parent that is missing too, an array index past the end) is
// a pointer that locates nothing.
inline bool NamesValueOrMissingMember(const json::Pointer& pointer, const json::Value& document) {
  if (pointer.Resolve(document) != nullptr) return true;
  if (pointer.empty()) return false;
  const json::Value* parent = pointer.Parent().Resolve(document);
  return parent != nullptr && parent->is_object() && !parent->contains(pointer.tokens().back());
}

}  // namespace udon::fuzz
