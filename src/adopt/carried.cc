#include "adopt/carried.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "base/ascii.h"

namespace udon::adopt {
namespace {

// An option or header name that says its value is a credential (--api-key, --db-password,
// X-Auth-Token, ...). A false positive only moves a harmless value into the host's `env`.
bool NamesASecret(std::string_view name) {
  const std::string lower = base::AsciiLower(name);
  for (const char* word : {"key", "token", "secret", "password", "passwd", "pwd", "auth", "credential", "bearer"}) {
    if (lower.find(word) != std::string::npos) return true;
  }
  return false;
}

// scheme://user:password@host... or a query (?api_key=...): both carry credentials.
bool HasUrlCredentialsOrQuery(std::string_view text) {
  const auto scheme = text.find("://");
  if (scheme == std::string_view::npos) return false;
  const std::string_view rest = text.substr(scheme + 3);
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  return authority.find('@') != std::string_view::npos || rest.find('?') != std::string_view::npos;
}

bool IsNameChar(char c, bool first) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || (!first && std::isdigit(static_cast<unsigned char>(c)));
}

// "${NAME}" or "${env:NAME}" and nothing else: a value that is only a reference holds no
// secret (a ${NAME:-default} may: its default is a literal).
bool IsWholeReference(std::string_view value) {
  if (value.size() < 4 || value.substr(0, 2) != "${" || value.back() != '}') return false;
  std::string_view name = value.substr(2, value.size() - 3);
  if (name.substr(0, 4) == "env:") name.remove_prefix(4);
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!IsNameChar(name[i], i == 0)) return false;
  }
  return true;
}

std::string Reference(const std::string& name) { return "${env:" + name + "}"; }

std::string StringOf(const json::Value& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

void SplitEnv(SplitEntry& out) {
  json::Value& env = out.upstream["env"];
  for (auto& [name, value] : env.items()) {
    const std::string carried = "UDON_UPSTREAM_ENV_" + name;
    out.carried.push_back({carried, name, StringOf(value)});
    value = Reference(carried);
  }
}

void SplitArgs(SplitEntry& out) {
  json::Value& args = out.upstream["args"];
  std::string previous;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_string()) continue;
    const std::string arg = args[i].get<std::string>();
    if (IsSecretArgument(arg, previous)) {
      const std::string carried = "UDON_UPSTREAM_ARG_" + std::to_string(i);
      out.carried.push_back({carried, "", arg});
      args[i] = Reference(carried);
    }
    previous = arg;
  }
}

void SplitUrls(SplitEntry& out) {
  for (const char* member : {"url", "serverUrl", "httpUrl"}) {
    if (!out.upstream.contains(member) || !out.upstream[member].is_string()) continue;
    const std::string url = out.upstream[member].get<std::string>();
    if (!HasUrlCredentialsOrQuery(url)) continue;
    const std::string carried = base::AsciiUpper(std::string("UDON_UPSTREAM_") + member);
    out.carried.push_back({carried, "", url});
    out.upstream[member] = Reference(carried);
  }
}

void SplitHeaders(SplitEntry& out) {
  json::Value& headers = out.upstream["headers"];
  std::size_t index = 0;
  for (auto& [name, value] : headers.items()) {
    if (!value.is_string() || !IsWholeReference(value.get<std::string>())) {
      const std::string carried = "UDON_UPSTREAM_HEADER_" + std::to_string(index);
      out.carried.push_back({carried, "", StringOf(value)});
      value = Reference(carried);
    }
    ++index;
  }
}

}  // namespace

bool IsSecretArgument(const std::string& arg, const std::string& previous) {
  if (IsWholeReference(arg)) return false;
  if (HasUrlCredentialsOrQuery(arg)) return true;
  const std::string lower = base::AsciiLower(arg);
  // Connection strings (host=db password=...; Pwd=...) and header-shaped arguments
  // (mcp-remote's --header "Authorization: Bearer ...").
  for (const char* marker : {"password=", "pwd=", "bearer "}) {
    if (lower.find(marker) != std::string::npos) return true;
  }
  const auto colon = arg.find(':');
  if (colon != std::string::npos && arg.find("://") == std::string::npos && NamesASecret(arg.substr(0, colon))) {
    return true;
  }
  const auto equals = arg.find('=');
  if (!arg.empty() && arg[0] == '-' && equals != std::string::npos) return NamesASecret(arg.substr(0, equals));
  // --api-key VALUE: the value of an option that names a credential.
  return !arg.empty() && arg[0] != '-' && !previous.empty() && previous[0] == '-' &&
         previous.find('=') == std::string::npos && NamesASecret(previous);
}

SplitEntry SplitCarried(const json::Value& entry) {
  SplitEntry out{entry, {}};
  if (entry.contains("env") && entry["env"].is_object()) SplitEnv(out);
  if (entry.contains("args") && entry["args"].is_array()) SplitArgs(out);
  SplitUrls(out);
  if (entry.contains("headers") && entry["headers"].is_object()) SplitHeaders(out);
  return out;
}

}  // namespace udon::adopt
