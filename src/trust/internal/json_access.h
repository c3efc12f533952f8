// Null-tolerant reads of a UWS document's JSON, shared by the analyzer and the resolvers.
#pragma once

#include <string>
#include <string_view>

#include "json/json.h"

namespace udon::trust::internal {

// The member of an object, or nullptr (no object, no such member).
inline const json::Value* Member(const json::Value* object, std::string_view key) {
  if (object == nullptr || !object->is_object()) return nullptr;
  auto it = object->find(key);
  return it == object->end() ? nullptr : &*it;
}

// A string member, or "" when absent or not a string.
inline std::string Text(const json::Value* object, std::string_view key) {
  const json::Value* value = Member(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

}  // namespace udon::trust::internal
