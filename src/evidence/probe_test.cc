#include "evidence/probe.h"

#include <thread>

#include <gtest/gtest.h>

#include "gate/internal/scripted_gate.h"
#include "base/file.h"
#include "base/sha256.h"
#include "json/canonical.h"

namespace udon::evidence {
namespace {

using gate::internal::kCanaryArgument;
using gate::internal::kCanaryResult;

class ProbeTest : public gate::internal::ScriptedGateTest {
 protected:
  ProbeOutcome Probe(int repeat, int concurrency, bool fresh = false, bool allow_side_effects = false) {
    auto writer = gate::EvidenceWriter::Open(Path("evidence.jsonl"));
    EXPECT_TRUE(writer.ok());
    ProbeOptions options;
    options.repeat = repeat;
    options.concurrency = concurrency;
    options.fresh_connections = fresh;
    options.allow_side_effects = allow_side_effects;
    options.run_id = "run-1";
    return RunProbe(Env(), writer->get(), binding_, Args(), options);
  }

  std::vector<json::Value> EvidenceLines() {
    std::vector<json::Value> lines;
    auto text = base::ReadFile(Path("evidence.jsonl"));
    if (!text.ok()) return lines;
    EXPECT_EQ(text->find(kCanaryArgument), std::string::npos);
    EXPECT_EQ(text->find(kCanaryResult), std::string::npos);
    std::size_t start = 0;
    while (start < text->size()) {
      const std::size_t end = text->find('\n', start);
      lines.push_back(json::Parse(text->substr(start, end - start)).value());
      start = end + 1;
    }
    return lines;
  }

  static void ExpectValueFree(const ProbeOutcome& outcome) {
    const std::string report = outcome.report.dump() + ProbeReportText(outcome.report);
    EXPECT_EQ(report.find(kCanaryArgument), std::string::npos);
    EXPECT_EQ(report.find(kCanaryResult), std::string::npos);
  }
};

TEST_F(ProbeTest, DeterministicToolHasOneDigestAndAgreesWithTheReview) {
  ProbeOutcome outcome = Probe(6, 1);
  ASSERT_FALSE(outcome.refusal);
  const json::Value& report = outcome.report;
  EXPECT_EQ(outcome.report["exit"], 0);
  EXPECT_EQ(report["verdict"], "consistent");
  EXPECT_EQ(report["outcomes"], (json::Value{{"ok", 6}}));
  EXPECT_EQ(report["results"]["distinct"], 1);
  const json::Value expected = {{"renderedUris", {std::string("https://r.example/") + kCanaryResult}}};
  EXPECT_EQ(report["results"]["digests"][0]["count"], 6);
  EXPECT_TRUE(base::IsSha256Hex(report["results"]["digests"][0]["hmacSha256"].get<std::string>()));
  EXPECT_NE(report["results"]["digests"][0]["hmacSha256"], *json::CanonicalSha256(expected)) << "keyed";
  EXPECT_EQ(report["results"]["differAcrossRepetitions"], false);
  // Sequential calls on a reused connection: one fresh, five reused, same digest.
  const json::Value& connections = report["results"]["acrossConnections"];
  EXPECT_EQ(connections["fresh"]["calls"], 1);
  EXPECT_EQ(connections["reused"]["calls"], 5);
  EXPECT_EQ(connections["compared"], true);
  EXPECT_EQ(connections["differ"], false);
  EXPECT_EQ(report["results"]["acrossConcurrency"]["compared"], false);  // nothing overlapped
  EXPECT_TRUE(base::IsSha256Hex(report["argumentsHmacSha256"].get<std::string>()));
  EXPECT_TRUE(report["digestKeyId"].is_string());
  EXPECT_TRUE(report["findings"].empty());
  EXPECT_EQ(server_.connects.load(), 1);
  ExpectValueFree(outcome);

  const std::vector<json::Value> lines = EvidenceLines();
  ASSERT_EQ(lines.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(lines[static_cast<std::size_t>(i)]["command"], "probe");
    EXPECT_EQ(lines[static_cast<std::size_t>(i)]["probe"],
              (json::Value{{"run", "run-1"}, {"repetition", i + 1}, {"repeat", 6}, {"concurrency", 1},
                           {"connections", "reuse"}, {"overlapped", false}}));
  }
}

TEST_F(ProbeTest, DifferingResultsContradictAReviewThatSaysNotModelBacked) {
  server_.result = [](int call) { return json::Value{{"renderedUris", {"https://r.example/" + std::to_string(call)}}}; };
  ProbeOutcome outcome = Probe(5, 1);
  EXPECT_EQ(outcome.report["exit"], kExitFinding);
  EXPECT_EQ(outcome.report["verdict"], "contradicts_review");
  EXPECT_EQ(outcome.report["results"]["distinct"], 5);
  EXPECT_EQ(outcome.report["results"]["differAcrossRepetitions"], true);
  ASSERT_EQ(outcome.report["findings"].size(), 1u);
  EXPECT_EQ(outcome.report["findings"][0]["code"], kNondeterministicNotModelBacked);
  EXPECT_NE(ProbeReportText(outcome.report).find("contradicts_review"), std::string::npos);
}

TEST_F(ProbeTest, DifferingResultsOfAModelBackedToolAreNoFinding) {
  WriteManifest(Reviewed(true, {}));
  server_.result = [](int call) { return json::Value{{"renderedUris", {"https://r.example/" + std::to_string(call)}}}; };
  ProbeOutcome outcome = Probe(4, 2);
  EXPECT_EQ(outcome.report["exit"], 0);
  EXPECT_EQ(outcome.report["results"]["distinct"], 4);
  EXPECT_TRUE(outcome.report["findings"].empty());
  EXPECT_EQ(outcome.report["review"]["modelBacked"], true);
}

TEST_F(ProbeTest, SideEffectsAreRefusedBeforeAnyConnectionUnlessAllowed) {
  WriteManifest(Reviewed(false, {"creates_render_artifacts"}));
  ProbeOutcome refused = Probe(3, 1);
  ASSERT_TRUE(refused.refusal);
  EXPECT_EQ(refused.refusal->code, kSideEffectsRefused);
  EXPECT_EQ(refused.refusal->details["sideEffects"], (json::Value{"creates_render_artifacts"}));
  EXPECT_EQ(server_.connects.load(), 0);
  EXPECT_TRUE(EvidenceLines().empty());

  ProbeOutcome allowed = Probe(3, 1, false, true);
  EXPECT_FALSE(allowed.refusal);
  EXPECT_EQ(allowed.report["exit"], 0);
  EXPECT_EQ(server_.calls.load(), 3);
}

TEST_F(ProbeTest, SerializedToolNeverOverlapsUnderConcurrency) {
  WriteManifest(Reviewed(false, {}, "serialize"));
  server_.on_call = [](const mcp::Message& m, mcp::MemoryPeer& p) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    p.Send(mcp::MakeResult(m.id, {{"content", json::Value::array()}, {"structuredContent", {{"renderedUris", json::Value::array()}}}}));
  };
  ProbeOutcome outcome = Probe(8, 4);
  EXPECT_EQ(outcome.report["exit"], 0) << ProbeReportText(outcome.report);
  EXPECT_EQ(outcome.report["concurrency"], 4);
  EXPECT_EQ(outcome.report["review"]["concurrency"], "serialize");
  EXPECT_EQ(server_.calls.load(), 8);
  EXPECT_EQ(server_.max_in_flight.load(), 1);
  EXPECT_EQ(outcome.report["results"]["distinct"], 1);
}

TEST_F(ProbeTest, FreshConnectionsConnectForEveryCall) {
  ProbeOutcome outcome = Probe(3, 1, true);
  EXPECT_EQ(outcome.report["exit"], 0);
  EXPECT_EQ(server_.connects.load(), 3);
  EXPECT_EQ(outcome.report["connections"], "fresh");
  EXPECT_EQ(outcome.report["results"]["acrossConnections"]["fresh"]["calls"], 3);
  EXPECT_EQ(outcome.report["results"]["acrossConnections"]["compared"], false);
}

TEST_F(ProbeTest, GateFailuresGiveTheFirstFailureExitCode) {
  server_.server_info["version"] = "0.8.3";
  ProbeOutcome outcome = Probe(2, 1);
  EXPECT_EQ(outcome.report["exit"], 3);
  EXPECT_EQ(outcome.report["verdict"], "failed");
  EXPECT_EQ(outcome.report["outcomes"], (json::Value{{"server.server_info_mismatch", 2}}));
  EXPECT_EQ(server_.calls.load(), 0);

  server_.Reset();
  server_.on_call = [](const mcp::Message& m, mcp::MemoryPeer& p) {
    p.Send(mcp::MakeResult(m.id, {{"content", json::Value::array()}, {"isError", true}}));
  };
  ProbeOutcome failed = Probe(2, 1);
  EXPECT_EQ(failed.report["exit"], 4);
  EXPECT_EQ(failed.report["results"]["distinct"], 0);
}

TEST_F(ProbeTest, ConcurrentCallsAreRecordedAsOverlapping) {
  // Two calls held inside the server until both have arrived: they must overlap.
  std::atomic<int> arrived{0};
  server_.on_call = [&arrived](const mcp::Message& m, mcp::MemoryPeer& p) {
    ++arrived;
    while (arrived.load() < 2) std::this_thread::yield();
    p.Send(mcp::MakeResult(m.id, {{"content", json::Value::array()}, {"structuredContent", {{"renderedUris", json::Value::array()}}}}));
  };
  ProbeOutcome outcome = Probe(2, 2);
  EXPECT_EQ(outcome.report["exit"], 0);
  EXPECT_EQ(outcome.report["results"]["acrossConcurrency"]["overlapped"]["calls"], 2);
  for (const json::Value& call : outcome.report["calls"]) EXPECT_EQ(call["overlapped"], true);
}

}  // namespace
}  // namespace udon::evidence
