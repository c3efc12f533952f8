// Structural differences between two JSON values, by RFC 6901 pointer. Numbers compare by
// value (1 and 1.0 are equal, as in the canonical form); arrays compare index by index.
#pragma once

#include <string>
#include <vector>

#include "json/json.h"

namespace udon::json {

enum class DifferenceKind { kAdded, kRemoved, kChanged };

struct Difference {
  std::string pointer;
  DifferenceKind kind;
};

const char* DifferenceKindName(DifferenceKind kind);

// Differences in document order; a changed type or scalar is one difference at its
// pointer, not one per descendant. Empty when equal.
std::vector<Difference> Diff(const Value& before, const Value& after);

// Equality in the canonical sense: same as Diff(...).empty(), cheaper.
bool CanonicallyEqual(const Value& a, const Value& b);

}  // namespace udon::json
