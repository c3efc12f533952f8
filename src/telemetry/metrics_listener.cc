#include "telemetry/metrics_listener.h"

#include <httplib.h>

#include <thread>

namespace udon::telemetry {

struct MetricsListener::Impl {
  httplib::Server http;
  std::thread thread;
};

MetricsListener::MetricsListener(Metrics& metrics) : impl_(std::make_unique<Impl>()) {
  impl_->http.Get("/metrics", [&metrics](const httplib::Request&, httplib::Response& response) {
    response.set_content(metrics.Render(), kMetricsContentType);
  });
}

MetricsListener::~MetricsListener() {
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<int> MetricsListener::Start(const std::string& host, int port) {
  const int bound = port == 0 ? impl_->http.bind_to_any_port(host)
                              : (impl_->http.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) return MakeError("http.bind_failed", "cannot bind the metrics listener");
  impl_->thread = std::thread([this] { impl_->http.listen_after_bind(); });
  return bound;
}

}  // namespace udon::telemetry
