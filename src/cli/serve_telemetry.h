// serve's metrics and traces (contract 7.25): the telemetry every call reports to, the
// store it counts, /metrics on the HTTP port and on --metrics-listen.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "gate/gate.h"
#include "mcp/server/http_server.h"
#include "mcp/server/server.h"
#include "telemetry/metrics_listener.h"
#include "telemetry/telemetry.h"

namespace udon::cli {

struct ServeTelemetry {
  std::shared_ptr<telemetry::Telemetry> telemetry;
  std::unique_ptr<telemetry::MetricsListener> listener;  // --metrics-listen
};

// Traces from --otlp-endpoint and the OTEL_* variables; the gate's store observed; the
// metrics listener bound when `metrics_host` is not empty (its URL said on stderr).
// Errors: usage.invalid (the OTLP configuration), http.bind_failed.
Result<ServeTelemetry> StartServeTelemetry(const std::string& otlp_endpoint, const std::string& metrics_host,
                                           int metrics_port, gate::GateEnvironment& env, mcp::Server& server,
                                           const std::function<void(const std::string&)>& say);
// /metrics beside the MCP endpoint, and the HTTP server's sessions in the gauges.
void AddMetricsPage(ServeTelemetry& served, mcp::HttpServerOptions& http);
void SampleSessions(ServeTelemetry& served, std::function<std::size_t()> sessions);

}  // namespace udon::cli
