// A gated call as spans (OpenTelemetry's MCP semantic conventions; telemetry.h).
#include <utility>

#include "base/sha256.h"
#include "telemetry/telemetry.h"
#include "telemetry/trace_context.h"

namespace udon::telemetry {
namespace {

std::uint64_t UnixNanos(std::chrono::system_clock::time_point at) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count());
}

// The session id is a credential of sorts (it names a live session): only its digest.
std::string SessionDigest(const std::string& session_id) { return base::Sha256Hex(session_id).substr(0, 32); }

Span CallSpan(const CallTrace& trace, const CalledTool& tool, const gate::GateResult& result) {
  Span span;
  span.trace_id = trace.trace_id;
  span.span_id = trace.span_id;
  span.parent_span_id = trace.parent_span_id;
  span.trace_state = trace.trace_state;
  span.name = "tools/call " + tool.offered;
  span.kind = Span::Kind::kServer;
  span.start_unix_nanos = UnixNanos(trace.start);
  span.end_unix_nanos = UnixNanos(std::chrono::system_clock::now());
  auto& a = span.attributes;
  a.emplace_back("mcp.method.name", std::string("tools/call"));
  a.emplace_back("gen_ai.tool.name", tool.offered);
  a.emplace_back("gen_ai.operation.name", std::string("execute_tool"));
  if (!trace.origin.protocol_version.empty()) a.emplace_back("mcp.protocol.version", trace.origin.protocol_version);
  if (!trace.origin.session_id.empty()) a.emplace_back("mcp.session.id", SessionDigest(trace.origin.session_id));
  if (!trace.origin.network_transport.empty()) a.emplace_back("network.transport", trace.origin.network_transport);
  const std::string code = result.ok() ? "ok" : result.error->code;
  if (!result.ok()) a.emplace_back("error.type", code);
  a.emplace_back("udon.gate.code", code);
  a.emplace_back("udon.gate.exit", static_cast<std::int64_t>(result.evidence.exit.value_or(result.ok() ? 0 : 1)));
  a.emplace_back("udon.gate.dispatched", result.dispatched);
  if (!result.ok() && !result.steps.empty()) a.emplace_back("udon.gate.failed_step", result.steps.back().step);
  a.emplace_back("udon.upstream.server", tool.server);
  if (result.evidence.connection) a.emplace_back("udon.upstream.connection", *result.evidence.connection);
  if (result.evidence.manifest_sha256) a.emplace_back("udon.manifest.sha256", *result.evidence.manifest_sha256);
  span.error = !result.ok();
  return span;
}

Span StepSpan(const CallTrace& trace, const CalledTool& tool, const gate::GateResult& result,
              const gate::StepRecord& step) {
  Span span;
  span.trace_id = trace.trace_id;
  span.parent_span_id = trace.span_id;
  span.start_unix_nanos = UnixNanos(step.started);
  span.end_unix_nanos = span.start_unix_nanos + static_cast<std::uint64_t>(step.milliseconds * 1e6);
  auto& a = span.attributes;
  if (step.step == "dispatch") {
    // The upstream call: the context the upstream received names this span.
    span.span_id = trace.dispatch_span_id;
    span.name = "tools/call " + tool.tool;
    span.kind = Span::Kind::kClient;
    a.emplace_back("mcp.method.name", std::string("tools/call"));
    a.emplace_back("gen_ai.tool.name", tool.tool);
    a.emplace_back("gen_ai.operation.name", std::string("execute_tool"));
    if (result.evidence.protocol_version) a.emplace_back("mcp.protocol.version", *result.evidence.protocol_version);
    a.emplace_back("network.transport", std::string(tool.upstream_transport == "stdio" ? "pipe" : "tcp"));
  } else {
    span.span_id = NewSpanId();
    span.name = "udon.gate." + step.step;
  }
  a.emplace_back("udon.gate.step", step.step);
  a.emplace_back("udon.gate.step.outcome", step.outcome);
  if (step.outcome != "ok") {
    a.emplace_back("error.type", step.outcome);
    span.error = true;
  }
  return span;
}

}  // namespace

void Telemetry::ExportSpans(const CallTrace& trace, const CalledTool& tool, const gate::GateResult& result) {
  std::vector<Span> spans;
  spans.push_back(CallSpan(trace, tool, result));
  for (const gate::StepRecord& step : result.steps) spans.push_back(StepSpan(trace, tool, result, step));
  exporter_->Enqueue(std::move(spans));
}

}  // namespace udon::telemetry
