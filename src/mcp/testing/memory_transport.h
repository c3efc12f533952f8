// An in-process transport with a scripted server peer, for deterministic tests of the
// engine, the client and (later) the gate. One worker thread runs the script and delivers
// its messages strictly in the order the script produced them, so a test can place a
// notification exactly: e.g. answer the 2nd tools/list, then send list_changed, and the
// client sees the notification before the response to its next request.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "mcp/client/transport.h"

namespace udon::mcp {

class MemoryPeer {
 public:
  virtual ~MemoryPeer() = default;
  // Queues a message to the client (after everything queued before).
  virtual void Send(Message message) = 0;
  // Queues raw bytes as one frame (to test malformed or oversized input).
  virtual void SendRaw(std::string frame) = 0;
  // Ends the connection after everything queued so far was delivered.
  virtual void Disconnect() = 0;
};

class MemoryTransport : public Transport {
 public:
  // Called on the worker thread for every message the client sends.
  using Script = std::function<void(const Message& from_client, MemoryPeer& peer)>;

  explicit MemoryTransport(Script script,
                           std::size_t max_message_bytes = kDefaultMaxMessageBytes);
  ~MemoryTransport() override;

  Status Start(TransportCallbacks callbacks) override;
  Status Send(const Message& message) override;
  void OnInitialized(const std::string& protocol_version) override;
  void Abandon(const json::Value& id) override;
  void Close() override;
  bool ordered() const override { return true; }

  // Everything the client sent, in order (a copy).
  std::vector<Message> Sent() const;
  std::string initialized_version() const;
  std::vector<json::Value> abandoned() const;

 private:
  class Peer;
  struct Disconnect {};
  using Outgoing = std::variant<Message, std::string, Disconnect>;

  void Run();
  void Deliver(Outgoing item);

  Script script_;
  std::size_t max_message_bytes_;
  TransportCallbacks callbacks_;
  json::ElementsMemo tool_list_memo_;  // the worker's, as the stdio reader has one
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Message> inbound_;
  std::deque<Outgoing> outbound_;
  std::vector<Message> sent_;
  std::vector<json::Value> abandoned_;
  std::string initialized_version_;
  bool stopping_ = false;
  bool disconnected_ = false;
  std::thread worker_;
};

}  // namespace udon::mcp
