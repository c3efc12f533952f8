#include "mcp/server/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace udon::mcp {
namespace {

using json::Value;

class RecordingSink : public MessageSink {
 public:
  // Records what a transport would deliver: the message written and read back (a tools/list
  // page's serialized Tools become values again).
  void Send(const Message& message) override {
    auto delivered = ParseMessage(SerializeMessage(message));
    ASSERT_TRUE(delivered.ok()) << delivered.error().message;
    {
      std::lock_guard lock(mutex_);
      messages_.push_back(std::move(delivered).value());
    }
    arrived_.notify_all();
  }
  void SendRaw(const std::string& frame) override {
    std::lock_guard lock(mutex_);
    raw_.push_back(frame);
  }
  std::vector<Message> messages() {
    std::lock_guard lock(mutex_);
    return messages_;
  }
  // Waits until `count` messages have arrived (false if they did not within a minute).
  bool WaitFor(std::size_t count) {
    std::unique_lock lock(mutex_);
    return arrived_.wait_for(lock, std::chrono::minutes(1), [&] { return messages_.size() >= count; });
  }

 private:
  std::condition_variable arrived_;
  std::mutex mutex_;
  std::vector<Message> messages_;
  std::vector<std::string> raw_;
};

Value Tool(const std::string& name) {
  return {{"name", name}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}};
}

ToolOutcome Echo(const Value& arguments, ToolContext&) {
  return {{{"content", Value::array()}, {"structuredContent", arguments}}, {}};
}

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() : server_(Options()) {
    for (const char* name : {"a", "b", "c", "d", "e"}) server_.AddTool(Tool(name), Echo);
    standalone_ = std::make_shared<RecordingSink>();
    session_ = server_.NewSession(standalone_);
  }
  static ServerOptions Options() {
    ServerOptions options;
    options.server_info = {{"name", "test"}, {"version", "1"}};
    options.page_size = 2;
    return options;
  }
  // Sends a request and returns the one response it got.
  Message Call(const std::string& method, Value params = nullptr) {
    auto sink = std::make_shared<RecordingSink>();
    session_->Handle(MakeRequest(next_id_++, method, std::move(params)), sink);
    Message last;
    int responses = 0;
    for (const auto& m : sink->messages()) {
      if (m.IsResponse()) {
        last = m;
        ++responses;
      }
    }
    EXPECT_EQ(responses, 1);
    return last;
  }

  Server server_;
  std::shared_ptr<RecordingSink> standalone_;
  std::unique_ptr<ServerSession> session_;
  int next_id_ = 1;
};

Value InitParams(const std::string& version) {
  return {{"protocolVersion", version},
          {"capabilities", Value::object()},
          {"clientInfo", {{"name", "t"}, {"version", "1"}}}};
}

TEST_F(ServerTest, InitializeEchoesASupportedVersion) {
  for (const std::string version : {"2025-11-25", "2025-06-18", "2025-03-26"}) {
    Message response = Call("initialize", InitParams(version));
    ASSERT_EQ(response.kind, MessageKind::kResult);
    EXPECT_EQ(response.result["protocolVersion"], version);
    EXPECT_EQ(response.result["serverInfo"]["name"], "test");
    EXPECT_EQ(response.result["capabilities"]["tools"]["listChanged"], true);
  }
}

TEST_F(ServerTest, InitializeAnswersLatestForAnUnknownVersion) {
  Message response = Call("initialize", InitParams("2024-01-01"));
  EXPECT_EQ(response.result["protocolVersion"], "2025-11-25");
  EXPECT_EQ(session_->protocol_version(), "2025-11-25");
}

// The framework serves stdio and HTTP alike, so it does not serve the stdio-only revision:
// a 2024-11-05 client hears the latest, as for any version not served.
TEST_F(ServerTest, InitializeAnswersLatestForTheStdioOnlyRevision) {
  Message response = Call("initialize", InitParams("2024-11-05"));
  EXPECT_EQ(response.result["protocolVersion"], "2025-11-25");
}

TEST_F(ServerTest, InitializeWithoutClientInfoIsInvalidParams) {
  Message response = Call("initialize", {{"protocolVersion", "2025-11-25"}});
  ASSERT_EQ(response.kind, MessageKind::kError);
  EXPECT_EQ(response.error["code"], kInvalidParams);
}

TEST_F(ServerTest, PingAnswersEmptyObject) {
  Message response = Call("ping");
  ASSERT_EQ(response.kind, MessageKind::kResult);
  EXPECT_EQ(response.result, Value::object());
}

TEST_F(ServerTest, UnknownMethodIsMethodNotFound) {
  Message response = Call("resources/list");
  ASSERT_EQ(response.kind, MessageKind::kError);
  EXPECT_EQ(response.error["code"], kMethodNotFound);
}

TEST_F(ServerTest, ToolsListPaginatesWithOpaqueCursors) {
  std::vector<std::string> names;
  Value params = Value::object();
  int pages = 0;
  for (;;) {
    Message response = Call("tools/list", params);
    ASSERT_EQ(response.kind, MessageKind::kResult);
    ++pages;
    for (const auto& tool : response.result["tools"]) names.push_back(tool["name"]);
    if (!response.result.contains("nextCursor")) break;
    params = {{"cursor", response.result["nextCursor"]}};
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST_F(ServerTest, InvalidCursorIsInvalidParams) {
  for (const Value& cursor : {Value("nope"), Value(7), Value("page-99"), Value("page-1x")}) {
    Message response = Call("tools/list", {{"cursor", cursor}});
    ASSERT_EQ(response.kind, MessageKind::kError);
    EXPECT_EQ(response.error["code"], kInvalidParams);
  }
}

TEST_F(ServerTest, ToolsCallDispatchesToTheHandler) {
  Message response = Call("tools/call", {{"name", "c"}, {"arguments", {{"x", 1}}}});
  ASSERT_EQ(response.kind, MessageKind::kResult);
  EXPECT_EQ(response.result["structuredContent"]["x"], 1);
}

TEST_F(ServerTest, UnknownToolAndBadArgumentsAreInvalidParams) {
  EXPECT_EQ(Call("tools/call", {{"name", "zz"}}).error["code"], kInvalidParams);
  EXPECT_EQ(Call("tools/call", {{"name", "a"}, {"arguments", 3}}).error["code"], kInvalidParams);
  EXPECT_EQ(Call("tools/call", Value::object()).error["code"], kInvalidParams);
}

TEST(ServerProgressTest, ProgressGoesToTheRequestsSinkWithItsToken) {
  Server server(ServerOptions{});
  server.AddTool(Tool("p"), [](const Value&, ToolContext& context) {
    context.Progress(1, 2);
    context.Log("info", "hello");
    return ToolOutcome{{{"content", Value::array()}}, {}};
  });
  auto session = server.NewSession(std::make_shared<RecordingSink>());
  auto sink = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(1, "tools/call", {{"name", "p"}, {"_meta", {{"progressToken", "t"}}}}),
                  sink);
  auto messages = sink->messages();
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0].method, "notifications/progress");
  EXPECT_EQ(messages[0].params["progressToken"], "t");
  EXPECT_EQ(messages[0].params["total"], 2);
  EXPECT_EQ(messages[1].method, "notifications/message");
  EXPECT_TRUE(messages[2].IsResponse());
}

TEST(ServerCancellationTest, CancelledCallIsNeverAnswered) {
  Server server(ServerOptions{});
  std::mutex mutex;
  std::condition_variable started_cv;
  bool started = false;
  server.AddTool(Tool("wait"), [&](const Value&, ToolContext& context) {
    {
      std::lock_guard lock(mutex);
      started = true;
    }
    started_cv.notify_all();
    const bool finished = context.SleepFor(std::chrono::hours(1));
    return ToolOutcome{{{"content", Value::array()}, {"finished", finished}}, {}};
  });
  auto session = server.NewSession(std::make_shared<RecordingSink>());
  auto sink = std::make_shared<RecordingSink>();
  std::thread worker;
  session->Handle(MakeRequest(7, "tools/call", {{"name", "wait"}}), sink,
                  [&](std::function<void()> work) { worker = std::thread(std::move(work)); });
  {
    std::unique_lock lock(mutex);
    started_cv.wait(lock, [&] { return started; });
  }
  session->Handle(MakeNotification("notifications/cancelled", {{"requestId", 7}}), sink);
  worker.join();
  EXPECT_TRUE(sink->messages().empty());
}

class TestHooks : public ServerHooks {
 public:
  std::optional<Message> BeforeRequest(Message& request, MessageSink& related) override {
    if (request.method == "tools/list") related.Send(MakeNotification("before"));
    if (request.method == "ping") return MakeError(request.id, -1, "hooked");
    return std::nullopt;
  }
  void TransformTools(std::vector<Value>& tools) override { tools.pop_back(); }
  void AfterRequest(const Message&, Message& response, MessageSink&) override {
    if (response.kind == MessageKind::kResult) response.result["after"] = true;
  }
  void AfterResponse(const Message& request, ServerSession& session) override {
    session.standalone().Send(MakeNotification("after/" + request.method));
  }
};

// A hook that changes nothing and says so: one tool is looked up without the catalog.
class QuietHooks : public ServerHooks {
 public:
  void TransformTools(std::vector<Value>& tools) override { tools.clear(); }  // never consulted
  bool TransformsTools() const override { return false; }
};

// Renames "b" to "z" in what tools/list shows.
class RenamingHooks : public ServerHooks {
 public:
  void TransformTools(std::vector<Value>& tools) override {
    for (Value& tool : tools) {
      if (tool["name"] == "b") tool["name"] = "z";
    }
  }
};

// A page's Tools as values: its array text parsed, and each element's bytes alone the same.
std::vector<Value> PageTools(const Server::ListedPage& page) {
  auto array = json::Parse(page.tools->frame);
  EXPECT_TRUE(array.ok());
  if (!array.ok()) return {};
  EXPECT_EQ(array->size(), page.tools->tools.size());
  std::vector<Value> tools;
  for (std::size_t i = 0; i < page.tools->tools.size() && i < array->size(); ++i) {
    EXPECT_EQ(json::Parse(page.tools->Bytes(page.tools->tools[i])).value(), (*array)[i]);
    tools.push_back((*array)[i]);
  }
  return tools;
}

TEST(ServerListedToolTest, OneToolAndOnePageAreWhatToolsListShows) {
  Server server(ServerOptions{});
  for (const char* name : {"a", "b", "c"}) server.AddTool(Tool(name), Echo);
  Value again = Tool("b");
  again["description"] = "second";
  server.AddTool(again, Echo);
  // Without hooks and with hooks that transform nothing: the index, same answers as the list.
  QuietHooks quiet;
  for (ServerHooks* hooks : {static_cast<ServerHooks*>(nullptr), static_cast<ServerHooks*>(&quiet)}) {
    server.SetHooks(hooks);
    for (const char* name : {"a", "b", "c"}) {
      auto tool = server.ListedTool(name);
      ASSERT_TRUE(tool.has_value()) << name;
      EXPECT_EQ(*tool, Tool(name)) << name;  // "b": the first listing, not the repeat
    }
    EXPECT_FALSE(server.ListedTool("z").has_value());
    // A page writes its tools only, and knows the listed total.
    auto page = server.ListedTools(1, 2);
    ASSERT_TRUE(page.has_value());
    EXPECT_EQ(page->total, 4u);
    ASSERT_EQ(PageTools(*page).size(), 2u);
    EXPECT_EQ(PageTools(*page)[0], Tool("b"));
    EXPECT_EQ(PageTools(*page)[1], Tool("c"));
    EXPECT_EQ(page->tools->tools[1].name, "c");
    EXPECT_EQ(PageTools(*server.ListedTools(0, 0)).size(), 4u);  // 0: all
    EXPECT_TRUE(PageTools(*server.ListedTools(4, 2)).empty());
    EXPECT_FALSE(server.ListedTools(5, 2).has_value());
  }
  // A transforming hook: the transformed catalog answers.
  RenamingHooks renaming;
  server.SetHooks(&renaming);
  auto renamed = server.ListedTool("z");
  ASSERT_TRUE(renamed.has_value());
  EXPECT_EQ((*renamed)["inputSchema"], Tool("b")["inputSchema"]);
  EXPECT_EQ((*renamed)["name"], "z");
  auto repeat = server.ListedTool("b");  // both listings of "b" were renamed
  EXPECT_FALSE(repeat.has_value());
  auto page = server.ListedTools(1, 1);
  ASSERT_TRUE(page.has_value());
  ASSERT_EQ(PageTools(*page).size(), 1u);
  EXPECT_EQ(PageTools(*page)[0]["name"], "z");
  EXPECT_EQ(page->tools->tools[0].name, "z");
  server.SetHooks(nullptr);
}

TEST(ServerHooksTest, HooksSeeEveryStage) {
  Server server(ServerOptions{});
  server.AddTool(Tool("x"), Echo);
  server.AddTool(Tool("y"), Echo);
  TestHooks hooks;
  server.SetHooks(&hooks);
  auto standalone = std::make_shared<RecordingSink>();
  auto session = server.NewSession(standalone);
  auto sink = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(1, "tools/list"), sink);
  session->Handle(MakeRequest(2, "ping"), sink);
  auto messages = sink->messages();
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0].method, "before");
  EXPECT_EQ(messages[1].result["tools"].size(), 1u);
  EXPECT_EQ(messages[1].result["after"], true);
  EXPECT_EQ(messages[2].error["code"], -1);
  auto after = standalone->messages();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].method, "after/tools/list");
}


// ---- The modern era (2026-07-28): per-request _meta, no initialize. ----

Value ModernMeta() {
  return {{std::string(meta::kProtocolVersion), std::string(kModernProtocolVersion)},
          {std::string(meta::kClientCapabilities), Value::object()},
          {std::string(meta::kClientInfo), {{"name", "t"}, {"version", "1"}}}};
}

Value Modern(Value params = Value::object()) {
  params["_meta"] = ModernMeta();
  return params;
}

TEST_F(ServerTest, ModernRequestsNeedNoInitialize) {
  Message response = Call("tools/list", Modern());
  ASSERT_EQ(response.kind, MessageKind::kResult);
  EXPECT_EQ(response.result["tools"].size(), 2u);
  EXPECT_EQ(response.result["resultType"], "complete");
  EXPECT_EQ(response.result["_meta"][std::string(meta::kServerInfo)]["name"], "test");
  EXPECT_EQ(response.result["ttlMs"], 0);
  EXPECT_EQ(response.result["cacheScope"], "public");
  EXPECT_EQ(session_->protocol_version(), "");  // nothing about the connection changed
}

TEST_F(ServerTest, ModernToolsCallCarriesResultTypeAndServerInfo) {
  Message response = Call("tools/call", Modern({{"name", "c"}, {"arguments", {{"x", 1}}}}));
  ASSERT_EQ(response.kind, MessageKind::kResult);
  EXPECT_EQ(response.result["structuredContent"]["x"], 1);
  EXPECT_EQ(response.result["resultType"], "complete");
  EXPECT_EQ(response.result["_meta"][std::string(meta::kServerInfo)]["version"], "1");
}

TEST_F(ServerTest, LegacyResultsStayAsTheyWere) {
  Call("initialize", InitParams("2025-11-25"));
  Message response = Call("tools/list");
  EXPECT_FALSE(response.result.contains("resultType"));
  EXPECT_FALSE(response.result.contains("_meta"));
  EXPECT_FALSE(response.result.contains("ttlMs"));
  EXPECT_EQ(Call("ping").result, Value::object());
}

TEST_F(ServerTest, BothErasOnOneSession) {
  EXPECT_EQ(Call("server/discover", Modern()).kind, MessageKind::kResult);
  Message init = Call("initialize", InitParams("2025-06-18"));
  EXPECT_EQ(init.result["protocolVersion"], "2025-06-18");
  EXPECT_EQ(Call("tools/list", Modern()).result["resultType"], "complete");
  EXPECT_FALSE(Call("tools/list").result.contains("resultType"));
}

TEST_F(ServerTest, DiscoverListsVersionsCapabilitiesAndIdentity) {
  Message response = Call("server/discover", Modern());
  ASSERT_EQ(response.kind, MessageKind::kResult);
  const Value& result = response.result;
  std::vector<std::string> versions;
  for (const auto& version : result["supportedVersions"]) versions.push_back(version);
  EXPECT_EQ(versions, ServedProtocolVersions());
  EXPECT_EQ(result["capabilities"]["tools"]["listChanged"], true);
  EXPECT_EQ(result["_meta"][std::string(meta::kServerInfo)]["name"], "test");
  EXPECT_EQ(result["resultType"], "complete");
  EXPECT_EQ(result["ttlMs"], 0);
  EXPECT_EQ(result["cacheScope"], "public");
}

TEST_F(ServerTest, ModernMetaIsValidatedOnEveryRequest) {
  Value no_version = Modern();
  no_version["_meta"].erase(std::string(meta::kProtocolVersion));
  Value no_capabilities = Modern();
  no_capabilities["_meta"].erase(std::string(meta::kClientCapabilities));
  Value bad_level = Modern();
  bad_level["_meta"][std::string(meta::kLogLevel)] = "loud";
  for (const Value& params : {Value::object(), no_capabilities, bad_level}) {
    Message response = Call("server/discover", params);
    ASSERT_EQ(response.kind, MessageKind::kError) << params.dump();
    EXPECT_EQ(response.error["code"], kInvalidParams);
  }
  // A tools/list without a version in _meta is a legacy request; server/discover is not.
  EXPECT_EQ(Call("server/discover", no_version).error["code"], kInvalidParams);
  Value no_client_info = Modern();
  no_client_info["_meta"].erase(std::string(meta::kClientInfo));
  EXPECT_EQ(Call("server/discover", no_client_info).kind, MessageKind::kResult);
}

TEST_F(ServerTest, UnsupportedModernVersionListsWhatIsSupported) {
  Value params = Modern();
  params["_meta"][std::string(meta::kProtocolVersion)] = "v999.0.0";
  Message response = Call("tools/list", params);
  ASSERT_EQ(response.kind, MessageKind::kError);
  EXPECT_EQ(response.error["code"], rpc_code::kUnsupportedProtocolVersion);
  EXPECT_EQ(response.error["data"]["requested"], "v999.0.0");
  EXPECT_EQ(response.error["data"]["supported"].size(), ServedProtocolVersions().size());
}

TEST_F(ServerTest, RemovedMethodsAreUnknownInTheModernEra) {
  for (const char* method : {"ping", "logging/setLevel", "initialize", "resources/list"}) {
    Message response = Call(method, Modern());
    ASSERT_EQ(response.kind, MessageKind::kError) << method;
    EXPECT_EQ(response.error["code"], kMethodNotFound) << method;
  }
}

TEST(ServerModernTest, LogsOnlyWhenTheRequestAskedAndAtItsLevel) {
  Server server(ServerOptions{});
  server.AddTool(Tool("log"), [](const Value&, ToolContext& context) {
    context.Log("debug", "d");
    context.Log("warning", "w");
    context.Progress(1, 1);
    return ToolOutcome{{{"content", Value::array()}}, {}};
  });
  auto session = server.NewSession(std::make_shared<RecordingSink>());
  auto quiet = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(1, "tools/call", Modern({{"name", "log"}})), quiet);
  ASSERT_EQ(quiet->messages().size(), 1u);  // no logs, no progress without a token
  Value params = Modern({{"name", "log"}});
  params["_meta"][std::string(meta::kLogLevel)] = "info";
  params["_meta"]["progressToken"] = 5;
  auto chatty = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(2, "tools/call", params), chatty);
  auto messages = chatty->messages();
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0].method, "notifications/message");
  EXPECT_EQ(messages[0].params["level"], "warning");
  EXPECT_EQ(messages[1].method, "notifications/progress");
  EXPECT_TRUE(messages[2].IsResponse());
}

TEST(ServerToolTest, AThrowingHandlerIsAnInternalError) {
  Server server(ServerOptions{});
  server.AddTool(Tool("throws"), [](const Value& arguments, ToolContext&) -> ToolOutcome {
    (void)arguments.at("missing");  // nlohmann throws out_of_range
    return {};
  });
  auto session = server.NewSession(std::make_shared<RecordingSink>());
  auto sink = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(1, "tools/call", {{"name", "throws"}}), sink);
  ASSERT_EQ(sink->messages().size(), 1u);
  EXPECT_EQ(sink->messages()[0].error["code"], kInternalError);
}

TEST(ServerModernTest, RetriesCarryInputResponsesAndRequestState) {
  Server server(ServerOptions{});
  server.AddTool(Tool("mrtr"), [](const Value&, ToolContext& context) {
    Value result = {{"content", Value::array()},
                    {"responses", context.input_responses()},
                    {"state", context.request_state().value_or("(none)")}};
    return ToolOutcome{std::move(result), {}};
  });
  auto session = server.NewSession(std::make_shared<RecordingSink>());
  auto sink = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(1, "tools/call", Modern({{"name", "mrtr"}})), sink);
  session->Handle(MakeRequest(2, "tools/call",
                              Modern({{"name", "mrtr"},
                                      {"inputResponses", {{"k", {{"action", "accept"}}}}},
                                      {"requestState", "s1"}})),
                  sink);
  auto messages = sink->messages();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].result["responses"], Value::object());
  EXPECT_EQ(messages[0].result["state"], "(none)");
  EXPECT_EQ(messages[1].result["responses"]["k"]["action"], "accept");
  EXPECT_EQ(messages[1].result["state"], "s1");
}

TEST(ServerModernTest, ToolsSeeThisRequestsClientCapabilities) {
  Server server(ServerOptions{});
  server.AddTool(Tool("caps"), [](const Value&, ToolContext& context) {
    Value result = {{"content", Value::array()},
                    {"sampling", context.HasClientCapability("sampling")},
                    {"modern", context.era() == Era::kModern}};
    return ToolOutcome{std::move(result), {}};
  });
  auto session = server.NewSession(std::make_shared<RecordingSink>());
  Value params = Modern({{"name", "caps"}});
  params["_meta"][std::string(meta::kClientCapabilities)] = {{"sampling", Value::object()}};
  auto sink = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(1, "tools/call", params), sink);
  session->Handle(MakeRequest(2, "tools/call", Modern({{"name", "caps"}})), sink);
  auto messages = sink->messages();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].result["sampling"], true);
  EXPECT_EQ(messages[0].result["modern"], true);
  EXPECT_EQ(messages[1].result["sampling"], false);  // never inferred from a prior request
}

TEST(ServerModernTest, EmptyPromptsAndResourcesAreModernOnly) {
  ServerOptions options;
  options.empty_prompts_and_resources = true;
  Server server(options);
  auto session = server.NewSession(std::make_shared<RecordingSink>());
  auto sink = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(1, "server/discover", Modern()), sink);
  session->Handle(MakeRequest(2, "prompts/list", Modern()), sink);
  session->Handle(MakeRequest(3, "resources/read", Modern({{"uri", "file:///nope"}})), sink);
  session->Handle(MakeRequest(4, "resources/list"), sink);  // legacy: unchanged
  auto messages = sink->messages();
  ASSERT_EQ(messages.size(), 4u);
  EXPECT_TRUE(messages[0].result["capabilities"].contains("prompts"));
  EXPECT_EQ(messages[1].result["prompts"], Value::array());
  EXPECT_EQ(messages[1].result["ttlMs"], 0);
  EXPECT_EQ(messages[2].error["code"], kInvalidParams);
  EXPECT_EQ(messages[2].error["data"]["uri"], "file:///nope");
  EXPECT_EQ(messages[3].error["code"], kMethodNotFound);
}

TEST(ServerEraTest, AModernOnlyServerRefusesInitializeNamingItsVersions) {
  ServerOptions options;
  options.versions = {std::string(kModernProtocolVersion)};
  Server server(options);
  auto session = server.NewSession(std::make_shared<RecordingSink>());
  auto sink = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(1, "initialize", InitParams("2025-11-25")), sink);
  session->Handle(MakeRequest(2, "tools/list"), sink);  // no _meta: still modern, so refused
  auto messages = sink->messages();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].error["code"], rpc_code::kUnsupportedProtocolVersion);
  EXPECT_NE(messages[0].error["message"].get<std::string>().find("2026-07-28"), std::string::npos);
  EXPECT_EQ(messages[0].error["data"]["supported"], Value::array({"2026-07-28"}));
  EXPECT_EQ(messages[1].error["code"], kInvalidParams);
}

TEST(ServerEraTest, ALegacyOnlyServerKnowsNoDiscover) {
  ServerOptions options;
  options.versions = {"2025-11-25", "2025-06-18"};
  Server server(options);
  auto session = server.NewSession(std::make_shared<RecordingSink>());
  auto sink = std::make_shared<RecordingSink>();
  session->Handle(MakeRequest(1, "server/discover", Modern()), sink);
  session->Handle(MakeRequest(2, "tools/list", Modern()), sink);
  auto messages = sink->messages();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0].error["code"], kMethodNotFound);
  EXPECT_FALSE(messages[1].result.contains("resultType"));
}

// ---- subscriptions/listen ----

class ListenTest : public ::testing::Test {
 protected:
  ListenTest() : server_(ServerOptions{}) {
    server_.AddTool(Tool("change"), [](const Value&, ToolContext& context) {
      context.ToolsListChanged();
      return ToolOutcome{{{"content", Value::array()}}, {}};
    });
    standalone_ = std::make_shared<RecordingSink>();
    session_ = server_.NewSession(standalone_);
  }
  ~ListenTest() override {
    for (auto& worker : workers_) worker.join();
  }
  // Opens a listen stream on its own thread, as the stdio server does.
  std::shared_ptr<RecordingSink> Listen(Value id, Value filter) {
    auto sink = std::make_shared<RecordingSink>();
    session_->Handle(MakeRequest(std::move(id), std::string(kListenMethod),
                                 Modern({{"notifications", std::move(filter)}})),
                     sink, [this](std::function<void()> work) { workers_.emplace_back(std::move(work)); });
    return sink;
  }
  void Change(Value params) {
    session_->Handle(MakeRequest(next_id_++, "tools/call", std::move(params)),
                     std::make_shared<RecordingSink>());
  }

  Server server_;
  std::shared_ptr<RecordingSink> standalone_;
  std::unique_ptr<ServerSession> session_;
  std::vector<std::thread> workers_;
  int next_id_ = 100;
};

TEST_F(ListenTest, AcknowledgmentFirstThenTaggedNotificationsThenGracefulClosure) {
  auto tools = Listen("sub-1", {{"toolsListChanged", true}, {"promptsListChanged", true}});
  ASSERT_TRUE(tools->WaitFor(1));
  Change(Modern({{"name", "change"}}));
  ASSERT_TRUE(tools->WaitFor(2));
  server_.CloseSubscriptions();
  ASSERT_TRUE(tools->WaitFor(3));
  auto messages = tools->messages();
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0].method, kAcknowledgedNotification);
  EXPECT_EQ(messages[0].params["_meta"][std::string(meta::kSubscriptionId)], "sub-1");
  EXPECT_EQ(messages[0].params["notifications"], Value({{"toolsListChanged", true}}));
  EXPECT_EQ(messages[1].method, kToolsListChangedNotification);
  EXPECT_EQ(messages[1].params["_meta"][std::string(meta::kSubscriptionId)], "sub-1");
  ASSERT_EQ(messages[2].kind, MessageKind::kResult);
  EXPECT_EQ(messages[2].id, "sub-1");
  EXPECT_EQ(messages[2].result["resultType"], "complete");
  EXPECT_EQ(messages[2].result["_meta"][std::string(meta::kSubscriptionId)], "sub-1");
  EXPECT_TRUE(standalone_->messages().empty());
  EXPECT_EQ(server_.open_subscriptions(), 0u);
}

TEST_F(ListenTest, OnlySubscribersThatAskedForToolsHearOfChanges) {
  auto prompts_only = Listen(1, {{"promptsListChanged", true}});
  auto tools = Listen(2, {{"toolsListChanged", true}});
  ASSERT_TRUE(prompts_only->WaitFor(1));
  ASSERT_TRUE(tools->WaitFor(1));
  EXPECT_EQ(prompts_only->messages()[0].params["notifications"], Value::object());
  Change(Modern({{"name", "change"}}));
  ASSERT_TRUE(tools->WaitFor(2));
  server_.CloseSubscriptions();
  ASSERT_TRUE(prompts_only->WaitFor(2));
  auto quiet = prompts_only->messages();
  ASSERT_EQ(quiet.size(), 2u);  // acknowledgment and closure, nothing between
  EXPECT_TRUE(quiet[1].IsResponse());
}

TEST_F(ListenTest, LegacyChangesGoToTheLegacySessionOnly) {
  auto tools = Listen(1, {{"toolsListChanged", true}});
  ASSERT_TRUE(tools->WaitFor(1));
  Change({{"name", "change"}});  // a legacy call
  ASSERT_TRUE(standalone_->WaitFor(1));
  EXPECT_EQ(standalone_->messages()[0].method, kToolsListChangedNotification);
  EXPECT_FALSE(standalone_->messages()[0].params.contains("_meta"));
  server_.CloseSubscriptions();
  ASSERT_TRUE(tools->WaitFor(2));
  EXPECT_EQ(tools->messages().size(), 2u);
}

TEST_F(ListenTest, CancellationEndsTheStreamWithoutAResponse) {
  auto tools = Listen(9, {{"toolsListChanged", true}});
  ASSERT_TRUE(tools->WaitFor(1));
  session_->Handle(MakeNotification("notifications/cancelled", {{"requestId", 9}}), tools);
  workers_.back().join();
  workers_.pop_back();
  Change(Modern({{"name", "change"}}));
  EXPECT_EQ(tools->messages().size(), 1u);
  EXPECT_EQ(server_.open_subscriptions(), 0u);
}

TEST_F(ListenTest, FilterValuesThatAreNotTrueSubscribeToNothing) {
  auto odd = Listen(1, {{"toolsListChanged", "yes"}, {"promptsListChanged", 1}});
  ASSERT_TRUE(odd->WaitFor(1));
  EXPECT_EQ(odd->messages()[0].params["notifications"], Value::object());
  server_.CloseSubscriptions();
  ASSERT_TRUE(odd->WaitFor(2));
}

TEST_F(ListenTest, ListenWithoutAFilterIsInvalidParams) {
  auto sink = std::make_shared<RecordingSink>();
  session_->Handle(MakeRequest(1, std::string(kListenMethod), Modern()), sink);
  ASSERT_EQ(sink->messages().size(), 1u);
  EXPECT_EQ(sink->messages()[0].error["code"], kInvalidParams);
}

class DroppingHooks : public ServerHooks {
 public:
  void TransformAcknowledgment(Value& notifications) override { notifications.erase("toolsListChanged"); }
  bool DropSubscription(const Message&) override { return drop; }
  std::atomic<bool> drop{false};
};

TEST_F(ListenTest, HooksNarrowTheAcknowledgmentAndDropStreams) {
  DroppingHooks hooks;
  server_.SetHooks(&hooks);
  auto tools = Listen(1, {{"toolsListChanged", true}});
  ASSERT_TRUE(tools->WaitFor(1));
  EXPECT_EQ(tools->messages()[0].params["notifications"], Value::object());
  Change(Modern({{"name", "change"}}));
  hooks.drop = true;
  workers_.back().join();
  workers_.pop_back();
  EXPECT_EQ(tools->messages().size(), 1u);  // nothing delivered, no closure response
  server_.SetHooks(nullptr);
}

TEST(ServerVersionsTest, SupportedVersionsNewestFirst) {
  EXPECT_EQ(SupportedProtocolVersions().front(), kLatestProtocolVersion);
  EXPECT_TRUE(IsSupportedProtocolVersion("2025-03-26"));
  EXPECT_TRUE(IsSupportedProtocolVersion("2024-11-05"));
  EXPECT_FALSE(IsSupportedProtocolVersion("2024-10-07"));
}

}  // namespace
}  // namespace udon::mcp
