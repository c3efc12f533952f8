// RFC 3986 URI references: just enough to resolve $id and $ref without any I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace udon::schema::internal {

struct UriParts {
  std::optional<std::string> scheme;
  std::optional<std::string> authority;
  std::string path;
  std::optional<std::string> query;
  std::optional<std::string> fragment;

  std::string ToString() const;
};

UriParts ParseUri(std::string_view text);

// The target URI of reference against an absolute base (RFC 3986 section 5.2).
std::string ResolveUri(std::string_view base, std::string_view reference);

// Splits "a#b" into "a" and "b"; the fragment is empty when there is none.
void SplitFragment(std::string_view uri, std::string* without, std::string* fragment);

// Decodes %XX sequences; returns false on a malformed escape.
bool PercentDecode(std::string_view text, std::string* out);

}  // namespace udon::schema::internal
