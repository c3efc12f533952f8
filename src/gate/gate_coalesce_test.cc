// Coalesced verification (contract 4): concurrent calls of one server share one re-list
// sent after all of them joined, and stay fail-closed: a notice that arrives after the
// shared re-list refuses every call not yet dispatched. Both eras.
#include <gtest/gtest.h>

#include <atomic>
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

// From the attacker's side: a list_changed on a shared connection not yet bound makes the
// next arrival retire it and open another, so calls of one server run on different
// connections (on stdio, different processes; over HTTP, different sessions with their own
// notices). A call must never be verified by a re-list sent on another connection than the
// one its tools/call goes to: A (on the retired connection) and D (sharing B's) join the
// next verification while B's is in flight, and each connection that receives a
// tools/call must have been listed.
TEST_P(CoalescedTest, NoCallIsVerifiedByAnotherConnectionsRelist) {
  GateEnvironment env = CoalescingEnv();
  enum class Role { kNone, kA };
  static thread_local Role role = Role::kNone;
  std::mutex hold;
  std::condition_variable held_changed;
  bool a_connected = false, a_released = false, b_listing = false;
  env.after_step = [&](const std::string& step, mcp::Connection& connection) {
    if (step != "connect" || role != Role::kA) return;
    const std::uint64_t seen = connection.LastSequence();
    server_.peer.load()->Send(server_.ListChanged());
    ASSERT_TRUE(connection.WaitForEventAfter(seen, std::chrono::seconds(10)));
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
  EXPECT_EQ(server_.connects.load(), 2) << "B retired A's unbound connection after its notice; D shares B's";
  EXPECT_EQ(unlisted_calls, 0) << "a tools/call went to a connection no re-list was sent on";
}

// A burst's start: every call arrives before the server's first connection is open. The
// first opens it; the others wait for that one (a cold start per burst, not per arrival:
// on stdio a process each) and share it although no comparison has bound it yet.
TEST_P(CoalescedTest, ABurstsArrivalsWaitForTheOneConnectionBeingOpened) {
  GateEnvironment env = CoalescingEnv();
  int awaiting = 0;
  env.on_open_awaited = [&] {
    std::lock_guard<std::mutex> guard(mutex_);
    ++awaiting;
    changed_.notify_all();
  };
  auto open = env.connect;
  env.connect = [&](const mcp::ServerConfig& server, const mcp::ClientOptions& options) {
    {
      // The slow start: held until every other call waits (a guard against a hang, never
      // a verdict: without the wait nobody is counted).
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait_for(lock, std::chrono::seconds(20), [&] { return awaiting >= kMembers; });
    }
    return open(server, options);
  };
  Gate gate(env);
  std::vector<std::future<GateResult>> calls;
  for (int i = 0; i <= kMembers; ++i) {
    calls.push_back(std::async(std::launch::async, [&] { return gate.Call(binding_, Args(), CallOptions{}); }));
  }
  for (auto& call : calls) {
    const GateResult result = call.get();
    EXPECT_TRUE(result.ok()) << result.error->Describe();
  }
  EXPECT_EQ(server_.connects.load(), 1) << "one connection opened for the whole burst";
  EXPECT_EQ(server_.calls.load(), 1 + kMembers);
}

// From the attacker's side: the burst's calls share a connection before its first group's
// comparison binds it, so the next group may list while that binding is still to come. A
// list_changed during that listing came after the first group's listing, where the binding
// starts: it must refuse the next group as on a bound connection, not be taken for a
// change before any binding (A is held between its listing and its comparison; W leads the
// next group).
TEST_P(CoalescedTest, ANoticeWhileTheFirstGroupIsStillBindingRefusesTheNextGroup) {
  GateEnvironment env = CoalescingEnv();
  enum class Role { kNone, kA };
  static thread_local Role role = Role::kNone;
  bool a_listing = false, w_done = false;
  server_.on_list = [&](const mcp::Message&, mcp::MemoryPeer& peer) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (server_.lists == 1) {  // A's first page: held until W joined the next group
      a_listing = true;
      changed_.notify_all();
      // A guard against a hang, never a verdict.
      changed_.wait_for(lock, std::chrono::seconds(20), [this] { return joined_ >= 2; });
    } else if (server_.lists == Pages() + 1) {  // the next group's first page
      peer.Send(server_.ListChanged());
    }
  };
  env.after_step = [&](const std::string& step, mcp::Connection&) {
    if (step != "list" || role != Role::kA) return;
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(20), [&] { return w_done; });
  };
  Gate gate(env);
  auto a = std::async(std::launch::async, [&] {
    role = Role::kA;
    return gate.Call(binding_, Args(), CallOptions{});
  });
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(20), [&] { return a_listing; });
  }
  const GateResult w = std::async(std::launch::async, [&] { return gate.Call(binding_, Args(), CallOptions{}); }).get();
  {
    std::lock_guard<std::mutex> guard(mutex_);
    w_done = true;
    changed_.notify_all();
  }
  const GateResult first = a.get();
  EXPECT_EQ(server_.connects.load(), 1) << "W shared A's connection";
  EXPECT_FALSE(w.dispatched);
  ASSERT_TRUE(w.error.has_value());
  EXPECT_EQ(w.error->code, "binding.invalidated") << w.error->Describe();
  EXPECT_FALSE(first.dispatched) << "A's binding began before the notice";
  EXPECT_EQ(server_.calls.load(), 0);
}

// Fail-closed: when the one open fails, every call that waited for it is refused with its
// code; none opens another (a server that does not start is not started once per call)
// and none waits forever.
TEST_P(CoalescedTest, AFailedOpenRefusesEveryCallThatWaitedForIt) {
  GateEnvironment env = CoalescingEnv();
  int awaiting = 0;
  env.on_open_awaited = [&] {
    std::lock_guard<std::mutex> guard(mutex_);
    ++awaiting;
    changed_.notify_all();
  };
  env.connect = [&](const mcp::ServerConfig&, const mcp::ClientOptions&) {
    ++server_.connects;
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, std::chrono::seconds(20), [&] { return awaiting >= kMembers; });
    return Result<std::unique_ptr<mcp::Client>>(MakeError("server.connect_failed", "the server did not start"));
  };
  Gate gate(env);
  std::vector<std::future<GateResult>> calls;
  for (int i = 0; i <= kMembers; ++i) {
    calls.push_back(std::async(std::launch::async, [&] { return gate.Call(binding_, Args(), CallOptions{}); }));
  }
  for (auto& call : calls) {
    const GateResult result = call.get();
    ASSERT_TRUE(result.error.has_value());
    EXPECT_EQ(result.error->code, "server.connect_failed") << result.error->Describe();
    EXPECT_FALSE(result.dispatched);
  }
  EXPECT_EQ(server_.connects.load(), 1) << "the calls that waited did not open one each";
  EXPECT_EQ(server_.calls.load(), 0);
}

// Under load a verification has hundreds of members (256 sessions). Each must be woken
// only for what it waits for (its group done, its turn to lead, every member compared):
// when any group's start, end or settling woke every waiting member, each re-checked and
// slept again, and the wake-ups per call grew with the calls waiting (issue 41).
TEST_P(CoalescedTest, AGroupsMembersAreNotWokenForAnotherGroupsSteps) {
  GateEnvironment env = CoalescingEnv();
  std::atomic<int> strays{0};
  env.on_lane_stray_wakeup = [&] { ++strays; };
  Gate gate(env);
  for (const GateResult& result : RunGroup(gate)) EXPECT_TRUE(result.ok()) << result.error->Describe();
  ASSERT_TRUE(a_->ok()) << a_->error->Describe();
  // Woken by every step, kMembers - 1 members wait on when A's verification ends (one
  // leads) and again when that leader starts. A stray wake-up of the thread library is
  // allowed; one per member per step is not.
  EXPECT_LT(strays.load(), kMembers - 1);
}

INSTANTIATE_TEST_SUITE_P(BothEras, CoalescedTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Range(0, kMembers)));

}  // namespace
}  // namespace udon::gate
