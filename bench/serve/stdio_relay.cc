// The floor of a stdio gateway: a relay that does nothing but move lines between a host
// (its own stdin/stdout) and a server it starts. Before each tools/call it sends the server
// EXTRA exchanges of its own, each awaited (1: a tools/list; 2: a tools/list, then a ping),
// the upstream exchanges the gate requires of `serve` (re-list, ping barrier, call).
// gateways.mjs times the TypeScript SDK client through it.
//
//   stdio_relay [--threads] EXTRA SERVER_COMMAND [ARGS...]
// Without --threads, one thread does everything, blocking. With --threads, the thread
// structure the gate's rules keep in `serve` and nothing else: a front reader hands each
// host line to a call thread (the front must keep reading while a call runs), and an
// upstream reader hands each server line to the waiting call thread (only that reader may
// answer a server); the call thread makes the exchanges. Hand-offs use a mutex and a
// condition variable, as serve's do. Server requests and notifications are not expected
// (the demo server sends none unasked).
#include <sys/types.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace {

// Newline-delimited lines from one descriptor.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // The next line with its newline; false at the end of input.
  bool Next(std::string& line) {
    for (;;) {
      if (const std::size_t newline = buffer_.find('\n', scanned_); newline != std::string::npos) {
        line.assign(buffer_, 0, newline + 1);
        buffer_.erase(0, newline + 1);
        scanned_ = 0;
        return true;
      }
      scanned_ = buffer_.size();
      char chunk[65536];
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
  std::size_t scanned_ = 0;
};

// Lines handed from one thread to another.
class Handoff {
 public:
  void Put(std::string line) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      lines_.push_back(std::move(line));
    }
    ready_.notify_one();
  }
  void Close() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }
  // The next line; false once closed and empty.
  bool Take(std::string& line) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return closed_ || !lines_.empty(); });
    if (lines_.empty()) return false;
    line = std::move(lines_.front());
    lines_.pop_front();
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::string> lines_;
  bool closed_ = false;
};

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

using NextAnswer = std::function<bool(std::string&)>;

// One host line to the server (after the extra exchanges, for a tools/call) and its answer,
// if it has one, to the host.
bool Relay(const std::string& line, int extra, int to_server, const NextAnswer& next_answer) {
  static long id = 1'000'000'000;
  std::string answer;
  const bool is_call = line.find("\"tools/call\"") != std::string::npos;
  for (int i = 0; is_call && i < extra; ++i) {
    const std::string request = R"({"jsonrpc":"2.0","id":)" + std::to_string(id++) + R"(,"method":")" +
                                (i == 0 ? "tools/list" : "ping") + "\"}\n";
    if (!WriteAll(to_server, request) || !next_answer(answer)) return false;
  }
  if (!WriteAll(to_server, line)) return false;
  // Requests are answered with one line; notifications are not answered.
  if (line.find("\"id\"") == std::string::npos) return true;
  return next_answer(answer) && WriteAll(1, answer);
}

int RelaySingleThreaded(int extra, int to_server, int from_server) {
  LineReader host(0);
  LineReader server(from_server);
  const NextAnswer next_answer = [&server](std::string& answer) { return server.Next(answer); };
  std::string line;
  while (host.Next(line)) {
    if (!Relay(line, extra, to_server, next_answer)) return 1;
  }
  return 0;
}

int RelayThreaded(int extra, int to_server, int from_server) {
  Handoff requests;
  Handoff answers;
  std::thread upstream_reader([&answers, from_server] {
    LineReader server(from_server);
    std::string line;
    while (server.Next(line)) answers.Put(std::move(line));
    answers.Close();
  });
  int status = 0;
  std::thread call_thread([&] {
    const NextAnswer next_answer = [&answers](std::string& answer) { return answers.Take(answer); };
    std::string line;
    while (requests.Take(line)) {
      if (!Relay(line, extra, to_server, next_answer)) status = 1;
    }
  });
  LineReader host(0);
  std::string line;
  while (host.Next(line)) requests.Put(std::move(line));
  requests.Close();
  call_thread.join();
  close(to_server);  // the server ends at the end of its input, and so does its reader
  upstream_reader.join();
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  const bool threads = argc > 1 && std::strcmp(argv[1], "--threads") == 0;
  const int first = threads ? 2 : 1;
  if (argc < first + 2) {
    std::fprintf(stderr, "usage: stdio_relay [--threads] EXTRA SERVER_COMMAND [ARGS...]\n");
    return 2;
  }
  const int extra = std::atoi(argv[first]);
  int to_server[2];
  int from_server[2];
  if (pipe(to_server) != 0 || pipe(from_server) != 0) return 1;
  if (fork() == 0) {
    dup2(to_server[0], 0);
    dup2(from_server[1], 1);
    close(to_server[1]);
    close(from_server[0]);
    execvp(argv[first + 1], argv + first + 1);
    _exit(127);
  }
  close(to_server[0]);
  close(from_server[1]);
  return threads ? RelayThreaded(extra, to_server[1], from_server[0])
                 : RelaySingleThreaded(extra, to_server[1], from_server[0]);
}
