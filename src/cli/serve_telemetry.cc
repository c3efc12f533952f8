#include "cli/serve_telemetry.h"

#include <cstdlib>
#include <utility>

namespace udon::cli {
namespace {

// A URL as stderr may show it: credentials in its authority (user:password@) left out.
std::string WithoutUserInfo(const std::string& url) {
  const std::size_t authority = url.find("://");
  if (authority == std::string::npos) return url;
  const std::size_t end = url.find_first_of("/?#", authority + 3);
  const std::size_t at = url.rfind('@', end == std::string::npos ? url.size() : end);
  if (at == std::string::npos || at < authority) return url;
  return url.substr(0, authority + 3) + url.substr(at + 1);
}

}  // namespace

Result<ServeTelemetry> StartServeTelemetry(const std::string& otlp_endpoint, const std::string& metrics_host,
                                           int metrics_port, gate::GateEnvironment& env, mcp::Server& server,
                                           const std::function<void(const std::string&)>& say) {
  UDON_ASSIGN_OR_RETURN(telemetry::OtlpConfig otlp,
                        telemetry::OtlpConfigFrom(otlp_endpoint, [](const char* name) { return std::getenv(name); }));
  ServeTelemetry served;
  served.telemetry = std::make_shared<telemetry::Telemetry>(otlp);
  if (!env.state) env.state = std::make_shared<gate::FileStateStore>(env.state_dir);
  env.state = served.telemetry->Observe(env.state);
  telemetry::Metrics& metrics = served.telemetry->metrics();
  metrics.Declare("udon_mcp_subscriptions", telemetry::MetricKind::kGauge,
                  "Open subscriptions/listen streams (2026-07-28 hosts hearing of tool-list changes).");
  metrics.AddSampler([&server](telemetry::Metrics& m) {
    m.Set("udon_mcp_subscriptions", {}, static_cast<double>(server.open_subscriptions()));
  });
  if (!otlp.endpoint.empty()) say("exporting traces over OTLP/HTTP (JSON) to " + WithoutUserInfo(otlp.endpoint));
  if (!metrics_host.empty()) {
    served.listener = std::make_unique<telemetry::MetricsListener>(metrics);
    UDON_ASSIGN_OR_RETURN(int port, served.listener->Start(metrics_host, metrics_port));
    const bool v6 = metrics_host.find(':') != std::string::npos;
    say("metrics on http://" + (v6 ? "[" + metrics_host + "]" : metrics_host) + ":" + std::to_string(port) +
        "/metrics");
  }
  return served;
}

void AddMetricsPage(ServeTelemetry& served, mcp::HttpServerOptions& http) {
  auto telemetry = served.telemetry;
  http.pages.push_back({"/metrics", telemetry::kMetricsContentType, [telemetry] { return telemetry->metrics().Render(); }});
}

void SampleSessions(ServeTelemetry& served, std::function<std::size_t()> sessions) {
  telemetry::Metrics& metrics = served.telemetry->metrics();
  metrics.Declare("udon_mcp_sessions", telemetry::MetricKind::kGauge,
                  "MCP sessions held: legacy HTTP sessions (Mcp-Session-Id), or 1 for the stdio host.");
  metrics.AddSampler([sessions = std::move(sessions)](telemetry::Metrics& m) {
    m.Set("udon_mcp_sessions", {}, static_cast<double>(sessions()));
  });
}

}  // namespace udon::cli
