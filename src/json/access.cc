#include "json/access.h"

#include "json/pointer.h"

namespace udon::json {

std::string Child(const std::string& pointer, std::string_view token) {
  return pointer + "/" + Pointer::EscapeToken(token);
}

std::string Child(const std::string& pointer, std::size_t index) { return pointer + "/" + std::to_string(index); }

const Value* Member(const Value& object, std::string_view name) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

const Value* Member(const Value* object, std::string_view name) {
  return object == nullptr ? nullptr : Member(*object, name);
}

std::string StringMember(const Value& object, std::string_view name) {
  const Value* value = Member(object, name);
  return value != nullptr && value->is_string() ? value->get<std::string>() : std::string();
}

std::string StringMember(const Value* object, std::string_view name) {
  return object == nullptr ? std::string() : StringMember(*object, name);
}

const Value* ArrayMember(const Value& object, std::string_view name) {
  const Value* value = Member(object, name);
  return value != nullptr && value->is_array() ? value : nullptr;
}

const Value* ObjectMember(const Value& object, std::string_view name) {
  const Value* value = Member(object, name);
  return value != nullptr && value->is_object() ? value : nullptr;
}

}  // namespace udon::json
