// Throughput of parse + RFC 8785 canonicalization + SHA-256 over one document, with the
// input already in memory, and the process's peak memory relative to the input size.
//
//   canonical_bench text FILE   CanonicalSha256Text (the fast path, digest only, as
//                               `udon-mcp digest` runs it)
//   canonical_bench string FILE CanonicalizeText (the canonical bytes as a string) +
//                               Sha256Hex
//   canonical_bench dom FILE    Parse (nlohmann Value) + Canonicalize + Sha256Hex
//
// One mode per process, so that ru_maxrss belongs to that mode alone. Prints one JSON line.
// Throughput is measured in process CPU time (the machine may be shared; one core is the
// goal), wall time is reported beside it.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "json/canonical.h"
#include "base/file.h"
#include "json/json.h"
#include "base/sha256.h"

namespace {

using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  timespec now {};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

udon::Result<std::string> DigestText(const std::string& text) {
  return udon::json::CanonicalSha256Text(text);
}

udon::Result<std::string> DigestString(const std::string& text) {
  UDON_ASSIGN_OR_RETURN(const std::string canonical, udon::json::CanonicalizeText(text));
  return udon::base::Sha256Hex(canonical);
}

udon::Result<std::string> DigestDom(const std::string& text) {
  UDON_ASSIGN_OR_RETURN(const udon::json::Value value, udon::json::Parse(text));
  UDON_ASSIGN_OR_RETURN(const std::string canonical, udon::json::Canonicalize(value));
  return udon::base::Sha256Hex(canonical);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "text" && mode != "string" && mode != "dom") {
    std::fprintf(stderr, "usage: canonical_bench text|string|dom FILE\n");
    return 2;
  }
  udon::Result<std::string> input = udon::base::ReadFile(argv[2]);
  if (!input.ok()) {
    std::fprintf(stderr, "%s\n", input.error().Describe().c_str());
    return 2;
  }
  const std::string& text = *input;
  auto run = mode == "text" ? DigestText : mode == "string" ? DigestString : DigestDom;

  // At least 5 runs and 3 seconds; report the medians and the best run.
  std::vector<double> seconds;
  std::vector<double> wall_seconds;
  std::string digest;
  const auto start = Clock::now();
  while (seconds.size() < 5 || Clock::now() - start < std::chrono::seconds(3)) {
    const auto wall_before = Clock::now();
    const double before = CpuSeconds();
    udon::Result<std::string> result = run(text);
    seconds.push_back(CpuSeconds() - before);
    wall_seconds.push_back(std::chrono::duration<double>(Clock::now() - wall_before).count());
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", result.error().Describe().c_str());
      return 1;
    }
    digest = *result;
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(wall_seconds.begin(), wall_seconds.end());
  const double best = seconds.front();
  const double median = seconds[seconds.size() / 2];
  const double wall_median = wall_seconds[wall_seconds.size() / 2];
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  const double megabytes = static_cast<double>(text.size()) / 1e6;
  const double peak_bytes = static_cast<double>(usage.ru_maxrss) * 1024.0;
  std::printf(
      "{\"pipeline\":\"udon %s\",\"runs\":%zu,\"best_cpu_ms\":%.2f,\"cpu_ms\":%.2f,"
      "\"wall_ms\":%.2f,\"mb_per_s\":%.1f,\"best_mb_per_s\":%.1f,"
      "\"input_mb\":%.2f,\"peak_rss_mb\":%.1f,\"peak_over_input\":%.2f,\"sha256\":\"%s\"}\n",
      mode.c_str(), seconds.size(), best * 1e3, median * 1e3, wall_median * 1e3,
      megabytes / median, megabytes / best, megabytes,
      peak_bytes / 1e6, peak_bytes / static_cast<double>(text.size()), digest.c_str());
  return 0;
}
