// What `serve` tells its operators: Prometheus metrics and OpenTelemetry traces of gated
// calls (contract 7.25; docs/operations.md "Metrics and traces"). The gateway calls Begin
// before a call and End after it; the metrics page is Render'ed by whoever serves /metrics.
//
// Spans follow OpenTelemetry's MCP semantic conventions: a SERVER span
// "{mcp.method.name} {gen_ai.tool.name}" per call, the gate's steps as its children
// ("udon.gate.<step>"; dispatch as the CLIENT span "tools/call <upstream tool>" whose
// context the upstream receives), the verdict as udon.* attributes. Neither spans nor
// metrics carry an argument or result value, a token or a session id (mcp.session.id is
// the id's SHA-256, cut to 32 hex digits).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "gate/gate.h"
#include "gate/state_store.h"
#include "telemetry/metrics.h"
#include "telemetry/otlp.h"

namespace udon::telemetry {

// What the host's request says of itself.
struct CallOrigin {
  std::string protocol_version;
  std::string session_id;         // legacy HTTP: Mcp-Session-Id (hashed before use); else empty
  std::string network_transport;  // "pipe" (stdio) or "tcp" (HTTP)
  std::string traceparent;        // params._meta, else the HTTP header
  std::string tracestate;
};

// One call's trace: its ids, and the context its upstream call carries.
struct CallTrace {
  std::string trace_id;
  std::string span_id;         // the SERVER span; empty when no export reads it
  std::string parent_span_id;  // the host's span, when it sent a traceparent
  std::string trace_state;
  std::string dispatch_span_id;  // the CLIENT span: the upstream's parent
  bool sampled = true;
  std::chrono::system_clock::time_point start;
  CallOrigin origin;
  // The W3C context for the upstream's tools/call (params._meta and HTTP headers).
  std::string upstream_traceparent() const;
};

// Which call, for metrics and spans: names from the reviewed manifest only.
struct CalledTool {
  std::string offered;   // as the host called it (gen_ai.tool.name, the metrics' tool label)
  std::string server;    // the manifest's server key
  std::string tool;      // the upstream's name
  std::string upstream_transport;  // "stdio" or "http"
};

class Telemetry {
 public:
  // `otlp` with an empty endpoint: metrics only.
  explicit Telemetry(const OtlpConfig& otlp);
  ~Telemetry();

  Metrics& metrics() { return metrics_; }
  bool tracing() const { return exporter_ != nullptr; }

  CallTrace Begin(CallOrigin origin);
  void End(const CallTrace& trace, const CalledTool& tool, const gate::GateResult& result);

  // The store with every operation counted and timed (udon_mcp_store_operations_total,
  // udon_mcp_store_operation_duration_seconds): one round trip each for PostgreSQL.
  std::shared_ptr<gate::StateStore> Observe(std::shared_ptr<gate::StateStore> store);

 private:
  void CountCall(const CalledTool& tool, const gate::GateResult& result);
  void ExportSpans(const CallTrace& trace, const CalledTool& tool, const gate::GateResult& result);

  Metrics metrics_;
  std::atomic<long> in_flight_{0};
  std::unique_ptr<OtlpExporter> exporter_;
};

}  // namespace udon::telemetry
