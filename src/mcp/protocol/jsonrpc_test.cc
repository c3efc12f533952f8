#include "mcp/protocol/jsonrpc.h"

#include <gtest/gtest.h>

namespace udon::mcp {
namespace {

TEST(JsonRpcTest, ClassifiesEachKind) {
  auto request = ParseMessage(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}})");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->kind, MessageKind::kRequest);
  EXPECT_EQ(request->id, 7);
  auto notification = ParseMessage(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(notification.ok());
  EXPECT_EQ(notification->kind, MessageKind::kNotification);
  EXPECT_TRUE(notification->params.is_null());
  auto result = ParseMessage(R"({"jsonrpc":"2.0","id":"a","result":{}})");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->kind, MessageKind::kResult);
  auto error = ParseMessage(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}})");
  ASSERT_TRUE(error.ok());
  EXPECT_EQ(error->kind, MessageKind::kError);
  // An error whose id could not be read has none.
  EXPECT_TRUE(ParseMessage(R"({"jsonrpc":"2.0","error":{"code":-32700,"message":"x"}})").ok());
}

TEST(JsonRpcTest, RefusesMalformedFrames) {
  EXPECT_EQ(ParseMessage("not json").error().code, "rpc.malformed");
  EXPECT_EQ(ParseMessage(R"({"jsonrpc":"2.0","id":1,"id":2,"result":{}})").error().code,
            "rpc.malformed");
  EXPECT_EQ(ParseMessage(R"([{"jsonrpc":"2.0","method":"ping","id":1}])").error().code,
            "rpc.batch");
  for (const char* frame : {
           R"({"id":1,"result":{}})",                                  // no jsonrpc
           R"({"jsonrpc":"1.0","id":1,"result":{}})",                  // wrong version
           R"({"jsonrpc":"2.0","id":null,"result":{}})",               // null id
           R"({"jsonrpc":"2.0","id":1.5,"result":{}})",                // fractional id
           R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}})",
           R"({"jsonrpc":"2.0","result":{}})",                         // result without id
           R"({"jsonrpc":"2.0","id":1,"method":5})",                   // method not a string
           R"({"jsonrpc":"2.0","id":1,"method":"x","params":3})",      // scalar params
           R"({"jsonrpc":"2.0","id":1,"error":{"code":"x","message":""}})",
           R"({"jsonrpc":"2.0","id":1,"result":{},"extra":1})",        // unknown member
           R"("just a string")"}) {
    auto parsed = ParseMessage(frame);
    ASSERT_FALSE(parsed.ok()) << frame;
    EXPECT_EQ(parsed.error().code, "rpc.invalid") << frame;
  }
}

// Found by fuzzing (fuzz/regressions/mcp_jsonrpc/): the member name went into the
// pointer unescaped.
TEST(JsonRpcTest, AnUnknownMembersPointerIsEscaped) {
  auto parsed = ParseMessage(R"({"jsonrpc":"2.0","id":1,"method":"ping","a/b~c":1})");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, "rpc.invalid");
  EXPECT_EQ(parsed.error().pointer, "/a~1b~0c");
}

TEST(JsonRpcTest, RefusesOversizedFramesBeforeParsing) {
  MessageLimits limits;
  limits.max_bytes = 10;
  EXPECT_EQ(ParseMessage(R"({"jsonrpc":"2.0","method":"ping"})", limits).error().code,
            "rpc.too_large");
}

TEST(JsonRpcTest, SerializesOnOneLineAndRoundTrips) {
  Message request = MakeRequest(3, "tools/call", {{"name", "a"}, {"arguments", {{"t", "x\ny"}}}});
  std::string line = SerializeMessage(request);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  auto back = ParseMessage(line);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->method, "tools/call");
  EXPECT_EQ(back->params["arguments"]["t"], "x\ny");
  EXPECT_EQ(SerializeMessage(MakeError(nullptr, kParseError, "Parse error")),
            R"({"error":{"code":-32700,"message":"Parse error"},"jsonrpc":"2.0"})");
}

// SerializeMessage writes members one by one (no copy of a large result into an envelope):
// byte for byte what the envelope object would dump, for every kind.
TEST(JsonRpcTest, SerializingWritesWhatTheEnvelopeObjectWouldDump) {
  const json::Value big = {{"tools", {{{"name", "t"}, {"inputSchema", {{"type", "object"}}}}}}, {"nextCursor", "2"}};
  const std::string invalid_utf8 = "bad \xC0 byte";
  struct Case {
    Message message;
    json::Value envelope;
  };
  const Case cases[] = {
      {MakeRequest(7, "tools/call", {{"name", "a"}}),
       {{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"}, {"params", {{"name", "a"}}}}},
      {MakeRequest("s", "ping"), {{"jsonrpc", "2.0"}, {"id", "s"}, {"method", "ping"}}},
      {MakeNotification("notifications/x", {{"k", invalid_utf8}}),
       {{"jsonrpc", "2.0"}, {"method", "notifications/x"}, {"params", {{"k", invalid_utf8}}}}},
      {MakeResult(9, big), {{"jsonrpc", "2.0"}, {"id", 9}, {"result", big}}},
      {MakeError(4, kInvalidParams, "bad", {{"d", 1}}),
       {{"jsonrpc", "2.0"}, {"id", 4}, {"error", {{"code", kInvalidParams}, {"message", "bad"}, {"data", {{"d", 1}}}}}}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SerializeMessage(c.message), c.envelope.dump(-1, ' ', false, json::Value::error_handler_t::replace));
  }
}

// A server's page carries its Tools serialized (LeanToolList::Frame::kToolsArray): written
// out, it is the same bytes as the page built whole; completed, the same value.
TEST(JsonRpcTest, APageOfSerializedToolsIsWrittenAsThePageBuiltWhole) {
  const json::Value tools = {{{"name", "a"}, {"inputSchema", {{"type", "object"}}}, {"description", "x\ny \u00e9"}},
                             {{"name", "b"}}};
  const json::Value whole_result = {{"tools", tools}, {"nextCursor", "n"}, {"_meta", {{"k", 1}}}, {"ttlMs", 0}};
  auto list = std::make_shared<LeanToolList>();
  list->holds = LeanToolList::Frame::kToolsArray;
  list->frame = tools.dump();
  Message page = MakeResult(5, {{"tools", json::Value::array()}, {"nextCursor", "n"}, {"_meta", {{"k", 1}}}, {"ttlMs", 0}});
  page.lean_tools = list;
  const Message whole = MakeResult(5, whole_result);
  EXPECT_EQ(SerializeMessage(page), SerializeMessage(whole));
  CompleteLeanResult(page);
  EXPECT_EQ(page.lean_tools, nullptr);
  EXPECT_EQ(page.result, whole_result);
}

// A page read lean keeps its frame's spacing (newlines included); written out it is compact
// again, one line, the same bytes as the whole read's.
TEST(JsonRpcTest, APageReadLeanIsWrittenCompactOnOneLine) {
  const std::string frame = "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"tools\":[\n  {\"name\": \"a\",\n   \"x\": [1, 2]}\n]}}";
  auto lean = ParseMessage(frame, {}, /*lean_tool_list=*/true);
  auto whole = ParseMessage(frame);
  ASSERT_TRUE(lean.ok() && whole.ok());
  ASSERT_NE(lean->lean_tools, nullptr);
  const std::string written = SerializeMessage(*lean);
  EXPECT_EQ(written, SerializeMessage(*whole));
  EXPECT_EQ(written.find('\n'), std::string::npos);
}

TEST(JsonRpcTest, ALeanReadKeepsAToolListsToolsAsBytesAndCompletesToTheWholeRead) {
  const std::string frame =
      R"({"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},)"
      R"({"name":"b"}],"nextCursor":"n"}})";
  auto lean = ParseMessage(frame, {}, /*lean_tool_list=*/true);
  ASSERT_TRUE(lean.ok()) << lean.error().Describe();
  ASSERT_NE(lean->lean_tools, nullptr);
  EXPECT_EQ(lean->result["tools"], json::Value::array());
  EXPECT_EQ(lean->result["nextCursor"], "n");
  ASSERT_EQ(lean->lean_tools->tools.size(), 2u);
  EXPECT_EQ(lean->lean_tools->tools[1].name, "b");
  EXPECT_EQ(lean->lean_tools->Bytes(lean->lean_tools->tools[1]), R"({"name":"b"})");

  auto whole = ParseMessage(frame);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->lean_tools, nullptr);
  Message completed = *lean;
  CompleteLeanResult(completed);
  EXPECT_EQ(completed.lean_tools, nullptr);
  EXPECT_EQ(completed.result, whole->result);
}

TEST(JsonRpcTest, ALeanReadRefusesWhatAWholeReadRefusesAndLeavesOtherMessagesWhole) {
  for (const char* bad : {R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","name":"a"}]}})",
                          R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"s":"\udc00"}]}})",
                          R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"s":1]}})"}) {
    auto lean = ParseMessage(bad, {}, true);
    ASSERT_FALSE(lean.ok()) << bad;
    EXPECT_EQ(lean.error().code, ParseMessage(bad).error().code) << bad;
    EXPECT_EQ(lean.error().details, ParseMessage(bad).error().details) << bad;
  }
  for (const char* other : {R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})",
                            R"({"jsonrpc":"2.0","method":"x","params":{"tools":[1]}})",
                            R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":{"tools":[]}}})"}) {
    auto lean = ParseMessage(other, {}, true);
    ASSERT_TRUE(lean.ok()) << other;
    EXPECT_EQ(lean->lean_tools, nullptr) << other;
    EXPECT_EQ(SerializeMessage(*lean), SerializeMessage(*ParseMessage(other))) << other;
  }
}

}  // namespace
}  // namespace udon::mcp
