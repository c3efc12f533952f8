// The demo server as a real process over stdio: the catalog, pagination at scale, and
// every --fault flag doing what docs/demo-server.md says.
#include <signal.h>

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "json/json.h"
#include "line_client.h"
#include "test_support.h"

namespace udon::testing {
namespace {

using Json = nlohmann::json;

std::vector<std::string> ServerArgs(std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {DemoServerBinary()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// One scripted stdio session: all input written, input closed, all output read.
struct Transcript {
  std::vector<Json> messages;  // null for lines that are not JSON
  std::vector<std::string> lines;
  int exit_code = -1;
  std::vector<Json> log;  // --log-requests lines

  const Json* ResponseTo(const Json& id) const {
    for (const Json& m : messages) {
      if (m.is_object() && !m.contains("method") && m.value("id", Json()) == id) return &m;
    }
    return nullptr;
  }
  // Index of the first message satisfying pred, or -1.
  template <class Pred>
  int IndexOf(Pred pred) const {
    for (std::size_t i = 0; i < messages.size(); ++i) {
      if (pred(messages[i])) return static_cast<int>(i);
    }
    return -1;
  }
  int IndexOfResponse(const Json& id) const {
    return IndexOf([&](const Json& m) {
      return m.is_object() && !m.contains("method") && m.value("id", Json()) == id;
    });
  }
  int IndexOfMethod(const std::string& method) const {
    return IndexOf([&](const Json& m) { return m.is_object() && m.value("method", "") == method; });
  }
};

Transcript RunScript(std::vector<std::string> extra, const std::vector<Json>& input) {
  TempDir dir;
  extra.push_back("--log-requests");
  extra.push_back(dir.File("log.jsonl"));
  LineClient client(ServerArgs(extra));
  for (const Json& message : input) client.Send(message);
  client.CloseInput();
  Transcript t;
  t.lines = client.ReadAll();
  for (const std::string& line : t.lines) {
    auto parsed = json::Parse(line);
    t.messages.push_back(parsed.ok() ? *parsed : Json());
  }
  t.exit_code = client.Wait();
  std::string log = dir.Read("log.jsonl");
  std::size_t start = 0;
  while (start < log.size()) {
    const std::size_t end = log.find('\n', start);
    t.log.push_back(*json::Parse(log.substr(start, end - start)));
    start = end + 1;
  }
  return t;
}

std::vector<Json> Opening() {
  return {InitializeRequest(0), Notification("notifications/initialized")};
}

Json TurntableArguments() {
  return {{"source", "file:///assets/teapot.blend"}, {"angles", 4}, {"resolution", 1024}};
}

std::vector<Json> WithOpening(std::vector<Json> rest) {
  std::vector<Json> all = Opening();
  all.insert(all.end(), rest.begin(), rest.end());
  return all;
}

const Json* FindTool(const Json& list_result, const std::string& name) {
  for (const Json& tool : list_result["tools"]) {
    if (tool["name"] == name) return &tool;
  }
  return nullptr;
}

int CountTool(const std::vector<Json>& tools, const std::string& name) {
  int n = 0;
  for (const Json& tool : tools) n += tool["name"] == name ? 1 : 0;
  return n;
}

// Follows nextCursor to the end over an interactive session. Returns every tool; `pages`
// receives each page result.
std::vector<Json> ListAll(LineClient& client, int& next_id, std::vector<Json>* pages = nullptr,
                          int max_pages = 100000) {
  std::vector<Json> tools;
  Json params = Json::object();
  for (int page = 0; page < max_pages; ++page) {
    const int id = next_id++;
    client.Send(Request(id, "tools/list", params));
    auto response = client.ReadResponse(id);
    if (!response || !response->contains("result")) {
      ADD_FAILURE() << "tools/list failed";
      return tools;
    }
    const Json& result = (*response)["result"];
    if (pages != nullptr) pages->push_back(result);
    for (const Json& tool : result["tools"]) tools.push_back(tool);
    if (!result.contains("nextCursor")) return tools;
    params = {{"cursor", result["nextCursor"]}};
  }
  return tools;
}

std::vector<Json> Catalog(std::vector<std::string> extra = {}) {
  LineClient client(ServerArgs(std::move(extra)));
  client.Send(InitializeRequest(0));
  EXPECT_TRUE(client.ReadResponse(0));
  int id = 1;
  return ListAll(client, id);
}

// --- the catalog -------------------------------------------------------------------------

TEST(DemoServerCatalog, DefaultToolsAreDescribedAndSmall) {
  const std::vector<Json> tools = Catalog();
  std::set<std::string> names;
  for (const Json& tool : tools) {
    names.insert(tool["name"].get<std::string>());
    EXPECT_TRUE(tool.contains("description")) << tool["name"];
    EXPECT_TRUE(tool.contains("title")) << tool["name"];
    EXPECT_EQ(tool["inputSchema"]["type"], "object") << tool["name"];
  }
  EXPECT_EQ(names, (std::set<std::string>{"render_turntable", "analyze_text", "convert_units",
                                          "summarize", "slow_count", "async_render",
                                          "append_ledger"}));
  for (const Json& tool : tools) {
    if (tool["name"] == "async_render") {
      EXPECT_EQ(tool["execution"]["taskSupport"], "required");
    }
    if (tool["name"] == "convert_units") {
      EXPECT_EQ(tool["inputSchema"]["$schema"], "http://json-schema.org/draft-07/schema#");
    }
  }
}

TEST(DemoServerCatalog, ConformanceFixturesOnlyOnRequest) {
  const std::vector<Json> tools = Catalog({"--fixtures", "conformance"});
  for (const char* name : {"test_simple_text", "test_image_content", "test_audio_content",
                           "test_embedded_resource", "test_multiple_content_types",
                           "test_error_handling", "test_tool_with_progress",
                           "test_tool_with_logging", "json_schema_2020_12_tool",
                           // the 2026-07-28 scenarios' diagnostic tools
                           "test_missing_capability", "test_streaming_elicitation",
                           "test_logging_tool", "test_trigger_tool_change", "test_header_param",
                           "test_input_required_result_elicitation",
                           "test_input_required_result_sampling",
                           "test_input_required_result_list_roots",
                           "test_input_required_result_request_state",
                           "test_input_required_result_tampered_state",
                           "test_input_required_result_multiple_inputs",
                           "test_input_required_result_multi_round",
                           "test_input_required_result_capabilities"}) {
    EXPECT_EQ(CountTool(tools, name), 1) << name;
  }
  EXPECT_EQ(Catalog().size() + 22, tools.size());
}

TEST(DemoServerTools, StructuredResultsAreDeterministicWhereTheyShouldBe) {
  auto t = RunScript({}, WithOpening({ToolCallRequest(1, "render_turntable", TurntableArguments()),
                                ToolCallRequest(2, "render_turntable", TurntableArguments()),
                                ToolCallRequest(3, "analyze_text", {{"text", "One two. Three!\nFour"}}),
                                ToolCallRequest(4, "convert_units", {{"value", 1}, {"from", "km"}, {"to", "m"}}),
                                ToolCallRequest(5, "convert_units", {{"value", 1}, {"from", "km"}, {"to", "kg"}}),
                                ToolCallRequest(6, "render_turntable", {{"source", "not a uri"}})}));
  const Json& first = (*t.ResponseTo(1))["result"];
  EXPECT_EQ(first["structuredContent"], (*t.ResponseTo(2))["result"]["structuredContent"]);
  ASSERT_EQ(first["structuredContent"]["renderedUris"].size(), 4u);
  EXPECT_EQ(first["content"][0]["text"], first["structuredContent"].dump());
  EXPECT_EQ((*t.ResponseTo(3))["result"]["structuredContent"],
            (Json{{"characters", 20}, {"words", 4}, {"sentences", 3}, {"lines", 2},
                  {"averageWordLength", 3.75}}));
  EXPECT_EQ((*t.ResponseTo(4))["result"]["structuredContent"]["value"], 1000.0);
  EXPECT_EQ((*t.ResponseTo(5))["result"]["isError"], true);
  EXPECT_EQ((*t.ResponseTo(6))["result"]["isError"], true);
}

TEST(DemoServerTools, SummarizeVariesBetweenCalls) {
  auto t = RunScript({}, WithOpening({ToolCallRequest(1, "summarize", {{"text", "A. B. C. D. E. F. G. H."}}),
                                ToolCallRequest(2, "summarize", {{"text", "A. B. C. D. E. F. G. H."}})}));
  EXPECT_NE((*t.ResponseTo(1))["result"]["structuredContent"],
            (*t.ResponseTo(2))["result"]["structuredContent"]);
}

TEST(DemoServerTools, TaskRequiredToolRefusesPlainCalls) {
  auto t = RunScript({}, WithOpening({ToolCallRequest(1, "async_render", {{"source", "file:///a"}})}));
  EXPECT_EQ((*t.ResponseTo(1))["error"]["code"], -32601);
}

TEST(DemoServerTools, UnknownToolIsInvalidParams) {
  auto t = RunScript({}, WithOpening({ToolCallRequest(1, "nope")}));
  EXPECT_EQ((*t.ResponseTo(1))["error"]["code"], -32602);
}

TEST(DemoServerTools, LedgerReportsOverlappingCalls) {
  // Both calls arrive together and each call runs on its own thread: the second enters
  // while the first holds the ledger for a second.
  auto t = RunScript({"--ledger-delay-ms", "1000"},
               WithOpening({ToolCallRequest(1, "append_ledger", {{"entry", "a"}}),
                            ToolCallRequest(2, "append_ledger", {{"entry", "b"}})}));
  EXPECT_EQ((*t.ResponseTo(1))["result"]["structuredContent"]["overlapped"], true);
  EXPECT_EQ((*t.ResponseTo(2))["result"]["structuredContent"]["overlapped"], true);
  auto alone = RunScript({}, WithOpening({ToolCallRequest(1, "append_ledger", {{"entry", "a"}})}));
  EXPECT_EQ((*alone.ResponseTo(1))["result"]["structuredContent"],
            (Json{{"sequence", 1}, {"overlapped", false}}));
}

TEST(DemoServerTools, LedgerFileFlagsOverlapAcrossProcesses) {
  TempDir dir;
  const std::vector<std::string> args = {"--ledger-delay-ms", "1000", "--ledger-file",
                                         dir.File("ledger")};
  LineClient first(ServerArgs(args));
  LineClient second(ServerArgs(args));
  for (LineClient* client : {&first, &second}) {
    client->Send(InitializeRequest(0));
    ASSERT_TRUE(client->ReadResponse(0));
  }
  first.Send(ToolCallRequest(1, "append_ledger", {{"entry", "a"}}));
  second.Send(ToolCallRequest(1, "append_ledger", {{"entry", "b"}}));
  auto a = first.ReadResponse(1);
  auto b = second.ReadResponse(1);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE((*a)["result"]["structuredContent"]["overlapped"].get<bool>() ||
              (*b)["result"]["structuredContent"]["overlapped"].get<bool>());
  EXPECT_EQ(dir.Read("ledger"), "1\n1\n");
}

TEST(DemoServerTools, SlowCountReportsProgressAndHonoursCancellation) {
  LineClient client(ServerArgs());
  client.Send(InitializeRequest(0));
  ASSERT_TRUE(client.ReadResponse(0));
  client.Send(Request(1, "tools/call",
                      {{"name", "slow_count"},
                       {"arguments", {{"count", 1000}, {"delayMs", 50}}},
                       {"_meta", {{"progressToken", "p1"}}}}));
  auto progress = client.ReadLine();
  ASSERT_TRUE(progress);
  auto first = *json::Parse(*progress);
  EXPECT_EQ(first["method"], "notifications/progress");
  EXPECT_EQ(first["params"]["progressToken"], "p1");
  EXPECT_EQ(first["params"]["total"], 1000);
  client.Send(Notification("notifications/cancelled", {{"requestId", 1}}));
  client.CloseInput();
  // The server ends once the cancelled call has stopped; it never answers it.
  for (const std::string& line : client.ReadAll()) {
    EXPECT_FALSE(json::Parse(line)->contains("id")) << line;
  }
  EXPECT_EQ(client.Wait(), 0);
}

// --- pagination ----------------------------------------------------------------------------

TEST(DemoServerPagination, PageSizeTwoSplitsTheCatalog) {
  LineClient client(ServerArgs({"--page-size", "2"}));
  client.Send(InitializeRequest(0));
  ASSERT_TRUE(client.ReadResponse(0));
  int id = 1;
  std::vector<Json> pages;
  const std::vector<Json> tools = ListAll(client, id, &pages);
  EXPECT_EQ(tools.size(), 7u);
  EXPECT_EQ(pages.size(), 4u);
  for (std::size_t i = 0; i + 1 < pages.size(); ++i) EXPECT_EQ(pages[i]["tools"].size(), 2u);
  EXPECT_EQ(tools, Catalog());
}

TEST(DemoServerPagination, TenThousandSyntheticToolsPaged) {
  LineClient client(ServerArgs({"--synthetic-tools", "10000", "--page-size", "500"}));
  client.Send(InitializeRequest(0));
  ASSERT_TRUE(client.ReadResponse(0));
  int id = 1;
  std::vector<Json> pages;
  const std::vector<Json> tools = ListAll(client, id, &pages);
  EXPECT_EQ(tools.size(), 10007u);
  EXPECT_EQ(pages.size(), 21u);
  std::set<std::string> names;
  std::set<Json> shapes;
  for (const Json& tool : tools) {
    names.insert(tool["name"].get<std::string>());
    shapes.insert(tool["inputSchema"]["properties"]);
  }
  EXPECT_EQ(names.size(), tools.size());
  EXPECT_GT(shapes.size(), 10u);
  client.Send(ToolCallRequest(id, "synthetic_09999", {{"items", {1}}}));
  auto response = client.ReadResponse(id);
  ASSERT_TRUE(response);
  EXPECT_EQ((*response)["result"]["structuredContent"]["index"], 9999);
}

TEST(DemoServerPagination, TenThousandSyntheticToolsInOnePage) {
  LineClient client(ServerArgs({"--synthetic-tools", "10000"}));
  client.Send(InitializeRequest(0));
  ASSERT_TRUE(client.ReadResponse(0));
  int id = 1;
  std::vector<Json> pages;
  EXPECT_EQ(ListAll(client, id, &pages).size(), 10007u);
  EXPECT_EQ(pages.size(), 1u);
}

// --- faults: the catalog and identity ------------------------------------------------------

struct MutationCase {
  const char* fault;
  const char* member;
};

class DemoServerToolMutation : public ::testing::TestWithParam<MutationCase> {};

TEST_P(DemoServerToolMutation, ChangesExactlyOneMemberOfTheTool) {
  Json baseline;
  for (const Json& tool : Catalog()) {
    if (tool["name"] == "render_turntable") baseline = tool;
  }
  auto tools = Catalog({"--fault", GetParam().fault});
  Json changed;
  for (const Json& tool : tools) {
    if (tool["name"] == "render_turntable") changed = tool;
  }
  ASSERT_FALSE(changed.is_null());
  EXPECT_NE(changed[GetParam().member], baseline.value(GetParam().member, Json()));
  Json a = baseline;
  Json b = changed;
  a.erase(GetParam().member);
  b.erase(GetParam().member);
  EXPECT_EQ(a, b);
}

INSTANTIATE_TEST_SUITE_P(Faults, DemoServerToolMutation,
                         ::testing::Values(MutationCase{"description", "description"},
                                           MutationCase{"input-schema", "inputSchema"},
                                           MutationCase{"output-schema", "outputSchema"},
                                           MutationCase{"annotations", "annotations"},
                                           MutationCase{"execution", "execution"}));

TEST(DemoServerFaults, MutationTargetsTheNamedTool) {
  auto baseline = Catalog();
  auto tools = Catalog({"--fault", "description=analyze_text"});
  ASSERT_EQ(tools.size(), baseline.size());
  for (std::size_t i = 0; i < tools.size(); ++i) {
    EXPECT_EQ(tools[i] == baseline[i], tools[i]["name"] != "analyze_text") << tools[i]["name"];
  }
}

TEST(DemoServerFaults, UnknownFaultOrTargetIsAUsageError) {
  EXPECT_EQ(RunProcess(ServerArgs({"--fault", "no-such-fault"})).exit_code, 2);
  EXPECT_EQ(RunProcess(ServerArgs({"--fault", "description=no_such_tool"})).exit_code, 2);
  EXPECT_EQ(RunProcess(ServerArgs({"--fault", "cursor-loop=3"})).exit_code, 2);
  EXPECT_EQ(RunProcess(ServerArgs({"--fault", "description@later"})).exit_code, 2);
}

TEST(DemoServerFaults, RemoveTool) {
  auto t = RunScript({"--fault", "remove-tool"},
               WithOpening({Request(1, "tools/list"), ToolCallRequest(2, "render_turntable", TurntableArguments())}));
  EXPECT_EQ(FindTool((*t.ResponseTo(1))["result"], "render_turntable"), nullptr);
  EXPECT_EQ((*t.ResponseTo(2))["error"]["code"], -32602);
}

TEST(DemoServerFaults, RenameTool) {
  auto t = RunScript({"--fault", "rename-tool"},
               WithOpening({Request(1, "tools/list"), ToolCallRequest(2, "render_turntable", TurntableArguments()),
                            ToolCallRequest(3, "render_turntable_v2", TurntableArguments())}));
  const Json& list = (*t.ResponseTo(1))["result"];
  EXPECT_EQ(FindTool(list, "render_turntable"), nullptr);
  EXPECT_NE(FindTool(list, "render_turntable_v2"), nullptr);
  EXPECT_EQ((*t.ResponseTo(2))["error"]["code"], -32602);
  EXPECT_EQ((*t.ResponseTo(3))["result"]["structuredContent"]["renderedUris"].size(), 4u);
}

TEST(DemoServerFaults, DuplicateTool) {
  auto tools = Catalog({"--fault", "duplicate-tool"});
  EXPECT_EQ(CountTool(tools, "render_turntable"), 2);
  EXPECT_EQ(tools[0], tools[1]);
}

TEST(DemoServerFaults, DuplicateToolAcrossPages) {
  LineClient client(ServerArgs({"--fault", "duplicate-tool-last", "--page-size", "2"}));
  client.Send(InitializeRequest(0));
  ASSERT_TRUE(client.ReadResponse(0));
  int id = 1;
  std::vector<Json> pages;
  auto tools = ListAll(client, id, &pages);
  EXPECT_EQ(CountTool(tools, "render_turntable"), 2);
  EXPECT_NE(FindTool(pages.front(), "render_turntable"), nullptr);
  EXPECT_NE(FindTool(pages.back(), "render_turntable"), nullptr);
  EXPECT_GT(pages.size(), 1u);
}

TEST(DemoServerFaults, ServerVersion) {
  auto changed = RunScript({"--fault", "server-version"}, Opening());
  auto set = RunScript({"--fault", "server-version=7.7.7"}, Opening());
  EXPECT_EQ((*changed.ResponseTo(0))["result"]["serverInfo"]["version"], "0.1.0-changed");
  EXPECT_EQ((*set.ResponseTo(0))["result"]["serverInfo"]["version"], "7.7.7");
}

TEST(DemoServerFaults, ProtocolVersion) {
  auto other = RunScript({"--fault", "protocol-version"}, Opening());
  EXPECT_EQ((*other.ResponseTo(0))["result"]["protocolVersion"], "2025-06-18");
  auto named = RunScript({"--fault", "protocol-version=2025-03-26"}, Opening());
  EXPECT_EQ((*named.ResponseTo(0))["result"]["protocolVersion"], "2025-03-26");
  EXPECT_EQ(RunProcess(ServerArgs({"--fault", "protocol-version=1999-01-01"})).exit_code, 2);
}

TEST(DemoServerFaults, AfterFirstListTriggerLeavesTheFirstListingAlone) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--fault", "description@after-first-list"},
        std::vector<std::string>{"--fault-at", "after-first-list", "--fault", "description"}}) {
    LineClient client(ServerArgs(args));
    client.Send(InitializeRequest(0));
    ASSERT_TRUE(client.ReadResponse(0));
    int id = 1;
    auto first = ListAll(client, id);
    auto second = ListAll(client, id);
    EXPECT_EQ(first, Catalog());
    EXPECT_NE(second, first);
    EXPECT_EQ(second.size(), first.size());
  }
}

TEST(DemoServerFaults, AfterFirstListWaitsForTheLastPage) {
  LineClient proper(ServerArgs({"--page-size", "2", "--fault", "remove-tool@after-first-list=slow_count"}));
  proper.Send(InitializeRequest(0));
  ASSERT_TRUE(proper.ReadResponse(0));
  int id = 1;
  EXPECT_EQ(CountTool(ListAll(proper, id), "slow_count"), 1);
  EXPECT_EQ(CountTool(ListAll(proper, id), "slow_count"), 0);
}

// --- faults: pagination and notifications --------------------------------------------------

TEST(DemoServerFaults, CursorLoop) {
  for (const char* page_size : {"0", "3"}) {
    LineClient client(ServerArgs({"--fault", "cursor-loop", "--page-size", page_size}));
    client.Send(InitializeRequest(0));
    ASSERT_TRUE(client.ReadResponse(0));
    int id = 1;
    std::vector<Json> pages;
    ListAll(client, id, &pages, 6);
    ASSERT_EQ(pages.size(), 6u);
    for (std::size_t i = 2; i < pages.size(); ++i) {
      EXPECT_EQ(pages[i]["nextCursor"], pages[1]["nextCursor"]);
      EXPECT_EQ(pages[i]["tools"], pages[1]["tools"]);
    }
  }
}

TEST(DemoServerFaults, ListChangedAfterList) {
  auto t = RunScript({"--fault", "list-changed-after-list"},
               WithOpening({Request(1, "tools/list"), Request(2, "tools/list")}));
  const int first = t.IndexOfResponse(1);
  const int second = t.IndexOfResponse(2);
  ASSERT_GE(first, 0);
  EXPECT_EQ(t.messages[first + 1]["method"], "notifications/tools/list_changed");
  EXPECT_EQ(t.messages[second + 1]["method"], "notifications/tools/list_changed");

  auto once = RunScript({"--fault", "list-changed-after-list=1"},
                  WithOpening({Request(1, "tools/list"), Request(2, "tools/list")}));
  EXPECT_EQ(once.messages[once.IndexOfResponse(1) + 1]["method"], "notifications/tools/list_changed");
  EXPECT_EQ(once.IndexOfResponse(2) + 1, static_cast<int>(once.messages.size()));
}

TEST(DemoServerFaults, ListChangedAfterInitialized) {
  auto t = RunScript({"--fault", "list-changed-after-initialized"}, WithOpening({Request(1, "ping")}));
  EXPECT_EQ(t.IndexOfMethod("notifications/tools/list_changed"), 1);
  auto quiet = RunScript({}, WithOpening({Request(1, "ping")}));
  EXPECT_EQ(quiet.IndexOfMethod("notifications/tools/list_changed"), -1);
}

TEST(DemoServerFaults, ListChangedDuringCall) {
  auto t = RunScript({"--fault", "list-changed-during-call"},
               WithOpening({ToolCallRequest(1, "analyze_text", {{"text", "x"}})}));
  const int notification = t.IndexOfMethod("notifications/tools/list_changed");
  ASSERT_GE(notification, 0);
  EXPECT_LT(notification, t.IndexOfResponse(1));
}

// --- faults: call results ------------------------------------------------------------------

TEST(DemoServerFaults, CallIsError) {
  auto t = RunScript({"--fault", "call-is-error=analyze_text"},
               WithOpening({ToolCallRequest(1, "analyze_text", {{"text", "x"}}),
                            ToolCallRequest(2, "render_turntable", TurntableArguments())}));
  EXPECT_EQ((*t.ResponseTo(1))["result"]["isError"], true);
  EXPECT_FALSE((*t.ResponseTo(1))["result"].contains("structuredContent"));
  EXPECT_FALSE((*t.ResponseTo(2))["result"].contains("isError"));
}

TEST(DemoServerFaults, CallWithoutStructuredContent) {
  auto t = RunScript({"--fault", "call-no-structured-content"},
               WithOpening({ToolCallRequest(1, "analyze_text", {{"text", "x"}})}));
  const Json& result = (*t.ResponseTo(1))["result"];
  EXPECT_FALSE(result.contains("structuredContent"));
  EXPECT_FALSE(result.contains("isError"));
  EXPECT_FALSE(result["content"].empty());
}

TEST(DemoServerFaults, CallWithNonConformingStructuredContent) {
  auto t = RunScript({"--fault", "call-bad-structured-content"},
               WithOpening({ToolCallRequest(1, "analyze_text", {{"text", "x"}})}));
  const Json& structured = (*t.ResponseTo(1))["result"]["structuredContent"];
  // analyze_text's outputSchema demands integers and forbids other members.
  EXPECT_TRUE(structured["words"].is_null());
  EXPECT_TRUE(structured.contains("injectedFault"));
}

TEST(DemoServerFaults, CallRpcError) {
  auto t = RunScript({"--fault", "call-rpc-error"}, WithOpening({ToolCallRequest(1, "analyze_text", {{"text", "x"}})}));
  EXPECT_EQ((*t.ResponseTo(1))["error"]["code"], -32603);
}

// --- faults: server->client requests -------------------------------------------------------

struct ServerRequestCase {
  const char* fault;
  const char* method;
  bool during_call;
};

class DemoServerServerRequest : public ::testing::TestWithParam<ServerRequestCase> {};

TEST_P(DemoServerServerRequest, ArrivesBeforeTheAnswerAndTheReplyIsLogged) {
  const auto& c = GetParam();
  const Json trigger = c.during_call ? ToolCallRequest(1, "analyze_text", {{"text", "x"}}) : Request(1, "tools/list");
  const Json refusal = {{"jsonrpc", "2.0"},
                        {"id", "udon-fault-1"},
                        {"error", {{"code", -32601}, {"message", "not supported"}}}};
  auto t = RunScript({"--fault", c.fault}, WithOpening({trigger, refusal}));
  const int request = t.IndexOfMethod(c.method);
  ASSERT_GE(request, 0);
  EXPECT_EQ(t.messages[request]["id"], "udon-fault-1");
  EXPECT_LT(request, t.IndexOfResponse(1));
  EXPECT_NE(std::find(t.log.begin(), t.log.end(), Json{{"response", "error"}}), t.log.end());
}

INSTANTIATE_TEST_SUITE_P(
    Faults, DemoServerServerRequest,
    ::testing::Values(ServerRequestCase{"sampling-during-list", "sampling/createMessage", false},
                      ServerRequestCase{"elicitation-during-list", "elicitation/create", false},
                      ServerRequestCase{"sampling-during-call", "sampling/createMessage", true},
                      ServerRequestCase{"elicitation-during-call", "elicitation/create", true}));

// --- faults: the process -------------------------------------------------------------------

TEST(DemoServerFaults, CrashDuringCallAfterLoggingIt) {
  auto t = RunScript({"--fault", "crash-during-call=slow_count"},
               WithOpening({Request(1, "tools/list"), ToolCallRequest(2, "slow_count", {{"count", 1}})}));
  EXPECT_EQ(t.exit_code, 128 + SIGKILL);
  EXPECT_NE(t.ResponseTo(1), nullptr);
  EXPECT_EQ(t.ResponseTo(2), nullptr);
  EXPECT_EQ(t.log.back(), (Json{{"method", "tools/call"}, {"tool", "slow_count"}}));
}

TEST(DemoServerFaults, HangDuringCallIgnoresCancellation) {
  TempDir dir;
  LineClient client(ServerArgs({"--fault", "hang-during-call", "--log-requests", dir.File("log")}));
  client.Send(InitializeRequest(0));
  ASSERT_TRUE(client.ReadResponse(0));
  client.Send(ToolCallRequest(1, "analyze_text", {{"text", "x"}}));
  client.Send(Notification("notifications/cancelled", {{"requestId", 1}}));
  client.Send(Request(2, "ping"));
  std::vector<Json> seen;
  ASSERT_TRUE(client.ReadResponse(2, &seen));  // the server is alive and answering
  for (const Json& m : seen) EXPECT_NE(m.value("id", Json()), 1);
  EXPECT_NE(dir.Read("log").find("\"tool\":\"analyze_text\""), std::string::npos);
}

TEST(DemoServerFaults, GarbageDuringCall) {
  auto t = RunScript({"--fault", "garbage-during-call"}, WithOpening({ToolCallRequest(1, "analyze_text", {{"text", "x"}})}));
  const int response = t.IndexOfResponse(1);
  ASSERT_GT(response, 0);
  EXPECT_TRUE(t.messages[response - 1].is_null());
  EXPECT_FALSE(json::Parse(t.lines[response - 1]).ok());
}

TEST(DemoServerFaults, OversizedDuringCall) {
  auto t = RunScript({"--fault", "oversized-during-call"}, WithOpening({ToolCallRequest(1, "analyze_text", {{"text", "x"}})}));
  const int response = t.IndexOfResponse(1);
  ASSERT_GT(response, 0);
  EXPECT_GT(t.lines[response - 1].size(), std::size_t{16} * 1024 * 1024);
}

TEST(DemoServerFaults, FaultsCompose) {
  auto t = RunScript({"--fault", "list-changed-during-call", "--fault", "call-is-error", "--fault",
                "server-version=2"},
               WithOpening({ToolCallRequest(1, "analyze_text", {{"text", "x"}})}));
  EXPECT_EQ((*t.ResponseTo(0))["result"]["serverInfo"]["version"], "2");
  EXPECT_GE(t.IndexOfMethod("notifications/tools/list_changed"), 0);
  EXPECT_EQ((*t.ResponseTo(1))["result"]["isError"], true);
}

// --- the request log -----------------------------------------------------------------------

TEST(DemoServerLog, OneLinePerMessageWithMethodAndToolOnly) {
  auto t = RunScript({}, WithOpening({Request(1, "tools/list"), ToolCallRequest(2, "analyze_text", {{"text", "secret"}})}));
  EXPECT_EQ(t.log, (std::vector<Json>{{{"method", "initialize"}},
                                      {{"method", "notifications/initialized"}},
                                      {{"method", "tools/list"}},
                                      {{"method", "tools/call"}, {"tool", "analyze_text"}}}));
}

// --- stdio framing -------------------------------------------------------------------------

TEST(DemoServerStdio, BadFramesGetErrorsAndTheSessionGoesOn) {
  TempDir dir;
  LineClient client(ServerArgs());
  client.SendLine("not json");
  client.SendLine("[1,2]");
  client.SendLine(R"({"jsonrpc":"2.0","id":1,"method":"ping","id":2})");
  client.Send(Request(3, "ping"));
  client.CloseInput();
  auto lines = client.ReadAll();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ((*json::Parse(lines[0]))["error"]["code"], -32700);
  EXPECT_EQ((*json::Parse(lines[1]))["error"]["code"], -32600);
  EXPECT_EQ((*json::Parse(lines[2]))["error"]["code"], -32700);
  EXPECT_EQ((*json::Parse(lines[3]))["id"], 3);
  EXPECT_EQ(client.Wait(), 0);
}

TEST(DemoServerStdio, OversizedInputLineIsRefused) {
  LineClient client(ServerArgs());
  client.SendLine(std::string(17 * 1024 * 1024, 'x'));
  client.Send(Request(1, "ping"));
  client.CloseInput();
  auto lines = client.ReadAll();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ((*json::Parse(lines[0]))["error"]["code"], -32600);
  EXPECT_EQ((*json::Parse(lines[1]))["id"], 1);
}

}  // namespace
}  // namespace udon::testing
