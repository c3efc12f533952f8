// What closing a stdio connection costs: Client::Close() after initialize, tools/list and
// tools/call against the demo server, i.e. close the server's stdin, wait for it to exit,
// reap it (the SIGTERM/SIGKILL steps are never reached by a server that exits on EOF).
// Measured in the legacy era (initialize, no stream) and in the modern era with the
// subscriptions/listen stream the gate opens, which the server ends before it exits.
//
//   close_bench SERVER_BINARY CLOSES
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "../support/timing.h"
#include "mcp/client/client.h"
#include "mcp/client/config.h"

namespace {

using udon::bench::Clock;
using udon::bench::Ms;
using udon::bench::Percentile;
using udon::json::Value;

const Value& kArgs = udon::bench::kRenderArgs;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: close_bench SERVER_BINARY CLOSES\n");
    return 2;
  }
  udon::mcp::ServerConfig server;
  server.key = "demo";
  server.type = udon::mcp::ServerType::kStdio;
  server.command = argv[1];
  const int closes = std::stoi(argv[2]);
  int failures = 0;
  for (const bool subscribe : {false, true}) {
    std::vector<double> close_ms, total_ms;
    for (int i = 0; i < closes; ++i) {
      const auto start = Clock::now();
      auto client = udon::mcp::Client::Connect(server, {});
      // The modern era (server/discover), as the gate opens a 2026-07-28 manifest, and its
      // tool-list subscription; the legacy era has no listen stream.
      if (!client.ok() || !(subscribe ? (*client)->Discover() : (*client)->Initialize()).ok()) {
        ++failures;
        continue;
      }
      if (subscribe && (!(*client)->Subscribe().ok() ||
                        (*client)->subscription() != udon::mcp::Client::Subscription::kActive)) {
        ++failures;
      }
      if (!(*client)->ListAllTools().ok() || !(*client)->CallTool("render_turntable", kArgs).ok()) ++failures;
      const auto closing = Clock::now();
      (*client)->Close();
      close_ms.push_back(Ms(closing));
      total_ms.push_back(Ms(start));
    }
    std::printf("%-22s closes=%d  close p50 %7.2f  p95 %7.2f  max %7.2f ms  (whole connection p50 %7.2f ms)\n",
                subscribe ? "modern + listen stream" : "legacy, no stream", closes, Percentile(close_ms, 0.5),
                Percentile(close_ms, 0.95), Percentile(close_ms, 1.0), Percentile(total_ms, 0.5));
  }
  if (failures > 0) std::fprintf(stderr, "%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
