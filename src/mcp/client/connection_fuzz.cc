// Fuzz target: the client engine fed by a hostile server. Input: frames separated by
// newlines, which a MemoryTransport peer sends in answer to one request, followed by a
// genuine result. Oracles: the request always completes; its outcome is the one a model
// of the protocol predicts (the first response with our id wins, the first malformed
// frame ends the connection, anything else is an event); the events that arrived before
// the response are exactly the predicted ones, numbered 1, 2, 3, ...
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "mcp/client/connection.h"
#include "mcp/protocol/jsonrpc.h"
#include "mcp/testing/memory_transport.h"
#include "mcp/client/transport.h"

namespace {

using udon::mcp::EventKind;
using udon::mcp::Message;
using udon::mcp::MessageKind;

constexpr std::int64_t kOurId = 1;  // the first request of a fresh connection

bool IsOurId(const udon::json::Value& id) {
  if (id.is_number_unsigned()) return id.get<std::uint64_t>() == static_cast<std::uint64_t>(kOurId);
  return id.is_number_integer() && id.get<std::int64_t>() == kOurId;
}

struct Prediction {
  std::vector<EventKind> events_before;  // in order, before the outcome
  std::optional<Message> response;       // else the connection ended
};

Prediction Predict(const std::vector<std::string>& frames, const Message& final_result) {
  Prediction prediction;
  for (const std::string& frame : frames) {
    auto message = udon::mcp::ParseFrame(frame, udon::mcp::kDefaultMaxMessageBytes);
    if (!message.ok()) return prediction;
    if (message->IsResponse()) {
      if (IsOurId(message->id)) {
        prediction.response = *message;
        return prediction;
      }
      prediction.events_before.push_back(EventKind::kIgnoredResponse);
    } else if (message->kind == MessageKind::kNotification) {
      prediction.events_before.push_back(EventKind::kNotification);
    } else {
      prediction.events_before.push_back(message->method == "ping" ? EventKind::kPing
                                                                   : EventKind::kServerRequest);
    }
  }
  prediction.response = final_result;
  return prediction;
}

std::vector<std::string> SplitFrames(std::string_view input) {
  std::vector<std::string> frames;
  while (!input.empty()) {
    const std::size_t newline = input.find('\n');
    frames.emplace_back(input.substr(0, newline));
    if (newline == std::string_view::npos) break;
    input.remove_prefix(newline + 1);
  }
  return frames;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> frames =
      SplitFrames(std::string_view(reinterpret_cast<const char*>(data), size));
  const Message final_result = udon::mcp::MakeResult(kOurId, {{"probe", true}});
  const Prediction prediction = Predict(frames, final_result);

  auto transport = std::make_unique<udon::mcp::MemoryTransport>(
      [&](const Message& from_client, udon::mcp::MemoryPeer& peer) {
        if (from_client.method != "fuzz/probe") return;  // answers to server requests
        for (const std::string& frame : frames) peer.SendRaw(frame);
        peer.Send(final_result);
      });
  udon::mcp::Connection connection(std::move(transport));
  UDON_FUZZ_CHECK(connection.Start().ok(), "a memory connection starts");
  // Far above any run; libFuzzer's -timeout reports a hang long before this.
  auto response = connection.Request("fuzz/probe", nullptr, std::chrono::minutes(10));

  if (prediction.response) {
    UDON_FUZZ_CHECK(response.ok(), "the predicted response arrives");
    UDON_FUZZ_CHECK(response->message.kind == prediction.response->kind &&
                        response->message.result == prediction.response->result &&
                        response->message.error == prediction.response->error,
                    "the first response with our id is the one returned");
    UDON_FUZZ_CHECK(response->sequence_at_response == prediction.events_before.size(),
                    "exactly the earlier frames became events before the response");
  } else {
    UDON_FUZZ_CHECK(!response.ok() && response.error().code == "mcp.disconnected",
                    "a malformed frame ends the connection and fails the request");
  }
  const std::vector<udon::mcp::Event> events = connection.EventsSince(0);
  for (std::size_t i = 0; i < prediction.events_before.size(); ++i) {
    UDON_FUZZ_CHECK(i < events.size() && events[i].sequence == i + 1,
                    "events are numbered 1, 2, 3, ... in arrival order");
    UDON_FUZZ_CHECK(events[i].kind == prediction.events_before[i],
                    "each frame became the predicted kind of event");
  }
  if (!prediction.response) {
    UDON_FUZZ_CHECK(events.size() == prediction.events_before.size() + 1 &&
                        events.back().kind == EventKind::kDisconnected,
                    "the connection's end is the last event");
  }
  connection.Close();
  return 0;
}
