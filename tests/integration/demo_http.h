// The demo server as a Streamable HTTP process, and a raw HTTP peer for it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace httplib {
class Client;
}

namespace udon::testing {

// Starts udon-mcp-demo-server --transport http --port 0 plus `extra` and reads the bound
// port from its "listening" line. port() is 0 if the server never said it was listening.
class HttpDemoServer {
 public:
  explicit HttpDemoServer(std::vector<std::string> extra = {});
  int port() const { return port_; }
  std::string url() const;  // http://localhost:PORT/mcp, as the conformance harness wants
  BackgroundProcess& process() { return process_; }

 private:
  BackgroundProcess process_;
  int port_ = 0;
};

// A raw Streamable HTTP peer: POSTs single messages and returns every JSON-RPC message of
// the answer, whether it came as JSON or as SSE.
class RawHttpPeer {
 public:
  explicit RawHttpPeer(int port);
  ~RawHttpPeer();
  struct Answer {
    int status = 0;  // 0: the connection failed
    std::vector<nlohmann::json> messages;
    std::string session_id;
  };
  Answer Post(const nlohmann::json& message);
  // initialize + notifications/initialized; remembers the session id.
  nlohmann::json Initialize();
  const std::string& session() const { return session_; }

 private:
  std::unique_ptr<httplib::Client> client_;
  std::string session_;
};

std::vector<nlohmann::json> SseMessages(const std::string& body);

}  // namespace udon::testing
