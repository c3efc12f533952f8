#include "mcp/protocol/sse.h"

#include <gtest/gtest.h>

namespace udon::mcp {
namespace {

std::vector<SseEvent> ParseAll(std::string_view stream, std::size_t chunk = 1) {
  SseParser parser(1 << 20);
  std::vector<SseEvent> events;
  for (std::size_t i = 0; i < stream.size(); i += chunk) {
    EXPECT_TRUE(parser.Feed(stream.substr(i, chunk), events).ok());
  }
  return events;
}

TEST(SseTest, SkipsPrimingEventsWithoutDataAndKeepsIds) {
  // The SDK's shape: a priming event with an id and an empty data line, then the message.
  auto events = ParseAll("id: p1\ndata: \n\nevent: message\nid: e2\ndata: {\"a\":1}\n\n");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "");
  EXPECT_EQ(events[0].id, "p1");
  EXPECT_EQ(events[1].data, "{\"a\":1}");
  EXPECT_EQ(events[1].id, "e2");
}

TEST(SseTest, HandlesEveryLineEndingAndSplitFeeds) {
  for (std::size_t chunk : {1u, 2u, 3u, 7u, 100u}) {
    auto events = ParseAll("data: a\r\ndata: b\r\rdata:c\n\n: comment\nretry: 500\n\n", chunk);
    ASSERT_EQ(events.size(), 2u) << chunk;
    EXPECT_EQ(events[0].data, "a\nb");
    EXPECT_EQ(events[1].data, "c");
  }
}

// Found by fuzzing (fuzz/regressions/mcp_sse/): a BOM split across chunks became data.
TEST(SseTest, DropsALeadingBomEvenWhenSplitAcrossChunks) {
  for (std::size_t chunk : {1u, 2u, 3u, 100u}) {
    auto events = ParseAll("\xEF\xBB\xBF" "data: x\n\n", chunk);
    ASSERT_EQ(events.size(), 1u) << chunk;
    EXPECT_EQ(events[0].data, "x");
  }
  // A BOM only at the very start; a partial one is ordinary bytes of the first line.
  for (std::size_t chunk : {1u, 100u}) {
    auto events = ParseAll("\xEF\xBB\n" "data: x\n\n" "\xEF\xBB\xBF" "data: y\n\n", chunk);
    ASSERT_EQ(events.size(), 1u) << chunk;
    EXPECT_EQ(events[0].data, "x");  // "\xEF\xBB\xBFdata" later is an unknown field
  }
}

TEST(SseTest, RecordsRetry) {
  SseParser parser(1024);
  std::vector<SseEvent> events;
  ASSERT_TRUE(parser.Feed("id: event-1\nretry: 500\ndata: \n\n", events).ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].retry_ms, 500);
  EXPECT_EQ(parser.retry_ms(), 500);
  EXPECT_EQ(parser.last_event_id(), "event-1");
}

TEST(SseTest, BoundsLineAndEventSize) {
  SseParser parser(16);
  std::vector<SseEvent> events;
  EXPECT_EQ(parser.Feed(std::string(100, 'x'), events).error().code, "sse.too_large");
  SseParser parser2(16);
  EXPECT_EQ(parser2.Feed("data: 0123456789\ndata: 0123456789\n", events).error().code,
            "sse.too_large");
}

TEST(SseTest, WriterAndParserAgree) {
  std::string stream = FormatSseEvent("line1\nline2", "7", "message", 250) + FormatSseEvent("");
  auto events = ParseAll(stream);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "line1\nline2");
  EXPECT_EQ(events[0].id, "7");
  EXPECT_EQ(events[0].retry_ms, 250);
  EXPECT_EQ(events[1].data, "");
}

}  // namespace
}  // namespace udon::mcp
