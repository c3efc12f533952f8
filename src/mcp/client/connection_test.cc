#include "mcp/client/connection.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mcp/testing/memory_transport.h"

namespace udon::mcp {
namespace {

using std::chrono::milliseconds;

// A connection over a scripted in-process peer; keeps a handle on the transport.
struct Harness {
  explicit Harness(MemoryTransport::Script script, std::size_t max_bytes = kDefaultMaxMessageBytes) {
    auto owned = std::make_unique<MemoryTransport>(std::move(script), max_bytes);
    transport = owned.get();
    connection = std::make_unique<Connection>(std::move(owned));
    EXPECT_TRUE(connection->Start().ok());
  }
  MemoryTransport* transport = nullptr;
  std::unique_ptr<Connection> connection;
};

MemoryTransport::Script EchoMethod() {
  return [](const Message& in, MemoryPeer& peer) {
    if (in.kind == MessageKind::kRequest) peer.Send(MakeResult(in.id, {{"method", in.method}}));
  };
}

std::vector<Message> SentWithMethod(const MemoryTransport& transport, const std::string& method) {
  std::vector<Message> out;
  for (const Message& m : transport.Sent()) {
    if (m.method == method) out.push_back(m);
  }
  return out;
}

TEST(ConnectionTest, CorrelatesResponsesWithUniqueIntegerIds) {
  Harness h(EchoMethod());
  auto a = h.connection->Request("a/one");
  auto b = h.connection->Request("b/two");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->message.result["method"], "a/one");
  EXPECT_EQ(b->message.result["method"], "b/two");
  auto sent = h.transport->Sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_TRUE(sent[0].id.is_number_integer());
  EXPECT_NE(sent[0].id, sent[1].id);
}

TEST(ConnectionTest, ReturnsJsonRpcErrorResponsesAsResponses) {
  Harness h([](const Message& in, MemoryPeer& peer) {
    peer.Send(MakeError(in.id, kInvalidParams, "bad"));
  });
  auto response = h.connection->Request("x");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->message.kind, MessageKind::kError);
  EXPECT_EQ(response->message.error["code"], kInvalidParams);
}

TEST(ConnectionTest, AnswersServerPingWithEmptyResult) {
  Harness h([](const Message& in, MemoryPeer& peer) {
    if (in.method == "go") {
      peer.Send(MakeRequest("srv-1", "ping"));
      peer.Send(MakeResult(in.id, json::Value::object()));
    }
  });
  ASSERT_TRUE(h.connection->Request("go").ok());
  // The reply is sent from the delivery thread before the response is delivered.
  Message reply;
  for (const Message& m : h.transport->Sent()) {
    if (m.IsResponse()) reply = m;
  }
  EXPECT_EQ(reply.kind, MessageKind::kResult);
  EXPECT_EQ(reply.id, "srv-1");
  EXPECT_EQ(reply.result, json::Value::object());
  auto events = h.connection->EventsSince(0);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::kPing);
}

TEST(ConnectionTest, RefusesEveryOtherServerRequestWithMethodNotFound) {
  const std::vector<std::string> methods = {"sampling/createMessage", "elicitation/create",
                                            "roots/list", "tasks/list", "made/up"};
  Harness h([&](const Message& in, MemoryPeer& peer) {
    if (in.method != "go") return;
    for (std::size_t i = 0; i < methods.size(); ++i) {
      peer.Send(MakeRequest(static_cast<std::int64_t>(100 + i), methods[i]));
    }
    peer.Send(MakeResult(in.id, json::Value::object()));
  });
  ASSERT_TRUE(h.connection->Request("go").ok());
  std::vector<Message> replies;
  for (const Message& m : h.transport->Sent()) {
    if (m.IsResponse()) replies.push_back(m);
  }
  ASSERT_EQ(replies.size(), methods.size());
  for (const Message& reply : replies) {
    EXPECT_EQ(reply.kind, MessageKind::kError);
    EXPECT_EQ(reply.error["code"], kMethodNotFound);
  }
  auto events = h.connection->EventsSince(0);
  ASSERT_EQ(events.size(), methods.size());
  for (std::size_t i = 0; i < methods.size(); ++i) {
    EXPECT_EQ(events[i].kind, EventKind::kServerRequest);
    EXPECT_EQ(events[i].method, methods[i]);
  }
}

TEST(ConnectionTest, NotificationsCarryMonotonicSequenceNumbers) {
  Harness h([](const Message& in, MemoryPeer& peer) {
    if (in.method == "first") {
      peer.Send(MakeNotification("notifications/message", {{"level", "info"}}));
      peer.Send(MakeResult(in.id, json::Value::object()));
      peer.Send(MakeNotification("notifications/tools/list_changed"));
    } else if (in.kind == MessageKind::kRequest) {
      peer.Send(MakeResult(in.id, json::Value::object()));
    }
  });
  auto first = h.connection->Request("first");
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->sequence_at_send, 0u);
  EXPECT_EQ(first->sequence_at_response, 1u);
  // The notification queued after the first response arrives before the second one.
  auto second = h.connection->Request("second");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->sequence_at_response, 2u);
  auto all = h.connection->EventsSince(0);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].sequence, 1u);
  EXPECT_EQ(all[0].method, "notifications/message");
  EXPECT_EQ(all[0].params["level"], "info");
  EXPECT_EQ(all[1].sequence, 2u);
  EXPECT_EQ(all[1].method, "notifications/tools/list_changed");
  auto later = h.connection->EventsSince(1);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].sequence, 2u);
  EXPECT_EQ(h.connection->LastSequence(), 2u);
}

TEST(ConnectionTest, TimeoutSendsCancelledAndAbandons) {
  Harness h([](const Message&, MemoryPeer&) {});
  auto response = h.connection->Request("tools/call", json::Value::object(), milliseconds(20));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, "mcp.timeout");
  auto request = SentWithMethod(*h.transport, "tools/call");
  auto cancelled = SentWithMethod(*h.transport, "notifications/cancelled");
  ASSERT_EQ(request.size(), 1u);
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0].params["requestId"], request[0].id);
  EXPECT_TRUE(cancelled[0].params["reason"].is_string());
  ASSERT_EQ(h.transport->abandoned().size(), 1u);
  EXPECT_EQ(h.transport->abandoned()[0], request[0].id);
}

TEST(ConnectionTest, UncancellableRequestTimesOutWithoutCancelled) {
  Harness h([](const Message&, MemoryPeer&) {});
  auto response = h.connection->Request("initialize", json::Value::object(), milliseconds(20),
                                        /*cancellable=*/false);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, "mcp.timeout");
  EXPECT_TRUE(SentWithMethod(*h.transport, "notifications/cancelled").empty());
}

TEST(ConnectionTest, LateResponseIsIgnoredAndCounted) {
  Harness h([](const Message& in, MemoryPeer& peer) {
    if (in.method == "notifications/cancelled") {
      // Answers the cancelled request anyway: too late.
      peer.Send(MakeResult(in.params["requestId"], json::Value::object()));
    } else if (in.method == "fast") {
      peer.Send(MakeResult(in.id, {{"ok", true}}));
    }
  });
  auto slow = h.connection->Request("slow", nullptr, milliseconds(20));
  ASSERT_FALSE(slow.ok());
  auto fast = h.connection->Request("fast");
  ASSERT_TRUE(fast.ok());
  EXPECT_EQ(fast->message.result["ok"], true);
  EXPECT_EQ(h.connection->ignored_responses(), 1u);
  auto events = h.connection->EventsSince(0);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::kIgnoredResponse);
}

TEST(ConnectionTest, ResponsesWithUnknownIdsAreIgnored) {
  Harness h([](const Message& in, MemoryPeer& peer) {
    peer.Send(MakeResult(json::Value(987654), json::Value::object()));
    peer.Send(MakeResult(json::Value("not-ours"), json::Value::object()));
    peer.Send(MakeError(json::Value(-5), kInternalError, "x"));
    peer.Send(MakeResult(in.id, {{"mine", true}}));
  });
  auto response = h.connection->Request("x");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->message.result["mine"], true);
  EXPECT_EQ(h.connection->ignored_responses(), 3u);
}

TEST(ConnectionTest, OversizedMessageFailsTheConnection) {
  Harness h(
      [](const Message& in, MemoryPeer& peer) {
        peer.Send(MakeResult(in.id, {{"blob", std::string(4096, 'x')}}));
      },
      1024);
  auto response = h.connection->Request("x");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, "mcp.disconnected");
  EXPECT_EQ(response.error().details["cause"], "mcp.message_too_large");
  EXPECT_FALSE(h.connection->connected());
  auto again = h.connection->Request("y");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, "mcp.disconnected");
}

TEST(ConnectionTest, MalformedMessageFailsTheConnection) {
  for (const std::string frame : {"not json", "[1,2]", "{\"jsonrpc\":\"1.0\",\"id\":1}",
                                  "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"result\":{}}"}) {
    Harness h([&](const Message&, MemoryPeer& peer) { peer.SendRaw(frame); });
    auto response = h.connection->Request("x");
    ASSERT_FALSE(response.ok()) << frame;
    EXPECT_EQ(response.error().details["cause"], "mcp.malformed_message") << frame;
    auto events = h.connection->EventsSince(0);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, EventKind::kDisconnected);
  }
}

TEST(ConnectionTest, DisconnectFailsPendingAndLaterRequests) {
  Harness h([](const Message&, MemoryPeer& peer) { peer.Disconnect(); });
  auto response = h.connection->Request("x");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().code, "mcp.disconnected");
  EXPECT_EQ(response.error().details["cause"], "mcp.server_exited");
  EXPECT_FALSE(h.connection->Notify("notifications/x").ok());
}

TEST(ConnectionTest, CloseFailsPendingRequests) {
  Harness h([](const Message&, MemoryPeer&) {});
  std::atomic<bool> done{false};
  std::optional<Error> error;
  std::thread waiter([&] {
    auto response = h.connection->Request("x", nullptr, milliseconds(60'000));
    if (!response.ok()) error = response.error();
    done = true;
  });
  while (h.transport->Sent().empty()) std::this_thread::yield();
  h.connection->Close();
  waiter.join();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, "mcp.closed");
}

TEST(ConnectionTest, WaitForEventAfterSeesNotifications) {
  Harness h([](const Message& in, MemoryPeer& peer) {
    if (in.method == "notifications/initialized") {
      peer.Send(MakeNotification("notifications/tools/list_changed"));
    }
  });
  const auto before = h.connection->LastSequence();
  ASSERT_TRUE(h.connection->Notify("notifications/initialized").ok());
  ASSERT_TRUE(h.connection->WaitForEventAfter(before, milliseconds(10'000)));
  EXPECT_EQ(h.connection->EventsSince(before)[0].method, "notifications/tools/list_changed");
}

TEST(ConnectionTest, EventLogIsBounded) {
  auto owned = std::make_unique<MemoryTransport>([](const Message& in, MemoryPeer& peer) {
    for (int i = 0; i < 10; ++i) peer.Send(MakeNotification("notifications/message"));
    peer.Send(MakeResult(in.id, json::Value::object()));
  });
  ConnectionOptions options;
  options.max_events = 4;
  Connection connection(std::move(owned), options);
  ASSERT_TRUE(connection.Start().ok());
  ASSERT_TRUE(connection.Request("x").ok());
  EXPECT_EQ(connection.LastSequence(), 10u);
  EXPECT_EQ(connection.FirstRetainedSequence(), 7u);
  EXPECT_EQ(connection.EventsSince(0).size(), 4u);
}


MemoryTransport::Script ToolListPeer() {
  return [](const Message& in, MemoryPeer& peer) {
    if (in.kind != MessageKind::kRequest) return;
    peer.Send(MakeResult(in.id, {{"tools", {{{"name", "t"}, {"description", in.method}}}}}));
  };
}

TEST(ConnectionTest, RequestToolListKeepsItsToolsAsBytesAndEveryOtherAnswerWhole) {
  Harness h(ToolListPeer());
  auto lean = h.connection->RequestToolList(json::Value::object(), milliseconds(5000));
  ASSERT_TRUE(lean.ok()) << lean.error().Describe();
  ASSERT_NE(lean->message.lean_tools, nullptr);
  EXPECT_TRUE(lean->message.result["tools"].empty());
  ASSERT_EQ(lean->message.lean_tools->tools.size(), 1u);
  EXPECT_EQ(lean->message.lean_tools->tools[0].name, "t");
  auto whole = h.connection->Request("tools/list", json::Value::object());
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->message.lean_tools, nullptr);
  EXPECT_EQ(whole->message.result["tools"][0]["description"], "tools/list");
}

// While a RequestToolList waits, frames are read lean; an answer to another request read
// then is completed before its caller sees it.
TEST(ConnectionTest, AnAnswerReadLeanForAnotherRequestIsCompletedBeforeItIsDelivered) {
  std::optional<json::Value> held_id;
  std::mutex held_mutex;
  Harness h([&](const Message& in, MemoryPeer& peer) {
    if (in.kind != MessageKind::kRequest) return;
    if (in.method == "tools/list") {
      std::lock_guard lock(held_mutex);
      held_id = in.id;  // answered after the other request's answer
      return;
    }
    peer.Send(MakeResult(in.id, {{"tools", {{{"name", "other"}}}}}));
    std::lock_guard lock(held_mutex);
    if (held_id) peer.Send(MakeResult(*held_id, {{"tools", {{{"name", "listed"}}}}}));
  });
  std::optional<Result<Response>> lean;
  std::thread lister([&] { lean = h.connection->RequestToolList(json::Value::object(), milliseconds(5000)); });
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(held_mutex);
      if (held_id) break;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  auto other = h.connection->Request("other/method");
  lister.join();
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->message.lean_tools, nullptr);
  EXPECT_EQ(other->message.result["tools"][0]["name"], "other");
  ASSERT_TRUE(lean.has_value() && lean->ok());
  ASSERT_NE((*lean)->message.lean_tools, nullptr);
  EXPECT_EQ((*lean)->message.lean_tools->tools[0].name, "listed");
}

// Under load many requests wait on one connection (serve's shared upstream connection at
// 256 sessions). An answer must wake its own waiter only: when every answer woke every
// waiter, each re-checked and slept again, and the wake-ups per answer grew with the
// number of requests waiting (issue 41).
TEST(ConnectionTest, AnAnswerWakesOnlyItsOwnWaiter) {
  constexpr std::size_t kWaiters = 16;
  Harness h([](const Message& in, MemoryPeer& peer) {
    if (in.method == "test/release") peer.Send(MakeResult(in.params["id"], json::Value::object()));
  });
  std::atomic<std::size_t> answered{0};
  std::atomic<std::size_t> failed{0};
  std::vector<std::thread> waiters;
  for (std::size_t i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&] {
      if (!h.connection->Request("held", nullptr, milliseconds(60'000)).ok()) ++failed;
      ++answered;
    });
  }
  while (SentWithMethod(*h.transport, "held").size() < kWaiters) std::this_thread::yield();
  // One answer at a time, each once the one before has returned, while the rest wait.
  std::size_t released = 0;
  for (const Message& request : SentWithMethod(*h.transport, "held")) {
    ASSERT_TRUE(h.connection->Notify("test/release", {{"id", request.id}}).ok());
    ++released;
    while (answered < released) std::this_thread::yield();
  }
  for (std::thread& waiter : waiters) waiter.join();
  EXPECT_EQ(failed, 0u);
  // All woken by every answer: about kWaiters * (kWaiters - 1) / 2 (120). A stray wake-up
  // the thread library makes is allowed; one per answer per waiter is not.
  EXPECT_LT(h.connection->stray_wakeups(), kWaiters);
}

}  // namespace
}  // namespace udon::mcp
