#include "mcp/testing/memory_transport.h"

#include <utility>

namespace udon::mcp {

class MemoryTransport::Peer : public MemoryPeer {
 public:
  explicit Peer(MemoryTransport& owner) : owner_(owner) {}
  void Send(Message message) override { Push(std::move(message)); }
  void SendRaw(std::string frame) override { Push(std::move(frame)); }
  void Disconnect() override { Push(MemoryTransport::Disconnect{}); }

 private:
  void Push(Outgoing item) {
    std::lock_guard lock(owner_.mutex_);
    owner_.outbound_.push_back(std::move(item));
    owner_.wake_.notify_all();
  }
  MemoryTransport& owner_;
};

MemoryTransport::MemoryTransport(Script script, std::size_t max_message_bytes)
    : script_(std::move(script)), max_message_bytes_(max_message_bytes) {}

MemoryTransport::~MemoryTransport() { Close(); }

Status MemoryTransport::Start(TransportCallbacks callbacks) {
  callbacks_ = std::move(callbacks);
  worker_ = std::thread([this] { Run(); });
  return OkStatus();
}

Status MemoryTransport::Send(const Message& message) {
  std::lock_guard lock(mutex_);
  if (disconnected_ || stopping_) return udon::MakeError("mcp.send_failed", "the peer is gone");
  // Round-trip through the wire format, as a real transport would.
  auto copy = ParseMessage(SerializeMessage(message));
  if (!copy.ok()) return udon::MakeError("mcp.send_failed", "message does not serialize");
  sent_.push_back(copy.value());
  inbound_.push_back(std::move(copy).value());
  wake_.notify_all();
  return OkStatus();
}

void MemoryTransport::OnInitialized(const std::string& protocol_version) {
  std::lock_guard lock(mutex_);
  initialized_version_ = protocol_version;
}

void MemoryTransport::Abandon(const json::Value& id) {
  std::lock_guard lock(mutex_);
  abandoned_.push_back(id);
}

void MemoryTransport::Run() {
  Peer peer(*this);
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !outbound_.empty() || !inbound_.empty(); });
    if (stopping_) return;
    // Everything the script produced goes out before the script sees the next message.
    if (!outbound_.empty()) {
      Outgoing item = std::move(outbound_.front());
      outbound_.pop_front();
      if (disconnected_) continue;
      lock.unlock();
      Deliver(std::move(item));
      lock.lock();
      continue;
    }
    Message next = std::move(inbound_.front());
    inbound_.pop_front();
    if (disconnected_) continue;
    lock.unlock();
    script_(next, peer);
    lock.lock();
  }
}

void MemoryTransport::Deliver(Outgoing item) {
  if (std::holds_alternative<Disconnect>(item)) {
    {
      std::lock_guard lock(mutex_);
      disconnected_ = true;
    }
    callbacks_.on_closed(udon::MakeError("mcp.server_exited", "the server ended the connection"));
    return;
  }
  std::string frame = std::holds_alternative<Message>(item)
                          ? SerializeMessage(std::get<Message>(item))
                          : std::move(std::get<std::string>(item));
  auto parsed = ParseFrame(frame, max_message_bytes_, callbacks_, &tool_list_memo_);
  if (!parsed.ok()) {
    {
      std::lock_guard lock(mutex_);
      disconnected_ = true;
    }
    callbacks_.on_closed(std::move(parsed).error());
    return;
  }
  callbacks_.on_message(std::move(parsed).value());
}

void MemoryTransport::Close() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    wake_.notify_all();
  }
  if (worker_.joinable()) worker_.join();
}

std::vector<Message> MemoryTransport::Sent() const {
  std::lock_guard lock(mutex_);
  return sent_;
}

std::string MemoryTransport::initialized_version() const {
  std::lock_guard lock(mutex_);
  return initialized_version_;
}

std::vector<json::Value> MemoryTransport::abandoned() const {
  std::lock_guard lock(mutex_);
  return abandoned_;
}

}  // namespace udon::mcp
