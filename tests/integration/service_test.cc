// The gateway as a team's service, end to end (issue 40, "done when"; docs/operations.md
// walks through the same deployment): three `serve` replicas on one PostgreSQL 15 behind
// HAProxy (packaging/haproxy/haproxy.cfg), callers let in by an OAuth authorization server
// (oidc-provider, tests/peers/oauth), each replica's metrics scraped and checked by
// promtool, its spans received by an OTLP receiver; a rolling restart under an
// authenticated caller's load loses and repeats no call, and an invalidation one replica
// records refuses the next call on the others. The replicas' service options come from
// `serve --settings` files.
#include <signal.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "replica_fixture.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

class ServiceTest : public ReplicaFixture {
 protected:
  void SetUp() override {
    if (!PeersInstalled()) GTEST_SKIP() << "npm test peers not installed (scripts/test.sh installs them)";
    ReplicaFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    issuer_process_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{NodeBinary(), SourceDir() + "/tests/peers/oauth/authorization-server.mjs"});
    issuer_ = AwaitOutput(*issuer_process_, std::regex(R"re("issuer":"([^"]+)")re"));
    ASSERT_FALSE(issuer_.empty()) << issuer_process_->Output();
    receiver_ = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{NodeBinary(), SourceDir() + "/tests/peers/otlp_receiver.mjs", dir_.File("spans.jsonl")});
    receiver_port_ = AwaitOutput(*receiver_, std::regex(R"(listening (\d+))"));
    ASSERT_FALSE(receiver_port_.empty()) << receiver_->Output();
    audience_ = "http://127.0.0.1:" + std::to_string(front_) + "/mcp";
    for (int i = 0; i < kReplicas; ++i) metrics_ports_.push_back(FreeLoopbackPort());
    // A person's login, as a host would do it: the token is for the balancer's URL.
    ProcessResult login = RunProcess(
        {NodeBinary(), SourceDir() + "/tests/peers/oauth/client-by-hand.mjs", "login", issuer_, audience_});
    ASSERT_EQ(login.exit_code, 0) << login.out << login.err;
    token_ = Json::parse(login.out)["accessToken"].get<std::string>();
  }

  // The service options in a settings file per replica (serve --settings), as a deployment
  // keeps them; its listen address is overridden by the command line's --listen.
  std::vector<std::string> ReplicaOptions(int i) const override {
    const Json settings = {
        {"listen", "127.0.0.1:1"},
        {"metricsListen", "127.0.0.1:" + std::to_string(metrics_ports_[i])},
        {"otlpEndpoint", "http://127.0.0.1:" + receiver_port_},
        {"drainSeconds", 20},
        {"auth",
         {{"issuer", issuer_},
          {"audience", audience_},
          {"scopeTools", {{"mcp:tools", {"append_ledger", "render_turntable"}}}}}}};
    const std::string name = "serve-" + std::to_string(i) + ".json";
    dir_.Write(name, settings.dump());
    return {"--settings", dir_.File(name)};
  }

  // Replica 0's upstream announces a list change during render_turntable (the invalidation).
  std::string ChangingConfig() const {
    dir_.Write("changing.json", Json{{"mcpServers",
                                      {{"demo",
                                        {{"command", DemoServerBinary()},
                                         {"args",
                                          {"--entries-file", dir_.File("entries.txt"), "--ledger-delay-ms", "100",
                                           "--fault", "list-changed-during-call=render_turntable"}}}}}}}
                                    .dump());
    return dir_.File("changing.json");
  }

  // The page on replica i's metrics listener passes promtool and counts its calls.
  void CheckMetrics(int i) {
    httplib::Client client("127.0.0.1", metrics_ports_[i]);
    auto page = client.Get("/metrics");
    ASSERT_TRUE(page && page->status == 200) << "replica " << i;
    EXPECT_NE(page->body.find("udon_mcp_tool_calls_total{tool=\"append_ledger\",outcome=\"ok\"}"), std::string::npos)
        << "replica " << i << ": " << page->body;
    EXPECT_EQ(page->body.find(token_), std::string::npos);
    RunOptions check;
    check.stdin_data = page->body;
    ProcessResult promtool = RunProcess({OnPath("promtool"), "check", "metrics"}, check);
    EXPECT_EQ(promtool.exit_code, 0) << promtool.out << promtool.err;
  }

  std::unique_ptr<BackgroundProcess> issuer_process_;
  std::unique_ptr<BackgroundProcess> receiver_;
  std::string issuer_;
  std::string receiver_port_;
  std::string audience_;
  std::vector<int> metrics_ports_;
};

TEST_F(ServiceTest, ThreeReplicasWithIdentityMetricsAndTracesRestartUnderLoadAndShareAnInvalidation) {
  StartReplica(0, ChangingConfig());
  StartReplica(1);
  StartReplica(2);
  StartHaproxy();

  // Without a token, through the balancer: the challenge names the public metadata.
  ReplicaAnswer refused = ModernClient(front_).Call("append_ledger", {{"entry", "anonymous"}});
  EXPECT_EQ(refused.status, 401);
  EXPECT_NE(refused.www_authenticate.find("resource_metadata=\"http://127.0.0.1:" + std::to_string(front_) +
                                          "/.well-known/oauth-protected-resource/mcp\""),
            std::string::npos)
      << refused.www_authenticate;

  // The rolling restart under the authenticated caller's load.
  std::atomic<bool> stop{false};
  LoadFigures figures;
  std::thread load([&] { RunLoad(4, stop, figures, "roll"); });
  ASSERT_TRUE(WaitFor([&] { return Lines(dir_.Read("entries.txt")).size() >= 20; }));
  RestartEachInTurn();
  stop = true;
  load.join();
  EXPECT_EQ(CheckDispatches(figures, "roll"), 0u);
  EXPECT_EQ(figures.failures, 0u) << ::testing::PrintToString(figures.failed_as) << HaproxyErrors();
  std::printf("service rolling restart: calls %zu, failures %zu\n", figures.outcomes.size(), figures.failures);

  // Every replica's metrics; the spans of their calls at the receiver, without the token.
  if (OnPath("promtool").empty()) ADD_FAILURE() << "promtool (Debian package prometheus) is not installed";
  for (int i = 0; i < kReplicas; ++i) CheckMetrics(i);
  EXPECT_TRUE(WaitFor([&] {
    return dir_.Read("spans.jsonl").find("\"name\":\"tools/call append_ledger\"") != std::string::npos;
  })) << receiver_->Output();
  EXPECT_EQ(dir_.Read("spans.jsonl").find(token_), std::string::npos);

  // Replica 0 records an invalidation; the others refuse their next calls before dispatch.
  ReplicaAnswer invalidating = ModernClient(ports_[0], token_).Call(
      "render_turntable", {{"source", "https://assets.example.test/a.blend"}, {"angles", 4}, {"resolution", 1024}});
  EXPECT_EQ(invalidating.code(), "call.indeterminate") << invalidating.message.dump();
  for (int i = 1; i < kReplicas; ++i) {
    ModernClient client(ports_[i], token_);
    EXPECT_TRUE(WaitFor([&] { return client.ListedTools().count("append_ledger") == 0; })) << "replica " << i;
  }
  const std::size_t dispatched = Lines(dir_.Read("entries.txt")).size();
  for (int i = 1; i < kReplicas; ++i) {
    ReplicaAnswer after = ModernClient(ports_[i], token_).Call("append_ledger", {{"entry", "after"}});
    EXPECT_FALSE(after.succeeded()) << "replica " << i;
    EXPECT_TRUE(after.code() == "manifest.invalidated" || after.code() == "serve.tool_withdrawn") << after.message.dump();
  }
  EXPECT_EQ(Lines(dir_.Read("entries.txt")).size(), dispatched) << "a refused call reached the upstream";
}

}  // namespace
}  // namespace udon::testing
