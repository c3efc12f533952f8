// Fuzz target: the SSE parser. Input: one byte N, then N chunk lengths (one byte each),
// then the stream. Oracles: the events (and the error, if any) do not depend on how the
// stream is cut: in one piece, at the fuzzer's chunk lengths, and byte by byte; and each
// event, written back with FormatSseEvent, parses to the same event.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/check.h"
#include "mcp/protocol/sse.h"

namespace {

using udon::mcp::SseEvent;
using udon::mcp::SseParser;

constexpr std::size_t kMaxEventBytes = 4096;  // small, so the size limits are reached

struct Outcome {
  std::vector<SseEvent> events;
  std::string error_code;  // empty: no error
  std::string last_event_id;
  std::optional<long> retry_ms;
};

bool SameEvents(const std::vector<SseEvent>& a, const std::vector<SseEvent>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].id != b[i].id || a[i].event != b[i].event || a[i].data != b[i].data ||
        a[i].retry_ms != b[i].retry_ms) {
      return false;
    }
  }
  return true;
}

Outcome FeedChunks(std::string_view stream, const std::vector<std::size_t>& lengths) {
  SseParser parser(kMaxEventBytes);
  Outcome outcome;
  std::size_t next = 0;
  while (outcome.error_code.empty()) {
    std::size_t length = stream.size();
    if (next < lengths.size()) length = lengths[next++];
    const std::string_view chunk = stream.substr(0, length);
    stream.remove_prefix(chunk.size());
    auto status = parser.Feed(chunk, outcome.events);
    if (!status.ok()) outcome.error_code = status.error().code;
    if (stream.empty()) break;
  }
  outcome.last_event_id = parser.last_event_id();
  outcome.retry_ms = parser.retry_ms();
  return outcome;
}

void CheckSame(const Outcome& a, const Outcome& b) {
  UDON_FUZZ_CHECK(a.error_code == b.error_code, "chunking does not change the error");
  UDON_FUZZ_CHECK(SameEvents(a.events, b.events), "chunking does not change the events");
  if (a.error_code.empty()) {
    UDON_FUZZ_CHECK(a.last_event_id == b.last_event_id, "chunking does not change the last id");
    UDON_FUZZ_CHECK(a.retry_ms == b.retry_ms, "chunking does not change the retry time");
  }
}

void CheckFormatRoundTrip(const SseEvent& event) {
  SseParser parser(kMaxEventBytes);
  std::vector<SseEvent> out;
  const std::string text = udon::mcp::FormatSseEvent(event.data, event.id, event.event,
                                                     event.retry_ms);
  auto status = parser.Feed(text, out);
  if (!status.ok()) {
    // The framing adds a few bytes per line; only events near the limit may not fit.
    UDON_FUZZ_CHECK(status.error().code == "sse.too_large" &&
                        text.size() + 16 > kMaxEventBytes,
                    "a formatted event parses");
    return;
  }
  UDON_FUZZ_CHECK(out.size() == 1, "a formatted event is one event");
  UDON_FUZZ_CHECK(SameEvents(out, {event}), "a formatted event parses to itself");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t count = data[0];
  if (size < 1 + count) return 0;
  std::vector<std::size_t> lengths(data + 1, data + 1 + count);
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1 + count,
                                size - 1 - count);

  const Outcome whole = FeedChunks(stream, {});
  CheckSame(whole, FeedChunks(stream, lengths));
  CheckSame(whole, FeedChunks(stream, std::vector<std::size_t>(stream.size(), 1)));
  for (const SseEvent& event : whole.events) CheckFormatRoundTrip(event);
  return 0;
}
