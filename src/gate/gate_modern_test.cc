// The gate against a server of the modern era (MCP 2026-07-28): the manifest's revision
// decides the wire, serverInfo is bound through discovery and every result's _meta, and
// tool-list changes arrive on a subscriptions/listen stream.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "gate/gate.h"
#include "gate/internal/scripted_gate.h"
#include "gate/state.h"

namespace udon::gate {
namespace {

class GateModernTest : public internal::ScriptedGateTest {
 protected:
  void SetUp() override {
    ScriptedGateTest::SetUp();
    server_.modern = true;
    WriteManifest(Modern(Reviewed(false, {})));
  }

  static json::Value Modern(json::Value doc) {
    doc["protocolVersion"] = "2026-07-28";
    return doc;
  }

  GateResult CallOnce(GateEnvironment env) {
    Gate gate(std::move(env));
    CallOptions options;
    options.expect_output = true;
    return gate.Call(binding_, Args(), options);
  }

  static void ExpectRefused(const GateResult& result, const std::string& code, int exit_code) {
    ASSERT_TRUE(result.error.has_value()) << "expected " << code;
    EXPECT_EQ(result.error->code, code) << result.error->Describe();
    EXPECT_EQ(result.evidence.exit.value_or(-1), exit_code);
    EXPECT_TRUE(result.output.is_null());
  }
};

TEST_F(GateModernTest, BindsThroughDiscoveryAndASubscription) {
  GateResult result = CallOnce(Env());
  ASSERT_TRUE(result.ok()) << result.error->Describe();
  EXPECT_TRUE(result.dispatched);
  EXPECT_FALSE(result.output.is_null());
  EXPECT_EQ(result.evidence.ToJson()["era"], "modern");
  EXPECT_EQ(result.evidence.ToJson()["protocolVersion"], "2026-07-28");
  EXPECT_EQ(result.evidence.ToJson()["subscription"], "active");
  EXPECT_EQ(server_.calls, 1);
}

TEST_F(GateModernTest, ALegacyManifestStillUsesInitialize) {
  server_.modern = false;
  WriteManifest(Reviewed(false, {}));
  GateResult result = CallOnce(Env());
  ASSERT_TRUE(result.ok()) << result.error->Describe();
  EXPECT_EQ(result.evidence.ToJson()["era"], "legacy");
  EXPECT_FALSE(result.evidence.ToJson().contains("subscription"));
}

TEST_F(GateModernTest, AModernManifestAgainstALegacyServerIsRefused) {
  server_.modern = false;  // answers server/discover with Method not found
  GateResult result = CallOnce(Env());
  ExpectRefused(result, "server.connect_failed", 3);
  EXPECT_EQ(server_.calls, 0);
}

TEST_F(GateModernTest, DiscoveredServerInfoMustEqualTheReviewedOne) {
  server_.server_info["version"] = "0.8.3";
  GateResult result = CallOnce(Env());
  ExpectRefused(result, "server.server_info_mismatch", 3);
  EXPECT_EQ(server_.lists, 0);
}

TEST_F(GateModernTest, AnotherServerInfoInAListResultIsDrift) {
  server_.result_server_info = {{"name", "example-blender-server"}, {"version", "9.9.9"}};
  GateResult result = CallOnce(Env());
  ExpectRefused(result, "server.server_info_mismatch", 3);
  EXPECT_FALSE(result.dispatched);
  EXPECT_EQ(server_.calls, 0);
}

TEST_F(GateModernTest, AnotherServerInfoInTheCallResultWithholdsIt) {
  server_.on_call = [this](const mcp::Message& m, mcp::MemoryPeer& p) {
    json::Value result = server_.Shaped({{"content", json::Value::array()}, {"structuredContent", server_.result(1)}});
    result["_meta"][std::string(mcp::meta::kServerInfo)]["version"] = "0.9.0";
    p.Send(mcp::MakeResult(m.id, result));
  };
  GateResult result = CallOnce(Env());
  ExpectRefused(result, "call.indeterminate", 5);
  EXPECT_EQ(result.evidence.ToJson()["reason"], "server_info_changed");
}

TEST_F(GateModernTest, ListChangedOnTheSubscriptionBeforeDispatchInvalidates) {
  GateEnvironment env = Env("state");
  env.after_step = [this](const std::string& step, mcp::Connection& connection) {
    if (step != "compare") return;
    const std::uint64_t seen = connection.LastSequence();
    server_.peer.load()->Send(server_.ListChanged());
    connection.WaitForEventAfter(seen, std::chrono::milliseconds(5000));
  };
  GateResult result = CallOnce(std::move(env));
  ExpectRefused(result, "binding.invalidated", 3);
  EXPECT_EQ(result.evidence.ToJson()["invalidation"], "list_changed_before_dispatch");
  EXPECT_EQ(server_.calls, 0);
  // Durable, exactly as for the legacy notification.
  GateResult again = CallOnce(Env("state"));
  ExpectRefused(again, "manifest.invalidated", 3);
}

// The idle watch in the modern era: the notice arrives on the reused connection's
// subscriptions/listen stream while no call runs.
TEST_F(GateModernTest, ListChangedOnTheSubscriptionOfAnIdleReusedConnectionIsRecordedAtOnce) {
  GateEnvironment env = Env("state");
  env.reuse_connections = true;
  std::atomic<int> heard{0};
  env.on_invalidated = [&heard](const std::string&, const std::string& reason) {
    if (reason == "list_changed_while_idle") ++heard;
  };
  Gate gate(env);
  CallOptions options;
  options.expect_output = true;
  ASSERT_TRUE(gate.Call(binding_, Args(), options).ok());
  ASSERT_TRUE(gate.Call(binding_, Args(), options).ok()) << "reused and bound";
  server_.peer.load()->Send(server_.ListChanged());
  for (int i = 0; i < 500 && heard.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(heard.load(), 1);
  server_.calls = 0;
  ExpectRefused(gate.Call(binding_, Args(), options), "manifest.invalidated", 3);
  EXPECT_EQ(server_.calls, 0);
  EXPECT_EQ(server_.connects.load(), 1) << "refused before any connection was touched";
}

TEST_F(GateModernTest, ListChangedOnTheSubscriptionDuringTheCallIsIndeterminate) {
  server_.on_call = [this](const mcp::Message& m, mcp::MemoryPeer& p) {
    p.Send(server_.ListChanged());
    p.Send(mcp::MakeResult(m.id, server_.Shaped({{"content", json::Value::array()},
                                                 {"structuredContent", server_.result(1)}})));
  };
  GateResult result = CallOnce(Env());
  ExpectRefused(result, "call.indeterminate", 5);
  EXPECT_EQ(result.evidence.ToJson()["invalidation"], "list_changed_during_call");
}

TEST_F(GateModernTest, AnUnacknowledgedSubscriptionRefusesBeforeListing) {
  server_.listen_acknowledged = false;
  GateEnvironment env = Env();
  env.call_timeout = std::chrono::milliseconds(300);
  GateResult result = CallOnce(std::move(env));
  ExpectRefused(result, "server.connect_failed", 3);
  EXPECT_EQ(result.evidence.ToJson()["cause"], "mcp.subscription_failed");
  EXPECT_EQ(server_.lists, 0);
}

TEST_F(GateModernTest, ASubscriptionThatEndsBeforeDispatchRefuses) {
  GateEnvironment env = Env();
  env.after_step = [this](const std::string& step, mcp::Connection& connection) {
    if (step != "compare") return;
    const std::uint64_t seen = connection.LastSequence();
    server_.peer.load()->Send(mcp::MakeResult(server_.listen_id, {{"resultType", "complete"}}));
    connection.WaitForEventAfter(seen, std::chrono::milliseconds(5000));
  };
  GateResult result = CallOnce(std::move(env));
  ExpectRefused(result, "server.connect_failed", 3);
  EXPECT_EQ(result.evidence.ToJson()["reason"], "subscription_lost");
  EXPECT_EQ(server_.calls, 0);
}

TEST_F(GateModernTest, AskingForInputDuringTheCallIsRefused) {
  server_.on_call = [](const mcp::Message& m, mcp::MemoryPeer& p) {
    p.Send(mcp::MakeResult(m.id, {{"resultType", "input_required"}, {"requestState", "s"}}));
  };
  GateResult result = CallOnce(Env());
  ExpectRefused(result, "call.server_request_refused", 4);
}

TEST_F(GateModernTest, CachingHintsNeverExtendTheReviewsExpiry) {
  json::Value doc = Modern(Reviewed(false, {}));
  for (json::Value& page : doc["servers"]["blender_farm"]["toolPages"]) {
    page["ttlMs"] = 31'536'000'000LL;  // a year
    page["cacheScope"] = "public";
  }
  WriteManifest(doc);
  GateEnvironment env = Env();
  env.clock = [] { return *manifest::ParseInstant("2027-01-01T00:00:00Z"); };
  GateResult result = CallOnce(std::move(env));
  ExpectRefused(result, "manifest.expired", 3);
  EXPECT_EQ(server_.connects, 0);
}

TEST_F(GateModernTest, AnInvalidParamHeaderAnnotationIsRefusedOverHttpOnly) {
  json::Value doc = Modern(Reviewed(false, {}));
  json::Value& tool = doc["servers"]["blender_farm"]["toolPages"][0]["tools"][0];
  ASSERT_EQ(tool["name"], "render_turntable");
  tool["inputSchema"]["properties"]["angles"]["x-mcp-header"] = "Not A Token";
  WriteManifest(doc);
  config_.servers["blender_farm"].type = mcp::ServerType::kHttp;
  config_.servers["blender_farm"].url = "http://127.0.0.1:9/mcp";
  GateResult result = CallOnce(Env());
  ExpectRefused(result, "input.schema_invalid", 3);
  EXPECT_EQ(result.evidence.ToJson()["cause"], "mcp.invalid_param_header");
  EXPECT_EQ(server_.connects, 0);
}

}  // namespace
}  // namespace udon::gate
