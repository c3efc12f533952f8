#include "mcp/protocol/sse.h"

#include <charconv>
#include <cstring>

namespace udon::mcp {

namespace {

// Where the first CR or LF of `bytes` is. Two memchr passes, not find_first_of("\r\n"),
// which libstdc++ runs as one call per byte: that was a tenth of the HTTP client's
// instructions per request (docs/benchmarks.md, client CPU).
std::size_t FindLineBreak(std::string_view bytes) {
  const void* lf = std::memchr(bytes.data(), '\n', bytes.size());
  const std::size_t lf_at =
      lf == nullptr ? bytes.size() : static_cast<std::size_t>(static_cast<const char*>(lf) - bytes.data());
  const void* cr = std::memchr(bytes.data(), '\r', lf_at);
  if (cr != nullptr) return static_cast<std::size_t>(static_cast<const char*>(cr) - bytes.data());
  return lf == nullptr ? std::string_view::npos : lf_at;
}

}  // namespace

SseParser::SseParser(std::size_t max_event_bytes) : max_event_bytes_(max_event_bytes) {}

Status SseParser::Feed(std::string_view bytes, std::vector<SseEvent>& out) {
  // A leading UTF-8 BOM is dropped, also when it arrives split across chunks: its bytes
  // are held back until they either complete it or turn out to be data.
  std::string held_then_bytes;
  if (!started_) {
    static constexpr std::string_view kBom = "\xEF\xBB\xBF";
    while (!bytes.empty() && bom_bytes_ < kBom.size() && bytes.front() == kBom[bom_bytes_]) {
      ++bom_bytes_;
      bytes.remove_prefix(1);
    }
    if (bom_bytes_ == kBom.size()) {
      started_ = true;
    } else if (!bytes.empty()) {
      started_ = true;
      held_then_bytes.assign(kBom.substr(0, bom_bytes_)).append(bytes);
      bytes = held_then_bytes;
    }
  }
  // Whole runs up to the next line break at a time: a hostile 100 MB line must hit the
  // limit at memory speed, not one byte at a time.
  while (!bytes.empty()) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (bytes.front() == '\n') {
        bytes.remove_prefix(1);
        continue;
      }
    }
    const std::size_t end = FindLineBreak(bytes);
    const std::size_t take = end == std::string_view::npos ? bytes.size() : end;
    if (line_.size() + take > max_event_bytes_) {
      return udon::MakeError("sse.too_large", "event stream line exceeds the size limit");
    }
    const std::string_view piece = bytes.substr(0, take);
    if (end == std::string_view::npos) {
      line_.append(piece);
      break;
    }
    skip_lf_ = bytes[end] == '\r';
    bytes.remove_prefix(end + 1);
    if (line_.empty()) {
      // The whole line is in this chunk: processed where it lies, without a copy.
      UDON_RETURN_IF_ERROR(ProcessLine(piece, out));
    } else {
      line_.append(piece);
      UDON_RETURN_IF_ERROR(ProcessLine(line_, out));
      line_.clear();
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
      return udon::MakeError("sse.too_large", "event data exceeds the size limit");
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
