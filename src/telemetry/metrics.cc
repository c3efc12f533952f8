#include "telemetry/metrics.h"

#include <cmath>
#include <cstdio>

namespace udon::telemetry {
namespace {

// Label values escape backslash, double quote and line feed; help text backslash and
// line feed (the exposition format's rules).
std::string Escape(std::string_view text, bool quote) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Number(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (std::isnan(value)) return "NaN";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string LabelText(const Labels& labels, const std::string& le = {}) {
  std::string text;
  for (const auto& [name, value] : labels) {
    text += (text.empty() ? "" : ",") + name + "=\"" + Escape(value, true) + "\"";
  }
  if (!le.empty()) text += (text.empty() ? "" : ",") + std::string("le=\"") + le + "\"";
  return text.empty() ? text : "{" + text + "}";
}

const char* KindName(MetricKind kind) {
  switch (kind) {
    case MetricKind::kCounter:
      return "counter";
    case MetricKind::kGauge:
      return "gauge";
    case MetricKind::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::vector<double> DurationBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
}

void Metrics::Declare(std::string_view name, MetricKind kind, std::string_view help, std::vector<double> buckets) {
  std::lock_guard lock(mutex_);
  if (families_.find(name) != families_.end()) return;
  Family family;
  family.kind = kind;
  family.help = std::string(help);
  family.buckets = std::move(buckets);
  families_.emplace(std::string(name), std::move(family));
}

Metrics::Series* Metrics::Find(std::string_view name, MetricKind kind, const Labels& labels) {
  auto family = families_.find(name);
  if (family == families_.end() || family->second.kind != kind) return nullptr;
  Series& series = family->second.series[labels];
  series.bucket_hits.resize(family->second.buckets.size());
  return &series;
}

void Metrics::Add(std::string_view name, const Labels& labels, double by) {
  std::lock_guard lock(mutex_);
  if (Series* series = Find(name, MetricKind::kCounter, labels)) series->value += by;
}

void Metrics::Set(std::string_view name, const Labels& labels, double value) {
  std::lock_guard lock(mutex_);
  Series* series = Find(name, MetricKind::kGauge, labels);
  if (series == nullptr) series = Find(name, MetricKind::kCounter, labels);
  if (series != nullptr) series->value = value;
}

void Metrics::Observe(std::string_view name, const Labels& labels, double value) {
  std::lock_guard lock(mutex_);
  auto family = families_.find(name);
  if (family == families_.end()) return;
  Series* series = Find(name, MetricKind::kHistogram, labels);
  if (series == nullptr) return;
  series->value += value;
  series->count += 1;
  const std::vector<double>& bounds = family->second.buckets;
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (value <= bounds[i]) {
      series->bucket_hits[i] += 1;
      break;
    }
  }
}

void Metrics::AddSampler(std::function<void(Metrics&)> sampler) {
  std::lock_guard lock(samplers_mutex_);
  samplers_.push_back(std::move(sampler));
}

void Metrics::RenderFamily(std::string& page, const std::string& name, const Family& family) {
  page += "# HELP " + name + " " + Escape(family.help, false) + "\n";
  page += "# TYPE " + name + " " + KindName(family.kind) + "\n";
  for (const auto& [labels, series] : family.series) {
    if (family.kind != MetricKind::kHistogram) {
      page += name + LabelText(labels) + " " + Number(series.value) + "\n";
      continue;
    }
    double cumulative = 0;
    for (std::size_t i = 0; i < family.buckets.size(); ++i) {
      cumulative += series.bucket_hits[i];
      page += name + "_bucket" + LabelText(labels, Number(family.buckets[i])) + " " + Number(cumulative) + "\n";
    }
    page += name + "_bucket" + LabelText(labels, "+Inf") + " " + Number(series.count) + "\n";
    page += name + "_sum" + LabelText(labels) + " " + Number(series.value) + "\n";
    page += name + "_count" + LabelText(labels) + " " + Number(series.count) + "\n";
  }
}

std::string Metrics::Render() {
  std::vector<std::function<void(Metrics&)>> samplers;
  {
    std::lock_guard lock(samplers_mutex_);
    samplers = samplers_;
  }
  for (const auto& sampler : samplers) sampler(*this);
  std::lock_guard lock(mutex_);
  std::string page;
  for (const auto& [name, family] : families_) RenderFamily(page, name, family);
  return page;
}

}  // namespace udon::telemetry
