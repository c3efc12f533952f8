// What `udon-mcp serve` adds to a gated call: per-call latency on persistent connections of
//   in-process   the gate in this process, its upstream the demo server over stdio
//   gateway      this process's MCP client over stdio to `udon-mcp serve`, which gates the
//                same call against the same kind of upstream
//   bare         this process's MCP client straight to the demo server (no gate)
// The gateway's own cost is gateway minus in-process. The TypeScript SDK anchor (a host's
// client calling the demo server directly, and through serve) runs beside it in run.sh.
//
//   serve_bench UDON_MCP_BINARY DEMO_SERVER_BINARY TOOLS CALLS DATA_DIR
// writes DATA_DIR/serve/{tools.json,mcp.json,pin} for the anchor.
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

// Connects to `server` and calls render_turntable `calls` times on that one connection;
// the median milliseconds, or -1 when the server could not be reached.
double ClientCalls(const udon::mcp::ServerConfig& server, int calls, const char* what) {
  auto client = udon::mcp::Client::Connect(server, {});
  if (!client.ok() || !(*client)->Initialize().ok()) {
    std::fprintf(stderr, "%s: the server did not start\n", what);
    return -1;
  }
  std::vector<double> samples;
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    auto outcome = (*client)->CallTool("render_turntable", kArgs);
    samples.push_back(Ms(start));
    if (!outcome.ok() || !outcome->result || outcome->result->value("isError", false)) {
      std::fprintf(stderr, "%s call failed\n", what);
    }
  }
  (*client)->Close();
  return Median(samples);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: serve_bench UDON_MCP_BINARY DEMO_SERVER_BINARY TOOLS CALLS DATA_DIR\n");
    return 2;
  }
  const std::string udon = argv[1];
  const std::string demo = argv[2];
  const std::string tools = argv[3];
  const int calls = std::stoi(argv[4]);
  const std::filesystem::path dir = std::filesystem::path(argv[5]) / "serve";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  udon::mcp::ServerConfig upstream;
  upstream.key = "demo";
  upstream.type = udon::mcp::ServerType::kStdio;
  upstream.command = demo;
  upstream.args = {"--synthetic-tools", tools};
  udon::mcp::RuntimeConfig config;
  config.servers["demo"] = upstream;
  const Value config_json = {{"mcpServers", {{"demo", {{"command", demo}, {"args", upstream.args}}}}}};
  std::ofstream(dir / "mcp.json") << config_json.dump(2);

  udon::capture::CaptureOptions request;
  request.servers = {"demo"};
  auto manifest = udon::capture::Capture(config, udon::manifest::Policy{}, request, udon::manifest::NowSeconds());
  if (!manifest.ok()) {
    std::fprintf(stderr, "capture failed: %s\n", manifest.error().Describe().c_str());
    return 1;
  }
  const Value review = {
      {"reviewer", "bench@example.test"},
      {"reviewedAt", udon::manifest::FormatInstant(udon::manifest::NowSeconds())},
      {"assertions", {{"headless", true}, {"independentCalls", true}, {"modelBacked", false},
                      {"sideEffects", Value::array()}, {"concurrency", "safe"}, {"referenceBasedIO", true}}},
      {"inputChannels", {{"/source", "data"}, {"/angles", "data"}, {"/resolution", "data"}}}};
  (void)manifest->SetReview("demo", "render_turntable", review);
  const std::string path = (dir / "tools.json").string();
  std::ofstream(path) << manifest->ToPrettyJson();
  std::ofstream(dir / "pin") << manifest->sha256() << "\n";

  // In-process: the gate with connection reuse, as serve runs it; with each step's median.
  double in_process = 0;
  std::map<std::string, std::vector<double>> step_samples;
  {
    udon::gate::GateEnvironment env;
    env.config = &config;
    env.state_dir = (dir / "state-in-process").string();
    env.reuse_connections = true;
    udon::gate::Gate gate(env);
    const udon::manifest::Binding binding{path, manifest->sha256(), "demo", "render_turntable"};
    std::vector<double> samples;
    for (int i = 0; i < calls; ++i) {
      const auto start = Clock::now();
      udon::gate::GateResult result = gate.Call(binding, kArgs, {});
      samples.push_back(Ms(start));
      if (!result.ok()) std::fprintf(stderr, "in-process call failed: %s\n", result.error->code.c_str());
      for (const udon::gate::StepRecord& step : result.steps) step_samples[step.step].push_back(step.milliseconds);
    }
    in_process = Median(samples);
  }

  // Through the gateway.
  udon::mcp::ServerConfig gateway;
  gateway.key = "gateway";
  gateway.type = udon::mcp::ServerType::kStdio;
  gateway.command = udon;
  gateway.args = {"serve", "--manifest", path, "--sha256", manifest->sha256(), "--config", (dir / "mcp.json").string(),
                  "--state-dir", (dir / "state-gateway").string()};
  const double through_gateway = ClientCalls(gateway, calls, "gateway");
  // Bare: the client straight to the demo server.
  const double bare = ClientCalls(upstream, calls, "bare");
  if (through_gateway < 0 || bare < 0) return 1;

  std::printf("tools=%s calls=%d (medians, persistent connections, stdio)\n", tools.c_str(), calls);
  std::printf("bare call (udon client -> demo server)          %8.3f ms\n", bare);
  std::printf("gated call in-process (gate -> demo server)      %8.3f ms\n", in_process);
  std::printf("gated call via gateway (client -> serve -> demo) %8.3f ms\n", through_gateway);
  std::printf("the gateway's own cost                           %8.3f ms (goal <= 0.5 ms)\n",
              through_gateway - in_process);
  // The upstream exchanges are the list and dispatch steps; the rest is the gate's own.
  std::printf("in-process step medians (ms):");
  for (const auto& [step, samples] : step_samples) std::printf(" %s %.3f", step.c_str(), Median(samples));
  std::printf("\n");
  return 0;
}
