#include "telemetry/otlp.h"

#include <httplib.h>

#include <cctype>
#include <chrono>
#include <string_view>

#include "json/json.h"

namespace udon::telemetry {
namespace {

constexpr auto kScheduleDelay = std::chrono::seconds(1);

// The first set of OTEL_EXPORTER_OTLP_TRACES_<name> and OTEL_EXPORTER_OTLP_<name>.
std::string Variable(const std::function<const char*(const char*)>& getenv, const std::string& name) {
  for (const std::string& full : {"OTEL_EXPORTER_OTLP_TRACES_" + name, "OTEL_EXPORTER_OTLP_" + name}) {
    const char* value = getenv(full.c_str());
    if (value != nullptr && *value != '\0') return value;
  }
  return {};
}

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string Trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(" \t") - first + 1));
}

// "k1=v1,k2=v2" (W3C Baggage's list form, values percent-encoded).
std::vector<std::pair<std::string, std::string>> ParseHeaders(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> headers;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const std::size_t equals = item.find('=');
    if (equals != std::string_view::npos && !Trim(item.substr(0, equals)).empty()) {
      headers.emplace_back(Trim(item.substr(0, equals)), PercentDecode(Trim(item.substr(equals + 1))));
    }
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return headers;
}

bool IsHttpUrl(const std::string& url) { return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0; }

// scheme://host[:port] and the path ("/" when absent).
std::pair<std::string, std::string> SplitUrl(const std::string& url) {
  const std::size_t path = url.find('/', url.find("://") + 3);
  if (path == std::string::npos) return {url, "/"};
  return {url.substr(0, path), url.substr(path)};
}

std::string WithTracesPath(std::string base) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/v1/traces";
}

json::Value AttributeJson(const std::string& key, const AttributeValue& value) {
  json::Value any = json::Value::object();
  if (const auto* text = std::get_if<std::string>(&value)) {
    any["stringValue"] = *text;
  } else if (const auto* number = std::get_if<std::int64_t>(&value)) {
    any["intValue"] = std::to_string(*number);
  } else {
    any["boolValue"] = std::get<bool>(value);
  }
  return {{"key", key}, {"value", any}};
}

json::Value SpanJson(const Span& span) {
  json::Value attributes = json::Value::array();
  for (const auto& [key, value] : span.attributes) attributes.push_back(AttributeJson(key, value));
  json::Value out = {{"traceId", span.trace_id},
                     {"spanId", span.span_id},
                     {"name", span.name},
                     {"kind", static_cast<int>(span.kind)},
                     {"startTimeUnixNano", std::to_string(span.start_unix_nanos)},
                     {"endTimeUnixNano", std::to_string(span.end_unix_nanos)},
                     {"attributes", attributes},
                     {"status", {{"code", span.error ? 2 : 0}}}};
  if (!span.parent_span_id.empty()) out["parentSpanId"] = span.parent_span_id;
  if (!span.trace_state.empty()) out["traceState"] = span.trace_state;
  return out;
}

}  // namespace

Result<OtlpConfig> OtlpConfigFrom(const std::string& flag_endpoint,
                                  const std::function<const char*(const char*)>& getenv) {
  OtlpConfig config;
  const char* disabled = getenv("OTEL_SDK_DISABLED");
  const char* exporter = getenv("OTEL_TRACES_EXPORTER");
  if ((disabled != nullptr && std::string_view(disabled) == "true") ||
      (exporter != nullptr && std::string_view(exporter) == "none")) {
    return config;
  }
  if (!flag_endpoint.empty()) {
    config.endpoint = WithTracesPath(flag_endpoint);
  } else if (const char* traces = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); traces != nullptr && *traces) {
    config.endpoint = traces;
  } else if (const char* base = getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); base != nullptr && *base) {
    config.endpoint = WithTracesPath(base);
  }
  if (config.endpoint.empty()) return config;
  if (!IsHttpUrl(config.endpoint)) {
    return MakeError("usage.invalid", "the OTLP endpoint must be an http:// or https:// URL");
  }
  const std::string protocol = Variable(getenv, "PROTOCOL");
  if (!protocol.empty() && protocol != "http/json") {
    return MakeError("usage.invalid", "udon-mcp exports OTLP as http/json only; set OTEL_EXPORTER_OTLP_PROTOCOL=http/json");
  }
  config.headers = ParseHeaders(Variable(getenv, "HEADERS"));
  if (const std::string timeout = Variable(getenv, "TIMEOUT"); !timeout.empty()) {
    if (timeout.size() > 9 || timeout.find_first_not_of("0123456789") != std::string::npos) {
      return MakeError("usage.invalid", "OTEL_EXPORTER_OTLP_TIMEOUT must be milliseconds");
    }
    config.timeout_ms = std::stol(timeout);
  }
  if (const char* service = getenv("OTEL_SERVICE_NAME"); service != nullptr && *service) {
    config.service_name = service;
  }
  return config;
}

std::string OtlpJson(const std::vector<Span>& spans, const std::string& service_name) {
  json::Value list = json::Value::array();
  for (const Span& span : spans) list.push_back(SpanJson(span));
  json::Value resource = {
      {"attributes", json::Value::array({AttributeJson("service.name", std::string(service_name))})}};
  json::Value scope = {{"scope", {{"name", "udon-mcp"}}}, {"spans", list}};
  json::Value request = {
      {"resourceSpans", json::Value::array({{{"resource", resource}, {"scopeSpans", json::Value::array({scope})}}})}};
  return request.dump();
}

OtlpExporter::OtlpExporter(OtlpConfig config) : config_(std::move(config)) {
  worker_ = std::thread([this] { Run(); });
}

OtlpExporter::~OtlpExporter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void OtlpExporter::Enqueue(std::vector<Span> spans) {
  bool full_batch = false;
  {
    std::lock_guard lock(mutex_);
    for (Span& span : spans) {
      if (queue_.size() >= kMaxQueued) {
        ++counts_.dropped;
        continue;
      }
      queue_.push_back(std::move(span));
    }
    full_batch = queue_.size() >= kMaxBatch;
  }
  if (full_batch) wake_.notify_all();
}

ExportCounts OtlpExporter::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

// Sends a batch every kScheduleDelay, or at once when a batch is full; on stop, what is left.
void OtlpExporter::Run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, kScheduleDelay, [this] { return stopping_ || queue_.size() >= kMaxBatch; });
    while (!queue_.empty()) {
      std::vector<Span> batch;
      while (!queue_.empty() && batch.size() < kMaxBatch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      lock.unlock();
      const bool sent = Send(batch);
      lock.lock();
      (sent ? counts_.exported : counts_.failed) += batch.size();
      if (stopping_ && !sent) {
        counts_.failed += queue_.size();
        queue_.clear();
      }
    }
    if (stopping_) return;
  }
}

bool OtlpExporter::Send(const std::vector<Span>& batch) {
  const auto [origin, path] = SplitUrl(config_.endpoint);
  httplib::Client client(origin);
  const auto timeout = std::chrono::milliseconds(config_.timeout_ms);
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  httplib::Headers headers;
  for (const auto& [name, value] : config_.headers) headers.emplace(name, value);
  auto response = client.Post(path, headers, OtlpJson(batch, config_.service_name), "application/json");
  return response && response->status >= 200 && response->status < 300;
}

}  // namespace udon::telemetry
