// What the benchmarks share to time things: milliseconds since a steady-clock instant, the
// median and a percentile of samples, and the demo server's render_turntable arguments.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

#include "json/json.h"

namespace udon::bench {

using Clock = std::chrono::steady_clock;

inline double Ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
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
