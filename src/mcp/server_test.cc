#include "mcp/server.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

namespace udon::mcp {
namespace {

using json::Value;

class RecordingSink : public MessageSink {
 public:
  void Send(const Message& message) override {
    std::lock_guard lock(mutex_);
    messages_.push_back(message);
  }
  void SendRaw(const std::string& frame) override {
    std::lock_guard lock(mutex_);
    raw_.push_back(frame);
  }
  std::vector<Message> messages() {
    std::lock_guard lock(mutex_);
    return messages_;
  }

 private:
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

TEST(ServerVersionsTest, SupportedVersionsNewestFirst) {
  EXPECT_EQ(SupportedProtocolVersions().front(), kLatestProtocolVersion);
  EXPECT_TRUE(IsSupportedProtocolVersion("2025-03-26"));
  EXPECT_FALSE(IsSupportedProtocolVersion("2024-11-05"));
}

}  // namespace
}  // namespace udon::mcp
