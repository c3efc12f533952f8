#include "telemetry/telemetry.h"

#include <utility>

#include "telemetry/trace_context.h"

namespace udon::telemetry {
namespace {

constexpr const char* kCalls = "udon_mcp_tool_calls_total";
constexpr const char* kCallDuration = "udon_mcp_tool_call_duration_seconds";
constexpr const char* kInFlight = "udon_mcp_tool_calls_in_flight";
constexpr const char* kRefusals = "udon_mcp_refusals_total";
constexpr const char* kStepDuration = "udon_mcp_gate_step_duration_seconds";
constexpr const char* kConnections = "udon_mcp_upstream_connections_opened_total";
constexpr const char* kProcesses = "udon_mcp_upstream_processes_started_total";
constexpr const char* kStoreOperations = "udon_mcp_store_operations_total";
constexpr const char* kStoreDuration = "udon_mcp_store_operation_duration_seconds";
constexpr const char* kSpans = "udon_mcp_spans_total";

std::string Outcome(const gate::GateResult& result) { return result.ok() ? "ok" : result.error->code; }

void DeclareFamilies(Metrics& metrics) {
  metrics.Declare(kCalls, MetricKind::kCounter, "Gated tools/call requests by offered tool and outcome (ok or the contract code).");
  metrics.Declare(kCallDuration, MetricKind::kHistogram, "Time from a call's arrival to the gate's verdict, dispatch included.",
                  DurationBuckets());
  metrics.Declare(kInFlight, MetricKind::kGauge, "Gated calls running now (each holds one upstream connection while it runs).");
  metrics.Declare(kRefusals, MetricKind::kCounter, "Calls that did not succeed, by contract code (refusals, failures, indeterminate outcomes).");
  metrics.Declare(kStepDuration, MetricKind::kHistogram, "Duration of each gate step (digest, static, connect, list, compare, arguments, recheck, dispatch).",
                  DurationBuckets());
  metrics.Declare(kConnections, MetricKind::kCounter, "Upstream connections opened (not reused from the pool), by server and transport.");
  metrics.Declare(kProcesses, MetricKind::kCounter, "Upstream server processes started (stdio servers), by server.");
  metrics.Declare(kStoreOperations, MetricKind::kCounter, "State store operations (one round trip each on PostgreSQL), by operation and outcome.");
  metrics.Declare(kStoreDuration, MetricKind::kHistogram, "Duration of state store operations, by operation.", DurationBuckets());
  metrics.Declare(kSpans, MetricKind::kCounter, "Spans handed to the OTLP exporter, by fate (exported, dropped: queue full, failed: not accepted).");
}

// The store's operations, counted and timed; verdicts and errors pass through unchanged.
class ObservedStore : public gate::StateStore {
 public:
  ObservedStore(std::shared_ptr<gate::StateStore> inner, Metrics& metrics) : inner_(std::move(inner)), metrics_(metrics) {}
  Result<bool> IsInvalidated(std::string_view manifest_sha256, std::string_view server, std::int64_t captured_at) override {
    const auto start = std::chrono::steady_clock::now();
    auto result = inner_->IsInvalidated(manifest_sha256, server, captured_at);
    Note("is_invalidated", start, result.ok() ? "ok" : result.error().code);
    return result;
  }
  Status Record(std::string_view manifest_sha256, std::string_view server, std::string_view reason,
                std::int64_t at) override {
    const auto start = std::chrono::steady_clock::now();
    Status status = inner_->Record(manifest_sha256, server, reason, at);
    Note("record", start, status.ok() ? "ok" : status.error().code);
    return status;
  }
  Result<std::unique_ptr<gate::StateLock>> AcquireSerializeLock(const std::string& scope,
                                                                std::chrono::milliseconds timeout) override {
    const auto start = std::chrono::steady_clock::now();
    auto lock = inner_->AcquireSerializeLock(scope, timeout);
    Note("acquire_lock", start, lock.ok() ? "ok" : lock.error().code);
    return lock;
  }
  std::optional<std::string> WeakenedTls() const override { return inner_->WeakenedTls(); }
  void Warm() override { inner_->Warm(); }
  // Readiness and the replicas' invalidation watch are the inner store's: an observer that
  // dropped them would leave /readyz green on a dead store and replicas deaf to NOTIFY.
  Status CheckReachable() override { return inner_->CheckReachable(); }
  void WatchInvalidations(InvalidationHeard heard) override { inner_->WatchInvalidations(std::move(heard)); }

 private:
  void Note(const char* operation, std::chrono::steady_clock::time_point start, const std::string& outcome) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    metrics_.Add(kStoreOperations, {{"operation", operation}, {"outcome", outcome}});
    metrics_.Observe(kStoreDuration, {{"operation", operation}}, took.count());
  }

  std::shared_ptr<gate::StateStore> inner_;
  Metrics& metrics_;
};

}  // namespace

std::string CallTrace::upstream_traceparent() const {
  return FormatTraceParent({trace_id, dispatch_span_id, sampled});
}

Telemetry::Telemetry(const OtlpConfig& otlp) {
  DeclareFamilies(metrics_);
  if (!otlp.endpoint.empty()) exporter_ = std::make_unique<OtlpExporter>(otlp);
  metrics_.AddSampler([this](Metrics& metrics) {
    metrics.Set(kInFlight, {}, static_cast<double>(in_flight_.load()));
    if (exporter_ == nullptr) return;
    const ExportCounts counts = exporter_->counts();
    metrics.Set(kSpans, {{"fate", "exported"}}, static_cast<double>(counts.exported));
    metrics.Set(kSpans, {{"fate", "dropped"}}, static_cast<double>(counts.dropped));
    metrics.Set(kSpans, {{"fate", "failed"}}, static_cast<double>(counts.failed));
  });
}

Telemetry::~Telemetry() = default;

std::shared_ptr<gate::StateStore> Telemetry::Observe(std::shared_ptr<gate::StateStore> store) {
  return std::make_shared<ObservedStore>(std::move(store), metrics_);
}

CallTrace Telemetry::Begin(CallOrigin origin) {
  ++in_flight_;
  CallTrace trace;
  trace.start = std::chrono::system_clock::now();
  std::optional<TraceParent> parent = ParseTraceParent(origin.traceparent);
  if (parent) {
    trace.trace_id = parent->trace_id;
    trace.parent_span_id = parent->span_id;
    trace.sampled = parent->sampled;
    if (IsPassableTraceState(origin.tracestate)) trace.trace_state = origin.tracestate;
  }
  // Drawn only where read, in one draw: the upstream's traceparent names the trace and the
  // dispatch span; the SERVER span's id only an export reads.
  const bool exported = exporter_ != nullptr && trace.sampled;
  std::vector<std::string> ids = parent ? (exported ? NewIds({8, 8}) : NewIds({8}))
                                        : (exported ? NewIds({8, 8, 16}) : NewIds({8, 16}));
  trace.dispatch_span_id = std::move(ids[0]);
  if (exported) trace.span_id = std::move(ids[1]);
  if (!parent) trace.trace_id = std::move(ids.back());
  trace.origin = std::move(origin);
  return trace;
}

void Telemetry::End(const CallTrace& trace, const CalledTool& tool, const gate::GateResult& result) {
  --in_flight_;
  CountCall(tool, result);
  if (exporter_ != nullptr && trace.sampled) ExportSpans(trace, tool, result);
}

void Telemetry::CountCall(const CalledTool& tool, const gate::GateResult& result) {
  const std::string outcome = Outcome(result);
  metrics_.Add(kCalls, {{"tool", tool.offered}, {"outcome", outcome}});
  if (!result.ok()) metrics_.Add(kRefusals, {{"code", outcome}});
  double total = 0;
  for (const gate::StepRecord& step : result.steps) {
    metrics_.Observe(kStepDuration, {{"step", step.step}}, step.milliseconds / 1000);
    total += step.milliseconds / 1000;
  }
  metrics_.Observe(kCallDuration, {{"tool", tool.offered}}, total);
  if (result.evidence.connection == std::optional<std::string>("fresh")) {
    metrics_.Add(kConnections, {{"server", tool.server}, {"transport", tool.upstream_transport}});
    if (tool.upstream_transport == "stdio") metrics_.Add(kProcesses, {{"server", tool.server}});
  }
}

}  // namespace udon::telemetry
