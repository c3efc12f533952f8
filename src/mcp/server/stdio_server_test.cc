#include "mcp/server/stdio_server.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace udon::mcp {
namespace {

using json::Value;

// One stdio server on two pipes, run on its own thread; the test writes requests and reads
// the answers line by line.
class StdioServerTest : public ::testing::Test {
 protected:
  StdioServerTest() : server_(Options()) {}
  ~StdioServerTest() override {
    if (to_server_ >= 0) close(to_server_);
    if (thread_.joinable()) thread_.join();
    if (from_server_ >= 0) close(from_server_);
  }
  static ServerOptions Options() {
    ServerOptions options;
    options.server_info = {{"name", "test"}, {"version", "1"}};
    return options;
  }
  void Start() {
    int in[2];
    int out[2];
    ASSERT_EQ(pipe(in), 0);
    ASSERT_EQ(pipe(out), 0);
    to_server_ = in[1];
    from_server_ = out[0];
    thread_ = std::thread([this, read_fd = in[0], write_fd = out[1]] {
      StdioServerOptions options;
      options.in_fd = read_fd;
      options.out_fd = write_fd;
      RunStdioServer(server_, options);
      close(read_fd);
      close(write_fd);
    });
  }
  void Write(const Message& message) {
    const std::string line = SerializeMessage(message) + "\n";
    ASSERT_EQ(write(to_server_, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  // The next message the server wrote.
  Message Read() {
    for (;;) {
      const auto newline = buffered_.find('\n');
      if (newline != std::string::npos) {
        auto message = ParseMessage(buffered_.substr(0, newline));
        buffered_.erase(0, newline + 1);
        EXPECT_TRUE(message.ok());
        return message.ok() ? std::move(message).value() : Message();
      }
      char chunk[4096];
      const ssize_t n = read(from_server_, chunk, sizeof chunk);
      if (n <= 0) {
        ADD_FAILURE() << "the server's output ended";
        return Message();
      }
      buffered_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  Value CallParams(const std::string& tool) {
    return {{"name", tool},
            {"arguments", Value::object()},
            {"_meta",
             {{std::string(meta::kProtocolVersion), std::string(kModernProtocolVersion)},
              {std::string(meta::kClientCapabilities), Value::object()},
              {std::string(meta::kClientInfo), {{"name", "t"}, {"version", "1"}}}}}};
  }
  static Value Tool(const std::string& name) {
    return {{"name", name}, {"description", "d"}, {"inputSchema", {{"type", "object"}}}};
  }

  Server server_;
  std::thread thread_;
  int to_server_ = -1;
  int from_server_ = -1;
  std::string buffered_;
};

long ThreadId() { return static_cast<long>(syscall(SYS_gettid)); }

TEST_F(StdioServerTest, SequentialCallsRunOnThreadsKeptBetweenCalls) {
  std::mutex mutex;
  std::set<long> threads;
  server_.AddTool(Tool("where"), [&](const Value&, ToolContext&) -> ToolOutcome {
    std::lock_guard lock(mutex);
    threads.insert(ThreadId());
    return {{{"content", Value::array()}}, {}};
  });
  Start();
  constexpr int kCalls = 40;
  for (int i = 1; i <= kCalls; ++i) {
    Write(MakeRequest(i, "tools/call", CallParams("where")));
    const Message answer = Read();
    ASSERT_TRUE(answer.IsResponse());
    ASSERT_TRUE(answer.result.is_object()) << answer.error.dump();
  }
  std::lock_guard lock(mutex);
  // A thread started per call would have shown kCalls kernel thread ids (they are not reused
  // this soon).
  EXPECT_GE(threads.size(), 1u);
  EXPECT_LE(threads.size(), 8u);
  EXPECT_EQ(threads.count(ThreadId()), 0u);  // never on the test's thread
}

TEST_F(StdioServerTest, MoreCallsAtOnceThanKeptThreadsAllRunTogether) {
  constexpr int kCalls = 12;  // more than the pool keeps: the rest get threads of their own
  std::mutex mutex;
  std::condition_variable changed;
  int running = 0;
  server_.AddTool(Tool("gather"), [&](const Value&, ToolContext&) -> ToolOutcome {
    std::unique_lock lock(mutex);
    ++running;
    changed.notify_all();
    // Returns only once every call runs at the same time (a queued call would never start).
    const bool all = changed.wait_for(lock, std::chrono::minutes(1), [&] { return running >= kCalls; });
    return {{{"content", Value::array()}, {"structuredContent", {{"all", all}}}}, {}};
  });
  Start();
  for (int i = 1; i <= kCalls; ++i) Write(MakeRequest(i, "tools/call", CallParams("gather")));
  std::set<long> answered;
  for (int i = 0; i < kCalls; ++i) {
    const Message answer = Read();
    ASSERT_TRUE(answer.IsResponse());
    ASSERT_TRUE(answer.result.is_object()) << answer.error.dump();
    EXPECT_EQ(answer.result["structuredContent"]["all"], true);
    answered.insert(answer.id.get<long>());
  }
  EXPECT_EQ(answered.size(), static_cast<std::size_t>(kCalls));
}

TEST_F(StdioServerTest, EndOfInputWaitsForTheCallsStillRunning) {
  std::mutex mutex;
  std::condition_variable changed;
  bool release = false;
  int started = 0;
  server_.AddTool(Tool("slow"), [&](const Value&, ToolContext&) -> ToolOutcome {
    std::unique_lock lock(mutex);
    ++started;
    changed.notify_all();
    changed.wait(lock, [&] { return release; });
    return {{{"content", Value::array()}}, {}};
  });
  Start();
  constexpr int kCalls = 10;  // some on kept threads, some on their own
  for (int i = 1; i <= kCalls; ++i) Write(MakeRequest(i, "tools/call", CallParams("slow")));
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return started == kCalls; });
  }
  close(to_server_);  // end of input while every call still runs
  to_server_ = -1;
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  changed.notify_all();
  for (int i = 0; i < kCalls; ++i) {
    const Message answer = Read();
    ASSERT_TRUE(answer.IsResponse());
    EXPECT_TRUE(answer.result.is_object());
  }
  thread_.join();  // returns only after every call answered
}

}  // namespace
}  // namespace udon::mcp
