#include "mcp/client/stdio_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "mcp/client/child_exit.h"
#include "mcp/client/least_privilege.h"

extern char** environ;

namespace udon::mcp {
namespace {

constexpr int kPollSliceMs = 100;

struct Pipe {
  int read = -1;
  int write = -1;
};

bool OpenPipe(Pipe& pipe) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  pipe.read = fds[0];
  pipe.write = fds[1];
  return true;
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecChild(pid_t parent, int in_fd, int out_fd, int err_fd, int status_fd,
                            const char* cwd, char** argv, char** envp) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl took effect.
  if (getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) {
    int error = errno;
    (void)!write(status_fd, &error, sizeof error);
    _exit(127);
  }
  if (cwd != nullptr && chdir(cwd) != 0) {
    int error = errno;
    (void)!write(status_fd, &error, sizeof error);
    _exit(127);
  }
  // Descriptors other code opened without O_CLOEXEC (libraries, streams) must not reach
  // a server either. The status pipe is close-on-exec and goes at exec.
  if (!CloseInheritedDescriptors(status_fd)) {
    int error = EBADF;
    (void)!write(status_fd, &error, sizeof error);
    _exit(127);
  }
  environ = envp;
  execvp(argv[0], argv);
  int error = errno;
  (void)!write(status_fd, &error, sizeof error);
  _exit(127);
}

// PR_SET_PDEATHSIG fires when the thread that forked the child ends, not the process. Every
// fork runs on this one thread, which lives as long as the process, so a server started
// for a call made on a short-lived thread (a gateway's request) outlives that thread and
// still dies with udon-mcp.
class ForkThread {
 public:
  static pid_t Fork(const std::function<void()>& in_child) {
    static ForkThread* const instance = new ForkThread();  // never destroyed: outlives every caller
    return instance->Run(in_child);
  }

 private:
  ForkThread() { std::thread([this] { Loop(); }).detach(); }

  pid_t Run(const std::function<void()>& in_child) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return job_ == nullptr; });
    job_ = &in_child;
    done_ = false;
    changed_.notify_all();
    changed_.wait(lock, [this] { return done_; });
    job_ = nullptr;
    changed_.notify_all();
    return pid_;
  }

  void Loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [this] { return job_ != nullptr && !done_; });
      const pid_t pid = fork();
      if (pid == 0) (*job_)();  // never returns: execs or _exits
      pid_ = pid;
      done_ = true;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  const std::function<void()>* job_ = nullptr;
  bool done_ = false;
  pid_t pid_ = -1;
};

}  // namespace

StdioTransport::StdioTransport(ServerConfig server, StdioOptions options)
    : server_(std::move(server)), options_(options) {}

StdioTransport::~StdioTransport() { Close(); }

Status StdioTransport::Start(TransportCallbacks callbacks) {
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  callbacks_ = std::move(callbacks);

  // Never a silent unsandboxed start: without a working sandbox the entry is invalid.
  UDON_RETURN_IF_ERROR(CheckRunnable(server_, ProcessEnv()));
  std::vector<std::string> args{server_.command};
  args.insert(args.end(), server_.args.begin(), server_.args.end());
  std::vector<std::string> env = ChildEnvironment(server_, environ);
  if (server_.sandbox) {
    const std::string start_dir = AbsolutePath(server_.cwd, "");
    args = SandboxArgv(BwrapPath(ProcessEnv()), *server_.sandbox, CurrentSandboxHost(env), start_dir, args);
  }
  auto argv = Pointers(args);
  auto envp = Pointers(env);
  const char* cwd = server_.cwd.empty() ? nullptr : server_.cwd.c_str();

  Pipe in, out, err, status;
  if (!OpenPipe(in) || !OpenPipe(out) || !OpenPipe(err) || !OpenPipe(status)) {
    for (Pipe* p : {&in, &out, &err, &status}) {
      CloseFd(p->read);
      CloseFd(p->write);
    }
    return udon::MakeError("mcp.spawn_failed", "could not create pipes");
  }
  const pid_t parent = getpid();
  const pid_t pid = ForkThread::Fork([&] {
    ExecChild(parent, in.read, out.write, err.write, status.write, cwd, argv.data(), envp.data());
  });
  CloseFd(in.read);
  CloseFd(out.write);
  CloseFd(err.write);
  CloseFd(status.write);
  if (pid < 0) {
    CloseFd(in.write);
    CloseFd(out.read);
    CloseFd(err.read);
    CloseFd(status.read);
    return udon::MakeError("mcp.spawn_failed", "fork failed");
  }
  setpgid(pid, pid);  // also from the parent: no window where the group does not exist
  pid_ = pid;
  stdin_fd_ = in.write;
  stdout_fd_ = out.read;
  stderr_fd_ = err.read;

  int child_errno = 0;
  ssize_t got;
  do {
    got = read(status.read, &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  CloseFd(status.read);
  if (got == static_cast<ssize_t>(sizeof child_errno)) {
    closing_ = true;
    waitpid(pid_, nullptr, 0);
    reaped_ = true;
    CloseFd(stdin_fd_);
    CloseFd(stdout_fd_);
    CloseFd(stderr_fd_);
    // The command is the user's own configuration, not server data: naming it and the OS
    // error is what makes a missing or unexecutable command fixable.
    Error error = udon::MakeError("mcp.spawn_failed", "the server command \"" + server_.command +
                                                          "\" could not be executed: " + std::strerror(child_errno));
    error.details["errno"] = child_errno;
    error.details["command"] = server_.command;
    return error;
  }
  exit_waiter_ = std::make_unique<ChildExitWaiter>(pid_);
  fcntl(stdin_fd_, F_SETFL, fcntl(stdin_fd_, F_GETFL) | O_NONBLOCK);
  stdout_reader_ = std::thread([this] { ReadStdout(); });
  stderr_reader_ = std::thread([this] { ReadStderr(); });
  return OkStatus();
}

Status StdioTransport::Send(const Message& message) {
  std::string frame = SerializeMessage(message);
  frame.push_back('\n');
  std::lock_guard lock(write_mutex_);
  std::size_t written = 0;
  auto progressed = std::chrono::steady_clock::now();
  while (written < frame.size()) {
    if (closing_ || failed_ || stdin_fd_ < 0) {
      return udon::MakeError("mcp.send_failed", "the server's stdin is closed");
    }
    ssize_t n = write(stdin_fd_, frame.data() + written, frame.size() - written);
    if (n > 0) {
      written += static_cast<std::size_t>(n);
      progressed = std::chrono::steady_clock::now();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // A server that does not read its stdin must not block us forever: the reader
      // thread answering its pings would hold the write lock, and every later Send (the
      // cancellation, Close) would wait on it.
      if (std::chrono::steady_clock::now() - progressed >= options_.write_stall_limit) {
        Error error = udon::MakeError("mcp.send_failed", "the server stopped reading its input");
        Fail(error);
        return error;
      }
      pollfd pfd{stdin_fd_, POLLOUT, 0};
      poll(&pfd, 1, kPollSliceMs);
      continue;
    }
    return udon::MakeError("mcp.send_failed", "writing to the server's stdin failed");
  }
  return OkStatus();
}

void StdioTransport::ReadStdout() {
  std::string line;
  char buffer[64 * 1024];
  while (!stopping_) {
    pollfd pfd{stdout_fd_, POLLIN, 0};
    int ready = poll(&pfd, 1, kPollSliceMs);
    if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    ssize_t n = read(stdout_fd_, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      Error error = udon::MakeError("mcp.server_exited", "the server closed its output");
      if (const std::string ended = ObserveExit(); !ended.empty()) {
        error.message = "the server closed its output and " + ended;
        error.details["exit"] = ended;
      }
      Fail(std::move(error));
      return;
    }
    std::string_view chunk(buffer, static_cast<std::size_t>(n));
    while (!chunk.empty()) {
      const std::size_t newline = chunk.find('\n');
      const std::size_t take = newline == std::string_view::npos ? chunk.size() : newline;
      if (line.size() + take > options_.max_message_bytes) {
        Fail(udon::MakeError("mcp.message_too_large", "a message exceeds the size limit"));
        return;
      }
      line.append(chunk.substr(0, take));
      if (newline == std::string_view::npos) break;
      chunk.remove_prefix(newline + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      auto message = ParseFrame(line, options_.max_message_bytes, callbacks_, &tool_list_memo_);
      line.clear();
      if (!message.ok()) {
        Fail(std::move(message).error());
        return;
      }
      callbacks_.on_message(std::move(message).value());
    }
  }
}

void StdioTransport::ReadStderr() {
  char buffer[16 * 1024];
  // Close stops the reader the moment the server is reaped, maybe before the server's last
  // bytes were read: those are all in the pipe by then, so they are drained without
  // waiting, and boundedly (a grandchild outside the group may hold the pipe and write on).
  constexpr int kDrainReads = 64;
  int drain_reads = 0;
  while (true) {
    const bool draining = stopping_;
    if (draining && ++drain_reads > kDrainReads) return;
    pollfd pfd{stderr_fd_, POLLIN, 0};
    int ready = poll(&pfd, 1, draining ? 0 : kPollSliceMs);
    if (ready == 0 && draining) return;
    if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    ssize_t n = read(stderr_fd_, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      stderr_ended_ = true;
      return;
    }
    std::lock_guard lock(stderr_mutex_);
    stderr_ring_.append(buffer, static_cast<std::size_t>(n));
    if (stderr_ring_.size() > options_.stderr_buffer_bytes) {
      stderr_ring_.erase(0, stderr_ring_.size() - options_.stderr_buffer_bytes);
    }
  }
}

void StdioTransport::Fail(Error error) {
  if (failed_.exchange(true) || closing_) return;
  callbacks_.on_closed(std::move(error));
}

std::string StdioTransport::ObserveExit() {
  // A server that closes its output is usually exiting; one that keeps running without
  // output is not waited for long. A Close meanwhile ends the wait too: it kills the group.
  if (closing_) return {};
  exit_waiter_->WaitFor(std::chrono::milliseconds(500));
  return ExitedNow();
}

std::string StdioTransport::ExitedNow() {
  {
    std::lock_guard lock(stderr_mutex_);
    if (!exit_description_.empty() || closing_ || pid_ <= 0) return exit_description_;
  }
  siginfo_t info{};
  // WNOWAIT: Close reaps the leader (and a Close that began ends every wait here).
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid_) {
    return {};
  }
  std::string ended;
  if (info.si_code == CLD_EXITED) {
    ended = "exited with status " + std::to_string(info.si_status);
  } else {
    const char* name = sigabbrev_np(info.si_status);
    ended = "was killed by signal " + std::to_string(info.si_status) +
            (name != nullptr ? std::string(" (SIG") + name + ")" : std::string());
  }
  // What it wrote to stderr before exiting belongs to the diagnosis: let the reader drain
  // it (a grandchild holding the pipe open only costs the bounded wait).
  const auto drained_by = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (!stderr_ended_ && !closing_ && std::chrono::steady_clock::now() < drained_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::lock_guard lock(stderr_mutex_);
  exit_description_ = ended;
  return ended;
}

std::string StdioTransport::exit_description() { return ExitedNow(); }

std::string StdioTransport::stderr_tail() const {
  std::lock_guard lock(stderr_mutex_);
  return stderr_ring_;
}

bool StdioTransport::WaitExit(std::chrono::milliseconds timeout) {
  // Ends the moment the leader exits; it stays a zombie (the waiter never reaps), so its
  // group id cannot be reused before the final group kill.
  return exit_waiter_->WaitFor(timeout);
}

void StdioTransport::Terminate() {
  {
    std::lock_guard lock(write_mutex_);
    CloseFd(stdin_fd_);
  }
  if (!WaitExit(options_.shutdown_grace)) {
    kill(-pid_, SIGTERM);
    if (!WaitExit(options_.shutdown_grace)) kill(-pid_, SIGKILL);
  }
  // Whatever else is left in the group (grandchildren) goes too.
  kill(-pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

void StdioTransport::Close() {
  std::lock_guard lock(close_mutex_);
  closing_ = true;
  // The readers keep draining while the server shuts down, so it never blocks on output.
  if (pid_ > 0 && !reaped_) Terminate();
  stopping_ = true;
  if (stdout_reader_.joinable()) stdout_reader_.join();
  if (stderr_reader_.joinable()) stderr_reader_.join();
  exit_waiter_.reset();  // the child is reaped; its pidfd (or watcher thread) goes too
  std::lock_guard write_lock(write_mutex_);
  CloseFd(stdin_fd_);
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
}

}  // namespace udon::mcp
