#include "gate/connection_pool.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "gate/internal/scripted_gate.h"
#include "mcp/testing/memory_transport.h"

namespace udon::gate {
namespace {

using namespace std::chrono_literals;

constexpr const char* kLegacyVersion = "2025-11-25";
constexpr const char* kModernVersion = "2026-07-28";

std::unique_ptr<PooledConnection> Unopened(std::string manifest_sha256) {
  auto pooled = std::make_unique<PooledConnection>();
  pooled->manifest_sha256 = std::move(manifest_sha256);
  return pooled;
}

// Issue 41, 2: after a burst, the idle connections beyond each server's newest end once
// idle longer than the limit; the newest stays (no cold start in the steady state).
TEST(ConnectionPoolTest, IdleConnectionsBeyondTheNewestExpireAfterTheLimit) {
  auto now = std::chrono::steady_clock::time_point{};
  ConnectionPool pool(8, 1000ms, [&now] { return now; });
  for (const char* manifest : {"a1", "a2", "a3"}) EXPECT_EQ(pool.Keep("a", Unopened(manifest)), nullptr);
  EXPECT_EQ(pool.Keep("b", Unopened("b1")), nullptr);
  now += 1000ms;
  EXPECT_TRUE(pool.TakeExpired().empty()) << "not yet beyond the limit";
  now += 1ms;
  auto expired = pool.TakeExpired();
  ASSERT_EQ(expired.size(), 2u);
  EXPECT_EQ(expired[0].second->manifest_sha256, "a1");
  EXPECT_EQ(expired[1].second->manifest_sha256, "a2");
  EXPECT_TRUE(pool.TakeExpired().empty());
  EXPECT_EQ(pool.Take("a")->manifest_sha256, "a3") << "each server's newest stays";
  EXPECT_EQ(pool.Take("b")->manifest_sha256, "b1");
}

TEST(ConnectionPoolTest, WithoutALimitNothingExpires) {
  auto now = std::chrono::steady_clock::time_point{};
  ConnectionPool pool(8, 0ms, [&now] { return now; });
  EXPECT_EQ(pool.Keep("a", Unopened("a1")), nullptr);
  EXPECT_EQ(pool.Keep("a", Unopened("a2")), nullptr);
  now += std::chrono::hours(24);
  EXPECT_TRUE(pool.TakeExpired().empty());
}

TEST(ConnectionPoolTest, TakeHandsOutWhatWasKeptOnce) {
  ConnectionPool pool;
  EXPECT_EQ(pool.Take("a"), nullptr);
  auto kept = Unopened("m1");
  PooledConnection* address = kept.get();
  EXPECT_EQ(pool.Keep("a", std::move(kept)), nullptr);
  EXPECT_EQ(pool.Take("b"), nullptr) << "another server's connection is not handed out";
  auto taken = pool.Take("a");
  EXPECT_EQ(taken.get(), address);
  EXPECT_EQ(pool.Take("a"), nullptr) << "taken means out of the pool";
}

TEST(ConnectionPoolTest, KeepsOnePerServerAndHandsBackTheSecond) {
  ConnectionPool pool;
  EXPECT_EQ(pool.Keep("a", Unopened("first")), nullptr);
  auto second = pool.Keep("a", Unopened("second"));
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->manifest_sha256, "second");
  EXPECT_EQ(pool.Keep("b", Unopened("other server")), nullptr);
  EXPECT_EQ(pool.Take("a")->manifest_sha256, "first");
}

TEST(ConnectionPoolTest, KeepsUpToItsBoundPerServerAndHandsTheMostRecentOutFirst) {
  ConnectionPool pool(2);
  EXPECT_EQ(pool.Keep("a", Unopened("first")), nullptr);
  EXPECT_EQ(pool.Keep("a", Unopened("second")), nullptr);
  auto third = pool.Keep("a", Unopened("third"));
  ASSERT_NE(third, nullptr) << "a third idle connection is over the bound";
  EXPECT_EQ(pool.Take("a")->manifest_sha256, "second");
  EXPECT_EQ(pool.Take("a")->manifest_sha256, "first");
  EXPECT_EQ(pool.Take("a"), nullptr);
}

TEST(ConnectionPoolTest, TakeAllEmptiesThePool) {
  ConnectionPool pool;
  (void)pool.Keep("a", Unopened("m"));
  (void)pool.Keep("b", Unopened("m"));
  auto all = pool.TakeAll();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, "a");
  EXPECT_EQ(all[1].first, "b");
  EXPECT_TRUE(pool.TakeAll().empty());
  EXPECT_EQ(pool.Take("a"), nullptr);
}

TEST(ConnectionPoolTest, ConcurrentCallersKeepExactlyOneConnectionPerServer) {
  ConnectionPool pool;
  std::atomic<int> kept{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      for (int n = 0; n < 200; ++n) {
        if (pool.Keep("a", Unopened("m")) == nullptr) ++kept;
        if (n % 2 == 1 && pool.Take("a") != nullptr) --kept;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(kept.load(), pool.Take("a") != nullptr ? 1 : 0);
  EXPECT_EQ(pool.Take("a"), nullptr);
}

// The reuse verdict over real clients on the in-memory transport, against the gate tests'
// scripted server.
class ReuseVerdictTest : public ::testing::Test {
 protected:
  // A connection opened at the server's version, (modern) subscribed, and bound now.
  std::unique_ptr<PooledConnection> Open(bool modern = false) {
    server_.modern = modern;
    auto client = std::make_unique<mcp::Client>(std::make_unique<mcp::MemoryTransport>(
        [this](const mcp::Message& m, mcp::MemoryPeer& p) { server_.Handle(m, p); }));
    EXPECT_TRUE(client->Start().ok());
    const std::string version = modern ? kModernVersion : kLegacyVersion;
    auto opened = client->Open(version);
    EXPECT_TRUE(opened.ok()) << opened.error().Describe();
    if (modern) {
      EXPECT_TRUE(client->Subscribe().ok());
    }
    auto pooled = std::make_unique<PooledConnection>();
    pooled->client = std::move(client);
    pooled->protocol_version = version;
    pooled->server_info_sha256 = std::string(64, 'i');
    pooled->manifest_sha256 = std::string(64, 'm');
    pooled->bound_since = pooled->client->connection().LastSequence();
    return pooled;
  }

  static ReuseExpectation Expected(const PooledConnection& pooled) {
    return {pooled.protocol_version, pooled.server_info_sha256, pooled.manifest_sha256};
  }

  // The server sends `message`; returns once the client has logged it.
  void ServerSends(PooledConnection& pooled, mcp::Message message) {
    const std::uint64_t seen = pooled.client->connection().LastSequence();
    server_.peer.load()->Send(std::move(message));
    ASSERT_TRUE(pooled.client->connection().WaitForEventAfter(seen, 5000ms));
  }

  internal::ScriptedServer server_;
};

TEST_F(ReuseVerdictTest, AnUndisturbedConnectionForTheSameManifestIsReused) {
  auto pooled = Open();
  ReuseVerdict verdict = JudgeReuse(*pooled, Expected(*pooled));
  EXPECT_TRUE(verdict.reusable());
  EXPECT_EQ(verdict.refused, "");
  EXPECT_FALSE(verdict.list_changed);
}

TEST_F(ReuseVerdictTest, EachMismatchIsNamedAndTheFirstWins) {
  auto pooled = Open();
  ReuseExpectation expected = Expected(*pooled);
  expected.manifest_sha256 = std::string(64, 'o');
  EXPECT_EQ(JudgeReuse(*pooled, expected).refused, "other_manifest");
  expected.server_info_sha256 = std::string(64, 'j');
  EXPECT_EQ(JudgeReuse(*pooled, expected).refused, "server_info");
  expected.protocol_version = kModernVersion;
  ReuseVerdict verdict = JudgeReuse(*pooled, expected);
  EXPECT_EQ(verdict.refused, "protocol_version");
  EXPECT_FALSE(verdict.reusable());
  EXPECT_FALSE(verdict.list_changed);
}

TEST_F(ReuseVerdictTest, ADisconnectedConnectionIsNotReused) {
  auto pooled = Open();
  const std::uint64_t seen = pooled->client->connection().LastSequence();
  server_.peer.load()->Disconnect();
  ASSERT_TRUE(pooled->client->connection().WaitForEventAfter(seen, 5000ms));
  EXPECT_EQ(JudgeReuse(*pooled, Expected(*pooled)).refused, "disconnected");
}

TEST_F(ReuseVerdictTest, ALostSubscriptionIsNotReused) {
  auto pooled = Open(/*modern=*/true);
  ASSERT_EQ(pooled->client->subscription(), mcp::Client::Subscription::kActive);
  ASSERT_TRUE(JudgeReuse(*pooled, Expected(*pooled)).reusable());
  ServerSends(*pooled, mcp::MakeResult(server_.listen_id, {{"resultType", "complete"}}));
  EXPECT_EQ(JudgeReuse(*pooled, Expected(*pooled)).refused, "subscription_lost");
}

TEST_F(ReuseVerdictTest, AListChangedAfterTheBindingBeganIsReportedBesideAnyRefusal) {
  auto pooled = Open();
  ServerSends(*pooled, server_.ListChanged());
  ReuseVerdict verdict = JudgeReuse(*pooled, Expected(*pooled));
  EXPECT_TRUE(verdict.list_changed);
  EXPECT_EQ(verdict.refused, "");
  EXPECT_FALSE(verdict.reusable());
  EXPECT_TRUE(ListChangedSinceBinding(*pooled));

  ReuseExpectation other = Expected(*pooled);
  other.manifest_sha256 = std::string(64, 'o');
  verdict = JudgeReuse(*pooled, other);
  EXPECT_TRUE(verdict.list_changed);
  EXPECT_EQ(verdict.refused, "other_manifest");
}

TEST_F(ReuseVerdictTest, AListChangedBeforeTheBindingBeganDoesNotCount) {
  auto pooled = Open();
  ServerSends(*pooled, server_.ListChanged());
  pooled->bound_since = pooled->client->connection().LastSequence();
  EXPECT_TRUE(JudgeReuse(*pooled, Expected(*pooled)).reusable());
  EXPECT_FALSE(ListChangedSinceBinding(*pooled));
}

TEST_F(ReuseVerdictTest, ModernListChangedOnTheSubscriptionCounts) {
  auto pooled = Open(/*modern=*/true);
  ServerSends(*pooled, server_.ListChanged());
  ReuseVerdict verdict = JudgeReuse(*pooled, Expected(*pooled));
  EXPECT_TRUE(verdict.list_changed);
  EXPECT_EQ(verdict.refused, "");
}

// A connection that never bound: the verdict looks at everything since it opened, while
// nothing is recorded for it (it was bound to no manifest).
TEST_F(ReuseVerdictTest, AnUnboundConnectionCountsEveryNoticeButRecordsNone) {
  auto pooled = Open();
  pooled->bound_since.reset();
  ServerSends(*pooled, server_.ListChanged());
  EXPECT_TRUE(JudgeReuse(*pooled, Expected(*pooled)).list_changed);
  EXPECT_FALSE(ListChangedSinceBinding(*pooled));
}

}  // namespace
}  // namespace udon::gate
