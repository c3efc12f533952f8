// serve --metrics-listen: the metrics page on a listener of its own (GET /metrics, nothing
// else), so a stdio gateway has one too and scrapes never queue behind MCP requests.
#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "telemetry/metrics.h"

namespace udon::telemetry {

class MetricsListener {
 public:
  explicit MetricsListener(Metrics& metrics);
  ~MetricsListener();  // stops and joins
  MetricsListener(const MetricsListener&) = delete;
  MetricsListener& operator=(const MetricsListener&) = delete;

  // Binds HOST:PORT (0: any free port) and serves on a thread of its own; the bound port.
  // Errors: http.bind_failed.
  Result<int> Start(const std::string& host, int port);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace udon::telemetry
