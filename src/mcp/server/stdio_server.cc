#include "mcp/server/stdio_server.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace udon::mcp {
namespace {

// Writes whole lines to a file descriptor, one writer at a time.
class LineWriter : public MessageSink {
 public:
  explicit LineWriter(int fd) : fd_(fd) {}
  void Send(const Message& message) override { SendRaw(SerializeMessage(message)); }
  void SendRaw(const std::string& frame) override {
    std::lock_guard lock(mutex_);
    if (broken_) return;
    std::string line = frame + "\n";
    std::size_t written = 0;
    while (written < line.size()) {
      const ssize_t n = write(fd_, line.data() + written, line.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        broken_ = true;  // the client went away; later output has nowhere to go
        return;
      }
      written += static_cast<std::size_t>(n);
    }
  }
  bool Open() const override {
    std::lock_guard lock(mutex_);
    return !broken_;
  }

 private:
  int fd_;
  mutable std::mutex mutex_;
  bool broken_ = false;
};

// Counts running tool calls so the server can wait for them at end of input.
class CallTracker {
 public:
  void Start() {
    std::lock_guard lock(mutex_);
    ++running_;
  }
  void Done() {
    std::lock_guard lock(mutex_);
    if (--running_ == 0) idle_.notify_all();
  }
  void WaitIdle() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return running_ == 0; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable idle_;
  int running_ = 0;
};

Message FrameError(const Error& error) {
  const int code = error.code == "rpc.malformed" ? kParseError : kInvalidRequest;
  return MakeError(nullptr, code, code == kParseError ? "parse error" : "invalid request");
}

}  // namespace

void RunStdioServer(Server& server, const StdioServerOptions& options) {
  auto writer = std::make_shared<LineWriter>(options.out_fd);
  auto session = server.NewSession(writer);
  CallTracker tracker;
  const WorkRunner runner = [&tracker](std::function<void()> work) {
    tracker.Start();
    std::thread([&tracker, work = std::move(work)]() mutable {
      work();
      work = nullptr;  // release what the call held before the server may wind down
      tracker.Done();
    }).detach();
  };

  std::string line;
  bool oversized = false;  // dropping the rest of a line that broke the limit
  char buffer[65536];
  for (;;) {
    if (options.stop_fd >= 0) {
      pollfd fds[2] = {{options.in_fd, POLLIN, 0}, {options.stop_fd, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (fds[1].revents != 0) break;  // asked to stop: as if the input had ended
    }
    const ssize_t n = read(options.in_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c != '\n') {
        if (!oversized) line.push_back(c);
        if (line.size() > options.limits.max_bytes) {
          oversized = true;
          line.clear();
        }
        continue;
      }
      if (oversized) {
        writer->Send(MakeError(nullptr, kInvalidRequest, "message exceeds the size limit"));
        oversized = false;
        continue;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) {
        line.clear();
        continue;
      }
      auto message = ParseMessage(line, options.limits);
      line.clear();
      if (!message.ok()) {
        writer->Send(FrameError(message.error()));
        continue;
      }
      session->Handle(std::move(*message), writer, runner);
    }
  }
  // End of input is the shutdown signal: open listen streams get their closure response.
  server.CloseSubscriptions();
  tracker.WaitIdle();
}

}  // namespace udon::mcp
