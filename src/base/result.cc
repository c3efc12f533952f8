#include "base/result.h"

namespace udon {

std::string Error::Describe() const {
  std::string text = message;
  if (!pointer.empty()) text += " at " + pointer;
  if (location) {
    text += " (line " + std::to_string(location->line) + ", column " +
            std::to_string(location->column) + ", byte " + std::to_string(location->offset) + ")";
  }
  return text;
}

Error Error::WithCode(std::string new_code) const& {
  Error copy = *this;
  copy.code = std::move(new_code);
  return copy;
}

Error Error::WithCode(std::string new_code) && {
  code = std::move(new_code);
  return std::move(*this);
}

Error Error::AtPrefix(const std::string& prefix) && {
  pointer = prefix + pointer;
  return std::move(*this);
}

Error MakeError(std::string code, std::string message, std::string pointer) {
  Error error;
  error.code = std::move(code);
  error.message = std::move(message);
  error.pointer = std::move(pointer);
  return error;
}

}  // namespace udon
