// Coalesced verification (contract 4): concurrent calls of one server share one re-list
// sent after all of them joined, and stay fail-closed: a notice that arrives after the
// shared re-list refuses every call not yet dispatched. Both eras.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "gate/gate.h"
#include "gate/internal/scripted_gate.h"

namespace udon::gate {
namespace {

constexpr int kMembers = 4;
thread_local bool in_group = false;  // set on the threads of the coalesced group only

// (modern era, the group member whose turn right before dispatch brings the notice)
class CoalescedTest : public internal::ScriptedGateTest,
                      public ::testing::WithParamInterface<std::tuple<bool, int>> {
 protected:
  void SetUp() override {
    ScriptedGateTest::SetUp();
    if (std::get<0>(GetParam())) {
      server_.modern = true;
      json::Value doc = Reviewed(false, {});
      doc["protocolVersion"] = "2026-07-28";
      WriteManifest(doc);
    }
  }

  GateEnvironment CoalescingEnv() {
    GateEnvironment env = Env("state");
    env.reuse_connections = true;
    env.max_idle_per_server = 8;
    env.coalesce_verification = true;
    env.on_verification_joined = [this] {
      std::lock_guard<std::mutex> guard(mutex_);
      ++joined_;
      changed_.notify_all();
    };
    return env;
  }

  // A first call binds the shared connection. Then call A's re-list is held until A and
  // every group member joined, so the members all wait for the next verification: one
  // re-list after all of them arrived. Returns the members' results.
  std::vector<GateResult> RunGroup(Gate& gate) {
    GateResult first = gate.Call(binding_, Args(), CallOptions{});
    EXPECT_TRUE(first.ok()) << first.error->Describe();
    server_.on_list = [this](const mcp::Message&, mcp::MemoryPeer&) {
      if (server_.lists != Pages() + 1) return;  // A's first page
      std::unique_lock<std::mutex> lock(mutex_);
      // A guard against a hang, never a verdict: without coalescing nobody joins.
      changed_.wait_for(lock, std::chrono::seconds(20), [this] { return joined_ >= 2 + kMembers; });
    };
    auto a = std::async(std::launch::async, [&] { return gate.Call(binding_, Args(), CallOptions{}); });
    std::vector<std::future<GateResult>> members;
    for (int i = 0; i < kMembers; ++i) {
      members.push_back(std::async(std::launch::async, [&] {
        in_group = true;
        return gate.Call(binding_, Args(), CallOptions{});
      }));
    }
    std::vector<GateResult> results;
    for (auto& member : members) results.push_back(member.get());
    a_ = a.get();
    return results;
  }

  // tools/list requests per listing (the test manifest's pages).
  int Pages() const { return static_cast<int>(server_.pages.size()); }

  std::optional<GateResult> a_;  // call A's: it runs beside the group on the same connection
  std::mutex mutex_;
  std::condition_variable changed_;
  int joined_ = 0;
};

TEST_P(CoalescedTest, OneRelistSentAfterAllArrivedVerifiesThemAll) {
  Gate gate(CoalescingEnv());
  std::vector<GateResult> results = RunGroup(gate);
  for (const GateResult& result : results) {
    ASSERT_TRUE(result.ok()) << result.error->Describe();
    EXPECT_EQ(result.evidence.ToJson()["listings"], 1);
    EXPECT_EQ(result.evidence.ToJson()["connection"], "reused");
  }
  EXPECT_EQ(server_.lists.load(), 3 * Pages()) << "the first call's, A's, and one listing for the whole group";
  EXPECT_EQ(server_.connects.load(), 1) << "every call shares the server's connection";
  EXPECT_EQ(server_.calls.load(), 2 + kMembers);
}

// A list_changed that arrives after the shared re-list, right before the dispatch of the
// member whose turn it is, refuses that member and every one after it: none of them is
// dispatched. Those before it may have been dispatched (their outcome then stands or is
// indeterminate), never refused for what came after their send.
TEST_P(CoalescedTest, ANoticeBetweenTheSharedRelistAndEachDispatchRefusesEveryCallNotYetSent) {
  const int notice_turn = std::get<1>(GetParam());
  GateEnvironment env = CoalescingEnv();
  std::mutex turns;
  int next_turn = 0;
  std::map<std::thread::id, int> turn_of;
  env.after_step = [&](const std::string& step, mcp::Connection& connection) {
    if (step != "recheck" || !in_group) return;
    std::lock_guard<std::mutex> guard(turns);
    const int turn = next_turn++;
    turn_of[std::this_thread::get_id()] = turn;
    if (turn != notice_turn) return;
    const std::uint64_t seen = connection.LastSequence();
    server_.peer.load()->Send(server_.ListChanged());
    ASSERT_TRUE(connection.WaitForEventAfter(seen, std::chrono::seconds(10)));
  };
  Gate gate(env);
  std::vector<GateResult> results = RunGroup(gate);
  // The first call's, and A's when it was sent before the notice (A runs beside the group
  // on the shared connection, so the notice may refuse it too).
  ASSERT_TRUE(a_.has_value());
  const int calls_before = 1 + (a_->dispatched ? 1 : 0);
  if (!a_->dispatched) {
    EXPECT_NE(a_->error->code.find("invalidated"), std::string::npos);
  }
  EXPECT_EQ(server_.lists.load(), 3 * Pages());
  int dispatched = 0, refused = 0;
  for (const GateResult& result : results) {
    if (result.dispatched) {
      ++dispatched;
      continue;
    }
    ASSERT_TRUE(result.error.has_value());
    // At its last look (or its step 6), or at recheck once a call recorded the notice.
    EXPECT_TRUE(result.error->code == "binding.invalidated" || result.error->code == "manifest.invalidated")
        << result.error->Describe();
    ++refused;
  }
  EXPECT_EQ(refused, kMembers - notice_turn) << "the member with the notice's turn and every later one";
  EXPECT_EQ(dispatched, notice_turn);
  EXPECT_EQ(server_.calls.load(), calls_before + dispatched);
}

// From the attacker's side: while a shared connection is not yet bound, a later arrival
// retires it and opens another, so calls of one server run on different connections (on
// stdio, different processes; over HTTP, different sessions with their own notices). A
// call must never be verified by a re-list sent on another connection than the one its
// tools/call goes to: A (on the retired connection) and D (on a third) join the same
// next verification while B's is in flight, and each connection that receives a
// tools/call must have been listed.
TEST_P(CoalescedTest, NoCallIsVerifiedByAnotherConnectionsRelist) {
  GateEnvironment env = CoalescingEnv();
  enum class Role { kNone, kA };
  static thread_local Role role = Role::kNone;
  std::mutex hold;
  std::condition_variable held_changed;
  bool a_connected = false, a_released = false, b_listing = false;
  env.after_step = [&](const std::string& step, mcp::Connection&) {
    if (step != "connect" || role != Role::kA) return;
    std::unique_lock<std::mutex> lock(hold);
    a_connected = true;
    held_changed.notify_all();
    // A guard against a hang, never a verdict.
    held_changed.wait_for(lock, std::chrono::seconds(20), [&] { return a_released; });
  };
  std::set<const mcp::MemoryPeer*> listed;
  int unlisted_calls = 0;
  server_.on_list = [&](const mcp::Message&, mcp::MemoryPeer& peer) {
    {
      std::lock_guard<std::mutex> guard(hold);
      listed.insert(&peer);
      if (server_.lists != 1) return;  // B's first page: held until A and D joined
      b_listing = true;
      held_changed.notify_all();
    }
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(20), [this] { return joined_ >= 3; });
  };
  server_.on_call = [&](const mcp::Message& m, mcp::MemoryPeer& peer) {
    {
      std::lock_guard<std::mutex> guard(hold);
      if (listed.count(&peer) == 0) ++unlisted_calls;
    }
    const json::Value structured = server_.result(1);
    peer.Send(mcp::MakeResult(
        m.id, server_.Shaped({{"content", json::Value::array({{{"type", "text"}, {"text", structured.dump()}}})},
                              {"structuredContent", structured}})));
  };
  Gate gate(env);
  auto call = [&] { return gate.Call(binding_, Args(), CallOptions{}); };
  auto a = std::async(std::launch::async, [&] {
    role = Role::kA;
    return call();
  });
  {
    std::unique_lock<std::mutex> lock(hold);
    held_changed.wait_for(lock, std::chrono::seconds(20), [&] { return a_connected; });
  }
  auto b = std::async(std::launch::async, call);
  {
    std::unique_lock<std::mutex> lock(hold);
    held_changed.wait_for(lock, std::chrono::seconds(20), [&] { return b_listing; });
    a_released = true;
    held_changed.notify_all();
  }
  auto d = std::async(std::launch::async, call);
  for (auto* result : {&a, &b, &d}) {
    const GateResult done = result->get();
    EXPECT_TRUE(done.ok()) << done.error->Describe();
  }
  EXPECT_EQ(server_.connects.load(), 3) << "B retired A's unbound connection, D retired B's";
  EXPECT_EQ(unlisted_calls, 0) << "a tools/call went to a connection no re-list was sent on";
}

INSTANTIATE_TEST_SUITE_P(BothEras, CoalescedTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Range(0, kMembers)));

}  // namespace
}  // namespace udon::gate
