// Fault injection for the demo server: each fault makes the server misbehave in one
// documented way, so that tests can prove how a client copes. Also the request log.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/result.h"
#include "mcp/server/server.h"

namespace udon::demo {

enum class FaultTrigger { kStartup, kAfterFirstList };

struct FaultInfo {
  const char* name;
  const char* value;  // what =VALUE means, or "" when the fault takes none
  const char* effect;
};

// Every fault the demo server knows, for --help and docs/demo-server.md.
const std::vector<FaultInfo>& KnownFaults();

// One --fault NAME[@startup|@after-first-list][=VALUE] argument.
struct FaultSpec {
  std::string name;
  std::string value;
  FaultTrigger trigger = FaultTrigger::kStartup;
};

// Parses one --fault argument; `default_trigger` applies without an @ suffix.
// Errors: demo.fault_unknown, demo.fault_invalid.
Result<FaultSpec> ParseFault(const std::string& text, FaultTrigger default_trigger);

class DemoHooks : public mcp::ServerHooks {
 public:
  // Checks every fault against the server's catalog (tool targets must exist) and opens the
  // request log (empty path: none). Errors: demo.fault_invalid, demo.log_unwritable.
  static Result<std::unique_ptr<DemoHooks>> Create(mcp::Server& server,
                                                   std::vector<FaultSpec> faults,
                                                   const std::string& request_log);
  ~DemoHooks() override;

  // Every tools/list answer waits this long first: a slow catalog, for progress output.
  void SetListDelay(std::chrono::milliseconds delay) { list_delay_ = delay; }
  void OnMessage(const mcp::Message& message) override;
  void AfterNotification(const mcp::Message& notification, mcp::ServerSession& session) override;
  std::optional<mcp::Message> BeforeRequest(mcp::Message& request,
                                            mcp::MessageSink& related) override;
  void TransformTools(std::vector<json::Value>& tools) override;
  // True only when a catalog fault was asked for (active or not yet).
  bool TransformsTools() const override;
  void AfterRequest(const mcp::Message& request, mcp::Message& response,
                    mcp::MessageSink& related) override;
  void AfterResponse(const mcp::Message& request, mcp::ServerSession& session) override;
  void TransformAcknowledgment(json::Value& notifications) override;
  bool DropSubscription(const mcp::Message& listen_request) override;

 private:
  DemoHooks(mcp::Server& server, std::vector<FaultSpec> faults, int log_fd);
  bool Modern(const mcp::Message& request) const;
  void ToolsListChanged(const mcp::Message& request, mcp::MessageSink& legacy_sink);
  void ChangeResult(const mcp::Message& request, mcp::Message& response);
  void ChangeServerInfo(const mcp::Message& request, mcp::Message& response);
  bool Active(const FaultSpec& fault) const;
  const FaultSpec* Find(const std::string& name) const;
  // An active fault of this name aimed at `tool` (an empty value aims at every tool).
  const FaultSpec* ForTool(const std::string& name, const std::string& tool) const;
  void SendServerRequest(mcp::MessageSink& sink, const std::string& method);

  mcp::Server& server_;
  std::vector<FaultSpec> faults_;
  int log_fd_ = -1;
  std::chrono::milliseconds list_delay_{0};
  std::mutex log_mutex_;
  std::atomic<bool> listed_{false};        // a complete tools/list has been answered
  std::atomic<long> lists_answered_{0};    // while list-changed-after-list is active
  std::atomic<long> next_request_id_{1};   // ids of server->client requests
  std::atomic<long> calls_answered_{0};    // tools/call answers, for server-info-drift-after
};

}  // namespace udon::demo
