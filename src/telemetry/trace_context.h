// W3C Trace Context (traceparent, tracestate): read from a request (params._meta, or the
// HTTP headers of the same names) and written for the upstream call in the same places.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace udon::telemetry {

struct TraceParent {
  std::string trace_id;  // 32 lowercase hex digits, not all zero
  std::string span_id;   // 16 lowercase hex digits, not all zero (the caller's span)
  bool sampled = true;
};

// Version 00's form "00-<trace-id>-<parent-id>-<flags>"; a later version's first four
// fields (its own may follow after a dash). nullopt for anything else: a fresh trace begins.
std::optional<TraceParent> ParseTraceParent(std::string_view text);
std::string FormatTraceParent(const TraceParent& parent);
// tracestate is passed on unread when it is printable ASCII of at most 512 characters
// (the limit W3C lets a vendor truncate to); else dropped.
bool IsPassableTraceState(std::string_view text);

// Fresh ids from the system's CSPRNG (base/random.h); all-zero ids are never returned.
std::string NewTraceId();
std::string NewSpanId();
// Fresh ids of these sizes in bytes (16: a trace id, 8: a span id), from one draw.
std::vector<std::string> NewIds(std::initializer_list<std::size_t> sizes);

}  // namespace udon::telemetry
