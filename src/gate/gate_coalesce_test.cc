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

INSTANTIATE_TEST_SUITE_P(BothEras, CoalescedTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Range(0, kMembers)));

}  // namespace
}  // namespace udon::gate
