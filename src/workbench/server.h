// The workbench over HTTP on the loopback interface (cpp-httplib), for one person's
// browser on this machine. What keeps other pages and other machines out:
// - it binds 127.0.0.1 only (BindAddress refuses anything else);
// - every path starts with a random one-time token (32 bytes from the OS CSPRNG, hex),
//   compared in constant time: without the URL printed at start nothing is served;
// - Host must name this listener (127.0.0.1:PORT or localhost:PORT), so a DNS-rebound
//   name is refused; an Origin, when sent, must be this listener's; a Sec-Fetch-Site of
//   cross-site is refused;
// - a POST needs Content-Type application/json and the session's CSRF token (another
//   random value, handed out only in the overview) in X-Udon-Csrf;
// - every response carries a Content-Security-Policy that allows scripts, styles and
//   requests from this origin only (no inline script), no framing, no referrer.
// The request handling is one function of a Request (Handle), so these rules are tested
// without sockets; Serve() is the thin cpp-httplib front.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "workbench/workbench.h"

namespace udon::workbench {

inline constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
inline constexpr const char* kCsrfHeader = "X-Udon-Csrf";
inline constexpr std::size_t kMaxRequestBytes = 1u << 20;

// `bytes` random bytes from the operating system's CSPRNG (base/random.h) as lowercase hex.
// Errors: workbench.random_failed.
Result<std::string> RandomHex(std::size_t bytes);

// Equal in time independent of where the first difference lies (CRYPTO_memcmp).
bool SameSecret(std::string_view a, std::string_view b);

// "127.0.0.1:PORT" (or "localhost:PORT"): the host and port to bind. Any other host is
// usage.invalid: the workbench is for this machine only.
struct ListenAddress {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
};
Result<ListenAddress> ParseListenAddress(std::string_view text);

struct Request {
  std::string method;  // GET or POST
  std::string path;    // without the query
  std::map<std::string, std::string> params;
  std::map<std::string, std::string> headers;  // names lowercased
  std::string body;
};

struct Response {
  int status = 200;
  std::string content_type;
  std::string body;
};

class WorkbenchServer {
 public:
  // Errors: workbench.random_failed.
  static Result<std::unique_ptr<WorkbenchServer>> Create(Workbench& workbench, ListenAddress address);
  ~WorkbenchServer();
  WorkbenchServer(const WorkbenchServer&) = delete;
  WorkbenchServer& operator=(const WorkbenchServer&) = delete;

  // Binds the listening socket; the bound port. Errors: workbench.bind_failed.
  Result<int> Bind();
  // http://127.0.0.1:PORT/TOKEN/ once bound.
  std::string Url() const;
  // Serves until Stop() (another thread or a signal).
  void Serve();
  void Stop();

  // One request, every rule above applied. Public for tests.
  Response Handle(const Request& request);

  const std::string& token() const { return token_; }
  const std::string& csrf() const { return csrf_; }
  // For tests that call Handle without binding.
  void set_port(int port) { port_ = port; }

 private:
  WorkbenchServer(Workbench& workbench, ListenAddress address, std::string token, std::string csrf);
  bool AdmitHost(const Request& request) const;
  Response Route(const Request& request, std::string_view rest);
  Response Api(const Request& request, std::string_view name);

  struct Http;
  Workbench& workbench_;
  ListenAddress address_;
  std::string token_;
  std::string csrf_;
  int port_ = 0;
  std::unique_ptr<Http> http_;
};

}  // namespace udon::workbench
