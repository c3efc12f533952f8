// Private to the gate's sources: the state of one gated call as it passes the steps, and
// the small helpers every step group uses. gate.h declares these types; gate.cc holds the
// step table and Gate::Call, and one gate_*.cc file holds each step group.
#ifndef UDON_GATE_INTERNAL_RUN_H_
#define UDON_GATE_INTERNAL_RUN_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gate/gate.h"
#include "json/json.h"
#include "base/result.h"
#include "manifest/binding.h"
#include "manifest/manifest.h"
#include "manifest/review.h"
#include "schema/schema.h"

namespace udon::gate {
namespace internal {

using Clock = std::chrono::steady_clock;

inline double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

inline Error Refuse(const char* code, const char* message, std::string pointer = {}) {
  return MakeError(code, message, std::move(pointer));
}

// Where a gate's warnings go: GateEnvironment::warn, else stderr.
void WarnTo(const std::function<void(const std::string&)>& warn, const std::string& text);

// Every invalidation the gate learns of: noted in memory first, so every thread of this
// process refuses at once, then written durably. Errors: state.write_failed.
Status RecordEverywhere(InvalidationMemory& memory, StateStore& store, std::string_view manifest_sha256,
                        std::string_view server, std::string_view reason, std::int64_t at);

}  // namespace internal

struct Gate::CompiledTool {
  schema::CompiledSchema input;
  std::optional<schema::CompiledSchema> output;
  std::string canonical;  // the reviewed Tool's RFC 8785 bytes, what the live one must equal
  std::string canonical_sha256;
  // The live Tool's bytes as a listing last delivered them when they canonicalized to
  // `canonical`: a server sends the same bytes call after call, and the same bytes need not
  // be parsed again to be known equal (SelectListedTool's `known`). Shared by every call.
  class LiveBytes {
   public:
    LiveBytes() = default;
    LiveBytes(LiveBytes&& other) noexcept : bytes_(std::move(other.bytes_)) {}
    std::string Get() const {
      std::lock_guard<std::mutex> guard(mutex_);
      return bytes_;
    }
    void Set(std::string_view bytes) const {
      std::lock_guard<std::mutex> guard(mutex_);
      if (bytes_ != bytes) bytes_ = bytes;
    }

   private:
    mutable std::mutex mutex_;
    mutable std::string bytes_;
  };
  LiveBytes live_bytes_known_equal;
};

// Step 2's selection of the bound tool and its review, and the recorded serverInfo's
// digest step 3 compares: they depend only on the manifest (immutable), the server, the
// tool and the gate's policy, so a manifest object has them computed once.
struct Gate::BoundFacts {
  manifest::BoundTool bound;  // holds its manifest: location points into it
  std::string server_info_sha256;
};

// What the manifest recorded for the bound server: a connection must speak exactly this.
struct Gate::RecordedServer {
  std::string protocol_version;
  const json::Value* server_info = nullptr;
  std::string server_info_sha256;
};

struct Gate::Run {
  manifest::Binding binding;
  const json::Value* arguments = nullptr;
  CallOptions options;
  GateResult* result = nullptr;
  Reach reach = Reach::kCall;

  std::shared_ptr<const manifest::Manifest> manifest;
  std::int64_t captured_at = 0;  // the manifest's capturedAt, Unix seconds
  manifest::ToolLocation location;
  manifest::Review review;
  std::optional<schema::CompiledSchema> input_schema;
  std::optional<schema::CompiledSchema> output_schema;

  std::shared_ptr<PooledConnection> connection;
  // Coalesced verification: the lane whose shared connection this run uses (null: its own
  // connection), and the verification it joined.
  std::shared_ptr<Lane> lane;
  std::shared_ptr<Verification> verification;
  bool reused = false;
  std::string reuse_refused;  // why a pooled connection was not reused
  bool replaced = false;      // a dead reused connection was replaced by a fresh one
  // The entry as the runtime configuration gave it (with the login's token), and whether
  // that login was refreshed once after the server refused its token (HTTP 401).
  std::optional<mcp::ServerConfig> server_config;
  bool reauthorized = false;
  mcp::NotificationStream connection_stream = mcp::NotificationStream::kNone;
  bool barrier = false;       // a ping round trip ordered the events before dispatch
  std::uint64_t checked_through = 0;  // events up to here were examined before binding
  std::uint64_t bound_sequence = 0;
  std::unique_ptr<StateLock> lock;
  std::shared_ptr<const CompiledTool> compiled;
  std::shared_ptr<const BoundFacts> bound_facts;  // set by step 2
  // The live Tool as listed: its canonical bytes, and its bytes as sent for a drift report.
  std::string live_tool_canonical;
  std::string live_tool_bytes;

  // Evidence facts.
  int listings = 0;
  int disturbed_listings = 0;
  int list_changed_before_binding = 0;
  std::string invalidation;  // reason, when recorded
  std::string invalidation_write_failure;  // the state code, when recording it failed
  json::Value drift = json::Value::array();
  json::Value server_info_drift = json::Value::array();
  std::vector<std::string> server_requests;
  std::string live_tool_sha256;
  std::string arguments_digest;  // keyed (EvidenceKey)
  std::string result_digest;     // keyed (EvidenceKey)
  json::Value content_types;     // the result's block types by count; null until a result
  std::optional<bool> has_structured_content;
  std::string subscription;  // modern era: the tool-list subscription's state
  std::string tool_error_text;  // --diagnostics only: the failed call's own text
  double call_milliseconds = 0;
};

// Errors: input.schema_invalid, input.unsupported_dialect (pointers into the Tool). A schema

}  // namespace udon::gate

#endif  // UDON_GATE_INTERNAL_RUN_H_
