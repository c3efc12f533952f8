#include "line_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "json/json.h"

namespace udon::testing {

LineClient::LineClient(const std::vector<std::string>& argv) {
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  char templ[] = "/tmp/udon-line-XXXXXX";
  const int err_fd = mkstemp(templ);
  if (err_fd < 0) throw std::runtime_error("mkstemp failed");
  err_path_ = templ;
  std::vector<std::string> args = argv;
  std::vector<char*> c_args;
  for (auto& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    setpgid(0, 0);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_fd, 2);
    execv(c_args[0], c_args.data());
    _exit(127);
  }
  setpgid(pid_, pid_);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_fd);
  in_fd_ = in_pipe[1];
  out_fd_ = out_pipe[0];
  signal(SIGPIPE, SIG_IGN);
}

LineClient::~LineClient() {
  CloseInput();
  if (out_fd_ >= 0) close(out_fd_);
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
  }
  unlink(err_path_.c_str());
}

void LineClient::SendLine(const std::string& line) {
  const std::string framed = line + "\n";
  std::size_t written = 0;
  while (in_fd_ >= 0 && written < framed.size()) {
    const ssize_t n = write(in_fd_, framed.data() + written, framed.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<std::size_t>(n);
  }
}

void LineClient::Send(const nlohmann::json& message) { SendLine(message.dump()); }

void LineClient::CloseInput() {
  if (in_fd_ >= 0) close(in_fd_);
  in_fd_ = -1;
}

std::optional<std::string> LineClient::ReadLine(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (eof_) return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd pfd{out_fd_, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[1 << 16];
    const ssize_t n = read(out_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::optional<nlohmann::json> LineClient::ReadResponse(const nlohmann::json& id,
                                                       std::vector<nlohmann::json>* seen) {
  while (auto line = ReadLine()) {
    auto parsed = json::Parse(*line);
    nlohmann::json message = parsed.ok() ? std::move(*parsed) : nlohmann::json();
    if (seen != nullptr) seen->push_back(message);
    if (message.is_object() && !message.contains("method") && message.value("id", nlohmann::json()) == id) {
      return message;
    }
  }
  return std::nullopt;
}

std::vector<std::string> LineClient::ReadAll() {
  std::vector<std::string> lines;
  while (auto line = ReadLine()) lines.push_back(std::move(*line));
  return lines;
}

int LineClient::Wait() {
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

std::string LineClient::Stderr() const {
  std::ifstream in(err_path_);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

nlohmann::json Request(const nlohmann::json& id, const std::string& method, nlohmann::json params) {
  nlohmann::json message = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  return message;
}

nlohmann::json ToolCallRequest(int id, const std::string& tool, nlohmann::json arguments) {
  return Request(id, "tools/call", {{"name", tool}, {"arguments", std::move(arguments)}});
}

nlohmann::json Notification(const std::string& method, nlohmann::json params) {
  nlohmann::json message = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) message["params"] = std::move(params);
  return message;
}

nlohmann::json InitializeRequest(const nlohmann::json& id, const std::string& version) {
  return Request(id, "initialize",
                 {{"protocolVersion", version},
                  {"capabilities", nlohmann::json::object()},
                  {"clientInfo", {{"name", "udon-test"}, {"version", "1"}}}});
}

}  // namespace udon::testing
