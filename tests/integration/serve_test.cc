// `udon-mcp serve` end to end with real processes: the gateway in front of the demo server
// over stdio and HTTP; drift mid-session and SIGHUP; evidence; many clients at once.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "json/json.h"
#include "line_client.h"
#include "serve_fixture.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

std::vector<std::string> ToolNames(const Json& list_response) {
  std::vector<std::string> names;
  for (const auto& tool : list_response["result"]["tools"]) names.push_back(tool["name"]);
  return names;
}

Json ConvertUnits(int id) {
  return Request(id, "tools/call", {{"name", "convert_units"}, {"arguments", {{"value", 2}, {"from", "kg"}, {"to", "g"}}}});
}

TEST(ServeTest, AStdioHostListsTheReviewedToolsAndCallsThroughTheGate) {
  TempDir dir;
  ReviewedDemo demo(dir);
  ASSERT_TRUE(demo.ok()) << demo.failure;
  LineClient client(demo.ServeArgv());
  client.Send(InitializeRequest(1));
  auto initialized = client.ReadResponse(1);
  ASSERT_TRUE(initialized) << client.Stderr();
  EXPECT_EQ((*initialized)["result"]["serverInfo"]["name"], "udon-mcp-serve");
  EXPECT_EQ((*initialized)["result"]["capabilities"], Json({{"tools", {{"listChanged", true}}}}))
      << "the tools capability and nothing else";
  client.Send(Notification("notifications/initialized"));
  client.Send(Request(2, "tools/list"));
  auto listed = client.ReadResponse(2);
  ASSERT_TRUE(listed);
  const std::vector<std::string> names = ToolNames(*listed);
  EXPECT_NE(std::find(names.begin(), names.end(), "convert_units"), names.end()) << listed->dump();
  client.Send(ConvertUnits(3));
  auto called = client.ReadResponse(3);
  ASSERT_TRUE(called);
  EXPECT_FALSE((*called)["result"].value("isError", false)) << called->dump();
  EXPECT_EQ((*called)["result"]["structuredContent"]["value"], 2000.0);
  // A name that was never reviewed is not forwarded: unknown here.
  client.Send(Request(4, "tools/call", {{"name", "no_such_tool"}, {"arguments", Json::object()}}));
  auto unknown = client.ReadResponse(4);
  ASSERT_TRUE(unknown);
  EXPECT_TRUE(unknown->contains("error")) << unknown->dump();
  client.CloseInput();
  EXPECT_EQ(client.Wait(), 0) << client.Stderr();
  EXPECT_TRUE(Descendants(getpid()).empty()) << "no upstream server outlives the gateway";
  // One value-free record per call, command "serve", with the client's label.
  const std::string evidence = dir.Read("evidence.jsonl");
  auto record = json::Parse(evidence.substr(0, evidence.find('\n')));
  ASSERT_TRUE(record.ok()) << evidence;
  EXPECT_EQ((*record)["command"], "serve");
  EXPECT_EQ((*record)["code"], "ok");
  EXPECT_EQ((*record)["tool"], "convert_units");
  EXPECT_EQ((*record)["client"].get<std::string>().rfind("session-", 0), 0u) << record->dump();
}

}  // namespace
}  // namespace udon::testing
