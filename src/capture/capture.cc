#include "capture/capture.h"

#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "catalog/catalog.h"
#include "mcp/client/www_authenticate.h"

namespace udon::capture {

using manifest::Manifest;
using manifest::Policy;
using manifest::Seconds;

namespace {

struct CapturedServer {
  std::string protocol_version;
  json::Value server_info;
  std::vector<json::Value> pages;
};

// The shared stable listing (catalog/catalog.h): a server request during it refuses the
// capture, since the gate could never pass a catalog read beside one.
Result<std::vector<json::Value>> StableListing(mcp::Client& client, const Policy& policy,
                                               const std::string& key, const CaptureOptions& options) {
  catalog::ListingRules rules = catalog::ListingRulesFor(policy, /*for_gate=*/false);
  if (options.on_progress) {
    // Page by page on a long catalog, at most a few lines a second.
    auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    rules.on_page = [&options, &key, last](std::size_t pages, std::size_t tools) {
      const auto now = std::chrono::steady_clock::now();
      if (now - *last < std::chrono::milliseconds(250)) return;
      *last = now;
      options.on_progress("server " + key + ": listing, " + std::to_string(pages) + " page(s), " +
                          std::to_string(tools) + " tool(s) so far");
    };
  }
  catalog::ListingFacts facts;
  auto listing = catalog::ListStable(client, rules, facts);
  if (!listing.ok()) {
    Error error = std::move(listing).error();
    error.details["server"] = key;
    return error;
  }
  std::vector<json::Value> pages = std::move(listing->pages);
  if (options.on_progress) {
    std::size_t tools = 0;
    for (const json::Value& page : pages) {
      if (page.contains("tools") && page["tools"].is_array()) tools += page["tools"].size();
    }
    options.on_progress("server " + key + ": " + std::to_string(pages.size()) + " page(s), " +
                        std::to_string(tools) + " tool(s)");
  }
  return pages;
}

void Diagnose(const CaptureOptions& options, const std::string& key, const Error& error, mcp::Client* client) {
  if (!options.on_diagnostics) return;
  auto diagnostics = mcp::ConnectionDiagnostics(error, client);
  if (!diagnostics.empty()) options.on_diagnostics(key, diagnostics);
}

Result<std::unique_ptr<mcp::Client>> ConnectServer(const mcp::ServerConfig& server,
                                                   const mcp::ClientOptions& client_options,
                                                   const std::string& key, const CaptureOptions& options) {
  auto client = options.connect ? options.connect(server, client_options)
                                : mcp::Client::Connect(server, client_options);
  if (!client.ok()) {
    // The client's server.connect_failed already says why (a missing command, its OS error).
    const std::string code = client.error().code;
    Error error = code == "server.connect_failed"
                      ? std::move(client).error()
                      : MakeError("server.connect_failed", "the server could not be started or reached");
    if (!error.details.contains("cause")) error.details["cause"] = code;
    error.details["server"] = key;
    Diagnose(options, key, error, nullptr);
    return error;
  }
  return std::move(client).value();
}

// A strict legacy server may answer the server/discover probe by exiting (stdio) or by
// dropping the connection (HTTP): the probe then fails as a lost connection, which tells
// nothing about the modern era. A hostile frame (malformed, oversized) is not that. A
// server that exited before the probe reached it fails the write instead: the same, and
// the restart's initialize then names the method of the era it falls back to.
bool ProbeHungUp(const Error& error) {
  if (error.code != "server.connect_failed") return false;
  const std::string cause = error.details.value("cause", "");
  if (cause == "mcp.send_failed") return !error.details.contains("curlCode");  // stdio: its stdin closed
  if (cause != "mcp.disconnected") return false;
  const std::string transport = error.details.value("transportCause", "");
  return transport != "mcp.malformed_message" && transport != "mcp.message_too_large";
}

struct OpenedServer {
  std::unique_ptr<mcp::Client> client;
  mcp::InitializeResult init;
  std::string negotiation;  // CaptureOptions::on_negotiated
};

// Told a version: exactly that one, by its era's mechanism. Otherwise the newest both
// sides speak (server/discover first, initialize for a legacy server, on a new connection
// when the server hung up on the probe).
Result<OpenedServer> OpenServer(const mcp::ServerConfig& server, const mcp::ClientOptions& client_options,
                                const std::string& key, const CaptureOptions& options) {
  OpenedServer opened;
  UDON_ASSIGN_OR_RETURN(opened.client, ConnectServer(server, client_options, key, options));
  Result<mcp::InitializeResult> init = MakeError("server.connect_failed", "not opened");
  if (options.protocol_version) {
    init = opened.client->Open(*options.protocol_version);
    opened.negotiation = "exact";
  } else {
    init = opened.client->Negotiate();
    if (!init.ok() && ProbeHungUp(init.error())) {
      opened.client->Close();
      UDON_ASSIGN_OR_RETURN(opened.client, ConnectServer(server, client_options, key, options));
      init = opened.client->Initialize(mcp::kLatestLegacyProtocolVersion);
      opened.negotiation = "initialize_after_restart";
    } else if (init.ok()) {
      opened.negotiation = init->era == mcp::Era::kModern ? "discover" : "initialize_fallback";
    }
  }
  if (!init.ok()) {
    // The client's contract codes carry the engine's cause (and transportCause) already.
    const std::string code = init.error().code;
    Error error = code == "server.protocol_version_mismatch" || code == "server.connect_failed"
                      ? std::move(init).error()
                      : MakeError("server.connect_failed", "the server could not be opened");
    if (!error.details.contains("cause")) error.details["cause"] = code;
    error.details["server"] = key;
    mcp::AddServerExit(error, *opened.client);
    Diagnose(options, key, error, opened.client.get());
    opened.client->Close();
    return error;
  }
  opened.init = std::move(init).value();
  if (options.protocol_version && opened.init.protocol_version != *options.protocol_version) {
    opened.client->Close();
    Error error = MakeError("server.protocol_version_mismatch",
                            "the server negotiated another protocol version than the one asked for");
    error.details = {{"server", key}, {"requested", *options.protocol_version}, {"negotiated", opened.init.protocol_version}};
    return error;
  }
  return opened;
}

// Notifications by method among the events in (after, through]: methods only, never params.
json::Value NotificationCounts(mcp::Client& client, std::uint64_t after, std::uint64_t through) {
  json::Value counts = json::Value::object();
  for (const mcp::Event& event : client.connection().EventsSince(after)) {
    if (event.sequence > through) break;
    if (event.kind != mcp::EventKind::kNotification) continue;
    counts[event.method] = counts.value(event.method, 0) + 1;
  }
  return counts;
}

// --observe (CaptureOptions::observe_idle): the idle window after the listing, closed by a
// ping, then a second stable listing; the session report of capture.h.
Result<json::Value> ObserveSession(mcp::Client& client, const OpenedServer& opened, const Policy& policy,
                                   const std::string& key, const CaptureOptions& options,
                                   const std::vector<json::Value>& pages, std::uint64_t opened_through,
                                   std::uint64_t listed_through) {
  std::this_thread::sleep_for(*options.observe_idle);
  const auto timeout = std::chrono::seconds(policy.call_timeout_seconds);
  if (Status answered = client.Ping(timeout); !answered.ok()) {
    Error error = std::move(answered).error();
    error.details["server"] = key;
    return error;
  }
  const std::uint64_t idle_through = client.connection().LastSequence();
  UDON_ASSIGN_OR_RETURN(std::vector<json::Value> relisted, StableListing(client, policy, key, CaptureOptions{}));
  const std::uint64_t relisted_through = client.connection().LastSequence();
  return json::Value{{"capabilities", opened.init.capabilities},
                     {"notifications",
                      {{"opening", NotificationCounts(client, 0, opened_through)},
                       {"listing", NotificationCounts(client, opened_through, listed_through)},
                       {"idle", NotificationCounts(client, listed_through, idle_through)},
                       {"relisting", NotificationCounts(client, idle_through, relisted_through)}}},
                     {"relistIdentical", relisted == pages}};
}

Result<CapturedServer> CaptureEntry(const mcp::ServerConfig& server, const Policy& policy, const std::string& key,
                                    const CaptureOptions& options) {
  const mcp::ClientOptions client_options =
      catalog::ClientOptionsFor(policy, std::chrono::seconds(policy.call_timeout_seconds));
  if (options.on_progress) options.on_progress("server " + key + ": opening");
  UDON_ASSIGN_OR_RETURN(OpenedServer opened, OpenServer(server, client_options, key, options));
  mcp::Client& c = *opened.client;
  // Modern era: list changes arrive only on a subscription; it must stand before listing.
  if (Status subscribed = c.Subscribe(); !subscribed.ok()) {
    Error error = MakeError("server.connect_failed", "the tool-list subscription could not be established");
    error.details = {{"server", key}, {"cause", subscribed.error().code}};
    Diagnose(options, key, error, &c);
    c.Close();
    return error;
  }
  const std::uint64_t opened_through = c.connection().LastSequence();
  auto pages = StableListing(c, policy, key, options);
  if (pages.ok() && options.observe_idle) {
    auto session = ObserveSession(c, opened, policy, key, options, *pages, opened_through,
                                  c.connection().LastSequence());
    if (!session.ok()) pages = std::move(session).error();
    else if (options.on_session) options.on_session(key, std::move(session).value());
  }
  if (!pages.ok()) Diagnose(options, key, pages.error(), &c);
  c.Close();
  if (!pages.ok()) return std::move(pages).error();
  if (options.on_negotiated) options.on_negotiated(key, opened.negotiation, opened.init.era);
  return CapturedServer{opened.init.protocol_version, opened.init.server_info, std::move(pages).value()};
}

// Contract 7.23: a 401 refreshes the stored login once and the capture starts over (it only
// lists); a second one, a 403, or a 401 no login answers is its auth.* refusal.
Result<CapturedServer> CaptureServer(const mcp::RuntimeConfig& config, const Policy& policy,
                                     const std::string& key, const CaptureOptions& options) {
  UDON_ASSIGN_OR_RETURN(mcp::ServerConfig server, config.Find(key));
  Result<CapturedServer> captured = CaptureEntry(server, policy, key, options);
  if (captured.ok() || !mcp::RefusedCredentialStatus(captured.error())) return captured;
  if (mcp::RefusedCredentialStatus(captured.error()) == 401 && config.reauthorize_http) {
    UDON_ASSIGN_OR_RETURN(bool refreshed, config.reauthorize_http(server));
    if (refreshed) {
      UDON_ASSIGN_OR_RETURN(server, config.Find(key));
      captured = CaptureEntry(server, policy, key, options);
      if (captured.ok() || !mcp::RefusedCredentialStatus(captured.error())) return captured;
    }
  }
  return mcp::RefusedCredentialError(captured.error(), key);
}

}  // namespace

Result<Manifest> Capture(const mcp::RuntimeConfig& config, const Policy& policy,
                         const CaptureOptions& options, Seconds now) {
  if (options.servers.empty()) return MakeError("usage.invalid", "name at least one --server");
  if (std::set<std::string>(options.servers.begin(), options.servers.end()).size() != options.servers.size()) {
    return MakeError("usage.invalid", "a server is named twice");
  }
  if (options.expires_in_days < 1) return MakeError("usage.invalid", "--expires-in must be at least 1 day");
  if (options.expires_in_days > policy.max_review_window_days) {
    Error error = MakeError("manifest.window_exceeds_policy",
                            "the requested expiry exceeds the policy's maxReviewWindowDays");
    error.details["maxReviewWindowDays"] = policy.max_review_window_days;
    return error;
  }
  json::Value document = {{"profile", std::string(manifest::kManifestProfile)},
                          {"capturedAt", manifest::FormatInstant(now)},
                          {"expiresAt",
                           manifest::FormatInstant(now + options.expires_in_days * manifest::kSecondsPerDay)},
                          {"servers", json::Value::object()}};
  for (const std::string& key : options.servers) {
    UDON_ASSIGN_OR_RETURN(CapturedServer captured, CaptureServer(config, policy, key, options));
    if (document.contains("protocolVersion") && document["protocolVersion"] != captured.protocol_version) {
      Error error = MakeError("server.protocol_version_mismatch",
                              "servers in one manifest must negotiate the same protocol version");
      error.details = {{"server", key}, {"negotiated", captured.protocol_version},
                       {"manifest", document["protocolVersion"]}};
      return error;
    }
    document["protocolVersion"] = captured.protocol_version;
    document["servers"][key] = {{"serverInfo", std::move(captured.server_info)},
                                {"toolPages", std::move(captured.pages)},
                                {"reviews", json::Value::object()}};
  }
  return Manifest::FromValue(std::move(document));
}

}  // namespace udon::capture
