// Null-tolerant reads of parsed JSON and pointer building, shared by every component that
// walks a document (manifest, uws, trust, gate, evidence): a member that is absent or of
// the wrong type reads as nothing, never as an exception.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "json/json.h"

namespace udon::json {

// The pointer one level below `pointer`: the token escaped (RFC 6901 ~0, ~1), or an index.
std::string Child(const std::string& pointer, std::string_view token);
std::string Child(const std::string& pointer, std::size_t index);

// The member of an object, or nullptr (not an object, no such member).
const Value* Member(const Value& object, std::string_view name);
const Value* Member(const Value* object, std::string_view name);

// A string member, or "" when absent or not a string.
std::string StringMember(const Value& object, std::string_view name);
std::string StringMember(const Value* object, std::string_view name);

// An array (object) member, or nullptr when absent or of another type.
const Value* ArrayMember(const Value& object, std::string_view name);
const Value* ObjectMember(const Value& object, std::string_view name);

}  // namespace udon::json
