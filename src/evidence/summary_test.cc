#include "evidence/summary.h"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "gate/internal/scripted_gate.h"
#include "evidence/probe.h"

namespace udon::evidence {
namespace {

using gate::internal::kCanaryArgument;
using gate::internal::kCanaryResult;

json::Value Find(const json::Value& list, const char* member, const json::Value& key) {
  for (const json::Value& item : list) {
    if (item[member] == key) return item;
  }
  return nullptr;
}

class SummaryTest : public gate::internal::ScriptedGateTest {
 protected:
  // One gated call in a fresh Gate (as a separate `udon-mcp call` would be); its evidence
  // line is kept.
  gate::GateResult Call(gate::GateEnvironment env) {
    gate::Gate gate(std::move(env));
    gate::GateResult result = gate.Call(binding_, Args(), gate::CallOptions{});
    lines_ += result.evidence.ToJson().dump() + "\n";
    return result;
  }

  // The gate tests' fault scenarios, each once (three happy calls): 15 records.
  void RunFaultScenarios() {
    for (int i = 0; i < 3; ++i) Call(Env());

    server_.pages[0]["tools"][0]["description"] = std::string("Revised ") + kCanaryArgument;
    server_.pages[0]["tools"][0]["annotations"] = {{"readOnlyHint", true}};
    Call(Env());  // drift: description changed, annotations added
    server_.Reset();
    server_.pages[0]["tools"][0]["inputSchema"]["properties"]["priority"] = {{"type", "integer"}};
    Call(Env());  // drift: inputSchema
    server_.Reset();
    server_.server_info["version"] = "0.8.3";
    Call(Env());  // serverInfo
    server_.Reset();
    server_.version = "2025-06-18";
    Call(Env());  // protocol version
    server_.Reset();
    server_.pages[0]["tools"][0]["name"] = "render_turntable_v2";
    Call(Env());  // removed (renamed)
    server_.Reset();
    server_.pages[1]["tools"].push_back(server_.pages[0]["tools"][0]);
    Call(Env());  // duplicated in the live catalog
    server_.Reset();

    json::Value duplicated = Reviewed(false, {});
    auto& pages = duplicated["servers"]["blender_farm"]["toolPages"];
    pages[1]["tools"].push_back(pages[0]["tools"][0]);
    const manifest::Binding reviewed = binding_;
    WriteManifest(duplicated);
    Call(Env());  // duplicated in the manifest: refused at the static step, not drift
    binding_ = reviewed;
    WriteManifest(Reviewed(false, {}));

    gate::GateEnvironment before_dispatch = Env();
    before_dispatch.after_step = [this](const std::string& step, mcp::Connection& connection) {
      if (step != "compare") return;
      const std::uint64_t seen = connection.LastSequence();
      server_.peer.load()->Send(mcp::MakeNotification("notifications/tools/list_changed"));
      ASSERT_TRUE(connection.WaitForEventAfter(seen, std::chrono::seconds(10)));
    };
    Call(before_dispatch);  // binding.invalidated, list_changed_before_dispatch

    server_.on_call = [](const mcp::Message& m, mcp::MemoryPeer& p) {
      p.Send(mcp::MakeNotification("notifications/tools/list_changed"));
      p.Send(mcp::MakeResult(m.id, {{"content", json::Value::array()},
                                    {"structuredContent", {{"renderedUris", {kCanaryResult}}}}}));
    };
    Call(Env());  // call.indeterminate, list_changed_during_call
    server_.Reset();

    server_.on_call = [](const mcp::Message&, mcp::MemoryPeer&) {};  // never answers
    gate::GateEnvironment short_timeout = Env();
    short_timeout.call_timeout = std::chrono::milliseconds(200);
    Call(short_timeout);  // call.indeterminate by timeout
    server_.Reset();

    server_.on_list = [this](const mcp::Message&, mcp::MemoryPeer& p) {
      if (server_.lists == 1) p.Send(mcp::MakeNotification("notifications/tools/list_changed"));
    };
    Call(Env());  // ok after one disturbed listing
    server_.Reset();

    server_.on_call = [](const mcp::Message& m, mcp::MemoryPeer& p) {
      p.Send(mcp::MakeResult(m.id, {{"content", {{{"type", "text"}, {"text", kCanaryResult}}}}, {"isError", true}}));
    };
    Call(Env());  // call.tool_error
    server_.Reset();
  }

  json::Value SummaryOf(const std::string& text) {
    EvidenceSet set;
    AddEvidenceText(text, set);
    return Summarize(set);
  }

  std::string lines_;
};

TEST_F(SummaryTest, FaultScenariosGiveExactCounts) {
  RunFaultScenarios();
  const json::Value s = SummaryOf(lines_);
  EXPECT_EQ(s["records"], 15);
  EXPECT_EQ(s["unreadableLines"], 0);
  EXPECT_EQ(s["commands"], (json::Value{{"call", 15}}));
  const json::Value codes = json::Value::array({
      {{"code", "binding.invalidated"}, {"exit", 3}, {"count", 1}},
      {{"code", "call.indeterminate"}, {"exit", 5}, {"count", 2}},
      {{"code", "call.tool_error"}, {"exit", 4}, {"count", 1}},
      {{"code", "catalog.tool_drift"}, {"exit", 3}, {"count", 2}},
      {{"code", "catalog.tool_duplicate"}, {"exit", 3}, {"count", 2}},
      {{"code", "catalog.tool_missing"}, {"exit", 3}, {"count", 1}},
      {{"code", "ok"}, {"exit", 0}, {"count", 4}},
      {{"code", "server.protocol_version_mismatch"}, {"exit", 3}, {"count", 1}},
      {{"code", "server.server_info_mismatch"}, {"exit", 3}, {"count", 1}},
  });
  EXPECT_EQ(s["codes"], codes);
  const json::Value exits = json::Value::array({{{"exit", 0}, {"class", "ok"}, {"count", 4}},
                                                {{"exit", 3}, {"class", "refused"}, {"count", 8}},
                                                {{"exit", 4}, {"class", "failed"}, {"count", 1}},
                                                {{"exit", 5}, {"class", "indeterminate"}, {"count", 2}}});
  EXPECT_EQ(s["exitClasses"], exits);

  EXPECT_EQ(s["drift"]["incidents"], 6);
  const auto kind = [](const char* name, int incidents, int added, int removed, int changed) {
    return json::Value{{"kind", name},
                       {"incidents", incidents},
                       {"pointers", {{"added", added}, {"removed", removed}, {"changed", changed}}}};
  };
  EXPECT_EQ(s["drift"]["kinds"], json::Value::array({kind("annotations", 1, 1, 0, 0), kind("description", 1, 0, 0, 1),
                                                     kind("inputSchema", 1, 1, 0, 0), kind("protocolVersion", 1, 0, 0, 0),
                                                     kind("serverInfo", 1, 0, 0, 1), kind("toolDuplicated", 1, 0, 0, 0),
                                                     kind("toolRemoved", 1, 0, 0, 0)}));

  EXPECT_EQ(s["listChanged"]["invalidations"],
            (json::Value{{"list_changed_before_dispatch", 1}, {"list_changed_during_call", 1},
                         {"list_changed_between_calls", 0}, {"strict_notification", 0}}));
  EXPECT_EQ(s["listChanged"]["absorbedBeforeBinding"], 1);
  EXPECT_EQ(s["listChanged"]["disturbedListings"], 1);

  EXPECT_EQ(s["indeterminate"]["count"], 2);
  ASSERT_EQ(s["indeterminate"]["byReason"].size(), 2u);
  EXPECT_EQ(Find(s["indeterminate"]["byReason"], "reason", "list_changed")["count"], 1);

  const json::Value& steps = s["latency"]["steps"];
  std::vector<std::string> names;
  for (const json::Value& step : steps) names.push_back(step["step"]);
  EXPECT_EQ(names, (std::vector<std::string>{"digest", "static", "connect", "list", "compare", "arguments", "recheck", "dispatch"}));
  EXPECT_EQ(Find(steps, "step", "digest")["samples"], 15);
  EXPECT_EQ(Find(steps, "step", "connect")["samples"], 14);  // all but the static refusal
  EXPECT_EQ(Find(steps, "step", "dispatch")["samples"], 7);
  EXPECT_EQ(s["latency"]["gateMs"]["samples"], 15);
  EXPECT_EQ(s["latency"]["callMs"]["samples"], 7);
  const json::Value& digest = Find(steps, "step", "digest");
  EXPECT_LE(digest["p50"].get<double>(), digest["p90"].get<double>());
  EXPECT_LE(digest["p99"].get<double>(), digest["max"].get<double>());

  ASSERT_EQ(s["tools"].size(), 1u);
  const json::Value& tool = s["tools"][0];
  EXPECT_EQ(tool["server"], "blender_farm");
  EXPECT_EQ(tool["tool"], "render_turntable");
  EXPECT_EQ(tool["calls"], 15);
  EXPECT_EQ(tool["results"], 4);
  EXPECT_EQ(tool["maxDistinctResults"], 1);
  EXPECT_EQ(tool["nondeterministic"], false);
  EXPECT_EQ(tool["modelBacked"], false);
  EXPECT_EQ(tool["contradictsReview"], false);
}

TEST_F(SummaryTest, ProbeEvidenceShowsNondeterminismAgainstTheReview) {
  server_.result = [](int call) { return json::Value{{"renderedUris", {"https://r.example/" + std::to_string(call)}}}; };
  auto writer = gate::EvidenceWriter::Open(Path("probe.jsonl"));
  ASSERT_TRUE(writer.ok());
  ProbeOptions options;
  options.repeat = 4;
  ProbeOutcome outcome = RunProbe(Env(), writer->get(), binding_, Args(), options);
  ASSERT_EQ(outcome.report["exit"], kExitFinding);
  EvidenceSet set;
  ASSERT_TRUE(AddEvidenceFile(Path("probe.jsonl"), set).ok());
  const json::Value s = Summarize(set);
  EXPECT_EQ(s["files"], 1);
  EXPECT_EQ(s["commands"], (json::Value{{"probe", 4}}));
  const json::Value& tool = s["tools"][0];
  EXPECT_EQ(tool["results"], 4);
  EXPECT_EQ(tool["argumentSets"], 1);
  EXPECT_EQ(tool["maxDistinctResults"], 4);
  EXPECT_EQ(tool["nondeterministic"], true);
  EXPECT_EQ(tool["contradictsReview"], true);
  EXPECT_EQ(tool["maxDistinctByConnection"], (json::Value{{"fresh", 1}, {"reused", 3}}));
  EXPECT_EQ(tool["maxDistinctByConcurrency"], (json::Value{{"alone", 4}, {"overlapped", 0}}));
  EXPECT_NE(SummaryMarkdown(s, "").find("**contradicts the review**"), std::string::npos);
}

TEST_F(SummaryTest, ReportsNeverContainArgumentOrResultValues) {
  RunFaultScenarios();
  // A hostile record: values (which are not short tokens, like real argument values)
  // where codes and names belong, and in members nobody reads.
  const std::string canary = std::string("https://a.example/?q=") + kCanaryArgument + " " + kCanaryResult;
  json::Value hostile = {{"code", "catalog.tool_drift"}, {"command", canary}, {"server", canary},
                         {"tool", canary}, {"reason", canary}, {"invalidation", canary},
                         {"arguments", kCanaryArgument}, {"result", kCanaryResult},
                         {"drift", {{{"pointer", "/x"}, {"change", canary}, {"area", canary}}}},
                         {"steps", {{{"step", canary}, {"outcome", canary}, {"ms", 1}}}}};
  const std::string text = lines_ + hostile.dump() + "\n";
  const json::Value s = SummaryOf(text);
  for (const std::string& report : {s.dump(), SummaryMarkdown(s, "report.svg"), SummarySvg(s)}) {
    EXPECT_EQ(report.find(kCanaryArgument), std::string::npos);
    EXPECT_EQ(report.find(kCanaryResult), std::string::npos);
  }
  EXPECT_EQ(lines_.find(kCanaryArgument), std::string::npos);
  EXPECT_EQ(lines_.find(kCanaryResult), std::string::npos);
  EXPECT_EQ(Find(s["drift"]["kinds"], "kind", "(unrecognized)")["incidents"], 1);
}

TEST_F(SummaryTest, TheSameRecordsInAnyOrderGiveTheSameReport) {
  RunFaultScenarios();
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < lines_.size()) {
    const std::size_t end = lines_.find('\n', start);
    lines.push_back(lines_.substr(start, end - start + 1));
    start = end + 1;
  }
  const json::Value first = SummaryOf(lines_);
  std::mt19937 shuffle(7);
  std::shuffle(lines.begin(), lines.end(), shuffle);
  std::string reordered;
  for (const std::string& line : lines) reordered += line;
  const json::Value second = SummaryOf(reordered);
  EXPECT_EQ(first, second);
  EXPECT_EQ(SummaryMarkdown(first, "r.svg"), SummaryMarkdown(second, "r.svg"));
  EXPECT_EQ(SummarySvg(first), SummarySvg(second));
}

TEST(Summary, UnreadableLinesAreCountedNotFatal) {
  EvidenceSet set;
  AddEvidenceText("not json\n[1]\n{\"code\":5}\n\n{\"code\":\"ok\",\"exit\":0}\n", set);
  EXPECT_EQ(set.unreadable_lines, 3);
  ASSERT_EQ(set.records.size(), 1u);
  const json::Value s = Summarize(set);
  EXPECT_EQ(s["codes"], json::Value::array({{{"code", "ok"}, {"exit", 0}, {"count", 1}}}));
  EXPECT_EQ(s["tools"][0]["tool"], "(unrecognized)");
}

TEST(Summary, MembersOfTheWrongTypeCountAsAbsent) {
  EvidenceSet set;
  AddEvidenceText(R"({"code":"ok","exit":"0","dispatched":"yes","gateMs":"1","steps":[{"step":7,"outcome":5,"ms":"1"},3],)"
                  R"("probe":{"overlapped":"no"},"resultSha256":12,"drift":"x","invalidation":4,"modelBacked":"no"})"
                  "\n",
                  set);
  ASSERT_EQ(set.records.size(), 1u);
  const json::Value s = Summarize(set);
  EXPECT_EQ(s["exitClasses"], json::Value::array({{{"exit", 1}, {"class", "internal"}, {"count", 1}}}));
  EXPECT_EQ(s["latency"]["callMs"]["samples"], 0);
  EXPECT_EQ(s["latency"]["steps"], json::Value::array());
  EXPECT_EQ(s["tools"][0]["results"], 0);
  EXPECT_EQ(s["listChanged"]["invalidations"]["other"], 1);
  EXPECT_FALSE(SummaryMarkdown(s, "").empty());
}

TEST(Summary, CaptureRecordsAreNoToolRows) {
  EvidenceSet set;
  AddEvidenceText(R"({"command":"capture","server":"demo","negotiation":"discover","code":"ok","exit":0})"
                  "\n",
                  set);
  const json::Value s = Summarize(set);
  EXPECT_EQ(s["commands"]["capture"], 1);
  EXPECT_TRUE(s["tools"].empty());
}

TEST(Summary, MissingFileIsUnreadable) {
  EvidenceSet set;
  Status status = AddEvidenceFile("/nonexistent/evidence.jsonl", set);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "io.unreadable");
}

TEST(Summary, EmptyEvidenceRendersEverySection) {
  const json::Value s = Summarize(EvidenceSet{});
  const std::string md = SummaryMarkdown(s, "chart.svg");
  for (const char* section : {"## Outcomes by code", "## Drift incidents", "## list_changed", "## Indeterminate outcomes",
                              "## Gate latency", "## Nondeterminism per tool", "![", "chart.svg"}) {
    EXPECT_NE(md.find(section), std::string::npos) << section;
  }
  const std::string svg = SummarySvg(s);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("no drift observed"), std::string::npos);
}


// The readable report's model: outcomes bucketed in time, drift by tool, and distinct
// results per tool; the HTML page draws them without any external reference.
TEST(Summary, OutcomesOverTimeDriftByToolAndTheHtmlReport) {
  EvidenceSet set;
  AddEvidenceText(
      R"({"code":"ok","time":"2026-08-30T12:00:10.123Z","server":"s","tool":"a","command":"call","exit":0,"resultHmacSha256":"1111111111111111111111111111111111111111111111111111111111111111","argumentsHmacSha256":"2222222222222222222222222222222222222222222222222222222222222222","digestKeyId":"k","steps":[{"step":"digest","ms":0.004},{"step":"dispatch","ms":350}]}
{"code":"ok","time":"2026-08-30T12:20:00.000Z","server":"s","tool":"a","command":"call","exit":0,"resultHmacSha256":"3333333333333333333333333333333333333333333333333333333333333333","argumentsHmacSha256":"2222222222222222222222222222222222222222222222222222222222222222","digestKeyId":"k"}
{"code":"catalog.tool_drift","time":"2026-08-30T12:40:00.000Z","server":"s","tool":"b","command":"call","exit":3,"drift":[{"pointer":"/description","change":"changed","area":"description"}]}
{"code":"ok","server":"s","tool":"a","command":"call","exit":0}
)",
      set);
  const json::Value s = Summarize(set);
  const json::Value& over_time = s["outcomesOverTime"];
  EXPECT_EQ(over_time["bucketSeconds"], 300);  // 12:00 to 12:40 in at most 24 buckets
  EXPECT_EQ(over_time["buckets"].size(), 9u);  // empty buckets included
  EXPECT_EQ(over_time["buckets"][0], json::Value::parse(R"({"start":"2026-08-30T12:00:00Z","codes":{"ok":1}})"));
  EXPECT_EQ(over_time["buckets"][8]["codes"], json::Value::parse(R"({"catalog.tool_drift":1})"));
  EXPECT_EQ(over_time["untimed"], 1);
  EXPECT_EQ(s["drift"]["byTool"], json::Value::parse(R"([{"server":"s","tool":"b","incidents":1}])"));
  EXPECT_EQ(Find(s["tools"], "tool", "a")["distinctResults"], 2);

  const std::string html = SummaryHtml(s);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* part : {"Gate-step latency", "ms (log)", "Outcomes by code over time", "Drift incidents by kind",
                           "Drift incidents by tool", "Distinct results per call", "2 distinct / 3 calls",
                           "class=\"bar-p50\" data-label=\"digest\"", "Content-Security-Policy"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  // Self-contained: nothing to fetch and nothing to run.
  for (const char* absent : {"<script", "src=", "href=", "url(", "@import"}) {
    EXPECT_EQ(html.find(absent), std::string::npos) << absent;
  }
  std::string stripped = html;
  for (std::size_t at; (at = stripped.find("http://www.w3.org/2000/svg")) != std::string::npos;) stripped.erase(at, 26);
  EXPECT_EQ(stripped.find("http:"), std::string::npos);
  EXPECT_EQ(stripped.find("https:"), std::string::npos);
}

}  // namespace
}  // namespace udon::evidence
