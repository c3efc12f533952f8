// A raw newline-delimited JSON-RPC peer for driving a stdio MCP server from tests: it
// writes exactly the frames a test gives it and reads whatever the server writes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace udon::testing {

class LineClient {
 public:
  // Starts argv in its own process group; stderr goes to a file (see Stderr()).
  explicit LineClient(const std::vector<std::string>& argv);
  ~LineClient();
  LineClient(const LineClient&) = delete;
  LineClient& operator=(const LineClient&) = delete;

  void Send(const nlohmann::json& message);
  void SendLine(const std::string& line);
  void CloseInput();
  // The next line the server wrote, or nullopt at end of output or after `timeout`.
  std::optional<std::string> ReadLine(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Reads messages until the response with `id`; everything read is appended to `seen`.
  // nullopt if the output ended (or timed out) first.
  std::optional<nlohmann::json> ReadResponse(const nlohmann::json& id,
                                             std::vector<nlohmann::json>* seen = nullptr);
  // Every remaining line until end of output.
  std::vector<std::string> ReadAll();
  // Waits for exit: exit code, or 128 + signal.
  int Wait();
  std::string Stderr() const;
  pid_t pid() const { return pid_; }  // to signal it (SIGHUP); -1 once waited for

 private:
  pid_t pid_ = -1;
  int in_fd_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  std::string err_path_;
  bool eof_ = false;
};

// Builds a JSON-RPC request / notification.
nlohmann::json Request(const nlohmann::json& id, const std::string& method,
                       nlohmann::json params = nullptr);
nlohmann::json Notification(const std::string& method, nlohmann::json params = nullptr);
// A tools/call request of TOOL with ARGUMENTS.
nlohmann::json ToolCallRequest(int id, const std::string& tool, nlohmann::json arguments = nlohmann::json::object());
nlohmann::json InitializeRequest(const nlohmann::json& id = 0,
                                 const std::string& version = "2025-11-25");

}  // namespace udon::testing
