// Spans and their export over OTLP/HTTP with the JSON encoding (no protobuf library): a
// bounded queue that a background thread sends in batches. Enqueue never blocks a call and
// never fails one: a full queue drops the span and counts it, a failed send counts too.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "base/result.h"

namespace udon::telemetry {

using AttributeValue = std::variant<std::string, std::int64_t, bool>;

struct Span {
  enum class Kind { kInternal = 1, kServer = 2, kClient = 3 };
  std::string trace_id;
  std::string span_id;
  std::string parent_span_id;  // empty: a root span
  std::string trace_state;
  std::string name;
  Kind kind = Kind::kInternal;
  std::uint64_t start_unix_nanos = 0;
  std::uint64_t end_unix_nanos = 0;
  std::vector<std::pair<std::string, AttributeValue>> attributes;
  bool error = false;  // status ERROR (else UNSET)
};

struct OtlpConfig {
  std::string endpoint;  // the traces URL (.../v1/traces); empty: traces off
  std::vector<std::pair<std::string, std::string>> headers;  // may hold credentials: never logged
  long timeout_ms = 10000;
  std::string service_name = "udon-mcp";
};

// The configuration from --otlp-endpoint (a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT:
// /v1/traces is appended) and OpenTelemetry's standard variables: OTEL_SDK_DISABLED,
// OTEL_TRACES_EXPORTER (otlp or none), OTEL_EXPORTER_OTLP_{TRACES_,}ENDPOINT,
// _HEADERS, _TIMEOUT, _PROTOCOL (http/json only), OTEL_SERVICE_NAME. `getenv` is the
// environment's reader (a seam for tests).
// Errors: usage.invalid (a protocol other than http/json, an endpoint that is not an http(s)
// URL, a malformed timeout).
Result<OtlpConfig> OtlpConfigFrom(const std::string& flag_endpoint,
                                  const std::function<const char*(const char*)>& getenv);

// One ExportTraceServiceRequest in OTLP's JSON encoding (ids as hex, 64-bit integers as
// decimal strings, enums as numbers).
std::string OtlpJson(const std::vector<Span>& spans, const std::string& service_name);

struct ExportCounts {
  std::uint64_t exported = 0;
  std::uint64_t dropped = 0;  // the queue was full
  std::uint64_t failed = 0;   // spans in batches the endpoint did not accept
};

class OtlpExporter {
 public:
  static constexpr std::size_t kMaxQueued = 2048;
  static constexpr std::size_t kMaxBatch = 512;

  explicit OtlpExporter(OtlpConfig config);
  // Sends what is queued (one attempt, bounded by the timeout), then stops.
  ~OtlpExporter();
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  void Enqueue(std::vector<Span> spans);
  ExportCounts counts() const;

 private:
  void Run();
  bool Send(const std::vector<Span>& batch);

  OtlpConfig config_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Span> queue_;
  bool stopping_ = false;
  ExportCounts counts_;
  std::thread worker_;
};

}  // namespace udon::telemetry
