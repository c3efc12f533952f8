#include "mcp/sse.h"

#include <charconv>

namespace udon::mcp {

SseParser::SseParser(std::size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

Status SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  if (!started_ && !bytes.empty()) {
    started_ = true;
    if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  }
  for (char c : bytes) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      skip_lf_ = c == '\r';
      UDON_RETURN_IF_ERROR(ProcessLine(line_, out));
      line_.clear();
      continue;
    }
    line_.push_back(c);
    if (line_.size() > max_event_bytes_) {
      return MakeError("sse.too_large", "event stream line exceeds the size limit");
    }
  }
  return OkStatus();
}

Status SseParser::ProcessLine(std::string_view line, std::vector<SseEvent>& out) {
  if (line.empty()) {
    Dispatch(out);
    return OkStatus();
  }
  if (line.front() == ':') return OkStatus();  // comment
  std::string_view field = line;
  std::string_view value;
  if (auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
    if (data_.size() > max_event_bytes_) {
      return MakeError("sse.too_large", "event data exceeds the size limit");
    }
  } else if (field == "event") {
    event_type_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_event_id_.assign(value);
  } else if (field == "retry") {
    long ms = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
    if (ec == std::errc() && ptr == value.data() + value.size() && !value.empty()) {
      retry_ms_ = ms;
      block_retry_ms_ = ms;
    }
  }
  return OkStatus();  // unknown fields are ignored
}

void SseParser::Dispatch(std::vector<SseEvent>& out) {
  if (has_data_) {
    SseEvent event;
    event.id = last_event_id_;
    event.event = event_type_.empty() ? "message" : event_type_;
    event.data = std::move(data_);
    event.retry_ms = block_retry_ms_;
    out.push_back(std::move(event));
  }
  data_.clear();
  has_data_ = false;
  event_type_.clear();
  block_retry_ms_.reset();
}

std::string FormatSseEvent(std::string_view data, std::string_view id, std::string_view event,
                           std::optional<long> retry_ms) {
  std::string out;
  if (!id.empty()) out.append("id: ").append(id).append("\n");
  if (!event.empty()) out.append("event: ").append(event).append("\n");
  if (retry_ms) out.append("retry: ").append(std::to_string(*retry_ms)).append("\n");
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = data.find('\n', start);
    out.append("data: ").append(data.substr(start, end - start)).append("\n");
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  out.append("\n");
  return out;
}

}  // namespace udon::mcp
