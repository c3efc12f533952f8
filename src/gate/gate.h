// The gate: the proposal's "Freshness and drift" checks before every tools/call, and its
// "Invocation and output semantics" after. Steps, in order, stopping at the first failure:
//   1 digest     resolve and hash the manifest; compare with the pin (no connection yet)
//   2 static     expiry, window, completeness, durable invalidation, review (Stage 1 +
//                policy), taskSupport, outputs need an outputSchema, schema dialects, and
//                the arguments against the reviewed inputSchema (no server started yet)
//   3 connect    open at the recorded version (initialize, or for 2026-07-28 server/discover
//                plus a subscriptions/listen for tool-list changes); exact version and
//                serverInfo (and, modern, the serverInfo in every later result's _meta)
//   4 list       exhaust tools/list (again if list_changed disturbed it); name once
//   5 compare    canonical equality of the live and the reviewed Tool object
//   6 arguments  the reviewed inputSchema verdict stands (step 5 proved the live Tool
//                equal); stdio: a ping barrier; list_changed since step 5?
//   7 recheck    (calls only) an invalidation recorded since step 2, in this process
//                (InvalidationMemory) or in the store, or the embedder's withdrawal
// then dispatch: a last look at the connection's events, tools/call, with list_changed
// during the call making the outcome indeterminate. Coalesced (serve, gate_coalesce.cc):
// concurrent calls of one server share steps 3 and 4 (one re-list, and one ping, sent
// after all of them arrived); every other step stays each call's own.
// A reused pooled connection found dead before dispatch (its HTTP session gone, its
// process exited) is replaced once by a fresh one that runs steps 3 to 7 again.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gate/connection_pool.h"
#include "gate/evidence.h"
#include "gate/evidence_key.h"
#include "gate/evidence_record.h"
#include "gate/state_store.h"
#include "json/json.h"
#include "base/result.h"
#include "manifest/binding.h"
#include "manifest/instant.h"
#include "manifest/manifest.h"
#include "manifest/policy.h"
#include "mcp/client/client.h"
#include "mcp/client/config.h"

namespace udon::gate {

struct GateEnvironment {
  const mcp::RuntimeConfig* config = nullptr;
  manifest::Policy policy;
  std::string state_dir;
  // Invalidations and serialize locks (--state); null: the file store in state_dir. The
  // evidence key stays in state_dir either way.
  std::shared_ptr<StateStore> state;
  EvidenceWriter* evidence = nullptr;  // optional
  std::string command = "call";        // recorded in evidence
  std::function<manifest::Seconds()> clock = manifest::NowSeconds;
  // The run's manifest cache, shared with the static checks. The gate still reads the
  // bytes before every call; only bytes identical to ones already parsed and hashed (every
  // byte compared) reuse that parse and its canonical digest.
  // Null: the gate's own.
  std::shared_ptr<manifest::ManifestCache> manifests;
  // Contract 6: reuse a server's connection across calls in this process while it stays
  // eligible. Off: a fresh connection per call.
  bool reuse_connections = false;
  // With reuse: how many idle connections a server may keep (concurrent callers, such as
  // the gateway's clients, each need one).
  std::size_t max_idle_per_server = 1;
  // With reuse (contract 4, coalesced verification): concurrent calls of one server share
  // its connection, and one re-list (on stdio with one ping barrier) sent after all of them
  // arrived verifies them all. Each keeps its own static checks, comparison and last check
  // before dispatch. Off: every call has a connection and a re-list of its own.
  bool coalesce_verification = false;
  // With reuse: an idle connection beyond the newest of its server is closed (its process
  // and reader thread end) once idle longer than this; 0: kept until the gate ends.
  std::chrono::milliseconds idle_close_after{0};
  // Test seam: the steady clock the idle interval is measured on; default: steady_clock.
  IdleClock idle_clock;
  // Hears of every durable invalidation this gate records (list_changed after a binding,
  // during a call, or on an idle pooled connection the moment it arrives), with the
  // server and the reason; from any thread, after the record was written (or failed to be).
  std::function<void(const std::string& server, const std::string& reason)> on_invalidated;
  // The invalidations this process recorded, seen by every thread at once (contract
  // 7.5). Gates given the same one share it; null: the gate's own.
  std::shared_ptr<InvalidationMemory> invalidations;
  // The embedder's own withdrawal of a tool, asked in the recheck right before dispatch
  // (the gateway: its withdrawn set). Returns the refusal, or OK to go on; unset: none.
  std::function<Status(const std::string& server, const std::string& tool)> still_offered;
  // 0: policy.callTimeoutSeconds.
  std::chrono::milliseconds call_timeout{0};
  // How a connection is made; default: mcp::Client::Connect with the server's config.
  // Tests substitute in-process transports.
  std::function<Result<std::unique_ptr<mcp::Client>>(const mcp::ServerConfig&,
                                                     const mcp::ClientOptions&)>
      connect;
  // Test seam: runs after each successful step, so a test can place an event exactly
  // between two steps (e.g. list_changed after "compare", before dispatch).
  std::function<void(const std::string& step, mcp::Connection& connection)> after_step;
  // Test seam: runs when a coalesced call reaches its shared listing (step 4), under the
  // lane's lock, before it joins a group: it may first wait for a group of its own
  // connection, and it joins the next group, never one whose re-list was already sent.
  // It must not block or call the gate.
  std::function<void()> on_verification_joined;
  // Test seam: runs when a coalesced call starts to wait for the server's shared
  // connection that another call is opening, under the lane's lock (the same rules).
  std::function<void()> on_open_awaited;
  // Test seam: runs when a coalesced call waiting for its verification (to be done, or
  // for every member's comparison) was woken and must wait on, under the lane's lock.
  std::function<void()> on_lane_stray_wakeup;
  // Test seam: runs when the gate compiles a reviewed Tool's schemas (not when it reuses
  // them), with the tool's name.
  std::function<void(const std::string& tool)> on_schema_compile;
  // Where warnings go (a fixed text, never a value); default: stderr.
  std::function<void(const std::string&)> warn;
  // --diagnostics. Set: a failed run collects what explains it (the tool's error text,
  // the server's stderr tail, the transport's cause) into GateResult::diagnostics and hands
  // it here too (probe and run see no GateResult). Unset: nothing of that is kept.
  std::function<void(const std::vector<mcp::Diagnostic>&)> diagnostics;
};

struct CallOptions {
  bool expect_output = false;
  // Argument pointers bound from workflow expressions; each must be covered by a reviewed
  // channel (review.unclassified_channel).
  std::vector<std::string> bound_paths;
  // Relays the server's progress for this call (its notifications/progress params) while
  // the call runs; unset: no progress is asked for.
  mcp::Client::ProgressFn on_progress;
  // Keep the server's CallToolResult in GateResult::forwarded (the gateway hands it on).
  bool keep_result = false;
  // Who asked, for evidence (the gateway's client label; never a secret). Empty: absent.
  std::string client;
  // W3C trace context the upstream's tools/call carries (params._meta, HTTP headers).
  mcp::TraceContext trace;
  // The authenticated caller (serve --auth oauth: the access token's sub), recorded only as
  // an HMAC under the evidence key (caller_hmac_sha256). Empty: absent.
  std::string caller;
};

struct StepRecord {
  std::string step;     // digest, static, connect, list, compare, arguments, recheck, dispatch
  std::string outcome;  // "ok" or the refusal code
  double milliseconds = 0;
  std::chrono::system_clock::time_point started;  // wall clock, for traces (telemetry)
};

struct GateResult {
  std::optional<Error> error;  // nullopt: success (cli/exit_codes.h turns it into an exit status)
  bool dispatched = false;
  json::Value output;  // validated structuredContent when the call exposes one, else null
  std::size_t content_blocks = 0;  // how many content blocks the result had (never shown)
  std::vector<StepRecord> steps;
  EvidenceRecord evidence;  // the value-free record (also appended to the evidence file)
  // Not evidence: stderr-only diagnostics, filled only when GateEnvironment::diagnostics
  // is set. They may carry server text and secrets; never put them in --json or records.
  std::vector<mcp::Diagnostic> diagnostics;
  // Not evidence either: public values a refusal's text shows and its details never carry
  // (server.server_info_mismatch: "serverInfo": [{pointer, change, reviewed?, live?}]).
  json::Value for_people = json::Value::object();
  // CallOptions::keep_result: the server's CallToolResult as it arrived, when one arrived
  // well-formed and no check after it failed except the tool's own isError (null else).
  // Its structuredContent, if any, is the validated one or absent: never unvalidated.
  json::Value forwarded;

  bool ok() const { return !error.has_value(); }
};

class Gate {
 public:
  explicit Gate(GateEnvironment environment);
  ~Gate();
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  // Steps 1 and 2 only (digest, static): what can be known without any server. Evidence
  // is written only for a refusal. Unlike Verify and Call, it takes the manifest as the
  // cache (GateEnvironment::manifests) last read it, reading only a path never read: to
  // check many tools of one manifest, Reread it once and then check each.
  GateResult CheckStatic(const manifest::Binding& binding);
  // Every step live; calls nothing.
  GateResult Verify(const manifest::Binding& binding);
  // Every step, then tools/call.
  GateResult Call(const manifest::Binding& binding, const json::Value& arguments, const CallOptions& options);

 private:
  struct Run;
  struct RecordedServer;
  struct Verification;
  struct Lane;

  enum class Reach { kStatic, kVerify, kCall };
  GateResult Execute(const manifest::Binding& binding, const json::Value* arguments,
                     const CallOptions& options, Reach reach);
  // A kept connection's watch: a list_changed while it sits idle is recorded at once.
  void WatchWhileIdle(const std::string& server, PooledConnection& pooled);
  // Closes idle connections out of the pool, recording a notice any saw after its binding.
  void CloseIdle(std::vector<std::pair<std::string, std::shared_ptr<PooledConnection>>> idle);
  Status StepDigest(Run& run);
  Status StepStatic(Run& run);
  Result<bool> Invalidated(Run& run);
  Status CheckParamHeaders(Run& run);
  Status ValidateArguments(Run& run);
  Status StepConnect(Run& run);
  Status ConnectOwn(Run& run, const RecordedServer& recorded, const mcp::ServerConfig& server);
  // Coalesced verification (gate_coalesce.cc).
  bool Coalesced(const Run& run) const;
  std::shared_ptr<Lane> LaneFor(const std::string& server);
  Status ConnectThroughLane(Run& run, const RecordedServer& recorded, const mcp::ServerConfig& server);
  Status AwaitLaneOpen(const Run& run, Lane& lane, std::unique_lock<std::mutex>& lock);
  Status OpenThroughLane(Run& run, const std::shared_ptr<Lane>& lane, const RecordedServer& recorded,
                         const mcp::ServerConfig& server);
  Status ListShared(Run& run);
  std::shared_ptr<Verification> JoinVerification(Run& run);
  void ListForAll(Run& leader, Verification& verification, std::optional<std::uint64_t> binding_from);
  Status Settle(Run& run, Status compared);
  void BindConnection(Run& run);
  void LeaveLaneOnDeath(Run& run);
  // Whether this run was the shared connection's last user (then it keeps or closes it).
  bool LeaveLane(Run& run, bool& keep);
  Status ReuseFromPool(Run& run, const RecordedServer& recorded);
  Status OpenFresh(Run& run, const mcp::ServerConfig& server);
  Result<mcp::InitializeResult> Handshake(Run& run, const RecordedServer& recorded);
  Status CheckNegotiated(Run& run, const RecordedServer& recorded, const mcp::InitializeResult& init);
  Status SubscribeToToolList(Run& run);
  Status ClosePooled(const std::string& server, PooledConnection& pooled, const char* reason);
  Status StepList(Run& run);
  Status StepCompare(Run& run);
  Status CompareLiveTool(Run& run);
  Status SelectLiveTool(Run& run, const mcp::ToolPages& pages);
  Status StepArguments(Run& run);
  // Stdio's ping barrier. Why not the re-list's own answer, which orders the channel too
  // (issue 41): it does so one round trip earlier, and a notice a server writes right after
  // answering tools/list (one that reloads its tools when listed) would then race the
  // dispatch instead of refusing it. The window a notice can fall into unseen is as long
  // either way (from the last awaited answer to the server reading tools/call); and in a
  // sequential call no other answer arrives between the re-list and the call to stand in.
  Status Barrier(Run& run);
  Status StepRecheck(Run& run);
  // Whether a failed step's reused connection was found dead before dispatch, so the
  // run goes on once more on a fresh connection (the dead one closed, not kept).
  bool ReplaceDeadConnection(Run& run, const Error& error);
  // Whether a step's HTTP 401 (before anything was processed) led to one refresh of the
  // stored login, so the run goes on again from step 3 on a fresh connection; else a
  // refused credential becomes its auth.* refusal in `error` (contract 7.23).
  bool RestartAfterRefusedToken(Run& run, Error& error);
  Status Dispatch(Run& run);
  Status CheckBindingEvents(Run& run, std::uint64_t after, bool during_call);
  void RecordInvalidation(Run& run, const char* reason);
  // A failed invalidation write: said in the run's evidence and on stderr, verdict kept.
  void NoteUnrecorded(Run& run, const Status& recorded);
  std::chrono::milliseconds CallTimeout(const std::string& server) const;
  std::string KeyedDigest(const json::Value& value);
  std::string KeyId();
  void Warn(const std::string& text) const;
  void Release(Run& run, bool keep);
  void CollectDiagnostics(Run& run, GateResult& result);
  EvidenceRecord MakeRecord(const Run& run, const GateResult& result, const std::string& code);
  void Finish(Run& run, GateResult& result);

  GateEnvironment env_;
  // The reviewed Tool's compiled inputSchema and outputSchema, by manifest digest, server
  // and tool: the manifest's digest fixes the Tool's bytes, so a later call of the same
  // pinned tool validates with what an earlier one compiled.
  struct CompiledTool;
  Result<std::shared_ptr<const CompiledTool>> CompiledSchemas(Run& run);
  std::mutex schemas_mutex_;
  std::map<std::string, std::shared_ptr<const CompiledTool>> schemas_;
  // What steps 2 and 3 take from the manifest alone (the bound tool, its validated review,
  // the recorded serverInfo's digest), by manifest digest, server and tool, used only for
  // the very manifest object it came from (gate_static.cc).
  struct BoundFacts;
  Result<std::shared_ptr<const BoundFacts>> BoundFactsFor(const Run& run);
  std::mutex bound_mutex_;
  std::map<std::string, std::shared_ptr<const BoundFacts>> bound_;
  std::mutex key_mutex_;
  bool key_loaded_ = false;
  std::optional<EvidenceKey> key_;
  ConnectionPool pool_;
  std::mutex lanes_mutex_;
  std::map<std::string, std::shared_ptr<Lane>> lanes_;
};

}  // namespace udon::gate
