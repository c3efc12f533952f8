// stdio transport: spawns the server in its own process group and speaks newline-
// delimited JSON-RPC over its stdin/stdout.
//
// - The child gets PR_SET_PDEATHSIG(SIGKILL), so it dies with udon-mcp. Linux ties that
//   signal to the forking thread, so every fork runs on one thread that lives as long as the
//   process: a server started for a call on a short-lived thread outlives that thread.
// - Least privilege (mcp/least_privilege.h): the child gets the default environment plus
//   what its entry grants, never udon-mcp's own variables; every descriptor but its three
//   pipes is closed before exec; a sandboxed entry runs under bubblewrap, and one whose
//   sandbox cannot be built is refused (config.invalid), never started without it.
// - stdout is read by one thread; a line longer than max_message_bytes is never buffered
//   whole: reading stops and the connection fails with mcp.message_too_large. A tools/list
//   answer whose tools array is byte for byte the last one's, where it was, is not checked
//   again (json::ElementsMemo: the same verdict, less work for the gate's re-lists).
// - A stdout line that is not a JSON-RPC message fails the connection closed
//   (mcp.malformed_message): the spec reserves stdout for MCP messages, and a server that
//   writes anything else cannot be trusted to frame the rest. Empty lines are skipped.
// - stderr is drained by another thread into a bounded ring buffer (the newest bytes).
//   It may contain secrets, so it is never logged; stderr_tail() exposes it on request.
// - A server whose output closes is waited for briefly: its exit status or signal goes
//   into the failure's message and details (exitStatus, signal), for diagnosis.
// - A command that cannot be executed fails with mcp.spawn_failed naming the command and
//   the OS error (details.errno, details.command).
// - Close(): close stdin, wait the grace period for exit, SIGTERM the group, wait again,
//   SIGKILL the group, reap. Each wait ends the moment the leader exits (a pidfd, or a
//   watcher thread where the kernel lacks pidfd_open: mcp/child_exit.h), never a poll. The group is killed before the leader is reaped, so no
//   grandchild survives either.
// - A write to a server that stops reading its stdin fails the connection with
//   mcp.send_failed once it made no progress for write_stall_limit.
// - SIGPIPE is set to SIG_IGN process-wide when the first server is spawned, so a server
//   that closed its stdin cannot kill us on write.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "mcp/client/child_exit.h"
#include "json/json.h"
#include "mcp/client/config.h"
#include "mcp/client/transport.h"

namespace udon::mcp {

struct StdioOptions {
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;
  std::size_t stderr_buffer_bytes = 64 * 1024;
  std::chrono::milliseconds shutdown_grace{2'000};
  // A write that makes no progress this long (the server does not read its stdin) fails
  // the connection with mcp.send_failed.
  std::chrono::milliseconds write_stall_limit{5'000};
};

class StdioTransport : public Transport {
 public:
  StdioTransport(ServerConfig server, StdioOptions options = {});
  ~StdioTransport() override;

  Status Start(TransportCallbacks callbacks) override;
  Status Send(const Message& message) override;
  void Close() override;
  bool ordered() const override { return true; }

  pid_t pid() const { return pid_; }
  // The newest stderr bytes. Diagnostics only: may contain secrets.
  std::string stderr_tail() const;
  // How the server ended, once it exited: "exited with status N" or "was killed by
  // signal N (SIGNAME)"; empty while it runs, after Close, or when unknown. Never blocks
  // on a running server; for one that exited it lets the stderr reader drain first.
  std::string exit_description();

 private:
  void ReadStdout();
  void ReadStderr();
  void Fail(Error error);
  bool WaitExit(std::chrono::milliseconds timeout);
  // After the server closed its output: waits briefly for its exit and records how it
  // ended (the leader stays a zombie until Close reaps it).
  std::string ObserveExit();
  // Non-blocking: how the server ended if it has, recorded once.
  std::string ExitedNow();
  void Terminate();

  ServerConfig server_;
  StdioOptions options_;
  TransportCallbacks callbacks_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  int stderr_fd_ = -1;
  std::mutex write_mutex_;
  std::mutex close_mutex_;
  std::atomic<bool> closing_{false};   // Close() began: no more callbacks or sends
  std::atomic<bool> stopping_{false};  // the readers stop
  std::atomic<bool> failed_{false};
  bool reaped_ = false;
  // Watches the leader's exit from Start until Close has reaped it.
  std::unique_ptr<ChildExitWaiter> exit_waiter_;
  // The stdout reader's: the gate re-lists before every call, mostly to the same bytes.
  json::ElementsMemo tool_list_memo_;
  std::thread stdout_reader_;
  std::thread stderr_reader_;
  mutable std::mutex stderr_mutex_;
  std::string stderr_ring_;  // at most stderr_buffer_bytes
  std::string exit_description_;  // guarded by stderr_mutex_
  std::atomic<bool> stderr_ended_{false};  // the stderr reader saw EOF
};

}  // namespace udon::mcp
