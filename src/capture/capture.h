// Capture (the proposal's "Capture and hashing", rules 1-3): one connection per server,
// the negotiated protocolVersion, the complete serverInfo, and every tools/list page
// result intact and in order. Nothing is written unless every server was captured whole.
// Its own component because it is network code: the manifest layer it fills stays static
// (validate and analyze link no client).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "manifest/manifest.h"
#include "manifest/policy.h"
#include "mcp/client/client.h"
#include "mcp/client/config.h"

namespace udon::capture {

struct CaptureOptions {
  std::vector<std::string> servers;        // keys in the runtime configuration
  int expires_in_days = 7;
  // Open at exactly this version; default: negotiate the newest both sides speak.
  std::optional<std::string> protocol_version;
  // Progress for people (a terminal): one short line per server opened and listed
  // ("server X: 3 page(s), 120 tool(s)"); server keys only, never server data.
  std::function<void(const std::string& line)> on_progress;
  // --diagnostics: why a server failed (transport cause, its stderr tail). Unset: nothing
  // of that is kept. Never part of the manifest, errors or evidence.
  std::function<void(const std::string& server, const std::vector<mcp::Diagnostic>&)> on_diagnostics;
  // Called once per server captured whole, with how it was opened: "exact" (the version
  // was given), "discover" (the server/discover probe found a modern server),
  // "initialize_fallback" (the probe was refused or unanswered: a legacy server, on the
  // same connection), "initialize_after_restart" (the server exited or dropped the
  // connection on the probe; a new connection opened with initialize).
  std::function<void(const std::string& server, const std::string& negotiation, mcp::Era era)> on_negotiated;
  // --observe: after the listing, keep the connection idle this long, end the idle with a
  // ping (on stdio every notice sent before its answer is then in hand), and list again;
  // on_session hears of each server's session (SessionReport). Unset: neither is done.
  std::optional<std::chrono::milliseconds> observe_idle;
  std::function<void(const std::string& server, json::Value session)> on_session;
  // How a connection is made (tests substitute); default mcp::Client::Connect.
  std::function<Result<std::unique_ptr<mcp::Client>>(const mcp::ServerConfig&, const mcp::ClientOptions&)>
      connect;
};

// A session observed with observe_idle, for the study of list_changed (contract 7.2):
//   {"capabilities": the opening's capabilities exactly as sent,
//    "notifications": {"opening" | "listing" | "idle" | "relisting": {method: count}},
//    "relistIdentical": whether the second listing's pages equal the manifest's}
// Phases: the opening (up to the listing), the first stable listing (up to when it was
// accepted: a list_changed there made it list again), the idle window up to its closing
// ping's answer, the second listing. Methods only, never params.
//
// Errors: config.server_unknown, server.connect_failed, server.protocol_version_mismatch
// (servers negotiated different versions), catalog.pagination_invalid, catalog.unstable
// (list_changed disturbed 3 listings in a row), manifest.window_exceeds_policy (expiry
// beyond the policy maximum), server.request_refused (the server sent sampling, elicitation
// or roots while it was captured: no manifest), usage.invalid.
Result<manifest::Manifest> Capture(const mcp::RuntimeConfig& config, const manifest::Policy& policy,
                                   const CaptureOptions& options, manifest::Seconds now);

}  // namespace udon::capture
