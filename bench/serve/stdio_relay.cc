// The floor of a stdio gateway: a relay that does nothing but move lines, single-threaded
// and blocking, between a host (its own stdin/stdout) and a server it starts. Before each
// tools/call it sends the server EXTRA exchanges of its own, each awaited (1: a tools/list;
// 2: a tools/list, then a ping), the upstream exchanges the gate requires of `serve`
// (re-list, ping barrier, call). gateways.mjs times the TypeScript SDK client through it.
//
//   stdio_relay EXTRA SERVER_COMMAND [ARGS...]
// Server requests and notifications are not expected (the demo server sends none unasked).
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

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

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: stdio_relay EXTRA SERVER_COMMAND [ARGS...]\n");
    return 2;
  }
  const int extra = std::atoi(argv[1]);
  int to_server[2];
  int from_server[2];
  if (pipe(to_server) != 0 || pipe(from_server) != 0) return 1;
  if (fork() == 0) {
    dup2(to_server[0], 0);
    dup2(from_server[1], 1);
    close(to_server[1]);
    close(from_server[0]);
    execvp(argv[2], argv + 2);
    _exit(127);
  }
  close(to_server[0]);
  close(from_server[1]);
  LineReader host(0);
  LineReader server(from_server[0]);
  std::string line;
  std::string answer;
  long id = 1'000'000'000;
  while (host.Next(line)) {
    const bool is_call = line.find("\"tools/call\"") != std::string::npos;
    for (int i = 0; is_call && i < extra; ++i) {
      const std::string request = R"({"jsonrpc":"2.0","id":)" + std::to_string(id++) + R"(,"method":")" +
                                  (i == 0 ? "tools/list" : "ping") + "\"}\n";
      if (!WriteAll(to_server[1], request) || !server.Next(answer)) return 1;
    }
    if (!WriteAll(to_server[1], line)) return 1;
    // Requests are answered with one line; notifications are not answered.
    if (line.find("\"id\"") == std::string::npos) continue;
    if (!server.Next(answer) || !WriteAll(1, answer)) return 1;
  }
  return 0;
}
