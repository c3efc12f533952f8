// serve: the gateway. An MCP server over stdio or Streamable HTTP offering the reviewed
// tools of a pinned manifest, each call through the whole gate (src/gateway/gateway.h).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "cli/runtime.h"
#include "cli/serve_telemetry.h"
#include "cli/serve_oauth.h"
#include "cli/serve_settings.h"
#include "cli/serve_token.h"
#include "gateway/gateway.h"
#include "gateway/startup_refusal.h"
#include "mcp/client/client.h"
#include "mcp/server/http_server.h"
#include "mcp/protocol/protocol.h"
#include "mcp/server/stdio_server.h"

namespace udon::cli {
namespace {

constexpr std::size_t kPageSize = 100;  // tools per tools/list page
// Requests in flight per HTTP client (a session, else a peer address; open streams have as
// many again): enough for a host's parallel tool calls, not enough for one client to hold
// every worker.
constexpr std::size_t kMaxInFlightPerClient = 16;

struct ServeOptions {
  std::string manifest;
  std::string sha256;
  std::string pin_file;
  std::vector<std::string> servers;
  std::string transport = "stdio";
  std::string listen = "127.0.0.1:0";
  std::string auth = "token";
  std::string token_file;
  bool no_token = false;
  ServeOAuthOptions oauth;
  std::vector<std::string> allowed_hosts;
  std::string metrics_listen;  // HOST:PORT; empty: /metrics on the HTTP port only
  std::string otlp_endpoint;
  int drain_seconds = 30;
  std::string settings_file;  // --settings: the defaults of the options above
  CommonOptions common;
};

struct ListenAddress {
  std::string host;
  int port = 0;
};

// HOST:PORT, [V6]:PORT. Errors: usage.invalid.
Result<ListenAddress> ParseListen(const std::string& text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return MakeError("usage.invalid", "--listen must be HOST:PORT");
  ListenAddress address;
  address.host = text.substr(0, colon);
  if (address.host.size() > 2 && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  }
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    return MakeError("usage.invalid", "--listen must end in a port number (0: any free port)");
  }
  address.port = std::stoi(port);
  return address;
}

// Names from the manifest (servers, tools) are escaped like every line for people (7.9).
void Say(const std::string& line) { PrintForPeople(stderr, "udon-mcp serve: " + line, "the line above"); }

void SayOffer(const gateway::Offer& offer) {
  for (const gateway::WithheldTool& withheld : offer.withheld) {
    Say("not offering " + withheld.server + "/" + withheld.tool + ": " + withheld.why.code + ": " +
        withheld.why.message);
  }
  Say("offering " + std::to_string(offer.offered.size()) + " reviewed tool(s) of manifest " +
      offer.manifest_sha256 + " (" + std::to_string(offer.withheld.size()) + " withheld, " +
      std::to_string(offer.unreviewed) + " without a review)");
}

// Signals are taken by one thread with sigwait, so every other thread (the gate's, the
// transports') runs with them blocked; started servers get an empty mask back.
sigset_t ServeSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGHUP, SIGINT, SIGTERM, SIGUSR1}) sigaddset(&set, signal);
  return set;
}

// A refusal to start: on stderr, and over stdio also to the host, which otherwise sees only
// the connection end ("Connection closed"): its initialize or server/discover is answered
// with a JSON-RPC error naming the code and the fixed message (gateway/startup_refusal.h).
// Over HTTP nothing listens yet: stderr only.
int RefuseToStart(const ServeOptions& o, const Error& error, int exit) {
  ReportError(error, false, exit);
  if (o.transport == "stdio") {
    std::fflush(stderr);
    signal(SIGPIPE, SIG_IGN);  // a host that went away ends the answer, not the process
    // A host that stops the refusing gateway (SIGTERM) need not wait for the answer's bound.
    const sigset_t signals = ServeSignals();
    pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
    gateway::AnswerStartUpRefusal(error, exit);
  }
  return exit;
}
int RefuseToStart(const ServeOptions& o, const Error& error) { return RefuseToStart(o, error, ExitCodeFor(error)); }

// Waits for signals: SIGHUP reloads; SIGINT, SIGTERM and SIGUSR1 (the transport ended) stop,
// and are returned.
int WaitForSignals(const sigset_t& set, gateway::Gateway& gateway) {
  for (;;) {
    int signal = 0;
    if (sigwait(&set, &signal) != 0) continue;
    if (signal != SIGHUP) return signal;
    Say("SIGHUP: re-reading the pin and the manifest, starting over from step 1");
    auto offer = gateway.Reload();
    if (offer.ok()) {
      SayOffer(*offer);
    } else {
      Say("reload refused (" + offer.error().code + "): " + offer.error().message + "; offering nothing");
    }
  }
}

// SIGTERM over HTTP: /readyz turns 503 and new requests are refused (503) at once, so the
// balancer sends them to another replica; the calls in flight get `seconds` to finish.
void Drain(mcp::HttpServer& http_server, int seconds) {
  Say("SIGTERM: draining (no new requests; waiting up to " + std::to_string(seconds) +
      " s for the calls in flight)");
  const std::size_t left = http_server.Drain(std::chrono::seconds(seconds));
  if (left > 0) Say(std::to_string(left) + " request(s) still in flight at the drain bound: cancelled");
  Say("drained; exiting");
}

mcp::ServerOptions GatewayServerOptions() {
  mcp::ServerOptions options;
  options.server_info = {{"name", "udon-mcp-serve"}, {"version", mcp::ClientVersion()}};
  options.page_size = kPageSize;
  options.logging = false;  // the tools capability and nothing else
  return options;
}

// How HTTP callers prove themselves: the static bearer token (--token-file, else minted
// later), none (--no-token on loopback), or OAuth access tokens (--auth oauth).
struct Credentials {
  std::string token;
  std::shared_ptr<resource_auth::ResourceGuard> guard;
};

// Errors: usage.invalid, io.unreadable, and StartResourceGuard's.
Result<Credentials> ReadCredentials(const ServeOptions& o, const ListenAddress& listen) {
  if (o.no_token && !o.token_file.empty()) {
    return MakeError("usage.invalid", "give at most one of --token-file and --no-token");
  }
  if (o.no_token && o.transport == "http" && !mcp::IsLoopbackName(listen.host)) {
    return MakeError("usage.invalid", "--no-token is for a loopback --listen address only");
  }
  if (o.auth != "token" && o.auth != "oauth") return MakeError("usage.invalid", "--auth must be token or oauth");
  Credentials credentials;
  if (o.auth == "oauth") {
    if (o.transport != "http" || o.no_token || !o.token_file.empty()) {
      return MakeError("usage.invalid", "--auth oauth is for --transport http, without --token-file or --no-token");
    }
    UDON_ASSIGN_OR_RETURN(credentials.guard, StartResourceGuard(o.oauth));
  }
  if (!o.token_file.empty()) {
    UDON_ASSIGN_OR_RETURN(credentials.token, ReadTokenFile(o.token_file));
  }
  return credentials;
}

// The OAuth options of --settings' auth member that the command line left unset.
void ApplyAuthSettings(const ServeOAuthOptions& file, ServeOptions& o, const CLI::App& command) {
  auto unset = [&](const char* flag) { return command.count(flag) == 0; };
  if (unset("--auth")) o.auth = "oauth";
  if (unset("--issuer")) o.oauth.issuer = file.issuer;
  if (unset("--audience")) o.oauth.audience = file.audience;
  if (unset("--scope-tools")) o.oauth.scope_tools = file.scope_tools;
  if (unset("--grants-claim")) o.oauth.grants_claim = file.grants_claim;
  if (unset("--clock-skew")) o.oauth.clock_skew_seconds = file.clock_skew_seconds;
  if (unset("--introspection-client-id")) o.oauth.introspection_client_id = file.introspection_client_id;
  if (unset("--introspection-secret-file")) o.oauth.introspection_secret_file = file.introspection_secret_file;
}

// --settings FILE: its values for the options the command line left unset (flags win).
// Errors: ReadServeSettings's.
Status ApplySettings(ServeOptions& o, const CLI::App& command) {
  if (o.settings_file.empty()) return OkStatus();
  UDON_ASSIGN_OR_RETURN(ServeSettings file, ReadServeSettings(o.settings_file));
  auto unset = [&](const char* flag) { return command.count(flag) == 0; };
  if (file.listen && unset("--listen")) o.listen = *file.listen;
  if (file.metrics_listen && unset("--metrics-listen")) o.metrics_listen = *file.metrics_listen;
  if (file.otlp_endpoint && unset("--otlp-endpoint")) o.otlp_endpoint = *file.otlp_endpoint;
  if (file.drain_seconds && unset("--drain-seconds")) o.drain_seconds = *file.drain_seconds;
  if (file.state && !o.common.state) o.common.state = file.state;
  if (file.auth) ApplyAuthSettings(*file.auth, o, command);
  return OkStatus();
}

int ServeHttp(const ServeOptions& o, const ListenAddress& listen, Credentials credentials, const std::string& state_dir,
              std::chrono::seconds session_idle, gateway::Gateway& gateway, mcp::Server& server,
              ServeTelemetry& served);

int Serve(const ServeOptions& given, const CLI::App& command) {
  const sigset_t signals = ServeSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const bool json = false;  // stdout may be the MCP channel: errors go to stderr
  ServeOptions o = given;
  if (Status applied = ApplySettings(o, command); !applied.ok()) return RefuseToStart(o, applied.error());
  if (o.transport != "stdio" && o.transport != "http") {
    return RefuseToStart(o, MakeError("usage.invalid", "--transport must be stdio or http"));
  }
  if (o.sha256.empty() == o.pin_file.empty()) {
    return RefuseToStart(o, MakeError("usage.invalid", "give the pin with exactly one of --sha256 and --pin-file"));
  }
  auto listen = ParseListen(o.listen);
  if (!listen.ok()) return RefuseToStart(o, listen.error());
  auto credentials = ReadCredentials(o, *listen);
  if (!credentials.ok()) return RefuseToStart(o, credentials.error());
  auto prepared = PrepareGate(o.common, "serve", false);
  if (!prepared.ok()) return RefuseToStart(o, prepared.error());

  mcp::Server server(GatewayServerOptions());
  Result<ListenAddress> metrics_at = o.metrics_listen.empty() ? Result<ListenAddress>(ListenAddress{}) : ParseListen(o.metrics_listen);
  if (!metrics_at.ok()) return RefuseToStart(o, metrics_at.error());
  auto served = StartServeTelemetry(o.otlp_endpoint, metrics_at->host, metrics_at->port, (*prepared)->env, server, Say);
  if (!served.ok()) return RefuseToStart(o, served.error());
  gateway::GatewayOptions options{o.manifest, o.sha256, o.pin_file, o.servers, served->telemetry};
  gateway::Gateway gateway(server, (*prepared)->env, options);
  auto offer = gateway.Start();
  if (!offer.ok()) return RefuseToStart(o, offer.error(), GatedExitCodeFor(offer.error()));
  SayOffer(*offer);

  const pthread_t main_thread = pthread_self();
  auto wake_main = [main_thread] { pthread_kill(main_thread, SIGUSR1); };
  if (o.transport == "stdio") {
    SampleSessions(*served, [] { return std::size_t{1}; });
    int stop[2];
    if (pipe(stop) != 0) return ReportError(MakeError("io.unreadable", "cannot create a pipe"), json, kExitInternal);
    mcp::StdioServerOptions stdio;
    stdio.stop_fd = stop[0];
    std::thread transport([&server, stdio, wake_main] {
      mcp::RunStdioServer(server, stdio);
      wake_main();
    });
    WaitForSignals(signals, gateway);
    // A signal (not the end of input) ended the wait: the transport stops reading, lets
    // open listen streams close and waits for the calls in flight.
    (void)!write(stop[1], "x", 1);
    transport.join();
    close(stop[0]);
    close(stop[1]);
    return kExitOk;
  }
  return ServeHttp(o, *listen, std::move(credentials).value(), (*prepared)->env.state_dir,
                   std::chrono::seconds((*prepared)->env.policy.session_idle_seconds), gateway, server, *served);
}

int ServeHttp(const ServeOptions& o, const ListenAddress& listen, Credentials credentials, const std::string& state_dir,
              std::chrono::seconds session_idle, gateway::Gateway& gateway, mcp::Server& server,
              ServeTelemetry& served) {
  const bool json = false;  // stdout may be the MCP channel: errors go to stderr
  const sigset_t signals = ServeSignals();
  const pthread_t main_thread = pthread_self();
  auto wake_main = [main_thread] { pthread_kill(main_thread, SIGUSR1); };
  std::string minted_path;
  if (credentials.token.empty() && !o.no_token && !credentials.guard) {
    auto minted = MintServeToken(state_dir);
    if (!minted.ok()) return ReportError(minted.error(), json);
    credentials.token = minted->token;
    minted_path = minted->path;
  }
  mcp::HttpServerOptions http;
  http.host = listen.host;
  http.port = listen.port;
  http.bearer_token = credentials.token;
  http.unauthorized_message = kServeUnauthorizedMessage;
  http.max_in_flight_per_client = kMaxInFlightPerClient;
  http.json_single_answers = true;  // contract 7.16, "HTTP": a client parses JSON for less than SSE
  http.session_idle = session_idle;
  http.allowed_hosts = o.allowed_hosts;
  if (!mcp::IsLoopbackName(listen.host) && listen.host != "0.0.0.0" && listen.host != "::") {
    http.allowed_hosts.push_back(listen.host);
  }
  AddMetricsPage(served, http);
  http.health_path = "/healthz";
  http.ready_path = "/readyz";
  http.ready = [&gateway] { return gateway.Ready(); };
  if (credentials.guard) ProtectWithOAuth(credentials.guard, o.oauth, http);
  mcp::HttpServer http_server(server, http);
  SampleSessions(served, [&http_server] { return http_server.live_sessions(); });
  auto port = http_server.Bind();
  if (!port.ok()) return ReportError(port.error(), json);
  const std::string url = "http://" +
                          (listen.host.find(':') != std::string::npos ? "[" + listen.host + "]" : listen.host) +
                          ":" + std::to_string(*port) + http.path;
  // Before "listening on", which hosts and tests wait for.
  if (!minted_path.empty()) Say(TokenInstructions(minted_path, url));
  if (credentials.guard) Say("--auth oauth: access tokens of " + o.oauth.issuer + " for " + o.oauth.audience);
  if (o.no_token) Say("--no-token: any local user can call the offered tools with this process's rights");
  Say("listening on " + url);
  std::thread transport([&http_server, wake_main] {
    http_server.Serve();
    wake_main();
  });
  if (WaitForSignals(signals, gateway) == SIGTERM) Drain(http_server, o.drain_seconds);
  server.CloseSubscriptions();
  http_server.Stop();
  transport.join();
  served.listener.reset();  // its page samples http_server's sessions
  return kExitOk;
}

}  // namespace

void RegisterServeCommand(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* command = app.add_subcommand(
      "serve", "Offer a pinned manifest's reviewed tools as an MCP server; the whole gate runs before every call");
  command->add_option("--manifest", o->manifest, "Reviewed manifest")->required();
  command->add_option("--sha256", o->sha256, "The pinned manifestSha256");
  command->add_option("--pin-file", o->pin_file, "File holding the pinned manifestSha256 (re-read on SIGHUP)");
  command->add_option("--server", o->servers, "Serve this server of the manifest (repeatable; default: all)");
  command->add_option("--transport", o->transport, "stdio (default) or http");
  command->add_option("--listen", o->listen, "HTTP: HOST:PORT to bind (default 127.0.0.1:0, any free port)");
  command->add_option("--token-file", o->token_file,
                      "HTTP: require this bearer token (default: one minted into STATE_DIR/serve-token)");
  command->add_flag("--no-token", o->no_token,
                    "HTTP on loopback: ask no token (any local user can then call the tools as you)");
  command->add_option("--auth", o->auth,
                      "HTTP: token (default: the static bearer token) or oauth (an OAuth 2.1 protected resource)");
  AddServeOAuthOptions(command, o->oauth);
  command->add_option("--allow-host", o->allowed_hosts,
                      "HTTP: a host name clients use beside loopback, accepted in Host and Origin (repeatable)");
  command->add_option("--metrics-listen", o->metrics_listen,
                      "Also serve GET /metrics (Prometheus) on HOST:PORT, without a token (stdio serve too)");
  command->add_option("--otlp-endpoint", o->otlp_endpoint,
                      "Export traces over OTLP/HTTP (JSON) to this base URL (/v1/traces appended; "
                      "default: OTEL_EXPORTER_OTLP_ENDPOINT)");
  command->add_option("--drain-seconds", o->drain_seconds,
                      "HTTP: on SIGTERM, how long the calls in flight may take to finish (default 30)")
      ->check(CLI::Range(0, 3600));
  AddCommonOptions(command, o->common);
  command->add_option("--settings", o->settings_file,
                      "A YAML or JSON file of the service options (listen, auth, metrics, traces, drain, state); "
                      "options on the command line override it");
  SetAction(command, &o->common.json, [o, command] { return Serve(*o, *command); });
}

}  // namespace udon::cli
