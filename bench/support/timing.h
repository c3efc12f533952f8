// What the benchmarks share to time things: milliseconds since a steady-clock instant, the
// median and a percentile of samples, this process's CPU time, and the demo server's render_turntable arguments.
#pragma once

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "json/json.h"

namespace udon::bench {

using Clock = std::chrono::steady_clock;

inline double Ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// CPU time of this process (all its threads) in milliseconds: the client's own cost when
// the server is another process, and far less disturbed than wall time on a busy machine.
inline double ProcessCpuMs() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
}

// CPU time (user + system) another process has used so far, in milliseconds, from
// /proc/PID/stat; 0 when it cannot be read.
inline double ProcessCpuMsOf(int pid) {
  std::FILE* file = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (file == nullptr) return 0;
  char text[1024] = {};
  const std::size_t n = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const char* rest = std::strrchr(text, ')');
  if (n == 0 || rest == nullptr) return 0;
  unsigned long utime = 0, stime = 0;
  if (std::sscanf(rest + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return 0;
  return static_cast<double>(utime + stime) * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// render_turntable's arguments, valid against its inputSchema.
inline const json::Value kRenderArgs = {
    {"source", "https://assets.example.test/a.blend"}, {"angles", 2}, {"resolution", 1024}};

}  // namespace udon::bench
