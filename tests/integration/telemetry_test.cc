// serve's metrics and traces (issue 40, section 3) with real peers: Prometheus' own checker
// (promtool check metrics) and a real Prometheus scraping the gateway, and an OTLP receiver
// that checks every span with OpenTelemetry's own encoder (tests/peers/otlp_receiver.mjs).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "demo_http.h"
#include "line_client.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

// Values the calls carry that must never reach a span or a metric.
constexpr int kArgumentValue = 918273645;
constexpr const char* kStringValue = "sekrit-778899";
constexpr const char* kHostTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kHostSpan = "00f067aa0ba902b7";
constexpr const char* kHeaderTrace = "0af7651916cd43dd8448eb211c80319c";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<Json> JsonLines(const std::string& path) {
  std::vector<Json> lines;
  std::istringstream in(ReadAll(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(Json::parse(line));
  }
  return lines;
}

// A program on PATH, by its full path (processes here are started without a PATH search);
// empty when absent.
std::string OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path == nullptr ? "/usr/bin" : path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = dir + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

Json Attributes(const Json& span) {
  Json attributes = Json::object();
  for (const Json& a : span["attributes"]) attributes[a["key"].get<std::string>()] = a["value"].begin().value();
  return attributes;
}

Json Call(int id, Json arguments, Json meta = nullptr) {
  Json params = {{"name", "convert_units"}, {"arguments", std::move(arguments)}};
  if (!meta.is_null()) params["_meta"] = std::move(meta);
  return Request(id, "tools/call", params);
}

class TelemetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PeersInstalled()) GTEST_SKIP() << "npm test peers not installed (scripts/test.sh installs them)";
    receiver_ = std::make_unique<BackgroundProcess>(std::vector<std::string>{
        NodeBinary(), SourceDir() + "/tests/peers/otlp_receiver.mjs", dir_.File("spans.jsonl")});
    receiver_port_ = AwaitOutput(*receiver_, std::regex(R"(listening (\d+))"));
    ASSERT_FALSE(receiver_port_.empty()) << receiver_->Output();
    demo_ = std::make_unique<ReviewedDemo>(dir_, std::vector<std::string>{"--log-requests", dir_.File("upstream.jsonl")});
    ASSERT_TRUE(demo_->ok()) << demo_->failure;
  }

  TempDir dir_;
  std::unique_ptr<BackgroundProcess> receiver_;
  std::string receiver_port_;
  std::unique_ptr<ReviewedDemo> demo_;
};

// One successful call with the host's trace context in params._meta, one refused (invalid
// arguments), one with the context in HTTP headers; then the page and the spans.
TEST_F(TelemetryTest, MetricsPassPromtoolAndSpansFollowTheMcpConventionsAndCarryNoValues) {
  auto gateway = std::make_unique<HttpGateway>(
      *demo_, std::vector<std::string>{"--otlp-endpoint", "http://127.0.0.1:" + receiver_port_});
  ASSERT_NE(gateway->port(), 0) << gateway->process().Output();
  RawHttpPeer peer(gateway->port());
  peer.Initialize();
  const std::string host_parent = std::string("00-") + kHostTrace + "-" + kHostSpan + "-01";
  auto ok = peer.Post(Call(1, {{"value", kArgumentValue}, {"from", "kg"}, {"to", "g"}},
                           {{"traceparent", host_parent}, {"tracestate", "vendor=abc"}}));
  ASSERT_EQ(ok.status, 200);
  ASSERT_FALSE(ok.messages.back()["result"].value("isError", false)) << ok.messages.back().dump();
  auto refused = peer.Post(Call(2, {{"value", kStringValue}, {"from", "kg"}, {"to", "g"}}));
  ASSERT_TRUE(refused.messages.back()["result"].value("isError", false));
  const std::string refused_code = refused.messages.back()["result"]["_meta"]["code"];
  httplib::Client http("127.0.0.1", gateway->port());
  auto by_header = http.Post("/mcp",
                             {{"Accept", "application/json, text/event-stream"},
                              {"Mcp-Session-Id", peer.session()},
                              {"traceparent", std::string("00-") + kHeaderTrace + "-b7ad6b7169203331-01"}},
                             Call(3, {{"value", 1}, {"from", "kg"}, {"to", "g"}}).dump(), "application/json");
  ASSERT_TRUE(by_header && by_header->status == 200);

  auto page = http.Get("/metrics");
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_EQ(page->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  RunOptions check;
  check.stdin_data = page->body;
  ASSERT_FALSE(OnPath("promtool").empty()) << "promtool (Debian package prometheus) is not installed";
  ProcessResult promtool = RunProcess({OnPath("promtool"), "check", "metrics"}, check);
  EXPECT_EQ(promtool.exit_code, 0) << promtool.out << promtool.err << page->body;
  const std::string& metrics = page->body;
  EXPECT_NE(metrics.find("udon_mcp_tool_calls_total{tool=\"convert_units\",outcome=\"ok\"} 2\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("udon_mcp_tool_calls_total{tool=\"convert_units\",outcome=\"" + refused_code + "\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("udon_mcp_refusals_total{code=\"" + refused_code + "\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics.find("udon_mcp_gate_step_duration_seconds_count{step=\"compare\"} 2\n"), std::string::npos);
  EXPECT_NE(metrics.find("udon_mcp_upstream_processes_started_total{server=\"demo\"}"), std::string::npos);
  EXPECT_NE(metrics.find("udon_mcp_store_operations_total{operation=\"is_invalidated\",outcome=\"ok\"}"), std::string::npos);
  EXPECT_NE(metrics.find("udon_mcp_sessions 1\n"), std::string::npos);
  EXPECT_EQ(metrics.find(std::to_string(kArgumentValue)), std::string::npos);
  EXPECT_EQ(metrics.find(kStringValue), std::string::npos);

  gateway.reset();  // SIGTERM: the exporter sends what it holds before serve exits
  const std::string spans_text = ReadAll(dir_.File("spans.jsonl"));
  EXPECT_EQ(spans_text.find("\"error\""), std::string::npos) << spans_text;
  EXPECT_EQ(spans_text.find(std::to_string(kArgumentValue)), std::string::npos);
  EXPECT_EQ(spans_text.find(kStringValue), std::string::npos);
  std::vector<Json> spans = JsonLines(dir_.File("spans.jsonl"));
  Json server_span, dispatch_span;
  std::vector<std::string> steps;
  for (const Json& span : spans) {
    if (span["traceId"] != kHostTrace) continue;
    if (span["kind"] == 2) server_span = span;
    if (span["kind"] == 3) dispatch_span = span;
  }
  ASSERT_TRUE(server_span.is_object()) << spans_text;
  EXPECT_EQ(server_span["name"], "tools/call convert_units");
  EXPECT_EQ(server_span["parentSpanId"], kHostSpan);
  EXPECT_EQ(server_span["traceState"], "vendor=abc");
  const Json a = Attributes(server_span);
  EXPECT_EQ(a["mcp.method.name"], "tools/call");
  EXPECT_EQ(a["gen_ai.tool.name"], "convert_units");
  EXPECT_EQ(a["mcp.protocol.version"], "2025-11-25");
  EXPECT_EQ(a["network.transport"], "tcp");
  EXPECT_EQ(a["mcp.session.id"].get<std::string>().size(), 32u);
  EXPECT_EQ(a["mcp.session.id"].get<std::string>().find(peer.session()), std::string::npos);
  EXPECT_EQ(a["udon.gate.code"], "ok");
  EXPECT_FALSE(a.contains("error.type"));
  for (const Json& span : spans) {
    if (span.value("parentSpanId", "") == server_span["spanId"]) steps.push_back(span["name"]);
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"udon.gate.digest", "udon.gate.static", "udon.gate.connect",
                                             "udon.gate.list", "udon.gate.compare", "udon.gate.arguments",
                                             "udon.gate.recheck", "tools/call convert_units"}));
  ASSERT_TRUE(dispatch_span.is_object());
  // The upstream received the context naming the dispatch span, in params._meta.
  bool passed_on = false;
  for (const Json& line : JsonLines(dir_.File("upstream.jsonl"))) {
    passed_on = passed_on || line.value("traceparent", "") == std::string("00-") + kHostTrace + "-" +
                                                                   dispatch_span["spanId"].get<std::string>() + "-01";
  }
  EXPECT_TRUE(passed_on) << ReadAll(dir_.File("upstream.jsonl"));
  bool refusal_seen = false, header_seen = false;
  for (const Json& span : spans) {
    const Json attributes = Attributes(span);
    if (span["kind"] == 2 && attributes.value("error.type", "") == refused_code) {
      refusal_seen = attributes["udon.gate.code"] == refused_code && span["status"]["code"] == 2 &&
                     attributes["udon.gate.dispatched"] == false;
    }
    header_seen = header_seen || (span["traceId"] == kHeaderTrace && span["kind"] == 2);
  }
  EXPECT_TRUE(refusal_seen) << spans_text;
  EXPECT_TRUE(header_seen) << spans_text;
}

// A real Prometheus scrapes a stdio gateway's --metrics-listen and answers a query for it.
TEST_F(TelemetryTest, ARealPrometheusScrapesTheMetricsListenerOfAStdioGateway) {
  const int metrics_port = FreeLoopbackPort();
  LineClient client(demo_->ServeArgv({"--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port)}));
  client.Send(InitializeRequest(0));
  ASSERT_TRUE(client.ReadResponse(0).has_value());
  client.Send(Notification("notifications/initialized"));
  client.Send(Call(1, {{"value", 2}, {"from", "kg"}, {"to", "g"}}));
  auto called = client.ReadResponse(1);
  ASSERT_TRUE(called.has_value());
  ASSERT_FALSE((*called)["result"].value("isError", false)) << called->dump();
  ASSERT_TRUE(WaitForPort(metrics_port));

  const int prometheus_port = FreeLoopbackPort();
  std::ofstream(dir_.File("prometheus.yml")) << "global:\n  scrape_interval: 1s\n"
                                             << "scrape_configs:\n  - job_name: udon\n    static_configs:\n"
                                             << "      - targets: ['127.0.0.1:" << metrics_port << "']\n";
  if (OnPath("prometheus").empty()) GTEST_SKIP() << "prometheus (Debian package prometheus) is not installed";
  BackgroundProcess prometheus({OnPath("prometheus"), "--config.file=" + dir_.File("prometheus.yml"),
                                "--storage.tsdb.path=" + dir_.File("tsdb"),
                                "--web.listen-address=127.0.0.1:" + std::to_string(prometheus_port)});
  if (!WaitForPort(prometheus_port, std::chrono::seconds(30))) {
    GTEST_SKIP() << "prometheus did not start in this sandbox: " << prometheus.Output();
  }
  httplib::Client api("127.0.0.1", prometheus_port);
  Json result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto answer = api.Get("/api/v1/query?query=udon_mcp_tool_calls_total");
    if (answer && answer->status == 200) {
      result = Json::parse(answer->body)["data"]["result"];
      if (!result.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_EQ(result.size(), 1u) << prometheus.Output();
  EXPECT_EQ(result[0]["metric"]["tool"], "convert_units");
  EXPECT_EQ(result[0]["metric"]["outcome"], "ok");
  EXPECT_EQ(result[0]["metric"]["job"], "udon");
  EXPECT_EQ(result[0]["value"][1], "1");
}

}  // namespace
}  // namespace udon::testing
