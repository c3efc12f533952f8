// The state store's share of a gated call of a `serialize` tool: the invalidation check
// (StepStatic), taking the serialize lock (StepList), asking whether it survived the call
// (Dispatch) and releasing it (Release), as the gate does them, through gate::StateStore.
//
//   state_bench STORE [RUNNERS [CALLS [own|shared]]]
//
// STORE is a state directory or a postgres:// URI. RUNNERS processes (forked, each with
// its own store object and connections, as separate udon-mcp runners have) each time
// CALLS iterations after one untimed first use (which connects and checks the schema;
// reported apart). Scope "own" (default): each runner serializes its own tool, so the
// figure is the store's cost, not queueing behind another runner's lock; "shared": all
// runners contend for one lock. Prints per-iteration medians and p90 in microseconds.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "state_pg/open.h"

namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  return samples[static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1))];
}

// One runner: writes "first" and then CALLS samples (microseconds) as doubles to fd. After
// its first use it says so on `ready` and waits for `go` to close, so all runners time
// their calls at once.
int Runner(const std::string& store_location, int index, int calls, bool shared, int fd, int ready, int go) {
  auto store = udon::state_pg::OpenStateStore(store_location);
  if (!store.ok()) return 2;
  const std::string sha(64, 'e');
  const std::string scope = shared ? "bench" : "bench\ntool" + std::to_string(index);
  auto once = [&]() -> bool {
    auto invalidated = (*store)->IsInvalidated(sha, "bench", 1);
    if (!invalidated.ok() || *invalidated) return false;
    auto lock = (*store)->AcquireSerializeLock(scope, std::chrono::seconds(60));
    // After dispatch the gate asks whether the lock survived the call (Gate::Dispatch).
    return lock.ok() && (*lock)->StillHeld().ok();  // released here, as Gate::Release does
  };
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(calls) + 1);
  auto start = Clock::now();
  if (!once()) return 3;
  samples.push_back(Micros(Clock::now() - start));
  char byte = 'r';
  if (write(ready, &byte, 1) != 1) return 4;
  while (read(go, &byte, 1) > 0) {
  }
  for (int i = 0; i < calls; ++i) {
    start = Clock::now();
    if (!once()) return 3;
    samples.push_back(Micros(Clock::now() - start));
  }
  const auto bytes = static_cast<ssize_t>(samples.size() * sizeof(double));
  return write(fd, samples.data(), static_cast<std::size_t>(bytes)) == bytes ? 0 : 4;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: state_bench STORE [RUNNERS [CALLS [own|shared]]]\n");
    return 2;
  }
  const std::string store = argv[1];
  const int runners = argc > 2 ? std::atoi(argv[2]) : 8;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 1000;
  const bool shared = argc > 4 && std::string(argv[4]) == "shared";
  std::vector<std::pair<pid_t, int>> children;
  int ready[2], go[2];
  if (pipe(ready) != 0 || pipe(go) != 0) return 2;
  for (int r = 0; r < runners; ++r) {
    char path[] = "/tmp/udon-state-bench-XXXXXX";
    const int fd = mkstemp(path);
    unlink(path);
    const pid_t pid = fork();
    if (pid == 0) {
      close(go[1]);
      _exit(Runner(store, r, calls, shared, fd, ready[1], go[0]));
    }
    children.emplace_back(pid, fd);
  }
  close(go[0]);
  char byte;
  for (int r = 0; r < runners && read(ready[0], &byte, 1) == 1; ++r) {
  }
  close(go[1]);  // every runner has made its first use: go
  std::vector<double> firsts, samples;
  int failed = 0;
  for (auto [pid, fd] : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++failed;
      continue;
    }
    std::vector<double> mine(static_cast<std::size_t>(calls) + 1);
    if (pread(fd, mine.data(), mine.size() * sizeof(double), 0) != static_cast<ssize_t>(mine.size() * sizeof(double))) {
      ++failed;
      continue;
    }
    close(fd);
    firsts.push_back(mine.front());
    samples.insert(samples.end(), mine.begin() + 1, mine.end());
  }
  const bool postgres = store.rfind("postgres", 0) == 0;
  std::printf("%-10s runners=%d calls=%d scope=%s: check+lock+held+release median %.1f us, p90 %.1f us; "
              "first use (connect, schema check) median %.1f us; failed runners %d\n",
              postgres ? "postgres" : "file", runners, calls, shared ? "shared" : "own", Percentile(samples, 0.5),
              Percentile(samples, 0.9), Percentile(firsts, 0.5), failed);
  return failed == 0 ? 0 : 1;
}
