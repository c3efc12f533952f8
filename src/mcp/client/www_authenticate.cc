#include "mcp/client/www_authenticate.h"

#include <cctype>
#include <map>
#include <string_view>

#include "base/ascii.h"

namespace udon::mcp {
namespace {

// A Bearer challenge's parameters, read by a small tokenizer of RFC 9110 section 11.
class ChallengeReader {
 public:
  explicit ChallengeReader(std::string_view text) : text_(text) {}

  bool AtEnd() { SkipSpace(); return pos_ >= text_.size(); }
  std::string Token() {
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && IsTokenChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(begin, pos_ - begin));
  }
  // After a token: whether an auth-param ("name=") follows rather than a new challenge.
  bool IsParamAhead() {
    const std::size_t saved = pos_;
    SkipSpace();
    const bool param = !Token().empty() && (SkipSpace(), Peek('=')) && !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '=');
    pos_ = saved;
    return param;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  std::optional<std::string> Value() {
    SkipSpace();
    if (!Peek('"')) {
      std::string token = Token();
      if (token.empty()) return std::nullopt;
      return token;
    }
    std::string out;
    for (++pos_; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (c == '"') { ++pos_; return out; }
      if (c == '\\') {
        if (++pos_ >= text_.size()) return std::nullopt;
      }
      if (static_cast<unsigned char>(text_[pos_]) < 0x20 && text_[pos_] != '\t') return std::nullopt;
      out.push_back(text_[pos_]);
    }
    return std::nullopt;  // unterminated
  }
  // A token68 credential right after a scheme (`Basic dXNlcg==`), which is no parameter.
  void SkipToken68() {
    if (IsParamAhead()) return;
    SkipSpace();
    if (Token().empty()) return;
    while (Peek('=')) ++pos_;
  }
  void SkipSpace() { while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_; }

 private:
  static bool IsTokenChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::string_view("!#$%&'*+-.^_`|~/").find(c) != std::string_view::npos;
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  std::string_view text_;
  std::size_t pos_ = 0;
};

// The parameters of the challenge whose scheme the reader just read; false when malformed
// (including a parameter given twice: two readers must not pick different ones).
bool ReadParams(ChallengeReader& reader, std::map<std::string, std::string>& params) {
  for (;;) {
    while (reader.Consume(',')) {}
    if (reader.AtEnd() || !reader.IsParamAhead()) return true;
    reader.SkipSpace();
    const std::string name = base::AsciiLower(reader.Token());
    if (!reader.Consume('=')) return false;
    std::optional<std::string> value = reader.Value();
    if (!value || !params.emplace(name, *value).second) return false;
    if (!reader.AtEnd() && !reader.Consume(',')) return false;
  }
}

}  // namespace

std::optional<BearerChallenge> ParseWwwAuthenticate(std::string_view header) {
  ChallengeReader reader(header);
  while (!reader.AtEnd()) {
    while (reader.Consume(',')) {}
    reader.SkipSpace();
    const std::string scheme = base::AsciiLower(reader.Token());
    if (scheme.empty()) return std::nullopt;
    reader.SkipToken68();
    std::map<std::string, std::string> params;
    if (!ReadParams(reader, params)) return std::nullopt;
    if (scheme != "bearer") continue;
    BearerChallenge challenge;
    if (auto it = params.find("resource_metadata"); it != params.end()) challenge.resource_metadata = it->second;
    if (auto it = params.find("scope"); it != params.end()) challenge.scope = it->second;
    if (auto it = params.find("error"); it != params.end()) challenge.error = it->second;
    return challenge;
  }
  return std::nullopt;
}

// A scope the server named goes into a command for the person to copy only when it is
// plain scope tokens: a hostile server must not write a quote or a shell metacharacter
// into that command line.
static bool IsPlainScope(const std::string& scope) {
  if (scope.empty()) return false;
  for (const char c : scope) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string_view(" ._:/-+=@,").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

std::string LoginCommand(const std::string& server_key, const std::optional<std::string>& scope) {
  std::string command = "udon-mcp login " + server_key;
  if (scope && IsPlainScope(*scope)) command += " --scope '" + *scope + "'";
  return command;
}

std::optional<long> RefusedCredentialStatus(const Error& error) {
  const bool http_status = error.code == "mcp.http_status" || error.details.value("cause", "") == "mcp.http_status" ||
                           error.details.value("transportCause", "") == "mcp.http_status";
  if (!http_status || !error.details.contains("status") || !error.details["status"].is_number_integer()) {
    return std::nullopt;
  }
  const long status = error.details["status"].get<long>();
  if (status != 401 && status != 403) return std::nullopt;
  return status;
}

void KeepRefusedCredential(const Error& cause, Error& wrapper) {
  if (!RefusedCredentialStatus(cause)) return;
  if (!wrapper.details.contains("cause")) wrapper.details["cause"] = cause.details.value("cause", cause.code);
  for (const char* key : {"status", "authError", "scope"}) {
    if (cause.details.contains(key)) wrapper.details[key] = cause.details[key];
  }
}

Error RefusedCredentialError(const Error& error, const std::string& server_key) {
  const std::string login = LoginCommand(server_key);
  const std::string auth_error = error.details.value("authError", "");
  Error out;
  if (RefusedCredentialStatus(error) == 401) {
    out = udon::MakeError("auth.token_rejected",
                          "the server refused the credential (HTTP 401) and a refreshed login did not help: run " + login);
    out.details["command"] = login;
  } else if (auth_error == "insufficient_scope") {
    const std::string scope = error.details.value("scope", "");
    const std::string command = scope.empty() ? login : LoginCommand(server_key, scope);
    out = udon::MakeError("auth.scope_required",
                          "the server needs a scope the login does not grant (HTTP 403 insufficient_scope): run " + command);
    out.details["command"] = command;
    if (IsPlainScope(scope)) out.details["scope"] = scope;
  } else {
    out = udon::MakeError("auth.forbidden", "the server refused the request for this credential (HTTP 403): run " + login +
                                                " as a user who may, or ask the server's operator");
    out.details["command"] = login;
  }
  out.details["status"] = error.details["status"];
  if (!auth_error.empty()) out.details["authError"] = auth_error;
  out.details["server"] = server_key;
  return out;
}

}  // namespace udon::mcp
