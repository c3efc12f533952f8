// The login's redirect target: a listener on 127.0.0.1 (never a wildcard address) that
// takes exactly one HTTP request, answers it with a short page, and closes (RFC 8252
// section 7.3). Whatever the request says is checked by ParseAuthorizationResponse.
//
// Errors (contract 7.1): auth.listen_failed (the port is taken or cannot be bound;
// details.port), auth.login_timeout (no request before the deadline), auth.redirect_invalid
// (what came is not an HTTP GET request head).
#pragma once

#include <chrono>
#include <string>

#include "base/result.h"

namespace udon::oauth {

inline constexpr const char* kCallbackPath = "/callback";

class LoopbackListener {
 public:
  // port 0: a free port the kernel picks.
  static Result<LoopbackListener> Open(int port);
  LoopbackListener(LoopbackListener&& other) noexcept : fd_(other.fd_), port_(other.port_) { other.fd_ = -1; }
  LoopbackListener& operator=(LoopbackListener&& other) noexcept;
  LoopbackListener(const LoopbackListener&) = delete;
  ~LoopbackListener();

  int port() const { return port_; }
  std::string RedirectUri() const;  // http://127.0.0.1:PORT/callback

  // The request target of the one request (e.g. "/callback?code=…"); the listener is
  // closed when this returns, whatever it returns.
  Result<std::string> AcceptOne(std::chrono::steady_clock::time_point deadline);

 private:
  LoopbackListener(int fd, int port) : fd_(fd), port_(port) {}
  void Close();
  int fd_;
  int port_;
};

}  // namespace udon::oauth
