// Server-Sent Events framing (WHATWG HTML "event stream" interpretation), as Streamable
// HTTP uses it: the server writes events, the client parses them incrementally.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace udon::mcp {

struct SseEvent {
  std::string id;                  // last event id seen (sticky per the spec)
  std::string event = "message";   // event type
  std::string data;                // data lines joined with '\n'
  std::optional<long> retry_ms;    // a "retry:" field seen in this event block
};

// Feed bytes as they arrive; complete events come out. Bounded: an event whose data grows
// beyond max_event_bytes fails with sse.too_large, a line longer than that likewise.
class SseParser {
 public:
  explicit SseParser(std::size_t max_event_bytes);
  Status Feed(std::string_view bytes, std::vector<SseEvent>& out);
  const std::string& last_event_id() const { return last_event_id_; }
  std::optional<long> retry_ms() const { return retry_ms_; }

 private:
  Status ProcessLine(std::string_view line, std::vector<SseEvent>& out);
  void Dispatch(std::vector<SseEvent>& out);

  std::size_t max_event_bytes_;
  std::string line_;
  bool skip_lf_ = false;     // a CR ended the previous line; a following LF belongs to it
  bool started_ = false;     // a leading UTF-8 BOM is dropped once
  std::size_t bom_bytes_ = 0;  // how much of a leading BOM arrived before started_
  std::string data_;
  bool has_data_ = false;
  std::string event_type_;
  std::string last_event_id_;
  std::optional<long> retry_ms_;
  std::optional<long> block_retry_ms_;
};

// One event block: optional id, optional event type, data (split on '\n' into data lines;
// empty data writes one empty "data:" line), optional retry, ending with a blank line.
std::string FormatSseEvent(std::string_view data, std::string_view id = {},
                           std::string_view event = {}, std::optional<long> retry_ms = {});

}  // namespace udon::mcp
