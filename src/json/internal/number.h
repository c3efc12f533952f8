// How json::Parse stores a number: shared by every handler that keeps numbers (the Value
// builder and json::Document), so both give every literal the same kind and value.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <system_error>

#include "json/internal/parser.h"

namespace udon::json::internal {

struct StoredNumber {
  enum class Kind { kInteger, kUnsigned, kFloat };
  Kind kind = Kind::kFloat;
  std::int64_t integer = 0;
  std::uint64_t unsigned_integer = 0;
  double number = 0;
};

// Integers that fit int64 become int64, else those that fit uint64 become uint64; every
// other number is the nearest double.
inline StoredNumber StoreNumber(const NumberToken& token) {
  StoredNumber out;
  if (token.has_magnitude) {
    constexpr std::uint64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
    if (!token.negative) {
      if (token.magnitude <= kInt64Max) {
        out.kind = StoredNumber::Kind::kInteger;
        out.integer = static_cast<std::int64_t>(token.magnitude);
      } else {
        out.kind = StoredNumber::Kind::kUnsigned;
        out.unsigned_integer = token.magnitude;
      }
      return out;
    }
    // Down to -2^63; two's complement wraps 2^63 to INT64_MIN exactly.
    if (token.magnitude <= kInt64Max + 1) {
      out.kind = StoredNumber::Kind::kInteger;
      out.integer = static_cast<std::int64_t>(0 - token.magnitude);
      return out;
    }
    out.number = token.value;
    return out;
  }
  if (token.is_integer) {
    const char* first = token.text.data();
    const char* last = first + token.text.size();
    if (auto r = std::from_chars(first, last, out.integer); r.ec == std::errc() && r.ptr == last) {
      out.kind = StoredNumber::Kind::kInteger;
      return out;
    }
    if (auto r = std::from_chars(first, last, out.unsigned_integer);
        r.ec == std::errc() && r.ptr == last) {
      out.kind = StoredNumber::Kind::kUnsigned;
      return out;
    }
  }
  out.number = token.value;
  return out;
}

}  // namespace udon::json::internal
