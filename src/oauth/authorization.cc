#include "oauth/authorization.h"

#include <nettle/base64.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <map>

#include "base/random.h"
#include "base/sha256.h"

namespace udon::oauth {
namespace {

Result<std::string> RandomBase64Url() {
  std::array<std::uint8_t, 32> bytes{};
  if (!base::RandomBytes(bytes.data(), bytes.size()).ok()) {
    return MakeError("auth.random_failed", "the system's random source failed while starting a login");
  }
  return Base64Url(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> FormDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%') {
      if (i + 2 >= text.size()) return std::nullopt;
      const int high = HexValue(text[i + 1]);
      const int low = HexValue(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

Error RedirectInvalid(const char* why) { return MakeError("auth.redirect_invalid", why); }

// An OAuth error code as the server sent it, kept only when it has the RFC's characters
// (printable ASCII without quote or backslash): it goes into details.
std::string SafeErrorCode(const std::string& code) {
  for (char c : code) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return "invalid";
  }
  return code.size() > 64 ? "invalid" : code;
}

}  // namespace

namespace {

std::string NettleBase64(std::string_view bytes, bool url_alphabet) {
  base64_encode_ctx context;
  if (url_alphabet) {
    base64url_encode_init(&context);
  } else {
    base64_encode_init(&context);
  }
  std::string out(BASE64_ENCODE_LENGTH(bytes.size()) + BASE64_ENCODE_FINAL_LENGTH, '\0');
  auto* dst = reinterpret_cast<char*>(out.data());
  std::size_t written = base64_encode_update(&context, dst, bytes.size(),
                                             reinterpret_cast<const std::uint8_t*>(bytes.data()));
  written += base64_encode_final(&context, dst + written);
  out.resize(written);
  return out;
}

}  // namespace

std::string Base64(std::string_view bytes) { return NettleBase64(bytes, false); }

std::string Base64Url(std::string_view bytes) {
  std::string out = NettleBase64(bytes, true);
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

std::string S256Challenge(std::string_view verifier) {
  const std::array<std::uint8_t, 32> digest = base::Sha256(verifier);
  return Base64Url(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

Result<Pkce> MakePkce() {
  Pkce pkce;
  UDON_ASSIGN_OR_RETURN(pkce.verifier, RandomBase64Url());
  pkce.challenge = S256Challenge(pkce.verifier);
  return pkce;
}

Result<std::string> MakeState() { return RandomBase64Url(); }

std::string FormEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> ParseForm(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  while (!text.empty()) {
    const std::size_t amp = text.find('&');
    const std::string_view item = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    std::optional<std::string> name = FormDecode(item.substr(0, eq));
    std::optional<std::string> value =
        FormDecode(eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
    if (!name || !value) return std::nullopt;
    pairs.emplace_back(std::move(*name), std::move(*value));
  }
  return pairs;
}

std::string JoinForm(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out;
  for (const auto& [name, value] : pairs) {
    if (!out.empty()) out.push_back('&');
    out += FormEncode(name) + "=" + FormEncode(value);
  }
  return out;
}

std::string AuthorizationUrl(const AuthorizationRequest& request) {
  std::vector<std::pair<std::string, std::string>> pairs = {
      {"response_type", "code"},          {"client_id", request.client_id},
      {"redirect_uri", request.redirect_uri}, {"code_challenge", request.code_challenge},
      {"code_challenge_method", "S256"},  {"state", request.state}};
  if (request.scope) pairs.emplace_back("scope", *request.scope);
  if (request.resource) pairs.emplace_back("resource", *request.resource);
  const char separator = request.authorization_endpoint.find('?') == std::string::npos ? '?' : '&';
  return request.authorization_endpoint + separator + JoinForm(pairs);
}

Result<std::string> ParseAuthorizationResponse(std::string_view target, const RedirectExpectation& expected) {
  const std::size_t question = target.find('?');
  if (target.substr(0, question) != expected.path) return RedirectInvalid("the redirect is not for the login's callback path");
  auto pairs = ParseForm(question == std::string_view::npos ? std::string_view() : target.substr(question + 1));
  if (!pairs) return RedirectInvalid("the redirect's parameters are not well encoded");
  std::map<std::string, std::string> params;
  for (auto& [name, value] : *pairs) {
    // Two readers of one redirect must not see different values.
    if (!params.emplace(name, value).second) return RedirectInvalid("the redirect gives a parameter twice");
  }
  auto get = [&params](const char* name) -> const std::string* {
    auto it = params.find(name);
    return it == params.end() ? nullptr : &it->second;
  };
  if (const std::string* state = get("state"); state == nullptr || *state != expected.state) {
    return MakeError("auth.state_mismatch", "the redirect does not carry this login's state; nothing was exchanged");
  }
  const std::string* iss = get("iss");
  if ((iss != nullptr && *iss != expected.issuer) || (iss == nullptr && expected.iss_required)) {
    return MakeError("auth.iss_mismatch",
                     "the redirect does not name the authorization server this login started at (RFC 9207); nothing was exchanged");
  }
  if (const std::string* error = get("error")) {
    Error denied = MakeError("auth.login_denied", "the authorization server refused the login");
    denied.details["error"] = SafeErrorCode(*error);
    return denied;
  }
  const std::string* code = get("code");
  if (code == nullptr || code->empty()) return RedirectInvalid("the redirect carries no authorization code");
  return *code;
}

}  // namespace udon::oauth
