#include "mcp/server/stdio_server.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "mcp/server/worker_pool.h"

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

// Runs tool calls and listen streams off the reading thread, never making one wait: on a
// kept thread of a small pool when one is free, else on a thread of its own (the client may
// have more calls running than the pool has threads). Starting a thread for every call cost
// more than the call itself (docs/benchmarks.md, "serve"). Wait() returns once every call
// ended.
class CallThreads {
 public:
  static constexpr std::size_t kKept = 8;

  void Run(std::function<void()> work) {
    if (pool_.TryReserve()) {
      pool_.RunReserved(std::move(work));
      return;
    }
    {
      std::lock_guard lock(mutex_);
      ++detached_;
    }
    std::thread([this, work = std::move(work)]() mutable {
      work();
      work = nullptr;  // release what the call held before the server may wind down
      std::lock_guard lock(mutex_);
      if (--detached_ == 0) idle_.notify_all();
    }).detach();
  }

  void Wait() {
    pool_.Shutdown();  // nothing is queued: it joins the kept threads once their calls end
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [this] { return detached_ == 0; });
  }

 private:
  WorkerPool pool_{kKept, 1};
  std::mutex mutex_;
  std::condition_variable idle_;
  int detached_ = 0;
};

Message FrameError(const Error& error) {
  const int code = error.code == "rpc.malformed" ? kParseError : kInvalidRequest;
  return MakeError(nullptr, code, code == kParseError ? "parse error" : "invalid request");
}

}  // namespace

void RunStdioServer(Server& server, const StdioServerOptions& options) {
  auto writer = std::make_shared<LineWriter>(options.out_fd);
  auto session = server.NewSession(writer);
  session->SetOrigin("pipe");
  CallThreads calls;
  const WorkRunner runner = [&calls](std::function<void()> work) { calls.Run(std::move(work)); };

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
  calls.Wait();
}

}  // namespace udon::mcp
