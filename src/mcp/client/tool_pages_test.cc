#include "mcp/client/tool_pages.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "mcp/client/client.h"
#include "mcp/client/transport.h"
#include "mcp/testing/memory_transport.h"

namespace udon::mcp {
namespace {

using std::chrono::milliseconds;

// A page shaped like @modelcontextprotocol/server-everything's: schemas with $schema,
// enums, nested objects and arrays, defaults, annotations, outputSchema, _meta; text with
// escapes and non-ASCII; numbers of every kind the parser keeps apart.
std::string EverythingLikeFrame() {
  return R"({"jsonrpc":"2.0","id":7,"result":{"tools":[)"
         R"({"name":"echo","description":"Echoes back the input","inputSchema":{"type":"object",)"
         R"("properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"],)"
         R"("additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}},)"
         R"({"name":"add","title":"Add \"two\" numbers\n\u00e9\u4e2d\ud83d\ude00","inputSchema":{"type":"object",)"
         R"("properties":{"a":{"type":"number","minimum":-1e3,"maximum":1.5E+2},"b":{"type":"integer",)"
         R"("default":18446744073709551615,"multipleOf":-9223372036854775808}}},)"
         R"("annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":null}},)"
         R"({"name":"longRunningOperation","inputSchema":{"type":"object","properties":{"steps":{"type":"array",)"
         R"("items":{"type":"object","properties":{"kind":{"enum":["a","b",1,2.25,-0,true,null]}}}}}},)"
         R"("outputSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"}}},)"
         R"("_meta":{"io.example/x":{"y":[[],{}]}}},)"
         R"({"name":"zeta\\slash\/","inputSchema":{"type":"object"},"icons":[{"src":"data:image/png;base64,AAAA"}]})"
         R"(],"nextCursor":"c\u0031","_meta":{"example/page":1}}})";
}

// The listed page as a caller reads it, from a frame read lean.
json::Value BuiltFromLeanRead(std::string_view frame) {
  auto lean = ParseFrame(frame, kDefaultMaxMessageBytes, /*lean_tool_list=*/true);
  EXPECT_TRUE(lean.ok());
  if (!lean.ok()) return nullptr;
  EXPECT_NE(lean->lean_tools, nullptr);
  ListedPages pages;
  pages.Append(lean->result, lean->lean_tools);
  EXPECT_FALSE(pages.built());
  EXPECT_EQ(pages.size(), 1u);
  json::Value built = pages[0];
  EXPECT_TRUE(pages.built());
  return built;
}

TEST(ListedPagesTest, ToolsBuiltFromTheLeanReadEqualAWholeRead) {
  for (const std::string& frame :
       {EverythingLikeFrame(), std::string(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})"),
        // Elements that are not Tool objects are kept as they are (the client judges them).
        std::string(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[1,"x",[{"a":1}],null,{}]}})"),
        // Spacing and newlines of a pretty-printed frame.
        std::string("{\n \"jsonrpc\": \"2.0\",\n \"id\": \"s\",\n \"result\": {\n  \"tools\": [\n   "
                    "{ \"name\" : \"a\" ,\n \"inputSchema\": { } }\n  ]\n }\n}\n")}) {
    auto whole = ParseFrame(frame, kDefaultMaxMessageBytes);
    ASSERT_TRUE(whole.ok()) << frame;
    const json::Value built = BuiltFromLeanRead(frame);
    EXPECT_EQ(built, whole->result) << frame;
    EXPECT_EQ(built.dump(), whole->result.dump()) << frame;  // number kinds and member order too
  }
}

TEST(ListedPagesTest, AThousandToolsInTenPagesAreBuiltExactlyOnceWhenRead) {
  ListedPages pages;
  std::vector<json::Value> expected;
  for (int p = 0; p < 10; ++p) {
    json::Value result = {{"tools", json::Value::array()}, {"nextCursor", std::to_string(p)}};
    for (int t = 0; t < 100; ++t) {
      result["tools"].push_back({{"name", "tool_" + std::to_string(p * 100 + t)},
                                 {"inputSchema", {{"type", "object"}, {"properties", {{"n", {{"type", "integer"}}}}}}}});
    }
    const std::string frame = SerializeMessage(MakeResult(p, result));
    auto lean = ParseFrame(frame, kDefaultMaxMessageBytes, true);
    ASSERT_TRUE(lean.ok());
    ASSERT_EQ(lean->lean_tools->tools.size(), 100u);
    pages.Append(lean->result, lean->lean_tools);
    expected.push_back(std::move(result));
  }
  EXPECT_FALSE(pages.built());
  const ListedPages& view = pages;
  std::size_t seen = 0;
  for (const json::Value& page : view) seen += page["tools"].size();
  EXPECT_EQ(seen, 1000u);
  EXPECT_TRUE(pages.built());
  std::vector<json::Value> taken = std::move(pages);
  EXPECT_EQ(taken, expected);
}

TEST(ListedPagesTest, APageReadWholeIsKeptAsItIs) {
  ListedPages pages;
  pages.Append({{"tools", {{{"name", "a"}}}}}, nullptr);
  EXPECT_TRUE(pages.built());
  EXPECT_EQ(pages[0]["tools"][0]["name"], "a");
}

// Hostile frames: the lean read refuses exactly what the whole read refuses, with the same
// codes (the frame's, and the parser's underneath).
TEST(ListedPagesTest, HostileFramesAreRefusedWithTheSameCodesAsAWholeRead) {
  const std::string head = R"({"jsonrpc":"2.0","id":1,"result":{"tools":[)";
  const std::string tail = "]}}";
  std::string deep = head + R"({"name":"d","inputSchema":)";
  for (int i = 0; i < 300; ++i) deep += "[";
  for (int i = 0; i < 300; ++i) deep += "]";
  deep += "}" + tail;
  std::string many = head + "{";
  for (int i = 0; i < 40; ++i) many += "\"m" + std::to_string(i) + "\":0,";
  many += R"("m31":1})" + tail;
  const std::string cases[] = {
      head + R"({"name":"a","name":"b"})" + tail,
      head + R"({"name":"a","inputSchema":{"properties":{"x":{"type":"string","type":"number"}}}})" + tail,
      head + R"({"s":{"a":1,"\u0061":2}})" + tail,
      many,
      deep,
      head + "{\"name\":\"\xC0\xAF\"}" + tail,
      head + R"({"name":"\udc00"})" + tail,
      head + R"({"n":1e999})" + tail,
      head + R"({"n":[1,]})" + tail,
      head + R"({"name":"a"})" + tail + "x",
      R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"a":1}]},"result":{}})",
      R"({"jsonrpc":"2.0","id":1,"result":{"tools":[],"tools":[]}})",
  };
  for (const std::string& frame : cases) {
    auto whole = ParseMessage(frame);
    auto lean = ParseMessage(frame, {}, /*lean_tool_list=*/true);
    ASSERT_FALSE(whole.ok()) << frame;
    ASSERT_FALSE(lean.ok()) << frame;
    EXPECT_EQ(lean.error().code, whole.error().code) << frame;
    EXPECT_EQ(lean.error().details, whole.error().details) << frame;
    auto framed = ParseFrame(frame, kDefaultMaxMessageBytes, true);
    ASSERT_FALSE(framed.ok());
    EXPECT_EQ(framed.error().code, "mcp.malformed_message");
    EXPECT_EQ(framed.error().details, ParseFrame(frame, kDefaultMaxMessageBytes).error().details);
  }
  // A huge page: over the size limit either way, refused before it is parsed.
  std::string huge = head;
  for (int i = 0; i < 2000; ++i) huge += R"({"name":"t)" + std::to_string(i) + R"(","description":"padding padding"},)";
  huge += R"({"name":"last"})" + tail;
  auto lean = ParseFrame(huge, 4096, true);
  ASSERT_FALSE(lean.ok());
  EXPECT_EQ(lean.error().code, "mcp.message_too_large");
  EXPECT_EQ(lean.error().details, ParseFrame(huge, 4096).error().details);
}

// The client: a listing builds no Tool until its pages are read; then they are the pages
// the server sent. A hostile page fails the listing as a whole read of it fails.
struct PagesServer {
  std::vector<std::string> frames;  // raw tools/list answers, the id spliced in
  void Handle(const Message& in, MemoryPeer& peer) {
    if (in.method == "initialize") {
      peer.Send(MakeResult(in.id, {{"protocolVersion", "2025-11-25"},
                                   {"capabilities", {{"tools", json::Value::object()}}},
                                   {"serverInfo", {{"name", "pages"}, {"version", "1"}}}}));
      return;
    }
    if (in.method != "tools/list") return;
    std::size_t index = 0;
    if (in.params.is_object() && in.params.contains("cursor")) index = std::stoul(in.params["cursor"].get<std::string>());
    std::string frame = frames[index];
    frame.replace(frame.find("\"id\":0"), 6, "\"id\":" + in.id.dump());
    peer.SendRaw(frame);
  }
};

std::unique_ptr<Client> StartClient(PagesServer& server) {
  auto client = std::make_unique<Client>(std::make_unique<MemoryTransport>(
      [&server](const Message& in, MemoryPeer& peer) { server.Handle(in, peer); }));
  EXPECT_TRUE(client->Start().ok());
  EXPECT_TRUE(client->Initialize().ok());
  return client;
}

TEST(ListedPagesTest, AListingBuildsNoToolUntilItsPagesAreRead) {
  PagesServer server;
  std::string first = EverythingLikeFrame();
  first.replace(first.find("\"id\":7"), 6, "\"id\":0");
  first.replace(first.find(R"("nextCursor":"c\u0031")"), 22, R"("nextCursor":"1")");
  server.frames = {first, R"({"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"last","inputSchema":{}}]}})"};
  auto client = StartClient(server);
  auto listed = client->ListAllTools();
  ASSERT_TRUE(listed.ok()) << listed.error().Describe();
  EXPECT_FALSE(listed->pages.built());
  ASSERT_EQ(listed->pages.size(), 2u);
  ASSERT_EQ(listed->lean.size(), 2u);
  ASSERT_NE(listed->lean[0], nullptr);
  EXPECT_EQ(listed->lean[0]->tools[2].name, "longRunningOperation");
  for (std::size_t i = 0; i < 2; ++i) {
    auto whole = ParseFrame(server.frames[i], kDefaultMaxMessageBytes);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(listed->pages[i], whole->result);
  }
  EXPECT_TRUE(listed->pages.built());
  client->Close();
}

TEST(ListedPagesTest, AHostilePageFailsTheListingAsAWholeReadFails) {
  for (const std::string& page :
       {std::string(R"({"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"a","name":"a"}]}})"),
        std::string(R"({"jsonrpc":"2.0","id":0,"result":{"tools":[{"name":"a","inputSchema":{"a":{"b":1,"b":2}}}]}})"),
        std::string(R"({"jsonrpc":"2.0","id":0,"result":{"tools":"x"}})")}) {
    PagesServer lean_server{{page}};
    auto lean_client = StartClient(lean_server);
    auto listed = lean_client->ListAllTools();
    ASSERT_FALSE(listed.ok()) << page;
    // Before: the same page read whole by a plain request.
    PagesServer whole_server{{page}};
    auto whole_client = StartClient(whole_server);
    auto whole = whole_client->connection().Request("tools/list", json::Value::object(), milliseconds(5000));
    if (whole.ok()) {
      EXPECT_EQ(listed.error().code, "catalog.pagination_invalid") << page;  // parsed, then judged
    } else {
      EXPECT_EQ(listed.error().code, whole.error().code) << page;
      EXPECT_EQ(listed.error().details, whole.error().details) << page;
    }
    lean_client->Close();
    whole_client->Close();
  }
}

}  // namespace
}  // namespace udon::mcp
