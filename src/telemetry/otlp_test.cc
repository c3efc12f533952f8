#include "telemetry/otlp.h"

#include <httplib.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "json/json.h"

namespace udon::telemetry {
namespace {

std::function<const char*(const char*)> Env(std::map<std::string, std::string> values) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(values));
  return [held](const char* name) -> const char* {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

TEST(OtlpConfigTest, FlagWinsThenTracesEndpointThenBase) {
  auto config = OtlpConfigFrom("http://collector:4318/", Env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:4318"}}));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->endpoint, "http://collector:4318/v1/traces");
  config = OtlpConfigFrom("", Env({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:1/custom"},
                                   {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:4318"}}));
  EXPECT_EQ(config->endpoint, "http://c:1/custom");
  config = OtlpConfigFrom("", Env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:4318"},
                                   {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%3Dcret, x=y"},
                                   {"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
                                   {"OTEL_SERVICE_NAME", "gw"}}));
  EXPECT_EQ(config->endpoint, "http://other:4318/v1/traces");
  ASSERT_EQ(config->headers.size(), 2u);
  EXPECT_EQ(config->headers[0], (std::pair<std::string, std::string>{"api-key", "s=cret"}));
  EXPECT_EQ(config->timeout_ms, 2500);
  EXPECT_EQ(config->service_name, "gw");
  EXPECT_TRUE(OtlpConfigFrom("", Env({}))->endpoint.empty());
  EXPECT_TRUE(OtlpConfigFrom("http://a:1", Env({{"OTEL_SDK_DISABLED", "true"}}))->endpoint.empty());
}

TEST(OtlpConfigTest, RefusesWhatItCannotHonour) {
  EXPECT_EQ(OtlpConfigFrom("http://a:1", Env({{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"}})).error().code,
            "usage.invalid");
  EXPECT_EQ(OtlpConfigFrom("ftp://a:1", Env({})).error().code, "usage.invalid");
  EXPECT_EQ(OtlpConfigFrom("http://a:1", Env({{"OTEL_EXPORTER_OTLP_TIMEOUT", "soon"}})).error().code, "usage.invalid");
}

Span SomeSpan() {
  Span span;
  span.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  span.span_id = "00f067aa0ba902b7";
  span.name = "tools/call t";
  span.kind = Span::Kind::kServer;
  span.start_unix_nanos = 1;
  span.end_unix_nanos = 2;
  span.attributes = {{"mcp.method.name", std::string("tools/call")}, {"udon.gate.exit", std::int64_t{3}},
                     {"udon.gate.dispatched", false}};
  span.error = true;
  return span;
}

TEST(OtlpJsonTest, EncodesIdsAsHexIntegersAsStringsAndEnumsAsNumbers) {
  const json::Value request = json::Value::parse(OtlpJson({SomeSpan()}, "udon-mcp"));
  const json::Value& span = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  EXPECT_EQ(span["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(span["kind"], 2);
  EXPECT_EQ(span["startTimeUnixNano"], "1");
  EXPECT_EQ(span["status"]["code"], 2);
  EXPECT_FALSE(span.contains("parentSpanId"));
  EXPECT_EQ(span["attributes"][1]["value"]["intValue"], "3");
  EXPECT_EQ(span["attributes"][2]["value"]["boolValue"], false);
  EXPECT_EQ(request["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"], "udon-mcp");
}

TEST(OtlpExporterTest, SendsBatchesWithTheConfiguredHeaders) {
  httplib::Server receiver;
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<std::string> bodies;
  std::string header;
  receiver.Post("/v1/traces", [&](const httplib::Request& request, httplib::Response& response) {
    std::lock_guard lock(mutex);
    bodies.push_back(request.body);
    header = request.get_header_value("api-key");
    arrived.notify_all();
    response.set_content("{}", "application/json");
  });
  const int port = receiver.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { receiver.listen_after_bind(); });
  {
    OtlpConfig config;
    config.endpoint = "http://127.0.0.1:" + std::to_string(port) + "/v1/traces";
    config.headers = {{"api-key", "k"}};
    OtlpExporter exporter(config);
    exporter.Enqueue({SomeSpan(), SomeSpan()});
  }  // the destructor sends what is queued
  receiver.stop();
  serving.join();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(header, "k");
  EXPECT_EQ(json::Value::parse(bodies[0])["resourceSpans"][0]["scopeSpans"][0]["spans"].size(), 2u);
}

// A dead endpoint never holds a call up: Enqueue returns at once and a full queue drops.
TEST(OtlpExporterTest, AFullQueueDropsInsteadOfBlocking) {
  OtlpConfig config;
  config.endpoint = "http://127.0.0.1:9/v1/traces";  // discard port: nothing listens
  config.timeout_ms = 200;
  OtlpExporter exporter(config);
  std::vector<Span> many(OtlpExporter::kMaxQueued + 100, SomeSpan());
  exporter.Enqueue(std::move(many));
  EXPECT_GE(exporter.counts().dropped, 100u);
}

}  // namespace
}  // namespace udon::telemetry
