#include "json/pointer.h"

#include "json/internal/parser.h"

#include <algorithm>
#include <charconv>

namespace udon::json {
namespace {

// Array indices are "0" or digits without a leading zero; "-" (past the end) never
// resolves to an existing element.
bool ParseIndex(const std::string& token, std::size_t& index) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return false;
  const char* last = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), last, index);
  return ec == std::errc() && ptr == last;
}

template <class V>
V* ResolveIn(const std::vector<std::string>& tokens, V& document) {
  V* current = &document;
  for (const std::string& token : tokens) {
    if (current->is_object()) {
      auto it = current->find(token);
      if (it == current->end()) return nullptr;
      current = &*it;
    } else if (current->is_array()) {
      std::size_t index = 0;
      if (!ParseIndex(token, index) || index >= current->size()) return nullptr;
      current = &(*current)[index];
    } else {
      return nullptr;
    }
  }
  return current;
}

}  // namespace

Result<Pointer> Pointer::Parse(std::string_view text) {
  if (text.empty()) return Pointer();
  if (text[0] != '/') {
    return MakeError("json.pointer_invalid", "a JSON pointer must start with '/'");
  }
  std::vector<std::string> tokens;
  std::string token;
  for (std::size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
      continue;
    }
    if (text[i] != '~') {
      token.push_back(text[i]);
      continue;
    }
    if (i + 1 == text.size() || (text[i + 1] != '0' && text[i + 1] != '1')) {
      return MakeError("json.pointer_invalid", "'~' must be followed by '0' or '1'");
    }
    token.push_back(text[i + 1] == '0' ? '~' : '/');
    ++i;
  }
  return Pointer(std::move(tokens));
}

std::string Pointer::EscapeToken(std::string_view token) { return internal::EscapePointerToken(token); }

std::string Pointer::ToString() const {
  std::string out;
  for (const std::string& token : tokens_) {
    out.push_back('/');
    out += EscapeToken(token);
  }
  return out;
}

Pointer Pointer::Child(std::string_view token) const {
  std::vector<std::string> tokens = tokens_;
  tokens.emplace_back(token);
  return Pointer(std::move(tokens));
}

Pointer Pointer::Child(std::size_t index) const { return Child(std::to_string(index)); }

Pointer Pointer::Parent() const {
  if (tokens_.empty()) return *this;
  return Pointer(std::vector<std::string>(tokens_.begin(), tokens_.end() - 1));
}

bool Pointer::IsPrefixOf(const Pointer& other) const {
  return tokens_.size() <= other.tokens_.size() &&
         std::equal(tokens_.begin(), tokens_.end(), other.tokens_.begin());
}

const Value* Pointer::Resolve(const Value& document) const {
  return ResolveIn(tokens_, document);
}

Value* Pointer::Resolve(Value& document) const { return ResolveIn(tokens_, document); }

}  // namespace udon::json
