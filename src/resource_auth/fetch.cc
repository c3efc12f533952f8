#include "resource_auth/fetch.h"

#include <httplib.h>

#include <cctype>
#include <cstdio>
#include <optional>

namespace udon::resource_auth {
namespace {

struct SplitUrl {
  std::string origin;  // scheme://host[:port]
  std::string path;    // with the query
  std::string host;
  bool https = false;
};

std::optional<SplitUrl> Split(const std::string& url) {
  SplitUrl out;
  std::size_t rest = 0;
  if (url.rfind("https://", 0) == 0) {
    out.https = true;
    rest = 8;
  } else if (url.rfind("http://", 0) == 0) {
    rest = 7;
  } else {
    return std::nullopt;
  }
  const std::size_t slash = url.find('/', rest);
  out.origin = url.substr(0, slash);
  out.path = slash == std::string::npos ? "/" : url.substr(slash);
  std::string authority = url.substr(rest, slash == std::string::npos ? std::string::npos : slash - rest);
  if (authority.empty() || authority.find('@') != std::string::npos || out.path.find('#') != std::string::npos) {
    return std::nullopt;
  }
  if (authority.front() == '[') {
    out.host = authority.substr(1, authority.find(']') == std::string::npos ? 0 : authority.find(']') - 1);
  } else {
    out.host = authority.substr(0, authority.find(':'));
  }
  return out;
}

bool IsLoopback(const std::string& host) { return host == "localhost" || host == "127.0.0.1" || host == "::1"; }

Error Unreachable(const char* why) {
  return MakeError("auth.issuer_unreachable", std::string("the authorization server could not be asked: ") + why);
}

}  // namespace

bool IsAcceptableIssuerUrl(const std::string& url) {
  auto split = Split(url);
  return split && !split->host.empty() && (split->https || IsLoopback(split->host));
}

std::string HostOf(const std::string& url) {
  auto split = Split(url);
  return split ? split->host : std::string();
}

std::string FormEncode(const std::string& value) {
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      out += escaped;
    }
  }
  return out;
}

Fetcher HttpFetcher(std::chrono::seconds timeout) {
  return [timeout](const FetchRequest& request) -> Result<std::string> {
    auto url = Split(request.url);
    if (!url || !IsAcceptableIssuerUrl(request.url)) return Unreachable("its URL is neither https nor http to loopback");
    httplib::Client client(url->origin);
    client.set_follow_location(false);
    client.set_connection_timeout(timeout);
    client.set_read_timeout(timeout);
    client.set_write_timeout(timeout);
    httplib::Request http;
    http.method = request.form.empty() ? "GET" : "POST";
    http.path = url->path;
    http.set_header("Accept", "application/json");
    if (!request.form.empty()) {
      http.body = request.form;
      http.set_header("Content-Type", "application/x-www-form-urlencoded");
    }
    if (!request.basic_user.empty()) {
      http.headers.emplace(httplib::make_basic_authentication_header(FormEncode(request.basic_user), FormEncode(request.basic_password)));
    }
    std::string body;
    bool too_large = false;
    http.content_receiver = [&](const char* data, std::size_t length, std::uint64_t, std::uint64_t) {
      if (body.size() + length > kMaxFetchBytes) {
        too_large = true;
        return false;
      }
      body.append(data, length);
      return true;
    };
    httplib::Response response;
    httplib::Error error = httplib::Error::Success;
    const bool sent = client.send(http, response, error);
    if (too_large) return Unreachable("its answer is larger than any metadata this gateway reads");
    if (!sent) return Unreachable("no answer");
    if (response.status != 200) return Unreachable("it answered with a status other than 200");
    return body;
  };
}

}  // namespace udon::resource_auth
