// Load and soak: N gated calls (every gate step, then tools/call with argument and output
// validation) at concurrency C against udon-mcp-demo-server, through libudonmcp in this
// process, so that whatever the library leaks per call accumulates where it can be seen.
//
//   load_bench SERVER_BINARY http|stdio [CALLS [CONCURRENCY]]
//
// http:  one long-running demo server; every call opens a fresh MCP session on it.
// stdio: a new demo server process for every call.
// The calls run in batches of 1,000; between batches nothing is in flight and the driver
// samples its open descriptors, descendant processes, threads and VmRSS (and the HTTP
// server's descriptors, threads and VmRSS). The run fails (exit 1) on any unexpected call
// outcome, on any growth of descriptors, processes or threads between the first and the
// last sample (LOAD_BASELINE_CALLS picks a later first sample; the HTTP server's threads
// may grow within its pools' bound), or on RSS growth beyond LOAD_RSS_TOLERANCE_KIB (default
// 2048 KiB).
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/demo_server.h"
#include "capture/capture.h"
#include "gate/evidence.h"
#include "gate/gate.h"
#include "manifest/manifest.h"
#include "mcp/client/client.h"
#include "mcp/client/config.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using udon::json::Value;

constexpr int kBatch = 1000;
constexpr long kDefaultRssToleranceKib = 2048;
// The demo HTTP server's threads: two pools of 64 started on demand (a burst under load may
// start more late in a run), the departure watch, the main and the signal thread. A thread
// per call or connection would pass this bound within a few hundred calls.
constexpr long kServerThreadBound = 2 * 64 + 3;
constexpr const char* kTool = "render_turntable";
constexpr const char* kSteps[] = {"digest", "static", "connect", "list", "compare", "arguments", "recheck", "dispatch", "(close)"};
constexpr double kNoSample = -1;

// What one process holds at a checkpoint.
struct Usage {
  long fds = -1;
  long descendants = -1;
  long threads = -1;
  long rss_kib = -1;
};

long CountEntries(const fs::path& dir) {
  std::error_code error;
  long count = 0;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) ++count;
  return error ? -1 : count;
}

long StatusField(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
  }
  return -1;
}

// Children from /proc/<pid>/task/*/children, recursively; zombies count (not reaped).
long Descendants(pid_t pid) {
  long count = 0;
  std::error_code error;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", error), end; !error && it != end;
       it.increment(error)) {
    std::ifstream children(it->path() / "children");
    pid_t child;
    while (children >> child) count += 1 + Descendants(child);
  }
  return count;
}

Usage Sample(pid_t pid) {
  Usage usage;
  // The listing's own descriptor is counted for this process, the same way every time.
  usage.fds = CountEntries("/proc/" + std::to_string(pid) + "/fd");
  usage.descendants = Descendants(pid);
  usage.threads = StatusField(pid, "Threads");
  usage.rss_kib = StatusField(pid, "VmRSS");
  return usage;
}

// The HTTP server may still be finishing connections the driver has already closed (keep-
// alive waits, streams that notice the close at their next write): sample it once its
// descriptors and threads have held still for 2 s, or after 20 s.
Usage SettledSample(pid_t pid) {
  Usage last = Sample(pid);
  int still = 0;
  for (int i = 0; i < 80 && still < 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    Usage now = Sample(pid);
    still = now.fds == last.fds && now.threads == last.threads ? still + 1 : 0;
    last = now;
  }
  return last;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

void StopServer(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

// Varied but valid arguments for call i, and the number of URIs the result must carry.
Value Arguments(int i) {
  static const int kResolutions[] = {1024, 2048, 4096};
  return {{"source", "https://assets.example.test/asset-" + std::to_string(i % 97) + ".blend"},
          {"angles", 1 + i % 36},
          {"resolution", kResolutions[i % 3]}};
}

// "" when the gate's answer is the expected one, else what was wrong (a code, never values).
std::string Unexpected(const udon::gate::GateResult& result, const Value& arguments) {
  if (!result.ok()) return result.error->code;
  if (!result.dispatched) return "not_dispatched";
  const Value& uris = result.output.contains("renderedUris") ? result.output["renderedUris"] : Value();
  if (!uris.is_array() || uris.size() != arguments["angles"].get<std::size_t>()) return "output.unexpected_count";
  for (const Value& uri : uris) {
    if (!uri.is_string() || uri.get<std::string>().rfind("render://turntable/", 0) != 0) {
      return "output.unexpected_uri";
    }
  }
  return "";
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(rank, sorted.size() - 1)];
}

struct Checkpoint {
  int calls = 0;
  Usage driver;
  Usage server;
  long heap_kib = 0;  // the driver's malloc'd bytes in use: a leak grows it, fragmentation does not
};

long HeapInUseKib() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<long>((info.uordblks + info.hblkhd) / 1024);
}

std::string Cell(long value) { return value < 0 ? "-" : std::to_string(value); }

// Growth between the first and the last checkpoint; appends failures.
// `thread_tolerance`: the server's thread pools start threads on demand up to their bound,
// so a burst late in the run may add one; no thread is started per request or connection.
void CheckGrowth(const char* who, const Usage& first, const Usage& last, long rss_tolerance_kib,
                 long thread_tolerance, std::vector<std::string>& failures) {
  auto grew = [&](const char* what, long a, long b, long tolerance) {
    std::printf("  %-7s %-12s %8ld -> %8ld  (%+ld, tolerance %ld)\n", who, what, a, b, b - a, tolerance);
    if (b - a > tolerance) failures.push_back(std::string(who) + " " + what + " grew by " + std::to_string(b - a));
  };
  grew("fds", first.fds, last.fds, 0);
  grew("processes", first.descendants, last.descendants, 0);
  grew("threads", first.threads, last.threads, thread_tolerance);
  grew("VmRSS KiB", first.rss_kib, last.rss_kib, rss_tolerance_kib);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5 || (std::string(argv[2]) != "http" && std::string(argv[2]) != "stdio")) {
    std::fprintf(stderr, "usage: load_bench SERVER_BINARY http|stdio [CALLS [CONCURRENCY]]\n");
    return 2;
  }
  const std::string binary = fs::absolute(argv[1]).string();
  const std::string transport = argv[2];
  const int calls = argc > 3 ? std::atoi(argv[3]) : 10000;
  const int concurrency = argc > 4 ? std::atoi(argv[4]) : 8;
  const char* tolerance_env = std::getenv("LOAD_RSS_TOLERANCE_KIB");
  const long rss_tolerance_kib = tolerance_env != nullptr ? std::atol(tolerance_env) : kDefaultRssToleranceKib;
  if (calls < 2 * kBatch || calls % kBatch != 0 || concurrency < 1) {
    std::fprintf(stderr, "load_bench: CALLS must be a multiple of %d and at least %d; CONCURRENCY >= 1\n", kBatch,
                 2 * kBatch);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);

  const fs::path dir = fs::temp_directory_path() / ("udon-load-" + std::to_string(getpid()));
  fs::create_directories(dir);
  pid_t server_pid = -1;
  Value server_entry;
  if (transport == "http") {
    const std::string url = udon::bench::StartDemoHttpServer(binary, {}, server_pid);
    if (url.empty()) {
      std::fprintf(stderr, "load_bench: the demo server did not start\n");
      StopServer(server_pid);
      return 1;
    }
    server_entry = {{"url", url}};
  } else {
    server_entry = {{"command", binary}, {"args", Value::array()}};
  }
  auto config = udon::mcp::ParseRuntimeConfig(Value({{"mcpServers", {{"demo", server_entry}}}}).dump(),
                                               udon::mcp::ProcessEnv());
  if (!config.ok()) {
    std::fprintf(stderr, "load_bench: config: %s\n", config.error().Describe().c_str());
    StopServer(server_pid);
    return 1;
  }

  // Capture and review exactly as `udon-mcp capture` and `review` would.
  udon::manifest::Policy policy;
  udon::capture::CaptureOptions request;
  request.servers = {"demo"};
  auto manifest = udon::capture::Capture(*config, policy, request, udon::manifest::NowSeconds());
  if (!manifest.ok()) {
    std::fprintf(stderr, "load_bench: capture failed: %s\n", manifest.error().Describe().c_str());
    StopServer(server_pid);
    return 1;
  }
  const Value review = {
      {"reviewer", "load@example.test"},
      {"reviewedAt", udon::manifest::FormatInstant(udon::manifest::NowSeconds())},
      {"assertions", {{"headless", true}, {"independentCalls", true}, {"modelBacked", false},
                      {"sideEffects", Value::array()}, {"concurrency", "safe"}, {"referenceBasedIO", true}}},
      {"inputChannels", {{"/source", "data"}, {"/angles", "data"}, {"/resolution", "data"}}}};
  if (auto set = manifest->SetReview("demo", kTool, review); !set.ok()) {
    std::fprintf(stderr, "load_bench: review refused: %s\n", set.error().Describe().c_str());
    StopServer(server_pid);
    return 1;
  }
  const std::string manifest_path = (dir / "tools.json").string();
  std::ofstream(manifest_path) << manifest->ToPrettyJson();
  const udon::manifest::Binding binding{manifest_path, manifest->sha256(), "demo", kTool};

  auto evidence = udon::gate::EvidenceWriter::Open((dir / "evidence.jsonl").string());
  if (!evidence.ok()) {
    std::fprintf(stderr, "load_bench: %s\n", evidence.error().Describe().c_str());
    StopServer(server_pid);
    return 1;
  }
  udon::gate::GateEnvironment env;
  env.config = &*config;
  env.policy = policy;
  env.state_dir = (dir / "state").string();
  env.evidence = evidence->get();
  env.command = "load";
  env.reuse_connections = false;  // every call runs every step: connect, version, serverInfo
  // LOAD_NO_GET_STREAM=1: HTTP sessions without the optional GET notification stream, to
  // tell that stream's cost apart from the rest.
  const bool get_stream = std::getenv("LOAD_NO_GET_STREAM") == nullptr;
  env.connect = [get_stream](const udon::mcp::ServerConfig& server, udon::mcp::ClientOptions client_options) {
    client_options.http_notification_stream = get_stream;
    return udon::mcp::Client::Connect(server, client_options);
  };
  udon::gate::Gate gate(env);
  udon::gate::CallOptions options;
  options.expect_output = true;

  const std::string load_start = LoadAverage();
  std::vector<double> latencies(static_cast<std::size_t>(calls));
  std::map<std::string, int> failures_by_code;
  // One slot per call and step, written in place: the samples are resident before the first
  // checkpoint, so they do not show as the driver's growth (push_back's doubling did: 7 MiB
  // over 100,000 calls).
  std::map<std::string, std::vector<double>> step_ms;
  for (const char* step : kSteps) step_ms[step].assign(static_cast<std::size_t>(calls), kNoSample);
  std::mutex results_mutex;
  std::vector<Checkpoint> checkpoints;
  double wall_seconds = 0;
  const double cpu_start = CpuSeconds();

  for (int batch_start = 0; batch_start < calls; batch_start += kBatch) {
    std::atomic<int> next{batch_start};
    const int batch_end = batch_start + kBatch;
    const auto batch_clock = Clock::now();
    std::vector<std::thread> workers;
    for (int w = 0; w < concurrency; ++w) {
      workers.emplace_back([&] {
        for (int i = next++; i < batch_end; i = next++) {
          const Value arguments = Arguments(i);
          const auto start = Clock::now();
          const udon::gate::GateResult result = gate.Call(binding, arguments, options);
          const double total = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
          latencies[static_cast<std::size_t>(i)] = total;
          const std::string problem = Unexpected(result, arguments);
          std::lock_guard<std::mutex> guard(results_mutex);
          if (!problem.empty()) ++failures_by_code[problem];
          // The gate's own step timings; what remains is closing the connection.
          double steps = 0;
          for (const auto& step : result.steps) {
            auto slot = step_ms.find(step.step);
            if (slot != step_ms.end()) slot->second[static_cast<std::size_t>(i)] = step.milliseconds;
            steps += step.milliseconds;
          }
          step_ms["(close)"][static_cast<std::size_t>(i)] = total - steps;
        }
      });
    }
    for (auto& worker : workers) worker.join();
    wall_seconds += std::chrono::duration<double>(Clock::now() - batch_clock).count();
    // Nothing is in flight here: what the process holds now, it keeps.
    Checkpoint checkpoint{batch_end, Sample(getpid()), server_pid > 0 ? SettledSample(server_pid) : Usage{},
                          HeapInUseKib()};
    checkpoints.push_back(checkpoint);
    std::fprintf(stderr, "%6d calls, %zu unexpected, RSS %ld KiB\n", batch_end, failures_by_code.size(),
                 checkpoint.driver.rss_kib);
  }
  const double cpu_seconds = CpuSeconds() - cpu_start;
  const std::string load_end = LoadAverage();

  // Every call left exactly one evidence line, each with code ok.
  std::ifstream evidence_lines(dir / "evidence.jsonl");
  std::string line;
  int records = 0;
  int ok_records = 0;
  while (std::getline(evidence_lines, line)) {
    ++records;
    auto record = udon::json::Parse(line);
    if (record.ok() && record->value("code", "") == "ok") ++ok_records;
  }

  std::vector<double> sorted = latencies;
  std::sort(sorted.begin(), sorted.end());
  int unexpected = 0;
  for (const auto& [code, count] : failures_by_code) unexpected += count;

  std::printf("load: %s, %d gated calls of %s at concurrency %d, %s%s\n", transport.c_str(), calls, kTool,
              concurrency,
              transport == "http" ? "one demo server, a fresh MCP session per call"
                                  : "a new demo server process per call",
              transport == "http" && !get_stream ? " (no GET stream)" : "");
  std::printf("load average (1/5/15 min): start %s, end %s; %u CPUs\n", load_start.c_str(), load_end.c_str(),
              std::thread::hardware_concurrency());
  std::printf("throughput: %.1f calls/s (%.1f s wall, excluding checkpoints); driver CPU %.2f ms per call\n",
              calls / wall_seconds, wall_seconds, cpu_seconds * 1000.0 / calls);
  std::printf("latency ms: p50 %.2f  p95 %.2f  p99 %.2f  max %.2f\n", Percentile(sorted, 50),
              Percentile(sorted, 95), Percentile(sorted, 99), sorted.back());
  std::printf("per step ms (p50 / p99):");
  for (const char* step : kSteps) {
    std::vector<double>& values = step_ms[step];
    values.erase(std::remove(values.begin(), values.end(), kNoSample), values.end());  // calls without it
    std::sort(values.begin(), values.end());
    std::printf("  %s %.2f / %.2f", step, Percentile(values, 50), Percentile(values, 99));
  }
  std::printf("\nunexpected outcomes: %d", unexpected);
  for (const auto& [code, count] : failures_by_code) std::printf("  %s x%d", code.c_str(), count);
  std::printf("\nevidence: %d records, %d with code ok\n", records, ok_records);
  std::printf("checkpoints (after N calls, nothing in flight):\n");
  std::printf("  %6s | %9s %9s %9s %11s %12s | %9s %9s %11s\n", "calls", "drv fds", "drv procs", "drv thr",
              "drv RSS KiB", "drv heap KiB", "srv fds", "srv thr", "srv RSS KiB");
  for (const Checkpoint& c : checkpoints) {
    std::printf("  %6d | %9s %9s %9s %11s %12ld | %9s %9s %11s\n", c.calls, Cell(c.driver.fds).c_str(),
                Cell(c.driver.descendants).c_str(), Cell(c.driver.threads).c_str(), Cell(c.driver.rss_kib).c_str(),
                c.heap_kib, Cell(c.server.fds).c_str(), Cell(c.server.threads).c_str(),
                Cell(c.server.rss_kib).c_str());
  }

  std::vector<std::string> failures;
  if (unexpected > 0) failures.push_back(std::to_string(unexpected) + " unexpected call outcomes");
  if (records != calls || ok_records != calls) failures.push_back("evidence does not hold one ok record per call");
  // The baseline: the first checkpoint after LOAD_BASELINE_CALLS (default: the first), so a
  // long run can leave out its warm-up (allocator arenas, pools reaching their size).
  const char* baseline_env = std::getenv("LOAD_BASELINE_CALLS");
  const int baseline_calls = baseline_env != nullptr ? std::atoi(baseline_env) : 0;
  const Checkpoint& baseline = *std::find_if(checkpoints.begin(), checkpoints.end() - 1,
                                             [&](const Checkpoint& c) { return c.calls >= baseline_calls; });
  std::printf("growth from the baseline to the last checkpoint (%d -> %d calls):\n", baseline.calls,
              checkpoints.back().calls);
  CheckGrowth("driver", baseline.driver, checkpoints.back().driver, rss_tolerance_kib, 0, failures);
  if (server_pid > 0) {
    CheckGrowth("server", baseline.server, checkpoints.back().server, rss_tolerance_kib,
                kServerThreadBound - baseline.server.threads, failures);
  }
  StopServer(server_pid);
  fs::remove_all(dir);
  if (!failures.empty()) {
    for (const std::string& failure : failures) std::printf("FAIL: %s\n", failure.c_str());
    return 1;
  }
  std::printf("PASS\n");
  return 0;
}
