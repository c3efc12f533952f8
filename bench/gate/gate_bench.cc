// What the gate costs: per-call latency of a gated call (hash, static checks, full re-list,
// comparison, argument validation, call) against a bare list+call, on a persistent and on
// a fresh connection, with the share of each gate step. The anchor is the bare client on
// the same server and connection kind, measured in the same run.
//
//   gate_bench SERVER_BINARY TOOLS CALLS
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "../support/timing.h"
#include "../support/demo_server.h"
#include "capture/capture.h"
#include "gate/gate.h"
#include "manifest/manifest.h"
#include "mcp/client/client.h"
#include "mcp/client/config.h"

namespace {

using udon::bench::Clock;
using udon::bench::Median;
using udon::bench::Ms;
using udon::json::Value;

const Value& kArgs = udon::bench::kRenderArgs;

struct Row {
  std::string mode;
  double median_ms;
  std::map<std::string, double> steps;  // median per gate step
  double cpu_ms = 0;                    // this process's CPU per call (the client side), mean
  double server_cpu_ms = 0;             // the demo server's CPU per call, mean
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: gate_bench SERVER_BINARY TOOLS CALLS\n");
    return 2;
  }
  const std::string binary = argv[1];
  const int tools = std::stoi(argv[2]);
  const int calls = std::stoi(argv[3]);
  pid_t server_pid = -1;
  const std::string url = udon::bench::StartDemoHttpServer(
      binary, {"--synthetic-tools", std::to_string(tools), "--page-size", "100", "--response-mode", "json"},
      server_pid);
  if (url.empty()) {
    std::fprintf(stderr, "demo server did not start\n");
    return 1;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("udon-gate-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);

  auto config = udon::mcp::ParseRuntimeConfig(Value({{"mcpServers", {{"demo", {{"url", url}}}}}}).dump(),
                                               udon::mcp::ProcessEnv());
  udon::manifest::Policy policy;
  udon::capture::CaptureOptions request;
  request.servers = {"demo"};
  auto manifest = udon::capture::Capture(*config, policy, request, udon::manifest::NowSeconds());
  if (!manifest.ok()) {
    std::fprintf(stderr, "capture failed: %s\n", manifest.error().Describe().c_str());
    return 1;
  }
  Value review = {{"reviewer", "bench@example.test"},
                  {"reviewedAt", udon::manifest::FormatInstant(udon::manifest::NowSeconds())},
                  {"assertions", {{"headless", true}, {"independentCalls", true}, {"modelBacked", false},
                                  {"sideEffects", Value::array()}, {"concurrency", "safe"}, {"referenceBasedIO", true}}},
                  {"inputChannels", {{"/source", "data"}, {"/angles", "data"}, {"/resolution", "data"}}}};
  // Capture and listing of the whole catalog (issue "Per-call cost": 10,000 tools in 100
  // pages, goal <= 1 s over HTTP): a capture as `udon-mcp capture` makes it (connect,
  // negotiate, subscribe, every page, the manifest with its digest) plus its pretty JSON,
  // beside a bare client's ListAllTools on a fresh connection.
  {
    std::vector<double> capture_ms, write_ms, list_ms;
    for (int i = 0; i < 5; ++i) {
      auto start = Clock::now();
      auto again = udon::capture::Capture(*config, policy, request, udon::manifest::NowSeconds());
      capture_ms.push_back(Ms(start));
      start = Clock::now();
      const std::string text = again.ok() ? again->ToPrettyJson() : std::string();
      write_ms.push_back(Ms(start));
      if (!again.ok() || text.empty()) std::fprintf(stderr, "capture failed\n");
      start = Clock::now();
      auto client = udon::mcp::Client::Connect(*config->Find("demo"), {});
      if (!client.ok() || !(*client)->Initialize().ok() || !(*client)->ListAllTools().ok()) {
        std::fprintf(stderr, "bare listing failed\n");
      }
      if (client.ok()) (*client)->Close();
      list_ms.push_back(Ms(start));
    }
    std::printf("tools=%d capture (5 runs): median %.1f ms, best %.1f ms; manifest to pretty JSON median %.1f ms; "
                "bare connect + ListAllTools median %.1f ms, best %.1f ms\n",
                tools, Median(capture_ms), *std::min_element(capture_ms.begin(), capture_ms.end()),
                Median(write_ms), Median(list_ms), *std::min_element(list_ms.begin(), list_ms.end()));
    std::fflush(stdout);
  }
  (void)manifest->SetReview("demo", "render_turntable", review);
  const std::string path = (dir / "tools.json").string();
  std::ofstream(path) << manifest->ToPrettyJson();
  const udon::manifest::Binding binding{path, manifest->sha256(), "demo", "render_turntable"};

  std::vector<Row> rows;
  // The reviewed Tool, for the modern bare client's Mcp-Param-* headers (as the gate sends them).
  const Value reviewed_tool = *manifest->FindTool("demo", "render_turntable").front().tool;
  const std::string modern_version = manifest->protocol_version().value_or("");
  // `modern`: the bare client opens the manifest's protocol version (the era the gate
  // speaks) instead of the legacy initialize, so the gated rows have an era-matched anchor.
  // `read_tools`: the caller also reads every listed Tool as a value (the pages are built
  // when first read, mcp/client/tool_pages.h), as capture does.
  auto bare = [&](bool fresh, bool modern = false, bool read_tools = false) {
    std::vector<double> samples, calls_only;
    std::unique_ptr<udon::mcp::Client> client;
    const double cpu_start = udon::bench::ProcessCpuMs();
    const double server_cpu_start = udon::bench::ProcessCpuMsOf(server_pid);
    for (int i = 0; i < calls; ++i) {
      const auto start = Clock::now();
      if (!client) {
        client = std::move(udon::mcp::Client::Connect(*config->Find("demo"), {}).value());
        if (modern) {
          (void)client->Open(modern_version);
        } else {
          (void)client->Initialize();
        }
      }
      auto pages = client->ListAllTools();
      if (read_tools && pages.ok()) {
        std::size_t listed = 0;
        for (const Value& page : pages->pages) listed += page["tools"].size();
        // The demo's own tools and `tools` synthetic ones.
        if (listed < static_cast<std::size_t>(tools)) std::fprintf(stderr, "bare listing lost tools\n");
      }
      const auto call_start = Clock::now();
      auto result = client->CallTool("render_turntable", kArgs, {}, modern ? &reviewed_tool : nullptr);
      calls_only.push_back(Ms(call_start));
      if (!pages.ok() || !result.ok()) std::fprintf(stderr, "bare call failed\n");
      if (fresh) {
        client->Close();
        client.reset();
      }
      samples.push_back(Ms(start));
    }
    // The bare tools/call alone, beside the gate's dispatch step.
    std::string mode = fresh ? "bare, fresh connection" : "bare, persistent";
    if (modern) mode = "bare " + modern_version + (fresh ? ", fresh" : ", persistent");
    if (read_tools) mode += ", Tools read";
    rows.push_back({mode, Median(samples), {{"dispatch", Median(calls_only)}},
                    (udon::bench::ProcessCpuMs() - cpu_start) / calls,
                    (udon::bench::ProcessCpuMsOf(server_pid) - server_cpu_start) / calls});
  };
  auto gated = [&](bool fresh) {
    udon::gate::GateEnvironment env;
    env.config = &*config;
    env.state_dir = (dir / "state").string();
    env.reuse_connections = !fresh;
    udon::gate::Gate gate(env);
    std::vector<double> samples;
    std::map<std::string, std::vector<double>> steps;
    udon::gate::CallOptions options;
    options.expect_output = true;
    const double cpu_start = udon::bench::ProcessCpuMs();
    const double server_cpu_start = udon::bench::ProcessCpuMsOf(server_pid);
    for (int i = 0; i < calls; ++i) {
      const auto start = Clock::now();
      udon::gate::GateResult result = gate.Call(binding, kArgs, options);
      samples.push_back(Ms(start));
      if (!result.ok()) std::fprintf(stderr, "gated call failed: %s\n", result.error->code.c_str());
      for (const auto& step : result.steps) steps[step.step].push_back(step.milliseconds);
    }
    Row row{fresh ? "gated, fresh connection" : "gated, persistent", Median(samples), {},
            (udon::bench::ProcessCpuMs() - cpu_start) / calls,
            (udon::bench::ProcessCpuMsOf(server_pid) - server_cpu_start) / calls};
    for (auto& [name, values] : steps) row.steps[name] = Median(values);
    rows.push_back(std::move(row));
  };
  bare(false);
  gated(false);
  bare(true);
  gated(true);
  bare(false, /*modern=*/true);
  bare(true, /*modern=*/true);
  bare(false, /*modern=*/false, /*read_tools=*/true);

  std::printf("tools=%d calls=%d\n", tools, calls);
  for (const Row& row : rows) {
    std::printf("%-32s median %8.3f ms  CPU client %6.2f server %6.2f ms", row.mode.c_str(), row.median_ms,
                row.cpu_ms, row.server_cpu_ms);
    for (const char* step : {"digest", "static", "connect", "list", "compare", "arguments", "recheck", "dispatch"}) {
      if (row.steps.count(step)) std::printf("  %s %.3f", step, row.steps.at(step));
    }
    std::printf("\n");
  }
  std::printf("gate overhead, persistent: %.3f ms; fresh: %.3f ms\n", rows[1].median_ms - rows[0].median_ms,
              rows[3].median_ms - rows[2].median_ms);

  // The stdio ping barrier (the gate's round trip right before dispatch): its cost beside
  // a bare tools/call and a gated call on the same persistent stdio connection kind.
  {
    udon::mcp::ServerConfig stdio;
    stdio.key = "demo";
    stdio.type = udon::mcp::ServerType::kStdio;
    stdio.command = binary;
    stdio.args = {"--synthetic-tools", std::to_string(tools), "--page-size", "100"};
    auto client = udon::mcp::Client::Connect(stdio, {});
    if (!client.ok() || !(*client)->Initialize().ok()) {
      std::fprintf(stderr, "stdio demo server did not start\n");
      return 1;
    }
    std::vector<double> ping, call;
    for (int i = 0; i < calls; ++i) {
      auto start = Clock::now();
      if (!(*client)->Ping(std::chrono::seconds(10)).ok()) std::fprintf(stderr, "ping failed\n");
      ping.push_back(Ms(start));
      start = Clock::now();
      if (!(*client)->CallTool("render_turntable", kArgs).ok()) std::fprintf(stderr, "stdio call failed\n");
      call.push_back(Ms(start));
    }
    (*client)->Close();
    udon::mcp::RuntimeConfig stdio_config;
    stdio_config.servers["demo"] = stdio;
    udon::gate::GateEnvironment env;
    env.config = &stdio_config;
    env.state_dir = (dir / "state-stdio").string();
    env.reuse_connections = true;
    std::vector<double> gated_stdio, arguments_step;
    {
      udon::gate::Gate gate(env);
      udon::gate::CallOptions options;
      options.expect_output = true;
      for (int i = 0; i < calls; ++i) {
        const auto start = Clock::now();
        udon::gate::GateResult result = gate.Call(binding, kArgs, options);
        gated_stdio.push_back(Ms(start));
        if (!result.ok()) std::fprintf(stderr, "gated stdio call failed: %s\n", result.error->code.c_str());
        for (const auto& step : result.steps) {
          if (step.step == "arguments") arguments_step.push_back(step.milliseconds);
        }
      }
    }
    std::printf("stdio, persistent: ping %.3f ms, bare tools/call %.3f ms, gated call %.3f ms "
                "(arguments step incl. ping %.3f ms): the barrier is %.1f%% of the gated call\n",
                Median(ping), Median(call), Median(gated_stdio), Median(arguments_step),
                100.0 * Median(ping) / std::max(Median(gated_stdio), 1e-9));
  }
  kill(server_pid, SIGTERM);
  waitpid(server_pid, nullptr, 0);
  std::filesystem::remove_all(dir);
  return 0;
}
