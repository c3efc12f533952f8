// Several `serve` replicas on one PostgreSQL store behind HAProxy (issue 40, section 2):
// the example configuration (packaging/haproxy/haproxy.cfg, only its addresses replaced),
// the probes, legacy sessions kept on their replica, an invalidation one replica records
// refusing the next call on every replica, a replica killed under load, and a rolling
// restart under load. Dispatches are counted at the upstream: every call sends a unique
// ledger entry, and each demo server appends the entries it receives to one file (the
// fixture, replica_fixture.h, is shared with service_test.cc).
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "demo_http.h"
#include "line_client.h"
#include "replica_fixture.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon {
namespace {

using Json = nlohmann::json;
using testing::BackgroundProcess;
using testing::Lines;
using testing::LoadFigures;
using testing::ModernClient;
using testing::Probe;
using testing::ReplicaAnswer;
using testing::TempDir;
using testing::WaitFor;
using Clock = testing::ReplicaClock;

class ReplicasTest : public testing::ReplicaFixture {};

TEST_F(ReplicasTest, ProbesAnswerWithoutTheTokenAndReadinessFollowsTheStore) {
  std::vector<std::string> argv = ReplicaArgv(0, demo_->config);
  argv.erase(std::find(argv.begin(), argv.end(), "--no-token"));
  dir_.Write("token", "replica-token-0123456789abcdef0123456789");
  argv.insert(argv.end(), {"--token-file", dir_.File("token")});
  replicas_[0] = std::make_unique<BackgroundProcess>(argv);
  ASSERT_TRUE(WaitFor([&] { return Probe(ports_[0], "/readyz") == 200; })) << replicas_[0]->Output();
  EXPECT_EQ(Probe(ports_[0], "/healthz"), 200);
  EXPECT_EQ(ModernClient(ports_[0]).Call("append_ledger", {{"entry", "no-token"}}).status, 401);

  cluster_->Stop();
  std::string body;
  ASSERT_TRUE(WaitFor([&] { return Probe(ports_[0], "/readyz", &body) == 503; }));
  EXPECT_EQ(Json::parse(body)["code"], "state.unavailable") << body;
  EXPECT_EQ(body.find(cluster_->Url()), std::string::npos);
  EXPECT_EQ(Probe(ports_[0], "/healthz"), 200) << "alive, though not ready";
  ASSERT_TRUE(cluster_->Start());
  EXPECT_TRUE(WaitFor([&] { return Probe(ports_[0], "/readyz") == 200; }));
}

TEST_F(ReplicasTest, ModernRequestsReachEveryReplicaAndALegacySessionStaysOnItsOwn) {
  StartAll();
  StartHaproxy();
  for (int i = 1; i <= kReplicas; ++i) {
    EXPECT_TRUE(SeenThroughBalancer("replica" + std::to_string(i))) << "replica" << i << " never answered";
  }
  // A 2025-11-25 session: initialized on one replica, every later request answered there.
  testing::RawHttpPeer peer(front_);
  ASSERT_TRUE(peer.Initialize().contains("result"));
  ASSERT_FALSE(peer.session().empty());
  httplib::Client client("127.0.0.1", front_);
  std::set<std::string> answered_by;
  for (int n = 0; n < 9; ++n) {
    Json call = testing::Request(n + 10, "tools/call",
                                 {{"name", "append_ledger"}, {"arguments", {{"entry", "legacy-" + std::to_string(n)}}}});
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"},
                                {"Mcp-Session-Id", peer.session()},
                                {"MCP-Protocol-Version", "2025-11-25"}};
    ReplicaAnswer answer = testing::ParseAnswer(client.Post("/mcp", headers, call.dump(), "application/json"));
    EXPECT_TRUE(answer.succeeded()) << answer.status << " " << answer.message.dump();
    answered_by.insert(answer.replica);
  }
  EXPECT_EQ(answered_by.size(), 1u) << "the session's requests went to several replicas";
}

TEST_F(ReplicasTest, AnInvalidationOnOneReplicaRefusesTheNextCallOnEveryReplica) {
  // Replica 1's upstream announces a list change during render_turntable; the others' are
  // quiet, and their appends are slow enough to be in flight meanwhile.
  dir_.Write("changing.json",
             Json{{"mcpServers",
                   {{"demo",
                     {{"command", testing::DemoServerBinary()},
                      {"args",
                       {"--entries-file", dir_.File("entries.txt"), "--fault",
                        "list-changed-during-call=render_turntable"}}}}}}}
                 .dump());
  dir_.Write("slow.json", Json{{"mcpServers",
                                {{"demo",
                                  {{"command", testing::DemoServerBinary()},
                                   {"args", {"--entries-file", dir_.File("entries.txt"), "--ledger-delay-ms", "1500"}}}}}}}
                              .dump());
  StartReplica(0, dir_.File("changing.json"));
  StartReplica(1, dir_.File("slow.json"));
  StartReplica(2, dir_.File("slow.json"));
  for (int i = 0; i < kReplicas; ++i) ASSERT_EQ(ModernClient(ports_[i]).ListedTools().count("append_ledger"), 1u);
  std::vector<std::thread> in_flight;
  std::vector<ReplicaAnswer> slow(kReplicas * 2);
  for (int i = 0; i < kReplicas * 2; ++i) {
    in_flight.emplace_back([&, i] {
      slow[i] = ModernClient(ports_[i % kReplicas]).Call("append_ledger", {{"entry", "slow-" + std::to_string(i)}});
    });
  }
  ASSERT_TRUE(WaitFor([&] { return Lines(dir_.Read("entries.txt")).size() >= 4; })) << "no call in flight";
  ReplicaAnswer invalidating = ModernClient(ports_[0]).Call(
      "render_turntable", {{"source", "https://assets.example.test/a.blend"}, {"angles", 4}, {"resolution", 1024}});
  EXPECT_EQ(invalidating.code(), "call.indeterminate") << invalidating.message.dump();
  for (auto& caller : in_flight) caller.join();

  // The other replicas hear of it (LISTEN/NOTIFY) and withdraw the server's tools without
  // a call of their own: their hosts see the catalog shrink.
  for (int i = 1; i < kReplicas; ++i) {
    ModernClient client(ports_[i]);
    EXPECT_TRUE(WaitFor([&] { return client.ListedTools().count("append_ledger") == 0; }))
        << "replica " << i << " still offers the invalidated server's tools";
  }
  const std::size_t dispatched = Lines(dir_.Read("entries.txt")).size();
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kReplicas; ++i) {
      ReplicaAnswer refused = ModernClient(ports_[i]).Call("append_ledger", {{"entry", "after-" + std::to_string(i)}});
      EXPECT_FALSE(refused.succeeded()) << "replica " << i << " dispatched after the invalidation";
      const std::string code = refused.code();
      EXPECT_TRUE(code == "manifest.invalidated" || code == "serve.tool_withdrawn")
          << "replica " << i << ": " << refused.message.dump();
    }
  }
  EXPECT_EQ(Lines(dir_.Read("entries.txt")).size(), dispatched) << "a refused call reached the upstream";
  for (int i = 0; i < kReplicas; ++i) EXPECT_TRUE(replicas_[i]->running()) << "no replica restarts";
}

TEST_F(ReplicasTest, AReplicaKilledUnderLoadLosesNoCallToTheOthersAndDispatchesNoneTwice) {
  StartAll();
  StartHaproxy();
  std::atomic<bool> stop{false};
  LoadFigures figures;
  std::thread load([&] { RunLoad(8, stop, figures, "kill"); });
  ASSERT_TRUE(WaitFor([&] { return Lines(dir_.Read("entries.txt")).size() >= 40; }));
  const auto killed_at = Clock::now();
  kill(replicas_[1]->pid(), SIGKILL);
  // Load goes on on the others: at least 100 more dispatches after the kill.
  const std::size_t before = Lines(dir_.Read("entries.txt")).size();
  EXPECT_TRUE(WaitFor([&] { return Lines(dir_.Read("entries.txt")).size() >= before + 100; }));
  stop = true;
  load.join();
  const std::size_t duplicates = CheckDispatches(figures, "kill");
  EXPECT_EQ(duplicates, 0u);
  // Only the calls in flight on the killed replica may fail: at most one per caller.
  EXPECT_LE(figures.failures, 8u);
  const double recovered =
      figures.failures == 0 ? 0.0 : std::chrono::duration<double>(figures.last_failure - killed_at).count();
  std::printf("kill -9 under load: calls %zu, failures %zu, duplicates %zu, last failure %.3f s after the kill\n",
              figures.outcomes.size(), figures.failures, duplicates, recovered);
}

TEST_F(ReplicasTest, ARollingRestartUnderLoadLosesNoCall) {
  StartAll();
  StartHaproxy();
  std::atomic<bool> stop{false};
  LoadFigures figures;
  std::thread load([&] { RunLoad(8, stop, figures, "roll"); });
  ASSERT_TRUE(WaitFor([&] { return Lines(dir_.Read("entries.txt")).size() >= 40; }));
  RestartEachInTurn();
  stop = true;
  load.join();
  EXPECT_EQ(CheckDispatches(figures, "roll"), 0u);
  EXPECT_EQ(figures.failures, 0u) << "a call was lost in the rolling restart: "
                                  << ::testing::PrintToString(figures.failed_as) << HaproxyErrors();
  std::printf("rolling restart under load: calls %zu, failures %zu\n", figures.outcomes.size(), figures.failures);
}

TEST(ReplicaPackagingTest, TheSystemdUnitVerifies) {
  if (testing::RunProcess({testing::OnPath("systemd-analyze"), "--version"}).exit_code != 0) {
    GTEST_SKIP() << "systemd-analyze not installed";
  }
  TempDir dir;
  std::ifstream in(testing::SourceDir() + "/packaging/systemd/udon-mcp-serve@.service");
  std::stringstream text;
  text << in.rdbuf();
  // The installed binary's path replaced by the build's, which exists here.
  dir.Write("udon-mcp-serve@8101.service", testing::ReplaceFirst(text.str(), "/usr/bin/udon-mcp", testing::UdonMcpBinary()));
  testing::ProcessResult verify =
      testing::RunProcess({testing::OnPath("systemd-analyze"), "verify", "--man=no", dir.File("udon-mcp-serve@8101.service")});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_EQ(verify.err, "");
}

}  // namespace
}  // namespace udon
