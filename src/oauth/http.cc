#include "oauth/http.h"

#include <curl/curl.h>

#include <mutex>
#include <string_view>

#include "base/ascii.h"

namespace udon::oauth {
namespace {

struct Collected {
  HttpReply reply;
  std::size_t max_body = 0;
  bool too_large = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* collected = static_cast<Collected*>(user);
  const size_t bytes = size * count;
  if (collected->reply.body.size() + bytes > collected->max_body) {
    collected->too_large = true;
    return 0;  // aborts the transfer
  }
  collected->reply.body.append(data, bytes);
  return bytes;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* collected = static_cast<Collected*>(user);
  const std::string_view line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a 100 Continue): start over
    collected->reply.www_authenticate.clear();
    collected->reply.content_type.clear();
    return line.size();
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return line.size();
  const std::string name = base::AsciiLower(Trim(line.substr(0, colon)));
  const std::string_view value = Trim(line.substr(colon + 1));
  if (name == "www-authenticate") {
    std::string& joined = collected->reply.www_authenticate;
    joined += (joined.empty() ? "" : ", ") + std::string(value);
  } else if (name == "content-type") {
    collected->reply.content_type = value;
  }
  return line.size();
}

Error Failed(CURLcode code, const Collected& collected) {
  if (collected.too_large) {
    return MakeError("auth.response_too_large", "an authorization server's answer was larger than udon-mcp reads");
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return MakeError("auth.timeout", "an authorization server did not answer in time");
  }
  Error error = MakeError("auth.unreachable", "an authorization server or the MCP server's metadata could not be reached");
  error.details["cause"] = curl_easy_strerror(code);
  return error;
}

struct EasyHandle {
  CURL* curl = curl_easy_init();
  curl_slist* headers = nullptr;
  ~EasyHandle() {
    curl_slist_free_all(headers);
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

}  // namespace

Result<HttpReply> HttpFetch(const HttpExchange& exchange, const HttpLimits& limits) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  EasyHandle handle;
  if (handle.curl == nullptr) return MakeError("auth.unreachable", "libcurl could not start a request");
  CURL* curl = handle.curl;
  for (const auto& [name, value] : exchange.headers) {
    handle.headers = curl_slist_append(handle.headers, (name + ": " + value).c_str());
  }
  handle.headers = curl_slist_append(handle.headers, "Expect:");
  Collected collected;
  collected.max_body = limits.max_body_bytes;
  curl_easy_setopt(curl, CURLOPT_URL, exchange.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(limits.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, handle.headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &collected);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &collected);
  if (exchange.method == "POST") {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, exchange.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(exchange.body.size()));
  }
  const CURLcode code = curl_easy_perform(curl);
  if (code != CURLE_OK) return Failed(code, collected);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &collected.reply.status);
  return std::move(collected.reply);
}

}  // namespace udon::oauth
