#include "gateway/startup_refusal.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "base/file.h"
#include "mcp/protocol/jsonrpc.h"

namespace udon::gateway {
namespace {

using Clock = std::chrono::steady_clock;

// A host's first request is small; a longer line is not one to wait for.
constexpr std::size_t kMaxFrameBytes = 1u << 20;

// Reads more of `fd` into `buffer` before `deadline`. False at the end of input, on an
// error or at the deadline.
bool ReadMore(int fd, Clock::time_point deadline, std::string& buffer) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd in{fd, POLLIN, 0};
    const int ready = poll(&in, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    char chunk[4096];
    const ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(got));
    return true;
  }
}

}  // namespace

std::size_t AnswerStartUpRefusal(const Error& error, int exit, const StartUpRefusalOptions& options) {
  if (isatty(options.in_fd)) return 0;  // a person at a terminal has read stderr
  const auto deadline = Clock::now() + options.wait;
  const json::Value data = {{"code", error.code}, {"exit", exit}};
  std::size_t answered = 0;
  std::string buffer;
  for (;;) {
    std::size_t end = buffer.find('\n');
    if (end == std::string::npos) {
      if (buffer.size() > kMaxFrameBytes || !ReadMore(options.in_fd, deadline, buffer)) return answered;
      continue;
    }
    std::string_view frame(buffer.data(), end);
    if (!frame.empty() && frame.back() == '\r') frame.remove_suffix(1);
    auto message = mcp::ParseMessage(frame, {kMaxFrameBytes, json::kDefaultMaxDepth});
    if (message.ok() && message->kind == mcp::MessageKind::kRequest) {
      const std::string answer = mcp::SerializeMessage(
          mcp::MakeError(message->id, kStartUpRefusedCode, error.code + ": " + error.message, data));
      if (!base::WriteAll(options.out_fd, answer + "\n")) return answered;
      ++answered;
      if (message->method == "initialize") return answered;
    }
    buffer.erase(0, end + 1);
  }
}

}  // namespace udon::gateway
