// Metrics in Prometheus' text exposition format (version 0.0.4): counters, gauges and
// histograms in families declared once with their help text, each series named by its
// labels. Label values are the caller's to bound: tool names of reviewed tools, codes of
// the contract, step names, fixed words; never an argument or result value.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace udon::telemetry {

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricKind { kCounter, kGauge, kHistogram };

class Metrics {
 public:
  // Declares a family; a histogram's upper bounds ascend (+Inf is implied). Declaring a
  // name twice keeps the first.
  void Declare(std::string_view name, MetricKind kind, std::string_view help, std::vector<double> buckets = {});
  // Counter += by; gauge = value (or a counter sampled from a monotonic source); histogram
  // observes value. A name never declared, or
  // declared as another kind, is ignored (a programming error costs a series, never a call).
  void Add(std::string_view name, const Labels& labels, double by = 1);
  void Set(std::string_view name, const Labels& labels, double value);
  void Observe(std::string_view name, const Labels& labels, double value);
  // Runs before every Render (outside the lock), to Set gauges sampled at scrape time.
  void AddSampler(std::function<void(Metrics&)> sampler);
  // The whole page, families in name order, series in label order.
  std::string Render();

 private:
  struct Series {
    double value = 0;                 // counter, gauge; histogram: the sum
    std::vector<double> bucket_hits;  // histogram: per upper bound, not cumulative
    double count = 0;                 // histogram
  };
  struct Family {
    MetricKind kind = MetricKind::kCounter;
    std::string help;
    std::vector<double> buckets;
    std::map<Labels, Series> series;
  };
  Series* Find(std::string_view name, MetricKind kind, const Labels& labels);
  static void RenderFamily(std::string& page, const std::string& name, const Family& family);

  std::mutex mutex_;
  std::map<std::string, Family, std::less<>> families_;
  std::mutex samplers_mutex_;
  std::vector<std::function<void(Metrics&)>> samplers_;
};

// The text exposition format's content type.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Upper bounds in seconds for gate steps and store operations: 0.5 ms to 30 s.
std::vector<double> DurationBuckets();

}  // namespace udon::telemetry
