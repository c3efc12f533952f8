// MCP client cost against @modelcontextprotocol/server-everything, the same loop as
// sdk_client.mjs runs with the TypeScript SDK:
//
//   client_bench loop  stdio N NODE ENTRY   one connection, N x (tools/list + tools/call)
//   client_bench loop  http  N URL
//   client_bench fresh stdio N NODE ENTRY   N x (spawn/connect, initialize, list, call, close)
//   client_bench fresh http  N URL
//
// Prints one JSON line. Wall-clock time: the server's work is part of every round trip.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "mcp/client.h"

namespace {

using Clock = std::chrono::steady_clock;
using udon::json::Value;
using udon::mcp::Client;

udon::mcp::ServerConfig Server(const std::string& transport, char** rest) {
  udon::mcp::ServerConfig server;
  server.key = "everything";
  if (transport == "stdio") {
    server.command = rest[0];
    server.args = {rest[1], "stdio"};
  } else {
    server.type = udon::mcp::ServerType::kHttp;
    server.url = rest[0];
  }
  return server;
}

bool Check(bool ok, const char* step) {
  if (!ok) std::fprintf(stderr, "client_bench: %s failed\n", step);
  return ok;
}

// One tools/list (all pages) + one tools/call of get-sum.
bool RoundTrip(Client& client, int i) {
  auto pages = client.ListAllTools();
  if (!Check(pages.ok(), "tools/list")) return false;
  auto call = client.CallTool("get-sum", Value{{"a", i}, {"b", 1}});
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
  if (argc < 5) {
    std::fprintf(stderr, "usage: client_bench loop|fresh stdio|http N (NODE ENTRY | URL)\n");
    return 2;
  }
  const std::string mode = argv[1];
  const std::string transport = argv[2];
  const int n = std::atoi(argv[3]);
  if (transport == "stdio" && argc < 6) return 2;
  const auto server = Server(transport, argv + 4);

  double seconds = 0;
  if (mode == "loop") {
    auto client = Open(server);
    if (client == nullptr) return 1;
    const auto start = Clock::now();
    for (int i = 0; i < n; ++i) {
      if (!RoundTrip(*client, i)) return 1;
    }
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
    client->Close();
    std::printf(
        "{\"client\":\"udon\",\"transport\":\"%s\",\"mode\":\"loop\",\"iterations\":%d,"
        "\"wall_ms\":%.1f,\"iterations_per_s\":%.1f,\"requests_per_s\":%.1f}\n",
        transport.c_str(), n, seconds * 1000, n / seconds, 2 * n / seconds);
    return 0;
  }
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    auto client = Open(server);
    if (client == nullptr || !RoundTrip(*client, i)) return 1;
    client->Close();
  }
  seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf(
      "{\"client\":\"udon\",\"transport\":\"%s\",\"mode\":\"fresh\",\"iterations\":%d,"
      "\"wall_ms\":%.1f,\"ms_per_connection\":%.2f}\n",
      transport.c_str(), n, seconds * 1000, seconds * 1000 / n);
  return 0;
}
