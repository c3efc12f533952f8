// MCP client cost, the same loop as sdk_client.mjs runs with the TypeScript SDK:
//
//   client_bench loop  stdio N TOOL COMMAND ARGS...   one connection, N x (tools/list + tools/call)
//   client_bench loop  http  N TOOL URL
//   client_bench fresh stdio N TOOL COMMAND ARGS...   N x (spawn/connect, initialize, list, call, close)
//   client_bench fresh http  N TOOL URL
//
// TOOL is the tool called each round trip: get-sum (server-everything, {a: i, b: 1}) or
// convert_units (the demo server, {value: i, from: "m", to: "cm"}).
//
// Prints one JSON line. Wall-clock time includes the server's work on every round trip;
// the loop also reports this process's CPU time (CLOCK_PROCESS_CPUTIME_ID: all of the
// client's threads, never the server's, which is always another process).
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "mcp/client/client.h"

namespace {

using Clock = std::chrono::steady_clock;
using udon::json::Value;
using udon::mcp::Client;

udon::mcp::ServerConfig Server(const std::string& transport, int argc, char** rest) {
  udon::mcp::ServerConfig server;
  server.key = "bench";
  if (transport == "stdio") {
    server.command = rest[0];
    server.args.assign(rest + 1, rest + argc);
  } else {
    server.type = udon::mcp::ServerType::kHttp;
    server.url = rest[0];
  }
  return server;
}

// The arguments of the i-th call of `tool`; sdk_client.mjs builds the same.
Value Arguments(const std::string& tool, int i) {
  if (tool == "convert_units") return Value{{"value", i}, {"from", "m"}, {"to", "cm"}};
  return Value{{"a", i}, {"b", 1}};
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

bool Check(bool ok, const char* step) {
  if (!ok) std::fprintf(stderr, "client_bench: %s failed\n", step);
  return ok;
}

// One tools/list (all pages) + one tools/call.
bool RoundTrip(Client& client, const std::string& tool, int i) {
  auto pages = client.ListAllTools();
  if (!Check(pages.ok(), "tools/list")) return false;
  auto call = client.CallTool(tool, Arguments(tool, i));
  return Check(call.ok() && call->result.has_value(), "tools/call");
}

std::unique_ptr<Client> Open(const udon::mcp::ServerConfig& server) {
  udon::mcp::ClientOptions options;
  options.http_notification_stream = false;  // the SDK loop opens none either
  auto client = Client::Connect(server, options);
  if (!Check(client.ok(), "connect")) return nullptr;
  if (!Check((*client)->Initialize().ok(), "initialize")) return nullptr;
  return std::move(client).value();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: client_bench loop|fresh stdio|http N TOOL (COMMAND ARGS... | URL)\n");
    return 2;
  }
  const std::string mode = argv[1];
  const std::string transport = argv[2];
  const int n = std::atoi(argv[3]);
  const std::string tool = argv[4];
  const auto server = Server(transport, argc - 5, argv + 5);

  if (mode == "loop") {
    auto client = Open(server);
    if (client == nullptr) return 1;
    const auto start = Clock::now();
    const double cpu_start = CpuSeconds();
    for (int i = 0; i < n; ++i) {
      if (!RoundTrip(*client, tool, i)) return 1;
    }
    const double cpu = CpuSeconds() - cpu_start;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    client->Close();
    std::printf(
        "{\"client\":\"udon\",\"transport\":\"%s\",\"mode\":\"loop\",\"tool\":\"%s\",\"iterations\":%d,"
        "\"wall_ms\":%.1f,\"cpu_ms\":%.1f,\"iterations_per_s\":%.1f,\"requests_per_s\":%.1f,"
        "\"wall_us_per_request\":%.2f,\"cpu_us_per_request\":%.2f}\n",
        transport.c_str(), tool.c_str(), n, seconds * 1000, cpu * 1000, n / seconds, 2 * n / seconds,
        seconds * 1e6 / (2 * n), cpu * 1e6 / (2 * n));
    return 0;
  }
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    auto client = Open(server);
    if (client == nullptr || !RoundTrip(*client, tool, i)) return 1;
    client->Close();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "{\"client\":\"udon\",\"transport\":\"%s\",\"mode\":\"fresh\",\"tool\":\"%s\",\"iterations\":%d,"
      "\"wall_ms\":%.1f,\"ms_per_connection\":%.2f}\n",
      transport.c_str(), tool.c_str(), n, seconds * 1000, seconds * 1000 / n);
  return 0;
}
