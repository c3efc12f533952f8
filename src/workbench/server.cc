#include "workbench/server.h"

#include <openssl/crypto.h>

#include <charconv>
#include <httplib.h>
#include <vector>

#include "json/json.h"
#include "base/random.h"
#include "manifest/instant.h"
#include "workbench/internal/assets.h"

namespace udon::workbench {
namespace {

constexpr std::string_view kJson = "application/json; charset=utf-8";

std::string Lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string Header(const Request& request, const char* name) {
  auto it = request.headers.find(name);
  return it == request.headers.end() ? std::string() : it->second;
}

Response JsonResponse(int status, const json::Value& body) {
  return {status, std::string(kJson), body.dump()};
}

// The HTTP status of an error the workbench or the library returned.
int StatusFor(const std::string& code) {
  if (code == "workbench.forbidden") return 403;
  if (code == "workbench.not_found" || code == "workbench.no_baseline" || code == "catalog.tool_missing" ||
      code == "manifest.server_unknown") {
    return 404;
  }
  if (code == "workbench.stale") return 409;
  if (code == "usage.invalid") return 400;
  if (code.rfind("review.", 0) == 0 || code.rfind("catalog.", 0) == 0 || code == "manifest.invalid_instant") {
    return 422;
  }
  return 500;
}

Response ErrorResponse(const Error& error) {
  return JsonResponse(StatusFor(error.code), {{"error",
                                               {{"code", error.code},
                                                {"message", error.message},
                                                {"pointer", error.pointer},
                                                {"details", error.details}}}});
}

Response Forbidden(const char* message) { return ErrorResponse(MakeError("workbench.forbidden", message)); }

Response FromResult(const Result<json::Value>& result) {
  return result.ok() ? JsonResponse(200, *result) : ErrorResponse(result.error());
}

}  // namespace

Result<std::string> RandomHex(std::size_t bytes) {
  auto hex = base::RandomHex(bytes);
  if (!hex.ok()) return hex.error().WithCode("workbench.random_failed");
  return hex;
}

bool SameSecret(std::string_view a, std::string_view b) {
  // Lengths are not secret (every token has the same length); contents are.
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const auto colon = text.rfind(':');
  const Error bad = MakeError("usage.invalid", "--listen takes 127.0.0.1:PORT (loopback only)");
  if (colon == std::string_view::npos) return bad;
  const std::string host = Lowered(text.substr(0, colon));
  if (host != "127.0.0.1" && host != "localhost") return bad;
  const std::string_view port_text = text.substr(colon + 1);
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535) return bad;
  // localhost may resolve to another interface on a strange machine: bind the address.
  return ListenAddress{"127.0.0.1", port};
}

struct WorkbenchServer::Http {
  httplib::Server server;
};

WorkbenchServer::WorkbenchServer(Workbench& workbench, ListenAddress address, std::string token, std::string csrf)
    : workbench_(workbench),
      address_(std::move(address)),
      token_(std::move(token)),
      csrf_(std::move(csrf)),
      http_(std::make_unique<Http>()) {}

WorkbenchServer::~WorkbenchServer() = default;

Result<std::unique_ptr<WorkbenchServer>> WorkbenchServer::Create(Workbench& workbench, ListenAddress address) {
  UDON_ASSIGN_OR_RETURN(std::string token, RandomHex(32));
  UDON_ASSIGN_OR_RETURN(std::string csrf, RandomHex(32));
  return std::unique_ptr<WorkbenchServer>(
      new WorkbenchServer(workbench, std::move(address), std::move(token), std::move(csrf)));
}

Result<int> WorkbenchServer::Bind() {
  httplib::Server& s = http_->server;
  s.set_payload_max_length(kMaxRequestBytes);
  const auto glue = [this](const httplib::Request& in, httplib::Response& out) {
    Request request{in.method, in.path, {}, {}, in.body};
    for (const auto& [name, value] : in.params) request.params.emplace(name, value);
    for (const auto& [name, value] : in.headers) request.headers.emplace(Lowered(name), value);
    Response response = Handle(request);
    out.status = response.status;
    out.set_header("Content-Security-Policy", kContentSecurityPolicy);
    out.set_header("X-Content-Type-Options", "nosniff");
    out.set_header("Referrer-Policy", "no-referrer");
    out.set_header("Cache-Control", "no-store");
    out.set_header("Cross-Origin-Resource-Policy", "same-origin");
    out.set_header("X-Frame-Options", "DENY");
    out.set_content(response.body, response.content_type.c_str());
  };
  s.Get(".*", glue);
  s.Post(".*", glue);
  const auto other = [](const httplib::Request&, httplib::Response& out) { out.status = 405; };
  s.Put(".*", other);
  s.Delete(".*", other);
  s.Patch(".*", other);
  s.Options(".*", other);
  const int port = address_.port == 0 ? s.bind_to_any_port(address_.host.c_str())
                                      : (s.bind_to_port(address_.host.c_str(), address_.port) ? address_.port : -1);
  if (port <= 0) return MakeError("workbench.bind_failed", "could not listen on the loopback address");
  port_ = port;
  return port;
}

std::string WorkbenchServer::Url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + "/" + token_ + "/";
}

void WorkbenchServer::Serve() { http_->server.listen_after_bind(); }

void WorkbenchServer::Stop() { http_->server.stop(); }

bool WorkbenchServer::AdmitHost(const Request& request) const {
  const std::string port = ":" + std::to_string(port_);
  const std::string host = Lowered(Header(request, "host"));
  if (host != "127.0.0.1" + port && host != "localhost" + port) return false;
  const std::string origin = Lowered(Header(request, "origin"));
  if (!origin.empty() && origin != "http://127.0.0.1" + port && origin != "http://localhost" + port) return false;
  return Header(request, "sec-fetch-site") != "cross-site";
}

Response WorkbenchServer::Handle(const Request& request) {
  if (!AdmitHost(request)) return Forbidden("the request's Host or Origin is not this workbench");
  // "/TOKEN/rest": the token is the first path segment.
  std::string_view path = request.path;
  if (path.empty() || path.front() != '/') return Forbidden("the workbench token is missing or wrong");
  path.remove_prefix(1);
  const auto slash = path.find('/');
  if (slash == std::string_view::npos || !SameSecret(path.substr(0, slash), token_)) {
    return Forbidden("the workbench token is missing or wrong");
  }
  if (request.method == "POST") {
    if (Header(request, "content-type").rfind("application/json", 0) != 0 ||
        !SameSecret(Header(request, "x-udon-csrf"), csrf_)) {
      return Forbidden("a change needs the session's CSRF token and a JSON body");
    }
  } else if (request.method != "GET") {
    return ErrorResponse(MakeError("workbench.not_found", "no such page"));
  }
  return Route(request, path.substr(slash + 1));
}

Response WorkbenchServer::Route(const Request& request, std::string_view rest) {
  if (request.method == "GET") {
    if (rest.empty() || rest == "index.html") return {200, "text/html; charset=utf-8", internal::kIndexHtml};
    if (rest == "app.js") return {200, "text/javascript; charset=utf-8", internal::kAppJs};
    if (rest == "app.css") return {200, "text/css; charset=utf-8", internal::kAppCss};
  }
  if (rest.rfind("api/", 0) == 0) return Api(request, rest.substr(4));
  return ErrorResponse(MakeError("workbench.not_found", "no such page"));
}

Response WorkbenchServer::Api(const Request& request, std::string_view name) {
  const auto param = [&request](const char* key) {
    auto it = request.params.find(key);
    return it == request.params.end() ? std::string() : it->second;
  };
  if (request.method == "GET") {
    if (name == "overview") {
      auto overview = workbench_.Overview(manifest::NowSeconds());
      if (overview.ok()) (*overview)["csrf"] = csrf_;
      return FromResult(overview);
    }
    if (name == "tool") return FromResult(workbench_.Tool(param("server"), param("name")));
    if (name == "drift") return FromResult(workbench_.Drift());
    return ErrorResponse(MakeError("workbench.not_found", "no such page"));
  }
  auto body = json::Parse(request.body);
  if (!body.ok()) return ErrorResponse(MakeError("usage.invalid", "the request body is not JSON"));
  if (name == "review") return FromResult(workbench_.SaveReview(*body, manifest::NowSeconds()));
  if (name == "carry-over") return FromResult(workbench_.CarryOver(*body));
  return ErrorResponse(MakeError("workbench.not_found", "no such page"));
}

}  // namespace udon::workbench
