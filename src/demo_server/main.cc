// udon-mcp-demo-server: the MCP tool server `udon-mcp demo` runs against, a reference for
// well-behaved tool servers, and a test double that misbehaves on command (--fault).
//
// main reads the command line, builds the server (options, catalog, fault hooks) and
// serves it on the transport asked for; each of those jobs is one function below.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "demo_server/catalog.h"
#include "demo_server/faults.h"
#include "mcp/server/http_server.h"
#include "mcp/server/server.h"
#include "mcp/server/stdio_server.h"
#include "reference/reference.h"

namespace {

constexpr char kServerVersion[] = "0.1.0";

// Everything the command line sets.
struct DemoOptions {
  std::string transport = "stdio";
  udon::mcp::HttpServerOptions http;
  std::string response_mode = "sse";
  std::size_t page_size = 0;
  std::string era = "dual";
  long ttl_ms = 0;
  std::string cache_scope = "public";
  udon::demo::CatalogOptions catalog;
  std::string fixtures;
  std::vector<std::string> fault_args;
  std::string fault_at = "startup";
  std::string request_log;
  int list_delay_ms = 0;
};

std::string FaultHelp() {
  std::string text =
      "Faults (--fault NAME[@startup|@after-first-list][=VALUE], repeatable; see "
      "docs/demo-server.md):\n";
  for (const auto& fault : udon::demo::KnownFaults()) {
    std::string head = std::string("  ") + fault.name;
    if (*fault.value != '\0') head += std::string("[=") + fault.value + "]";
    head.resize(std::max<std::size_t>(head.size() + 1, 40), ' ');
    text += head + fault.effect + "\n";
  }
  return text;
}

// The option groups below are added in this order, which is the order --help lists them.
void AddTransportOptions(CLI::App& app, DemoOptions& options) {
  app.add_option("--transport", options.transport, "stdio or http")
      ->check(CLI::IsMember({"stdio", "http"}))
      ->capture_default_str();
  app.add_option("--host", options.http.host, "HTTP bind address")->capture_default_str();
  app.add_option("--port", options.http.port, "HTTP port; 0 picks a free one (printed on stdout)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--path", options.http.path, "HTTP endpoint path")->capture_default_str();
  app.add_option("--response-mode", options.response_mode, "HTTP answers as sse or json")
      ->check(CLI::IsMember({"sse", "json"}))
      ->capture_default_str();
  app.add_option("--retry-ms", options.http.retry_ms, "retry: of each SSE priming event")
      ->check(CLI::Range(0L, 3600000L))
      ->capture_default_str();
  app.add_option("--max-body-bytes", options.http.max_body_bytes, "largest accepted HTTP request body")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30))
      ->capture_default_str();
}

void AddProtocolOptions(CLI::App& app, DemoOptions& options) {
  app.add_option("--page-size", options.page_size, "tools per tools/list page; 0 = one page")
      ->capture_default_str();
  app.add_option("--era", options.era,
                 "protocol eras served: dual (initialize and 2026-07-28 per-request _meta), "
                 "modern (2026-07-28 only; initialize is refused naming it) or legacy "
                 "(2025-11-25 and older only)")
      ->check(CLI::IsMember({"dual", "modern", "legacy"}))
      ->capture_default_str();
  app.add_option("--ttl-ms", options.ttl_ms, "modern: ttlMs of server/discover and tools/list results")
      ->check(CLI::Range(0L, 86400000L))
      ->capture_default_str();
  app.add_option("--cache-scope", options.cache_scope,
                 "modern: cacheScope of server/discover and tools/list results")
      ->check(CLI::IsMember({"public", "private"}))
      ->capture_default_str();
}

void AddCatalogOptions(CLI::App& app, DemoOptions& options) {
  app.add_option("--synthetic-tools", options.catalog.synthetic_tools,
                 "add N generated tools (synthetic_00000...) for scale tests")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
  app.add_option("--fixtures", options.fixtures, "add fixture tools: conformance")
      ->check(CLI::IsMember({"conformance"}));
}

void AddFaultOptions(CLI::App& app, DemoOptions& options) {
  app.add_option("--fault", options.fault_args, "inject a fault (repeatable; listed below)");
  app.add_option("--fault-at", options.fault_at,
                 "when faults without @ take effect: startup or after-first-list")
      ->check(CLI::IsMember({"startup", "after-first-list"}))
      ->capture_default_str();
  app.add_option("--log-requests", options.request_log,
                 "append one JSON line per message received (method, tool name and traceparent only)");
}

// The knobs tests turn to make timing and overlap observable.
void AddTestDoubleOptions(CLI::App& app, DemoOptions& options) {
  app.add_option("--ledger-delay-ms", options.catalog.ledger_delay_ms,
                 "how long append_ledger holds its critical section")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  app.add_option("--list-delay-ms", options.list_delay_ms,
                 "wait this long before answering each tools/list page")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  app.add_option("--ledger-file", options.catalog.ledger_file,
                 "append_ledger also appends to FILE and detects overlap across processes");
  app.add_option("--entries-file", options.catalog.entries_file,
                 "append_ledger appends each call's entry argument to FILE (for counting dispatches)");
}

// The --fault arguments, parsed; nullopt (after saying why on stderr) on the first bad one.
std::optional<std::vector<udon::demo::FaultSpec>> ParseFaults(const DemoOptions& options) {
  const auto trigger = options.fault_at == "after-first-list" ? udon::demo::FaultTrigger::kAfterFirstList
                                                              : udon::demo::FaultTrigger::kStartup;
  std::vector<udon::demo::FaultSpec> faults;
  for (const std::string& arg : options.fault_args) {
    auto spec = udon::demo::ParseFault(arg, trigger);
    if (!spec.ok()) {
      std::cerr << "udon-mcp-demo-server: --fault: " << spec.error().message << "\n";
      return std::nullopt;
    }
    faults.push_back(std::move(*spec));
  }
  return faults;
}

// The protocol versions an --era serves, newest first.
std::vector<std::string> VersionsOfEra(const std::string& era) {
  if (era == "dual") return udon::mcp::ServedProtocolVersions();
  std::vector<std::string> versions;
  for (const std::string& version : udon::mcp::ServedProtocolVersions()) {
    if ((era == "modern") == udon::mcp::IsModernProtocolVersion(version)) versions.push_back(version);
  }
  return versions;
}

udon::mcp::ServerOptions MakeServerOptions(const DemoOptions& options) {
  udon::mcp::ServerOptions server;
  server.server_info = {{"name", "udon-mcp-demo-server"},
                        {"title", "udon-mcp demo server"},
                        {"version", kServerVersion}};
  server.instructions =
      "Demonstration tools for udon-mcp: rendering by reference, text analysis, unit "
      "conversion, summaries, slow counting and a ledger.";
  server.page_size = options.page_size;
  server.ttl_ms = options.ttl_ms;
  server.cache_scope =
      options.cache_scope == "private" ? udon::mcp::CacheScope::kPrivate : udon::mcp::CacheScope::kPublic;
  server.versions = VersionsOfEra(options.era);
  // The conformance suite probes every cacheable list of the modern era.
  server.empty_prompts_and_resources = options.catalog.conformance_fixtures;
  return server;
}

// The fault injector and request log, installed on `server`; they must outlive serving.
udon::Result<std::unique_ptr<udon::demo::DemoHooks>> InstallHooks(udon::mcp::Server& server,
                                                                  std::vector<udon::demo::FaultSpec> faults,
                                                                  const DemoOptions& options) {
  auto hooks = udon::demo::DemoHooks::Create(server, std::move(faults), options.request_log);
  if (!hooks.ok()) return std::move(hooks).error();
  (*hooks)->SetListDelay(std::chrono::milliseconds(options.list_delay_ms));
  server.SetHooks(hooks->get());
  return hooks;
}

int ServeHttp(udon::mcp::Server& server, const udon::mcp::HttpServerOptions& options) {
  // Signals are taken by one thread, which stops the listener cleanly.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  udon::mcp::HttpServer http(server, options);
  auto port = http.Bind();
  if (!port.ok()) {
    std::cerr << "udon-mcp-demo-server: " << port.error().Describe() << "\n";
    return 2;
  }
  const std::string url = "http://" + (options.host.find(':') != std::string::npos
                                           ? "[" + options.host + "]"
                                           : options.host) +
                          ":" + std::to_string(*port) + options.path;
  std::printf("{\"event\":\"listening\",\"port\":%d,\"url\":\"%s\"}\n", *port, url.c_str());
  std::fflush(stdout);
  std::thread stopper([&http, signals] {
    int received = 0;
    sigwait(&signals, &received);
    http.Stop();
  });
  http.Serve();
  // Serve only returns after Stop, which the stopper thread called.
  stopper.join();
  return 0;
}

// Serves on the transport asked for until the client or a signal ends it.
int Serve(udon::mcp::Server& server, DemoOptions& options) {
  signal(SIGPIPE, SIG_IGN);  // a peer that went away is noticed through write errors
  if (options.transport == "http") {
    options.http.json_responses = options.response_mode == "json";
    return ServeHttp(server, options.http);
  }
  udon::mcp::RunStdioServer(server);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"udon-mcp-demo-server: a demonstration MCP tool server (stdio or Streamable HTTP)"};
  app.footer(FaultHelp());
  app.set_version_flag("--version", std::string("udon-mcp-demo-server ") + UDON_VERSION);
  DemoOptions options;
  AddTransportOptions(app, options);
  AddProtocolOptions(app, options);
  AddCatalogOptions(app, options);
  AddFaultOptions(app, options);
  AddTestDoubleOptions(app, options);
  // The build renders the man page from this command tree (reference/reference.h).
  const udon::reference::PageNotes notes{
      {}, "The tools, the faults and how tests use them: docs/demo-server.md in the documentation installed with "
          "udon-mcp."};
  if (std::optional<udon::Status> written = udon::reference::MaybeWriteReference(app, argc, argv, notes)) {
    if (written->ok()) return 0;
    std::cerr << "udon-mcp-demo-server: " << written->error().Describe() << "\n";
    return 2;
  }
  CLI11_PARSE(app, argc, argv);

  auto faults = ParseFaults(options);
  if (!faults) return 2;
  options.catalog.conformance_fixtures = options.fixtures == "conformance";
  udon::mcp::Server server(MakeServerOptions(options));
  udon::demo::RegisterTools(server, options.catalog);
  auto hooks = InstallHooks(server, std::move(*faults), options);
  if (!hooks.ok()) {
    std::cerr << "udon-mcp-demo-server: " << hooks.error().message << "\n";
    return 2;
  }
  return Serve(server, options);
}
