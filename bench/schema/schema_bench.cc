// Throughput of udon::schema on an MCP-like inputSchema over a pool of instances:
// validations per second with the instances already parsed (IsValid), with parsing the
// bytes first into a json::Value (json::Parse + IsValid, the DOM path), and straight from
// the bytes (IsValidText, the text path: a flat json::Document, no json::Value).
//
//   schema_bench SCHEMA.json POOL.json VALIDATIONS [validate-only|text-only]
//
// validate-only skips both parse phases, text-only runs only the text path (for
// profilers).
//
// Prints one JSON line (the same fields as ajv.mjs). Rates are per second of process CPU
// time (the machine may be shared; wall-clock rates are printed beside them).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "base/file.h"
#include "json/json.h"
#include "schema/schema.h"

namespace {

using Clock = std::chrono::steady_clock;

udon::Result<udon::json::Value> Load(const char* path) {
  UDON_ASSIGN_OR_RETURN(std::string text, udon::base::ReadFile(path));
  return udon::json::Parse(text);
}

double CpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

struct Timing {
  double cpu_seconds = 0;
  double wall_seconds = 0;
};

template <class Body>
Timing TimeIt(std::size_t count, Body body, std::size_t* valid) {
  for (std::size_t i = 0; i < std::min<std::size_t>(count, 100000); ++i) body(i);  // warm-up
  *valid = 0;
  const auto wall_before = Clock::now();
  const double cpu_before = CpuSeconds();
  for (std::size_t i = 0; i < count; ++i) *valid += body(i) ? 1 : 0;
  return {CpuSeconds() - cpu_before,
          std::chrono::duration<double>(Clock::now() - wall_before).count()};
}

}  // namespace

int main(int argc, char** argv) {
  const bool validate_only = argc == 5 && std::string(argv[4]) == "validate-only";
  const bool text_only = argc == 5 && std::string(argv[4]) == "text-only";
  if (argc != 4 && !validate_only && !text_only) {
    std::fprintf(stderr,
                 "usage: schema_bench SCHEMA.json POOL.json VALIDATIONS "
                 "[validate-only|text-only]\n");
    return 2;
  }
  auto schema = Load(argv[1]);
  auto pool = Load(argv[2]);
  if (!schema.ok() || !pool.ok() || !pool->is_array() || pool->empty()) {
    std::fprintf(stderr, "cannot read the schema or the pool\n");
    return 2;
  }
  auto compiled = udon::schema::CompiledSchema::Compile(*schema);
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s\n", compiled.error().Describe().c_str());
    return 2;
  }
  const std::size_t count = std::stoull(argv[3]);
  const std::vector<udon::json::Value> instances(pool->begin(), pool->end());
  std::vector<std::string> texts;
  std::size_t pool_bytes = 0;
  for (const auto& instance : instances) {
    texts.push_back(instance.dump());
    pool_bytes += texts.back().size();
  }
  const std::size_t size = instances.size();
  std::size_t valid_in_pool = 0;
  for (const auto& instance : instances) valid_in_pool += compiled->IsValid(instance) ? 1 : 0;

  std::size_t valid = 0;
  const Timing validate = TimeIt(
      text_only ? 0 : count, [&](std::size_t i) { return compiled->IsValid(instances[i % size]); }, &valid);
  const Timing parse = TimeIt(
      validate_only || text_only ? 0 : count,
      [&](std::size_t i) {
        auto parsed = udon::json::Parse(texts[i % size]);
        return parsed.ok() && compiled->IsValid(*parsed);
      },
      &valid);
  const Timing text = TimeIt(
      validate_only ? 0 : count,
      [&](std::size_t i) {
        auto verdict = compiled->IsValidText(texts[i % size]);
        return verdict.ok() && *verdict;
      },
      &valid);
  const double n = static_cast<double>(count);
  const double mean_bytes = static_cast<double>(pool_bytes) / static_cast<double>(size);
  std::printf(
      "{\"validator\":\"udon::schema\",\"validations\":%zu,\"valid_in_pool\":%zu,"
      "\"validate_per_cpu_s\":%.0f,\"parse_validate_per_cpu_s\":%.0f,"
      "\"parse_validate_mb_per_cpu_s\":%.1f,\"validate_per_wall_s\":%.0f,"
      "\"parse_validate_per_wall_s\":%.0f,\"parse_validate_text_per_cpu_s\":%.0f,"
      "\"parse_validate_text_mb_per_cpu_s\":%.1f,\"parse_validate_text_per_wall_s\":%.0f}\n",
      count, valid_in_pool, n / validate.cpu_seconds, n / parse.cpu_seconds,
      mean_bytes * n / parse.cpu_seconds / 1e6, n / validate.wall_seconds,
      n / parse.wall_seconds, n / text.cpu_seconds, mean_bytes * n / text.cpu_seconds / 1e6,
      n / text.wall_seconds);
  return 0;
}
