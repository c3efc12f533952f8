// udon-mcp-demo-server: the MCP tool server `udon-mcp demo` runs against, a reference for
// well-behaved tool servers, and a test double that misbehaves on command (--fault).
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "demo_server/catalog.h"
#include "demo_server/faults.h"
#include "mcp/http_server.h"
#include "mcp/server.h"
#include "mcp/stdio_server.h"

namespace {

constexpr char kServerVersion[] = "0.1.0";

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"udon-mcp-demo-server: a demonstration MCP tool server (stdio or Streamable HTTP)"};
  app.footer(FaultHelp());

  std::string transport = "stdio";
  udon::mcp::HttpServerOptions http;
  std::string response_mode = "sse";
  std::size_t page_size = 0;
  udon::demo::CatalogOptions catalog;
  std::string fixtures;
  std::vector<std::string> fault_args;
  std::string fault_at = "startup";
  std::string request_log;
  std::string era = "dual";
  long ttl_ms = 0;
  std::string cache_scope = "public";

  app.add_option("--transport", transport, "stdio or http")
      ->check(CLI::IsMember({"stdio", "http"}))
      ->capture_default_str();
  app.add_option("--host", http.host, "HTTP bind address")->capture_default_str();
  app.add_option("--port", http.port, "HTTP port; 0 picks a free one (printed on stdout)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app.add_option("--path", http.path, "HTTP endpoint path")->capture_default_str();
  app.add_option("--response-mode", response_mode, "HTTP answers as sse or json")
      ->check(CLI::IsMember({"sse", "json"}))
      ->capture_default_str();
  app.add_option("--retry-ms", http.retry_ms, "retry: of each SSE priming event")
      ->check(CLI::Range(0L, 3600000L))
      ->capture_default_str();
  app.add_option("--max-body-bytes", http.max_body_bytes, "largest accepted HTTP request body")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30))
      ->capture_default_str();
  app.add_option("--page-size", page_size, "tools per tools/list page; 0 = one page")
      ->capture_default_str();
  app.add_option("--era", era,
                 "protocol eras served: dual (initialize and 2026-07-28 per-request _meta), "
                 "modern (2026-07-28 only; initialize is refused naming it) or legacy "
                 "(2025-11-25 and older only)")
      ->check(CLI::IsMember({"dual", "modern", "legacy"}))
      ->capture_default_str();
  app.add_option("--ttl-ms", ttl_ms, "modern: ttlMs of server/discover and tools/list results")
      ->check(CLI::Range(0L, 86400000L))
      ->capture_default_str();
  app.add_option("--cache-scope", cache_scope,
                 "modern: cacheScope of server/discover and tools/list results")
      ->check(CLI::IsMember({"public", "private"}))
      ->capture_default_str();
  app.add_option("--synthetic-tools", catalog.synthetic_tools,
                 "add N generated tools (synthetic_00000...) for scale tests")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1000000}));
  app.add_option("--fixtures", fixtures, "add fixture tools: conformance")
      ->check(CLI::IsMember({"conformance"}));
  app.add_option("--fault", fault_args, "inject a fault (repeatable; listed below)");
  app.add_option("--fault-at", fault_at,
                 "when faults without @ take effect: startup or after-first-list")
      ->check(CLI::IsMember({"startup", "after-first-list"}))
      ->capture_default_str();
  app.add_option("--log-requests", request_log,
                 "append one JSON line per message received (method and tool name only)");
  app.add_option("--ledger-delay-ms", catalog.ledger_delay_ms,
                 "how long append_ledger holds its critical section")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  int list_delay_ms = 0;
  app.add_option("--list-delay-ms", list_delay_ms, "wait this long before answering each tools/list page")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  app.add_option("--ledger-file", catalog.ledger_file,
                 "append_ledger also appends to FILE and detects overlap across processes");
  CLI11_PARSE(app, argc, argv);

  const auto trigger = fault_at == "after-first-list" ? udon::demo::FaultTrigger::kAfterFirstList
                                                      : udon::demo::FaultTrigger::kStartup;
  std::vector<udon::demo::FaultSpec> faults;
  for (const std::string& arg : fault_args) {
    auto spec = udon::demo::ParseFault(arg, trigger);
    if (!spec.ok()) {
      std::cerr << "udon-mcp-demo-server: --fault: " << spec.error().message << "\n";
      return 2;
    }
    faults.push_back(std::move(*spec));
  }

  udon::mcp::ServerOptions options;
  options.server_info = {{"name", "udon-mcp-demo-server"},
                         {"title", "udon-mcp demo server"},
                         {"version", kServerVersion}};
  options.instructions =
      "Demonstration tools for udon-mcp: rendering by reference, text analysis, unit "
      "conversion, summaries, slow counting and a ledger.";
  options.page_size = page_size;
  options.ttl_ms = ttl_ms;
  options.cache_scope =
      cache_scope == "private" ? udon::mcp::CacheScope::kPrivate : udon::mcp::CacheScope::kPublic;
  if (era != "dual") {
    std::vector<std::string> versions;
    for (const std::string& version : udon::mcp::SupportedProtocolVersions()) {
      if ((era == "modern") == udon::mcp::IsModernProtocolVersion(version)) versions.push_back(version);
    }
    options.versions = std::move(versions);
  }
  catalog.conformance_fixtures = fixtures == "conformance";
  // The conformance suite probes every cacheable list of the modern era.
  options.empty_prompts_and_resources = catalog.conformance_fixtures;
  udon::mcp::Server server(options);
  udon::demo::RegisterTools(server, catalog);

  auto hooks = udon::demo::DemoHooks::Create(server, std::move(faults), request_log);
  if (!hooks.ok()) {
    std::cerr << "udon-mcp-demo-server: " << hooks.error().message << "\n";
    return 2;
  }
  (*hooks)->SetListDelay(std::chrono::milliseconds(list_delay_ms));
  server.SetHooks(hooks->get());

  signal(SIGPIPE, SIG_IGN);  // a peer that went away is noticed through write errors
  if (transport == "http") {
    http.json_responses = response_mode == "json";
    return ServeHttp(server, http);
  }
  udon::mcp::RunStdioServer(server);
  return 0;
}
